//! How a fused run fails: bad tuning, a worklist overflow and a time limit each fail naming
//! the setting or the limit, and the kernel itself stops early when the host asks it to.

use std::time::Duration;

use groute_bfs::{BfsError, bfs_reference};
use groute_core::Context;
use groute_core::testing::{combinations, full_or_reduced};
use groute_worklist::WorklistError;
use groute_worklist::traversal::FusedMode;

use crate::common::{cuda, cuda_alone, directed_path, generated, run};
use crate::{options, wide_tree};

#[test]
fn bad_fused_tuning_fails_naming_the_setting() {
    let g = generated("road:side=16,p=0.6,seed=1");
    // A zero level budget is refused on every backend and device count, bounded or not.
    for devices in [1, 2] {
        let host = Context::host(devices).unwrap();
        let mut o = options(FusedMode::Auto);
        o.worklist.fused_tuning.round_levels = Some(0);
        let err = run(&host, &g, 0, &o).unwrap_err().to_string();
        assert!(err.contains("--fused-round-levels"), "{devices}: {err}");
    }
    let Some(ctx) = cuda(1) else {
        return;
    };
    for block in [0, 48, 2048] {
        let mut o = options(FusedMode::On);
        o.worklist.fused_tuning.block = Some(block);
        let err = run(&ctx, &g, 0, &o).unwrap_err().to_string();
        assert!(err.contains("--fused-block"), "{block}: {err}");
    }
    let mut o = options(FusedMode::On);
    o.worklist.fused_tuning.barrier.spin_ns = u32::MAX;
    let err = run(&ctx, &g, 0, &o).unwrap_err().to_string();
    assert!(err.contains("--fused-spin-ns"), "{err}");
    // A grid far beyond every resident block.
    let mut o = options(FusedMode::On);
    o.worklist.fused_tuning.block = Some(1024);
    o.worklist.fused_tuning.grid = Some(64 * 1024);
    let err = run(&ctx, &g, 0, &o).unwrap_err().to_string();
    assert!(err.contains("--fused-grid"), "{err}");
}

#[test]
fn a_fused_worklist_overflow_fails_naming_the_setting() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    // The device worklist holds at least 1024 items: a Kronecker frontier overflows it.
    let g = generated("kron:scale=12,ef=16,sym,seed=4");
    let mut o = options(FusedMode::On);
    o.worklist.wl_capacity = Some(1);
    let err = run(&ctx, &g, 0, &o).unwrap_err();
    assert!(err.to_string().contains("--wl-capacity"), "{err}");
    // The single-block mode's levels (wide build, up to 1,024 items a level) overflow it too.
    o.worklist.fused_tuning.block = Some(1024);
    o.worklist.fused_tuning.solo_max = Some(1024);
    let err = run(&ctx, &g, 0, &o).unwrap_err();
    assert!(
        err.to_string().contains("--wl-capacity"),
        "single-block mode: {err}"
    );
    // With room, the same graph succeeds.
    let r = run(&ctx, &g, 0, &options(FusedMode::On)).unwrap();
    assert_eq!(r.levels, bfs_reference(&g.csr, 0));
    // The cluster mode's appends (a tree level of 900 items appending 27,000) overflow it.
    let tree = wide_tree(30);
    let mut o = options(FusedMode::On);
    o.worklist.wl_capacity = Some(1);
    o.worklist.fused_tuning.block = Some(1024);
    o.worklist.fused_tuning.solo_max = Some(u32::MAX);
    let err = run(&ctx, &tree, 0, &o).unwrap_err();
    assert!(err.to_string().contains("--wl-capacity"), "cluster: {err}");
}

#[test]
fn a_fused_run_past_its_time_limit_is_aborted() {
    let Some(ctx) = cuda_alone() else {
        return;
    };
    // A directed path of 20000 vertices (2000 on reduced inputs): one round per vertex, far
    // beyond the abort poll.
    let length: u32 = full_or_reduced(20_000, 2_000);
    let g = directed_path(length, "long path");
    let mut o = options(FusedMode::On);
    o.worklist.time_limit = Some(Duration::ZERO);
    let err = run(&ctx, &g, 0, &o).unwrap_err();
    assert!(
        matches!(err, BfsError::Worklist(WorklistError::TimedOut { .. })),
        "{err}"
    );
    let r = run(&ctx, &g, 0, &options(FusedMode::On)).unwrap();
    assert_eq!(r.depth(), length - 1);
}

/// The kernel itself honours the abort word, in single-block mode (block 0's level loop polls
/// it) and with the mode off (the barrier's action polls it), in both builds (narrow, wide):
/// past its limit on a path far longer than any host delay (400,000 levels, 100,000 on reduced
/// inputs, each polled within 64), a run leaves exactly one item outstanding: the kernel
/// stopped early rather than running to completion after the host asked it to stop (0), and
/// handed the path's one queued item over, counted.
#[test]
fn the_fused_kernel_stops_early_when_asked_to() {
    let Some(ctx) = cuda_alone() else {
        return;
    };
    let n: u32 = full_or_reduced(400_000, 100_000);
    let g = directed_path(n, "very long path");
    let (blocks, solos) = ([256, 1024], [None, Some(0)]);
    for [bi, si] in combinations([blocks.len(), solos.len()]) {
        let (block, solo) = (blocks[bi], solos[si]);
        let mut o = options(FusedMode::On);
        o.worklist.fused_tuning.block = Some(block);
        o.worklist.fused_tuning.solo_max = solo;
        o.worklist.time_limit = Some(Duration::ZERO);
        let label = format!("block {block}, solo_max {solo:?}");
        match run(&ctx, &g, 0, &o) {
            Err(BfsError::Worklist(WorklistError::TimedOut { outstanding, .. })) => {
                assert_ne!(
                    outstanding, 0,
                    "{label}: the kernel ran all {n} levels after the host asked it to \
                     stop, or the items it expanded were not counted as produced"
                );
                assert_eq!(
                    outstanding, 1,
                    "{label}: a path queues one item at a time, the one left"
                );
            }
            other => panic!("{label}: expected TimedOut, got {other:?}"),
        }
    }
}
