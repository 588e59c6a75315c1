//! The fused kernel's grid barrier alone (`traversal::time_fused_barrier`): on CUDA every
//! variant (acquire/release or fenced, polling the generation or the tagged record, with or
//! without sleeping) at every block size
//! and on grids from one block to every multiprocessor passes each barrier exactly once in
//! every block; bad shapes fail naming the setting on every backend. The CUDA tests run under
//! `GROUTE_TEST_CUDA=1`.

use groute_core::Context;
use groute_core::testing::{combinations, cuda_context, full_or_reduced};
use groute_worklist::traversal::{FUSED_MAX_SPIN_NS, FusedBarrier, time_fused_barrier};

#[test]
fn every_barrier_variant_releases_each_block_exactly_once_per_barrier() {
    let Some(ctx) = cuda_context(1) else {
        return;
    };
    let device = &ctx.devices()[0];
    let sms = device.properties().multiprocessors;
    // Every variant, spin, block size and grid; on reduced inputs each of them once, over
    // fewer barriers.
    let variants = [(false, false), (false, true), (true, false), (true, true)];
    let (spins, blocks) = ([0, 20, 500], [32, 256, 1024]);
    let grids = [Some(1), Some(2), Some(7), None, Some(2 * sms)];
    let barriers: u32 = full_or_reduced(2000, 200);
    let sweep = combinations([variants.len(), spins.len(), blocks.len(), grids.len()]);
    for [vi, si, bi, gi] in sweep {
        let ((fenced, tagged), spin_ns) = (variants[vi], spins[si]);
        let (block, grid) = (blocks[bi], grids[gi]);
        let barrier = FusedBarrier {
            spin_ns,
            fenced,
            tagged,
        };
        let label = format!("{barrier:?}, block {block}, grid {grid:?}");
        let t = time_fused_barrier(device, grid, block, barrier, barriers)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!((t.passed, t.errors), (barriers, 0), "{label}");
        assert_eq!(t.grid, grid.unwrap_or(sms), "{label}");
        assert!(t.device_time.as_nanos() > 0, "{label}");
    }
    // A grid beyond every resident block is refused, not launched.
    let err = time_fused_barrier(device, Some(1 << 20), 1024, FusedBarrier::default(), 1)
        .unwrap_err()
        .to_string();
    assert!(err.contains("--grids"), "{err}");
}

#[test]
fn bad_block_sizes_and_sleeps_fail_naming_the_setting_on_every_backend() {
    let host = Context::host(1).unwrap();
    let mut contexts = vec![host];
    contexts.extend(cuda_context(1));
    for ctx in &contexts {
        let device = &ctx.devices()[0];
        for block in [0, 31, 1056] {
            let err = time_fused_barrier(device, None, block, FusedBarrier::default(), 1)
                .unwrap_err()
                .to_string();
            assert!(err.contains("--blocks"), "{block}: {err}");
        }
        let slow = FusedBarrier {
            spin_ns: FUSED_MAX_SPIN_NS + 1,
            ..FusedBarrier::default()
        };
        let err = time_fused_barrier(device, None, 256, slow, 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("--spins"), "{err}");
    }
    // The host backend has no grid barrier to time: an error, not a panic.
    let ctx = Context::host(1).unwrap();
    assert!(time_fused_barrier(&ctx.devices()[0], None, 256, FusedBarrier::default(), 1).is_err());
}
