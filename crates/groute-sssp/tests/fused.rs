//! The fused persistent kernel (`--fused`) for SSSP: on one CUDA device it equals Dijkstra and
//! the per-round mode on weighted graphs of every shape (zero, parallel, saturating weights,
//! unweighted input), with and without soft priority (run inside the kernel) and its
//! single-block mode (on one block or on a cluster), and fails clearly on
//! overflow; on several devices, device-driven and in bounded rounds. The CUDA tests run under
//! `GROUTE_TEST_CUDA=1`; the host backend ignores the mode. The bodies shared with BFS are
//! `groute_worklist::testing`'s, run with [`SsspUnderTest`]. With `GROUTE_TEST_REDUCED=1`
//! (`groute_core::testing::reduced`) the smallest graph of each shape, and option sweeps in
//! which each value runs once (`groute_core::testing::combinations`).

mod common;

use groute_core::testing::{full_or_reduced, pick};
use groute_graph::Graph;
use groute_graph::testing::{from_triples, generated};
use groute_worklist::testing::fused_bounded::{self, BoundedFrontierSweep};
use groute_worklist::testing::fused_device_driven;
use groute_worklist::testing::fused_host;
use groute_worklist::testing::fused_one_device::{
    self, BarrierSweep, ClusterSweep, FrontierSweep, PrioritySweep,
};
use groute_worklist::testing::{assert_fails_naming, cuda_shared, tuned};
use groute_worklist::traversal::FusedMode;

use common::{SsspUnderTest, graphs, the_default_band_cuts_work};

/// Stages of fans with weights that improve a vertex several times in one level: centre c
/// has `fans[s % 4]` arcs (3, 40, 300, 1500) to middles, middle j of a fan of f leads to the
/// next centre with weight f - j, so the middles expanded later in a level keep lowering it
/// (stale duplicates in the worklist and the single-block frontier), 40 stages.
fn weighted_fan_chain() -> Graph {
    let fans = [3u32, 40, 300, 1500];
    let mut triples = Vec::new();
    let mut centre = 0u32;
    for s in 0..40 {
        let fan = fans[s % fans.len()];
        let next = centre + fan + 1;
        for j in 1..=fan {
            triples.push((centre, centre + j, 1 + j % 7));
            triples.push((centre + j, next, fan - j + 1));
        }
        centre = next;
    }
    from_triples(centre as usize + 1, &triples, "weighted fan chain")
}

/// The single-block mode's shared frontier (`fused_tuning.solo_shared`) on and off, with and
/// without direct atomicMin in that mode, with and without soft priority, on both builds
/// (blocks of up to 256 threads keep no frontier) and bounds from a few items to none, on
/// road grids, the weighted fan chain and every shape: always Dijkstra. On reduced inputs the
/// smaller road grid (the heavier, narrower weights) with the reduced shapes.
#[test]
fn the_single_block_frontier_equals_dijkstra_either_way() {
    let mut gs: Vec<Graph> = pick(
        [
            "road:side=96,p=0.6,seed=21,weights=1..100:3",
            "road:side=64,p=0.6,seed=22,weights=1000..1500:4",
        ],
        &[1],
    )
    .into_iter()
    .map(generated)
    .collect();
    gs.push(weighted_fan_chain());
    gs.extend(graphs());
    fused_one_device::single_block_frontier::<SsspUnderTest>(&FrontierSweep {
        graphs: gs,
        sources: 2,
        blocks: &[64, 1024],
        solos: &[None, Some(3), Some(1500), Some(u32::MAX)],
        settings: &[
            (false, false, Some(0)),
            (true, false, Some(0)),
            (true, true, Some(0)),
            (false, false, None),
            (true, false, None),
            (true, true, None),
        ],
    });
}

/// The cluster mode (`fused_tuning.cluster`) on weighted road grids, a grid with zero weights
/// and an unweighted one, from two sources, with bounds from one item to none, with the
/// default band (soft priority deferring to the low lists from inside the cluster's levels),
/// a narrow one and none. On reduced inputs each grid has about a fifth of the vertices (still
/// tens of levels deep): under racecheck a bound of one item ends the mode at almost every
/// level, and every phase pays the sanitizer's grid barriers.
#[test]
fn the_cluster_mode_equals_dijkstra_either_way() {
    let grid = |full: u32, reduced: u32, rest: &str| {
        let side = full_or_reduced(full, reduced);
        generated(&format!("road:side={side},{rest}"))
    };
    fused_one_device::cluster_mode::<SsspUnderTest>(&ClusterSweep {
        graphs: vec![
            grid(96, 40, "p=0.6,seed=41,weights=1..100:3"),
            grid(80, 36, "p=0.6,seed=42,weights=1000..1500:4"),
            grid(50, 24, "p=0.7,seed=43,weights=0..3:5"),
            grid(60, 28, "p=0.8,seed=44"),
        ],
        sources: 2,
        blocks: &[1024],
        solos: &[None, Some(1), Some(300), Some(u32::MAX)],
        settings: &[
            (true, None),
            (true, Some(50)),
            (true, Some(0)),
            (false, None),
            (false, Some(50)),
            (false, Some(0)),
        ],
    });
}

/// The shared frontier in bounded fused rounds on two devices, on and off, with the default
/// band and without.
#[test]
fn bounded_rounds_with_the_single_block_frontier_equal_dijkstra() {
    fused_bounded::bounded_rounds_with_the_single_block_frontier::<SsspUnderTest>(
        &BoundedFrontierSweep {
            graphs: vec![
                generated("road:side=80,p=0.6,seed=23,weights=1000..1500:5"),
                weighted_fan_chain(),
            ],
            level_budgets: &[Some(1), Some(6), None],
            settings: &[
                (false, false, None),
                (true, false, None),
                (true, true, Some(0)),
                (true, false, Some(0)),
            ],
        },
    );
}

/// Bounded fused rounds on 2 and 3 devices on weighted graphs of every shape, with the
/// default band (the host's epochs across devices), without soft priority, and with one level
/// per launch.
#[test]
fn bounded_fused_rounds_on_several_devices_equal_dijkstra() {
    fused_bounded::bounded_fused_rounds_on_several_devices::<SsspUnderTest>(&[
        (None, None, None),
        (Some(1), None, Some(0)),
        (Some(7), None, Some(3)),
    ]);
}

/// Device-driven runs on weighted graphs of every shape, from two sources, with the default
/// band (each device's own epochs), without soft priority and without the single-block
/// mode, its single-block mode on a cluster (the default) and on one block.
#[test]
fn device_driven_fused_runs_on_several_devices_equal_dijkstra() {
    fused_device_driven::device_driven_fused_runs_on_several_devices::<SsspUnderTest>(
        2,
        &[
            (None, true, None, true),
            (None, true, None, false),
            (None, true, Some(0), true),
            (None, true, Some(0), false),
            (Some(0), true, Some(3), true),
        ],
    );
}

#[test]
fn fused_equals_dijkstra_and_the_per_round_mode_on_one_cuda_device() {
    fused_one_device::fused_equals_the_reference_and_the_per_round_mode::<SsspUnderTest>();
}

/// Narrow, default and no bands in and out of single-block mode on every shape.
#[test]
fn fused_soft_priority_equals_dijkstra_in_every_solo_mode() {
    fused_one_device::soft_priority::<SsspUnderTest>(&PrioritySweep {
        graphs: graphs(),
        sources: 2,
        prios: &[Some(1), Some(37), None, Some(0)],
        solos: &[Some(0), None, Some(u32::MAX)],
    });
}

/// The barrier variants and block sizes of the fused kernel (`FusedBarrier`, `fused_tuning.block`),
/// with SSSP's soft priority (re-examine phases) and without, in and out of single-block mode.
#[test]
fn fused_block_sizes_and_barrier_variants_equal_dijkstra() {
    fused_one_device::block_sizes_and_barrier_variants::<SsspUnderTest>(&BarrierSweep {
        graphs: vec![generated("road:side=48,p=0.6,seed=6")],
        blocks: &[32, 256, 1024],
        barriers: &[(20, false, false), (0, true, false), (0, false, true)],
        grids: &[None, Some(1), Some(5)],
        settings: &[
            (Some(0), Some(0), false),
            (None, None, false),
            (Some(0), None, false),
            (None, None, true),
            (Some(0), Some(0), true),
        ],
    });
}

#[test]
fn fused_soft_priority_defers_and_cuts_work_on_a_road_grid() {
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    let side: u32 = full_or_reduced(64, 40);
    let g = generated(&format!("road:side={side},p=0.6,seed=4,weights=1..100:7"));
    let source = side * side / 2 + side / 2;
    let expected = groute_sssp::sssp_reference(&g.csr, source);
    let run = |o| {
        groute_sssp::sssp(
            &ctx,
            &groute_graph::testing::in_blocks(&g, 1).unwrap(),
            source,
            &o,
        )
        .unwrap()
    };
    let without = run(tuned::<SsspUnderTest>(FusedMode::On, |w| {
        w.prio_delta = Some(0)
    }));
    assert_eq!(without.distances, expected);
    for solo in [Some(0), None] {
        let with = run(tuned::<SsspUnderTest>(FusedMode::On, |w| {
            w.fused_tuning.solo_max = solo
        }));
        assert_eq!(with.distances, expected, "solo {solo:?}");
        the_default_band_cuts_work(&g, &with, &without, &format!("solo {solo:?}"));
    }
}

#[test]
fn the_host_backend_runs_the_fused_mode_as_its_persistent_members() {
    fused_host::the_host_backend_runs_the_fused_mode_as_its_persistent_members::<SsspUnderTest>(
        &generated("road:side=16,p=0.7,seed=4,weights=1..20:3"),
        0,
        &[1, 3],
        &[FusedMode::On, FusedMode::Off],
    );
}

#[test]
fn a_fused_worklist_overflow_fails_naming_the_setting() {
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    let g = generated("kron:scale=12,ef=16,sym,seed=4,weights=1..9:1");
    let o = tuned::<SsspUnderTest>(FusedMode::On, |w| w.wl_capacity = Some(1));
    assert_fails_naming::<SsspUnderTest>(&ctx, &g, &o, "--wl-capacity");
}
