//! Helpers for test suites written once and run on every backend.
//!
//! [`test_contexts`] yields the contexts a suite should run on: the host backend plain and
//! with jitter, and the CUDA backend when `GROUTE_TEST_CUDA=1`. With that variable set the
//! CUDA backend is mandatory: if it cannot be created the helper panics (the test fails),
//! so a GPU run can never pass by silently testing nothing. Without it, CUDA is skipped and
//! the reason printed. [`cuda_raw`] does the same for tests of the raw CUDA backend.
//!
//! Two more variables shape a run for compute-sanitizer, whose kernels run 10 to 100 times
//! slower: `GROUTE_TEST_TIME_SCALE` stretches the suites' time limits ([`scaled`]), and
//! `GROUTE_TEST_REDUCED=1` ([`reduced`]) makes the long CUDA tests run on fewer and smaller
//! inputs: every executor, mode, variant and device count up to 3 they cover stays covered,
//! on the smallest graph of each shape, fewer sources and seeds, and option sweeps in which
//! each value of each option runs once rather than every combination ([`combinations`]). The
//! assertions stay the same. `tools/sanitize.sh` sets both.

use std::ops::Deref;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::backend::host::Jitter;
use crate::context::{BackendChoice, Context};

mod address_limit;
pub mod cuda_raw;

pub use address_limit::under_4gb_limit;

/// The environment variable that stretches the suites' time limits (a positive factor).
pub const TIME_SCALE_ENV: &str = "GROUTE_TEST_TIME_SCALE";

/// A test's time limit `limit`, times `GROUTE_TEST_TIME_SCALE` when that is set to a positive
/// number: under compute-sanitizer a kernel runs 10 to 100 times slower, and a run past a
/// limit meant for the plain build is aborted (`tools/sanitize.sh` sets it). A value that is
/// not a positive number panics, naming the variable (a test setting, not user input).
pub fn scaled(limit: std::time::Duration) -> std::time::Duration {
    match std::env::var(TIME_SCALE_ENV) {
        Err(_) => limit,
        Ok(v) => match v.parse::<f64>() {
            Ok(f) if f.is_finite() && f > 0.0 => limit.mul_f64(f),
            _ => panic!("{TIME_SCALE_ENV}={v}: give a positive factor such as 50"),
        },
    }
}

/// The environment variable that switches the long suites to reduced inputs (`1`; see the
/// module docs).
pub const REDUCED_ENV: &str = "GROUTE_TEST_REDUCED";

/// Whether the suites run on reduced inputs (`GROUTE_TEST_REDUCED=1`); unset, empty or `0`
/// is the full run. Any other value panics, naming the variable (a test setting, not user
/// input).
pub fn reduced() -> bool {
    match std::env::var(REDUCED_ENV) {
        Err(_) => false,
        Ok(v) => match v.as_str() {
            "1" => true,
            "" | "0" => false,
            _ => panic!("{REDUCED_ENV}={v}: give 1 (reduced inputs) or 0 (the full run)"),
        },
    }
}

/// `full`, or `reduced_value` when the suites run on reduced inputs ([`reduced`]).
pub fn full_or_reduced<T>(full: T, reduced_value: T) -> T {
    if reduced() { reduced_value } else { full }
}

/// `items`, or only its first `keep` on reduced inputs ([`reduced`]).
pub fn first<T>(items: impl IntoIterator<Item = T>, keep: usize) -> Vec<T> {
    let keep = if reduced() { keep } else { usize::MAX };
    items.into_iter().take(keep).collect()
}

/// `items`, or only those at the positions `keep` on reduced inputs ([`reduced`]).
pub fn pick<T>(items: impl IntoIterator<Item = T>, keep: &[usize]) -> Vec<T> {
    let all = !reduced();
    items
        .into_iter()
        .enumerate()
        .filter(|(i, _)| all || keep.contains(i))
        .map(|(_, item)| item)
        .collect()
}

/// The device counts of `full`, or on reduced inputs ([`reduced`]) those up to 3 (one
/// device, a pair, and an odd count that splits a ring unevenly), or its smallest where it
/// has none of them.
pub fn device_counts(full: &[usize]) -> Vec<usize> {
    if !reduced() {
        return full.to_vec();
    }
    let small: Vec<usize> = full.iter().copied().filter(|&d| d <= 3).collect();
    if small.is_empty() {
        full.iter().copied().min().into_iter().collect()
    } else {
        small
    }
}

/// The index combinations of a sweep over `lens.len()` options, option `i` having
/// `lens[i]` values: every combination, the last option varying fastest (the order of nested
/// loops), or on reduced inputs ([`reduced`]) as many combinations as the longest option has
/// values, the `k`-th taking value `k % lens[i]` of each option, so that every value of every
/// option still runs. An option without values gives no combinations.
pub fn combinations<const N: usize>(lens: [usize; N]) -> Vec<[usize; N]> {
    combinations_of(lens, reduced())
}

/// [`combinations`], reduced or not as `reduced_inputs` says.
fn combinations_of<const N: usize>(lens: [usize; N], reduced_inputs: bool) -> Vec<[usize; N]> {
    if lens.contains(&0) {
        return Vec::new();
    }
    if reduced_inputs {
        let longest = lens.iter().copied().max().unwrap_or(1);
        return (0..longest)
            .map(|k| std::array::from_fn(|i| k % lens[i]))
            .collect();
    }
    let total: usize = lens.iter().product();
    (0..total)
        .map(|mut k| {
            let mut combination = [0; N];
            for i in (0..N).rev() {
                combination[i] = k % lens[i];
                k /= lens[i];
            }
            combination
        })
        .collect()
}

/// Whether the environment demands CUDA tests (`GROUTE_TEST_CUDA=1`).
pub fn cuda_required() -> bool {
    std::env::var("GROUTE_TEST_CUDA").is_ok_and(|v| v == "1")
}

/// A labelled context for a generic test body.
#[derive(Debug)]
pub struct TestContext {
    /// Human-readable label (`host`, `host+jitter(7)`, `cuda`).
    pub label: String,
    /// The context.
    pub context: Context,
}

/// Contexts with `devices` devices to run a generic test body on (see module docs).
///
/// `jitter_seeds` adds one jittered host context per seed.
pub fn test_contexts(devices: usize, jitter_seeds: &[u64]) -> Vec<TestContext> {
    let mut out = Vec::new();
    let plain = Context::host(devices).expect("host backend");
    out.push(TestContext {
        label: "host".into(),
        context: plain,
    });
    for &seed in jitter_seeds {
        let ctx = Context::builder()
            .devices(devices)
            .backend(BackendChoice::Host)
            .jitter(Some(Jitter::seeded(seed)))
            .build()
            .expect("host backend");
        out.push(TestContext {
            label: format!("host+jitter({seed})"),
            context: ctx,
        });
    }
    if let Some(ctx) = cuda_context(devices) {
        out.push(TestContext {
            label: "cuda".into(),
            context: ctx,
        });
    }
    out
}

/// The CUDA context for a test, `None` (with a printed reason) when CUDA tests are not
/// requested; panics when they are requested and CUDA is unavailable.
pub fn cuda_context(devices: usize) -> Option<Context> {
    cuda_context_on(devices, None)
}

/// [`cuda_context`] with its `devices` devices on at most `gpus` GPUs (virtual devices
/// sharing them round-robin; `None`: one GPU per device where there are enough).
pub fn cuda_context_on(devices: usize, gpus: Option<usize>) -> Option<Context> {
    if !cuda_required() {
        eprintln!("note: CUDA backend not tested (set GROUTE_TEST_CUDA=1 on a GPU machine)");
        return None;
    }
    // Peer groups wait for their members this long (stretched under sanitizers, where the
    // members of concurrent test processes share a serialised GPU).
    let builder = Context::builder()
        .devices(devices)
        .backend(BackendChoice::Cuda)
        .stall_timeout(Some(scaled(crate::DEFAULT_STALL_TIMEOUT)));
    let builder = match gpus {
        Some(n) => builder.physical_devices(n),
        None => builder,
    };
    match builder.build() {
        Ok(ctx) => Some(ctx),
        Err(e) => panic!("GROUTE_TEST_CUDA=1 but the CUDA backend is unavailable: {e}"),
    }
}

/// The GPU lock of one test process ([`cuda_test`]): tests that share the GPUs hold it
/// shared, tests that need them free of other tests' kernels hold it alone.
static GPU: RwLock<()> = RwLock::new(());

/// How a test holds the GPUs of its process ([`cuda_test`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuHold {
    /// Beside the other tests that share them.
    Shared,
    /// With no other test of the process on them meanwhile: tests that ask a running kernel
    /// to stop (their host-side clocks would measure another test's kernel, which runs before
    /// or after theirs when it fills the GPU) and device-driven members sharing a GPU (they
    /// start together only on a GPU free enough for all of them).
    Alone,
}

/// A test's guard on the process's GPU lock, as its [`GpuHold`] asked.
enum GpuGuard {
    Shared {
        _read: RwLockReadGuard<'static, ()>,
    },
    Alone {
        _write: RwLockWriteGuard<'static, ()>,
    },
}

/// A CUDA context and its test's hold on the process's GPU lock; derefs to the context.
pub struct GpuTest {
    // Declared before the guard, so that the context is dropped (its work finished) before
    // the lock is released.
    context: Context,
    _guard: GpuGuard,
}

impl std::fmt::Debug for GpuTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuTest")
            .field("devices", &self.context.num_devices())
            .field("alone", &matches!(self._guard, GpuGuard::Alone { .. }))
            .finish()
    }
}

impl Deref for GpuTest {
    type Target = Context;

    fn deref(&self) -> &Context {
        &self.context
    }
}

/// [`cuda_context_on`] held as `hold` says (`None` when CUDA is not tested; the lock is
/// taken before the context is made and released with the returned value).
pub fn cuda_test(devices: usize, gpus: Option<usize>, hold: GpuHold) -> Option<GpuTest> {
    let guard = match hold {
        GpuHold::Shared => GpuGuard::Shared {
            _read: GPU.read().unwrap_or_else(PoisonError::into_inner),
        },
        GpuHold::Alone => GpuGuard::Alone {
            _write: GPU.write().unwrap_or_else(PoisonError::into_inner),
        },
    };
    Some(GpuTest {
        context: cuda_context_on(devices, gpus)?,
        _guard: guard,
    })
}

#[cfg(test)]
mod tests {
    use super::combinations_of;

    #[test]
    fn full_combinations_follow_nested_loops() {
        let mut nested = Vec::new();
        for a in 0..2 {
            for b in 0..3 {
                for c in 0..2 {
                    nested.push([a, b, c]);
                }
            }
        }
        assert_eq!(combinations_of([2, 3, 2], false), nested);
        assert!(combinations_of([2, 0, 2], false).is_empty());
    }

    #[test]
    fn reduced_combinations_run_every_value_of_every_option() {
        let lens = [4, 5, 1, 3];
        let picked = combinations_of(lens, true);
        assert_eq!(picked.len(), 5);
        for (i, &len) in lens.iter().enumerate() {
            for value in 0..len {
                assert!(
                    picked.iter().any(|c| c[i] == value),
                    "option {i}, value {value}"
                );
            }
        }
        assert!(combinations_of([3, 0], true).is_empty());
    }
}
