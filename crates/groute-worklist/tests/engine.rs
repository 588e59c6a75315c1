//! The engine over the ring, on 1..8 devices, plain and jittered: every item of a
//! synthetic workload is processed exactly once, and nothing is seen after termination.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use groute_core::testing::test_contexts;
use groute_worklist::{DeviceProgram, WorklistError, WorklistOptions, run};

#[path = "common/u32_split.rs"]
mod u32_split;
use u32_split::{KeepRule, U32Split};

/// Node `i` of a binary heap of `limit - 1` nodes produces `2i` and `2i + 1`; node `i`
/// belongs to device `hash(i) % devices`, so most items travel over the ring, some of
/// them past several devices.
#[derive(Clone)]
struct TreeOps {
    me: usize,
    devices: usize,
}

fn owner(i: u32, devices: usize) -> usize {
    (i.wrapping_mul(2_654_435_761) >> 7) as usize % devices
}

impl KeepRule for TreeOps {
    fn keeps(&self, item: u32) -> bool {
        owner(item, self.devices) == self.me
    }
    fn prio(&self, item: u32) -> u32 {
        31 - item.leading_zeros()
    }
}

struct Tree {
    ops: TreeOps,
    limit: u32,
    seen: Arc<Vec<AtomicU32>>,
}

impl DeviceProgram for Tree {
    type Ops = U32Split<TreeOps>;
    fn split_ops(&self) -> U32Split<TreeOps> {
        U32Split(self.ops.clone())
    }
    fn expand(&self, items: &[u32]) -> Vec<u32> {
        let mut out = Vec::new();
        for &i in items {
            assert_eq!(
                owner(i, self.ops.devices),
                self.ops.me,
                "item {i} expanded on a device that does not own it"
            );
            self.seen[i as usize].fetch_add(1, Ordering::Relaxed);
            for c in [2 * i, 2 * i + 1] {
                if c < self.limit {
                    out.push(c);
                }
            }
        }
        out
    }
    fn capacity_hint(&self) -> usize {
        self.limit as usize
    }
}

fn run_tree(
    ctx: &groute_core::Context,
    limit: u32,
    options: &WorklistOptions,
) -> Result<(), WorklistError> {
    let n = ctx.num_devices();
    let seen: Arc<Vec<AtomicU32>> = Arc::new((0..limit).map(|_| AtomicU32::new(0)).collect());
    let programs: Vec<Arc<Tree>> = (0..n)
        .map(|me| {
            Arc::new(Tree {
                ops: TreeOps { me, devices: n },
                limit,
                seen: Arc::clone(&seen),
            })
        })
        .collect();
    let mut seeds = vec![Vec::new(); n];
    seeds[owner(1, n)].push(1);
    let stats = run(ctx, &programs, seeds, options)?;
    assert_eq!(stats.late_items, 0);
    for i in 1..limit {
        assert_eq!(seen[i as usize].load(Ordering::Relaxed), 1, "node {i}");
    }
    assert_eq!(stats.items_processed(), u64::from(limit - 1));
    // The seed and every item produced are processed once; every item sent is received.
    assert_eq!(stats.items_processed(), stats.items_produced() + 1);
    assert_eq!(stats.items_sent(), stats.items_received());
    if n > 1 {
        assert!(stats.items_sent() > 0);
    }
    Ok(())
}

fn options() -> WorklistOptions {
    WorklistOptions {
        max_batch: 64,
        packet_size: 16,
        time_limit: Some(Duration::from_secs(60)),
        ..WorklistOptions::default()
    }
}

#[test]
fn every_item_is_processed_once_on_1_to_8_devices_with_jitter() {
    for devices in [1, 2, 3, 4, 8] {
        // Host-kernel programs: a CUDA context is the traversal worker's business
        // (groute-bfs tests it); skip it here.
        for tc in test_contexts(devices, &[1, 2, 3])
            .into_iter()
            .filter(|tc| tc.label != "cuda")
        {
            run_tree(&tc.context, 3000, &options())
                .unwrap_or_else(|e| panic!("{} devices, {}: {e}", devices, tc.label));
        }
    }
}

#[test]
fn termination_holds_over_many_jittered_seeds() {
    for seed in 10..40 {
        let devices = 2 + (seed as usize % 4);
        for tc in test_contexts(devices, &[seed])
            .into_iter()
            .skip(1)
            .filter(|tc| tc.label != "cuda")
        {
            run_tree(&tc.context, 500, &options()).unwrap_or_else(|e| panic!("{}: {e}", tc.label));
        }
    }
}

#[test]
fn a_worklist_that_would_overflow_fails_naming_the_setting() {
    let ctx = groute_core::Context::host(2).unwrap();
    // A roomy send buffer, so that the local worklist is the only thing that can overflow
    // (with both at 4, whichever filled first under the schedule named its own setting).
    let opts = WorklistOptions {
        wl_capacity: Some(4),
        send_capacity: Some(1 << 20),
        ..options()
    };
    let err = run_tree(&ctx, 3000, &opts).unwrap_err();
    assert!(err.to_string().contains("--wl-capacity"), "{err}");
}

#[test]
fn a_send_buffer_that_would_overflow_fails_naming_the_setting() {
    let ctx = groute_core::Context::host(3).unwrap();
    let opts = WorklistOptions {
        send_capacity: Some(1),
        max_batch: 1 << 20,
        ..options()
    };
    let err = run_tree(&ctx, 3000, &opts).unwrap_err();
    assert!(err.to_string().contains("--send-capacity"), "{err}");
}
