//! How a fused run fails: bad tuning, a worklist overflow and a time limit each fail naming
//! the setting or the limit, and the kernel itself stops early when the host asks it to.

use std::time::Duration;

use groute_bfs::BfsError;
use groute_core::Context;
use groute_core::testing::{GpuTest, combinations, full_or_reduced};
use groute_graph::Graph;
use groute_graph::testing::{directed_path, generated};
use groute_worklist::WorklistError;
use groute_worklist::testing::{
    assert_fails_naming, cuda_alone, cuda_shared, run_in_blocks, run_matching_the_reference, tuned,
};
use groute_worklist::traversal::FusedMode;

use crate::common::BfsUnderTest;
use crate::{options, wide_tree};

#[test]
fn bad_fused_tuning_fails_naming_the_setting() {
    let g = generated("road:side=16,p=0.6,seed=1");
    // A zero level budget is refused on every backend and device count, bounded or not.
    for devices in [1, 2] {
        let host = Context::host(devices).unwrap();
        let o = tuned::<BfsUnderTest>(FusedMode::Auto, |w| {
            w.fused_tuning.round_levels = Some(0);
        });
        assert_fails_naming::<BfsUnderTest>(&host, &g, &o, "--fused-round-levels");
    }
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    let bad = |tune: &dyn Fn(&mut groute_worklist::WorklistOptions), setting| {
        let o = tuned::<BfsUnderTest>(FusedMode::On, tune);
        assert_fails_naming::<BfsUnderTest>(&ctx, &g, &o, setting);
    };
    for block in [0, 48, 2048] {
        bad(&|w| w.fused_tuning.block = Some(block), "--fused-block");
    }
    bad(
        &|w| w.fused_tuning.barrier.spin_ns = u32::MAX,
        "--fused-spin-ns",
    );
    // A grid far beyond every resident block.
    bad(
        &|w| {
            w.fused_tuning.block = Some(1024);
            w.fused_tuning.grid = Some(64 * 1024);
        },
        "--fused-grid",
    );
}

#[test]
fn a_fused_worklist_overflow_fails_naming_the_setting() {
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    // The device worklist holds at least 1024 items: a Kronecker frontier overflows it.
    let g = generated("kron:scale=12,ef=16,sym,seed=4");
    let mut o = tuned::<BfsUnderTest>(FusedMode::On, |w| w.wl_capacity = Some(1));
    assert_fails_naming::<BfsUnderTest>(&ctx, &g, &o, "--wl-capacity");
    // The single-block mode's levels (wide build, up to 1,024 items a level) overflow it too.
    o.worklist.fused_tuning.block = Some(1024);
    o.worklist.fused_tuning.solo_max = Some(1024);
    assert_fails_naming::<BfsUnderTest>(&ctx, &g, &o, "--wl-capacity");
    // With room, the same graph succeeds.
    run_matching_the_reference::<BfsUnderTest>(&ctx, &g, 0, &options(FusedMode::On), "room");
    // The cluster mode's appends (a tree level of 900 items appending 27,000) overflow it.
    let o = tuned::<BfsUnderTest>(FusedMode::On, |w| {
        w.wl_capacity = Some(1);
        w.fused_tuning.block = Some(1024);
        w.fused_tuning.solo_max = Some(u32::MAX);
    });
    assert_fails_naming::<BfsUnderTest>(&ctx, &wide_tree(30), &o, "--wl-capacity");
}

/// A device of its own, for a test that asks a running kernel to stop (its host-side clock
/// would measure another test's kernel), and a directed path of `full` vertices (`reduced` on
/// reduced inputs) named `name`: one level per vertex.
fn alone_with_a_path(full: u32, reduced: u32, name: &str) -> Option<(GpuTest, Graph)> {
    let ctx = cuda_alone(1)?;
    Some((ctx, directed_path(full_or_reduced(full, reduced), name)))
}

#[test]
fn a_fused_run_past_its_time_limit_is_aborted() {
    // A directed path of 20000 vertices (320 on reduced inputs, which the sanitizer runs:
    // five abort polls, and its complete run below far cheaper than 2000): one round per
    // vertex, far beyond the abort poll.
    let Some((ctx, g)) = alone_with_a_path(20_000, 320, "long path") else {
        return;
    };
    let length = g.num_vertices() as u32;
    let o = tuned::<BfsUnderTest>(FusedMode::On, |w| w.time_limit = Some(Duration::ZERO));
    let err = run_in_blocks::<BfsUnderTest>(&ctx, &g, 0, &o).unwrap_err();
    assert!(
        matches!(err, BfsError::Worklist(WorklistError::TimedOut { .. })),
        "{err}"
    );
    let r = run_in_blocks::<BfsUnderTest>(&ctx, &g, 0, &options(FusedMode::On)).unwrap();
    assert_eq!(r.deepest, length - 1);
}

/// The kernel itself honours the abort word, in single-block mode (block 0's level loop polls
/// it) and with the mode off (the barrier's action polls it), in both builds (narrow, wide):
/// past its limit on a path far longer than any host delay (400,000 levels, 100,000 on reduced
/// inputs, each polled within 64), a run leaves exactly one item outstanding: the kernel
/// stopped early rather than running to completion after the host asked it to stop (0), and
/// handed the path's one queued item over, counted.
#[test]
fn the_fused_kernel_stops_early_when_asked_to() {
    let Some((ctx, g)) = alone_with_a_path(400_000, 100_000, "very long path") else {
        return;
    };
    let n = g.num_vertices();
    let (blocks, solos) = ([256, 1024], [None, Some(0)]);
    for [bi, si] in combinations([blocks.len(), solos.len()]) {
        let (block, solo) = (blocks[bi], solos[si]);
        let o = tuned::<BfsUnderTest>(FusedMode::On, |w| {
            w.fused_tuning.block = Some(block);
            w.fused_tuning.solo_max = solo;
            w.time_limit = Some(Duration::ZERO);
        });
        let label = format!("block {block}, solo_max {solo:?}");
        match run_in_blocks::<BfsUnderTest>(&ctx, &g, 0, &o) {
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
