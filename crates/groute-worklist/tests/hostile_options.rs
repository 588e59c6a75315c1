//! Options and programs that would hang or abort a run: a split that keeps no item, and
//! worklist capacities too small or too large.

use std::sync::Arc;
use std::time::{Duration, Instant};

use groute_core::Context;
use groute_core::testing::under_4gb_limit;
use groute_worklist::{DeviceProgram, WorklistError, WorklistOptions, local_worklist, run};

#[path = "common/u32_split.rs"]
mod u32_split;
use u32_split::{KeepRule, U32Split};

/// A split that passes every item on and never keeps one.
#[derive(Clone)]
struct NeverKeep;

impl KeepRule for NeverKeep {
    fn keeps(&self, _: u32) -> bool {
        false
    }
    fn prio(&self, _: u32) -> u32 {
        0
    }
}

/// Every item produces one more.
struct Echo;

impl DeviceProgram for Echo {
    type Ops = U32Split<NeverKeep>;
    fn split_ops(&self) -> U32Split<NeverKeep> {
        U32Split(NeverKeep)
    }
    fn expand(&self, items: &[u32]) -> Vec<u32> {
        items.iter().map(|&i| i + 1).collect()
    }
    fn capacity_hint(&self) -> usize {
        64
    }
}

#[test]
fn split_that_never_keeps_items_ends_with_a_no_progress_error_not_a_hang() {
    for devices in [1, 2, 3] {
        let ctx = Context::host(devices).unwrap();
        let programs: Vec<Arc<Echo>> = (0..devices).map(|_| Arc::new(Echo)).collect();
        let mut seeds = vec![Vec::new(); devices];
        seeds[0].push(1);
        let options = WorklistOptions {
            time_limit: None,
            ..WorklistOptions::default()
        };
        let started = Instant::now();
        let e = run(&ctx, &programs, seeds, &options).unwrap_err();
        assert!(
            matches!(e, WorklistError::NoProgress { devices: d, .. } if d == devices),
            "{devices} devices: {e:?}"
        );
        assert!(e.to_string().contains("keep each item"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(20));
    }
}

#[test]
fn capacity_of_one_names_the_setting_to_raise() {
    let (producer, _consumer) = local_worklist::<u32>(1, "wl_capacity (--wl-capacity)").unwrap();
    producer.push_slice(&[1]).unwrap();
    let full = producer.push_slice(&[2]).unwrap_err();
    assert!(full.to_string().contains("raise wl_capacity"), "{full}");
    let zero = local_worklist::<u32>(0, "wl_capacity (--wl-capacity)").unwrap_err();
    assert!(zero.to_string().contains("wl_capacity"), "{zero}");
}

#[test]
fn capacity_too_large_for_memory_is_an_allocation_error_not_an_abort() {
    under_4gb_limit(
        "capacity_too_large_for_memory_is_an_allocation_error_not_an_abort",
        || {
            let e =
                local_worklist::<u32>(2_000_000_000, "wl_capacity (--wl-capacity)").unwrap_err();
            assert!(
                matches!(e, groute_core::Error::OutOfMemory { bytes, .. } if bytes >= 8_000_000_000),
                "{e:?}"
            );
            assert!(e.to_string().contains("wl_capacity"), "{e}");
        },
    );
}
