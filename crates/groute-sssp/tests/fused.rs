//! The fused persistent kernel (`--fused`) for SSSP: on one CUDA device it equals Dijkstra and
//! the per-round mode on weighted graphs of every shape (zero, parallel, saturating weights,
//! unweighted input), with and without soft priority (run inside the kernel) and its
//! single-block mode (on one block or on a cluster), and fails clearly on
//! overflow; on several devices, device-driven and in bounded rounds. The CUDA tests run under
//! `GROUTE_TEST_CUDA=1`; the host backend ignores the mode. With `GROUTE_TEST_REDUCED=1`
//! (`groute_core::testing::reduced`) the smallest graph of each shape, and option sweeps in
//! which each value runs once (`groute_core::testing::combinations`).

use std::time::Duration;

use groute_core::Context;
use groute_core::cuda::{GpuSharing, PeerGroup};
use groute_core::testing::{
    GpuHold, GpuTest, combinations, cuda_test, first, full_or_reduced, pick,
};
use groute_graph::Graph;
use groute_graph::testing::{from_triples, generated, in_blocks};
use groute_sssp::{SsspError, SsspOptions, SsspResult, sssp, sssp_reference};
use groute_worklist::traversal::{FusedBarrier, FusedDriver, FusedMode};

/// A CUDA context of `devices` devices, sharing the GPU with this binary's other tests but the
/// device-driven one (`None` when CUDA is not tested).
fn cuda(devices: usize) -> Option<GpuTest> {
    cuda_test(devices, None, GpuHold::Shared)
}

fn options(mode: FusedMode) -> SsspOptions {
    let mut o = SsspOptions::default();
    o.worklist.time_limit = Some(groute_core::testing::scaled(Duration::from_secs(60)));
    o.worklist.fused = mode;
    o
}

/// SSSP from `source` on `ctx`, over `graph` cut into a block per device.
fn run(
    ctx: &Context,
    graph: &Graph,
    source: u32,
    o: &SsspOptions,
) -> Result<SsspResult, SsspError> {
    sssp(ctx, &in_blocks(graph, ctx.num_devices())?, source, o)
}

fn graphs() -> Vec<Graph> {
    let big = u32::MAX / 2 - 1;
    // On reduced inputs only the larger Kronecker graph: its hubs (degree >= 2048) come in
    // rounds after hub-free ones, improved several times a round.
    let mut gs: Vec<Graph> = pick(
        [
            "kron:scale=12,ef=16,sym,seed=3,weights=1..64:5",
            "kron:scale=16,ef=16,sym,seed=3,weights=1..64:5",
        ],
        &[1],
    )
    .into_iter()
    .map(generated)
    .collect();
    gs.extend([
        generated("road:side=64,p=0.6,seed=5,weights=1..1000:2"),
        generated("random:n=2000,m=6000,seed=7,weights=0..3:4"),
        generated("random:n=500,m=2500,seed=8,keepdup,weights=1..50:6"),
        from_triples(1, &[], "single vertex"),
        from_triples(
            6,
            &[
                (0, 0, 5),
                (0, 1, 2),
                (1, 1, 0),
                (1, 2, 7),
                (2, 3, 1),
                (3, 4, 0),
                (4, 5, 3),
            ],
            "self-loops",
        ),
        from_triples(
            8,
            &[(0, 1, 4), (1, 0, 4), (5, 6, 1), (6, 7, 2), (7, 7, 9)],
            "disconnected",
        ),
        from_triples(
            5,
            &[
                (0, 1, big),
                (1, 2, big),
                (2, 3, big),
                (3, 4, 0),
                (0, 4, u32::MAX),
            ],
            "saturating",
        ),
    ]);
    let shipped = groute_graph::shipped_graphs();
    assert!(
        shipped.len() >= 3,
        "expected the repository's datasets/ graphs"
    );
    gs.extend(first(shipped, 1));
    gs
}

/// [`graphs`] with at least one vertex per device of `devices`.
fn graphs_for(devices: usize) -> Vec<Graph> {
    graphs()
        .into_iter()
        .filter(|g| g.num_vertices() >= devices)
        .collect()
}

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

/// The single-block mode's shared frontier (`fused_tuning.solo_shared`) on and off, with and without
/// direct atomicMin in that mode, with and without soft priority, on both builds (blocks of up
/// to 256 threads keep no frontier) and bounds from a few items to none: always Dijkstra.
#[test]
fn the_single_block_frontier_equals_dijkstra_either_way() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let mut gs = vec![
        generated("road:side=96,p=0.6,seed=21,weights=1..100:3"),
        generated("road:side=64,p=0.6,seed=22,weights=1000..1500:4"),
        weighted_fan_chain(),
    ];
    gs.extend(graphs());
    let blocks = [64, 1024];
    let solos = [None, Some(3), Some(1500), Some(u32::MAX)];
    let settings = [
        (false, false, Some(0)),
        (true, false, Some(0)),
        (true, true, Some(0)),
        (false, false, None),
        (true, false, None),
        (true, true, None),
    ];
    let sweep = combinations([gs.len(), 2, blocks.len(), solos.len(), settings.len()]);
    for [gi, si, bi, oi, ti] in sweep {
        let g = &gs[gi];
        let n = g.num_vertices() as u32;
        let s = [0, n / 2][si];
        let (block, solo, (shared, direct, prio)) = (blocks[bi], solos[oi], settings[ti]);
        let expected = sssp_reference(&g.csr, s);
        let mut o = options(FusedMode::On);
        o.worklist.fused_tuning.block = Some(block);
        o.worklist.fused_tuning.solo_max = solo;
        o.worklist.fused_tuning.solo_shared = shared;
        o.worklist.fused_tuning.solo_direct_min = direct;
        o.worklist.prio_delta = prio;
        let label = format!(
            "{} from {s}: block {block}, solo {solo:?}, shared {shared}, solo \
             direct min {direct}, prio {prio:?}",
            g.name
        );
        let r = run(&ctx, g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.distances, expected, "{label}");
        assert!(r.stats.fused, "{label}");
        assert!(r.stats.work_items >= r.reached() as u64, "{label}");
        // Every item produced (listed, or moved back from a low list) was
        // expanded exactly once, the source too.
        let d = &r.stats.worklist.devices[0];
        assert_eq!(d.items_processed, d.items_produced + 1, "{label}");
    }
}

/// The single-block mode on a cluster of four blocks (`fused_tuning.cluster`, the default where the
/// GPU has clusters and every list is under 32 arcs) and on one block: Dijkstra on weighted
/// road grids, a grid with zero weights and an unweighted one, from two sources, with bounds
/// from one item to none, with the default band (soft priority deferring to the low lists
/// from inside the cluster's levels), a narrow one and none; the cluster's levels counted where
/// it runs (compute capability 9.0 or later).
#[test]
fn the_cluster_mode_equals_dijkstra_either_way() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let clusters = ctx.devices()[0].properties().compute_capability >= (9, 0);
    let gs = [
        generated("road:side=96,p=0.6,seed=41,weights=1..100:3"),
        generated("road:side=80,p=0.6,seed=42,weights=1000..1500:4"),
        generated("road:side=50,p=0.7,seed=43,weights=0..3:5"),
        generated("road:side=60,p=0.8,seed=44"),
    ];
    let solos = [None, Some(1), Some(300), Some(u32::MAX)];
    let (clusters_asked, prios) = ([true, false], [None, Some(50), Some(0)]);
    let sweep = combinations([gs.len(), 2, solos.len(), clusters_asked.len(), prios.len()]);
    for [gi, si, oi, ci, pi] in sweep {
        let g = &gs[gi];
        let n = g.num_vertices() as u32;
        let s = [0, n / 2][si];
        let (solo, cluster, prio) = (solos[oi], clusters_asked[ci], prios[pi]);
        let expected = sssp_reference(&g.csr, s);
        let mut o = options(FusedMode::On);
        o.worklist.fused_tuning.block = Some(1024);
        o.worklist.fused_tuning.solo_max = solo;
        o.worklist.fused_tuning.cluster = Some(cluster);
        o.worklist.prio_delta = prio;
        let label = format!(
            "{} from {s}: solo {solo:?}, cluster {cluster}, prio {prio:?}",
            g.name
        );
        let r = run(&ctx, g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.distances, expected, "{label}");
        let d = &r.stats.worklist.devices[0];
        assert_eq!(d.items_processed, d.items_produced + 1, "{label}");
        if cluster && clusters && r.reached() > 2 {
            assert!(d.solo_cluster_rounds > 0, "{label}: ran on one block");
        }
        if !cluster {
            assert_eq!(d.solo_cluster_rounds, 0, "{label}");
        }
    }
}

/// The shared frontier in bounded fused rounds on two devices, on and off, with the default
/// band and without.
#[test]
fn bounded_rounds_with_the_single_block_frontier_equal_dijkstra() {
    let Some(ctx) = cuda(2) else {
        return;
    };
    let graphs = [
        generated("road:side=80,p=0.6,seed=23,weights=1000..1500:5"),
        weighted_fan_chain(),
    ];
    let level_budgets = [Some(1), Some(6), None];
    let settings = [
        (false, false, None),
        (true, false, None),
        (true, true, Some(0)),
        (true, false, Some(0)),
    ];
    for [gi, li, ti] in combinations([graphs.len(), level_budgets.len(), settings.len()]) {
        let (g, levels, (shared, direct, prio)) = (&graphs[gi], level_budgets[li], settings[ti]);
        let expected = sssp_reference(&g.csr, 0);
        let mut o = options(FusedMode::On);
        o.worklist.fused_driver = FusedDriver::Host;
        o.worklist.fused_tuning.round_levels = levels;
        o.worklist.fused_tuning.solo_shared = shared;
        o.worklist.fused_tuning.solo_direct_min = direct;
        o.worklist.prio_delta = prio;
        let label = format!(
            "{}: levels {levels:?}, shared {shared}, solo direct min {direct}, prio \
             {prio:?}",
            g.name
        );
        let r = run(&ctx, g, 0, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.distances, expected, "{label}");
        assert!(r.stats.fused, "{label}");
    }
}

/// Bounded fused rounds on 2 and 3 devices (`--fused --devices N`) on weighted graphs of every
/// shape, with the default band (the host's epochs across devices), without soft priority, and
/// with one level per launch.
#[test]
fn bounded_fused_rounds_on_several_devices_equal_dijkstra() {
    for devices in [2, 3] {
        let Some(ctx) = cuda(devices) else {
            return;
        };
        let graphs = graphs_for(devices);
        let settings = [(None, None), (Some(1), Some(0)), (Some(7), Some(3))];
        for [gi, si, ti] in combinations([graphs.len(), 2, settings.len()]) {
            let g = &graphs[gi];
            let n = g.num_vertices() as u32;
            let s = [0, n / 2][si];
            let (levels, prio) = settings[ti];
            let expected = sssp_reference(&g.csr, s);
            let mut o = options(FusedMode::On);
            o.worklist.fused_driver = FusedDriver::Host;
            o.worklist.fused_tuning.round_levels = levels;
            o.worklist.prio_delta = prio;
            let label = format!(
                "{} from {s} on {devices} devices, levels {levels:?}, prio {prio:?}",
                g.name
            );
            let r = run(&ctx, g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(r.distances, expected, "{label}");
            assert!(r.stats.fused, "{label}");
        }
    }
}

/// Device-driven fused runs (`--fused-driver device`) in a group of one and on 2 and 3
/// devices (distinct GPUs with peer access, or members sharing GPUs where there are fewer,
/// each on its share), on weighted graphs of every shape, with
/// the default band (each device's own epochs), without soft priority and without the
/// single-block mode, its single-block mode on a cluster (the default) and on one block; at
/// the end every listed or unlisted item was expanded once and every published item received,
/// and the traffic adds up (`traffic_adds_up`).
#[test]
fn device_driven_fused_runs_on_several_devices_equal_dijkstra() {
    for devices in [1, 2, 3] {
        // Alone: members sharing a GPU start only beside no other test's kernel.
        let Some(ctx) = cuda_test(devices, None, GpuHold::Alone) else {
            return;
        };
        // Distinct GPUs, or members sharing one (virtual devices), each on its share.
        if PeerGroup::check_sharing(&ctx, GpuSharing::Split).is_err() {
            continue;
        }
        // Over the runs on these devices: whether some run sent updates.
        let mut crossed = false;
        let graphs = graphs_for(devices);
        let settings = [
            (None, None, true),
            (None, None, false),
            (None, Some(0), true),
            (None, Some(0), false),
            (Some(0), Some(3), true),
        ];
        for [gi, si, ti] in combinations([graphs.len(), 2, settings.len()]) {
            let g = &graphs[gi];
            let n = g.num_vertices() as u32;
            let s = [0, n / 2][si];
            let (solo, prio, cluster) = settings[ti];
            let expected = sssp_reference(&g.csr, s);
            let mut o = options(FusedMode::On);
            o.worklist.fused_driver = FusedDriver::Device;
            o.worklist.fused_tuning.solo_max = solo;
            o.worklist.fused_tuning.cluster = Some(cluster);
            o.worklist.prio_delta = prio;
            let label = format!(
                "{} from {s} on {devices} devices, solo {solo:?}, prio {prio:?}, \
                 cluster {cluster}",
                g.name
            );
            let r = run(&ctx, g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(r.distances, expected, "{label}");
            assert!(r.stats.fused, "{label}");
            let w = &r.stats.worklist;
            assert!(w.device_driven, "{label}: not device-driven");
            assert_eq!(w.items_processed(), w.items_produced() + 1, "{label}");
            assert_eq!(w.items_sent(), w.items_received(), "{label}");
            traffic_adds_up(w, devices, &label);
            crossed |= w.items_sent() > 0;
        }
        // The large graphs cross the block partition's cuts.
        assert_eq!(crossed, devices > 1, "{devices} devices: updates sent");
    }
}

/// The traffic counters of a device-driven run on `devices` devices: every batch published
/// (`segments_sent`) carried at least one item; on two devices every item sent is a remote
/// update (nothing is passed on), on more they are not counted apart (0); none is sent on one.
fn traffic_adds_up(w: &groute_worklist::WorklistStats, devices: usize, label: &str) {
    for (d, s) in w.devices.iter().enumerate() {
        assert!(s.segments_sent <= s.items_sent, "{label}: device {d}");
        assert_eq!(
            s.segments_sent > 0,
            s.items_sent > 0,
            "{label}: device {d} published its sends"
        );
        assert_eq!(s.cut_arcs_traversed, None, "{label}: device {d}");
    }
    let (sent, remote) = (w.items_sent(), w.remote_updates());
    assert_eq!(w.counts_remote_updates(), devices <= 2, "{label}");
    match devices {
        1 => assert_eq!((sent, w.segments_sent()), (0, 0), "{label}"),
        2 => assert_eq!(remote, sent, "{label}: every item sent is a remote update"),
        _ => assert_eq!(remote, 0, "{label}: not counted apart from items passed on"),
    }
}

#[test]
fn fused_equals_dijkstra_and_the_per_round_mode_on_one_cuda_device() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let graphs = graphs();
    for [gi, si] in combinations([graphs.len(), 3]) {
        let g = &graphs[gi];
        let n = g.num_vertices() as u32;
        let s = [0, n / 2, n - 1][si];
        let expected = sssp_reference(&g.csr, s);
        let fused = run(&ctx, g, s, &options(FusedMode::On))
            .unwrap_or_else(|e| panic!("{} from {s}, fused: {e}", g.name));
        let per_round = run(&ctx, g, s, &options(FusedMode::Off))
            .unwrap_or_else(|e| panic!("{} from {s}, per round: {e}", g.name));
        assert_eq!(fused.distances, expected, "{} from {s}, fused", g.name);
        assert_eq!(per_round.distances, fused.distances, "{} from {s}", g.name);
        assert!(fused.stats.fused && !per_round.stats.fused);
        assert!(
            fused.stats.work_items >= fused.reached() as u64,
            "{}",
            g.name
        );
    }
}

#[test]
fn fused_soft_priority_equals_dijkstra_in_every_solo_mode() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let graphs = graphs();
    let prios = [Some(1), Some(37), None, Some(0)];
    let solos = [Some(0), None, Some(u32::MAX)];
    for [gi, si, pi, oi] in combinations([graphs.len(), 2, prios.len(), solos.len()]) {
        let g = &graphs[gi];
        let n = g.num_vertices() as u32;
        let s = [0, n / 2][si];
        let (prio, solo) = (prios[pi], solos[oi]);
        let expected = sssp_reference(&g.csr, s);
        let mut o = options(FusedMode::On);
        o.worklist.prio_delta = prio;
        o.worklist.fused_tuning.solo_max = solo;
        let label = format!("{} from {s}, prio {prio:?}, solo {solo:?}", g.name);
        let r = run(&ctx, g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.distances, expected, "{label}");
        assert!(r.stats.fused, "{label}");
        assert_eq!(r.stats.worklist.epochs, r.stats.epochs, "{label}");
        if prio == Some(0) {
            assert_eq!((r.stats.epochs, r.stats.items_deferred), (0, 0), "{label}");
        }
    }
}

/// The barrier variants and block sizes of the fused kernel (`FusedBarrier`, `fused_tuning.block`),
/// with SSSP's soft priority (re-examine phases) and without, in and out of single-block mode.
#[test]
fn fused_block_sizes_and_barrier_variants_equal_dijkstra() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let g = generated("road:side=48,p=0.6,seed=6");
    let expected = sssp_reference(&g.csr, 0);
    let blocks = [32, 256, 1024];
    let barriers = [(20, false, false), (0, true, false), (0, false, true)];
    let grids = [None, Some(1), Some(5)];
    let settings = [
        (Some(0), Some(0), false),
        (None, None, false),
        (Some(0), None, false),
        (None, None, true),
        (Some(0), Some(0), true),
    ];
    let sweep = combinations([blocks.len(), barriers.len(), grids.len(), settings.len()]);
    for [bi, ri, gi, ti] in sweep {
        let (block, (spin_ns, fenced, tagged)) = (blocks[bi], barriers[ri]);
        let (grid, (solo, prio, direct)) = (grids[gi], settings[ti]);
        let mut o = options(FusedMode::On);
        o.worklist.fused_tuning.block = Some(block);
        o.worklist.fused_tuning.barrier = FusedBarrier {
            spin_ns,
            fenced,
            tagged,
        };
        o.worklist.fused_tuning.grid = grid;
        o.worklist.fused_tuning.solo_max = solo;
        o.worklist.prio_delta = prio;
        o.worklist.fused_tuning.direct_min = direct;
        let label = format!(
            "block {block}, spin {spin_ns}, fenced {fenced}, tagged {tagged}, grid \
             {grid:?}, solo {solo:?}, prio {prio:?}, direct min {direct}"
        );
        let r = run(&ctx, &g, 0, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.distances, expected, "{label}");
        assert!(r.stats.fused, "{label}");
    }
}

#[test]
fn fused_soft_priority_defers_and_cuts_work_on_a_road_grid() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let side: u32 = full_or_reduced(64, 40);
    let g = generated(&format!("road:side={side},p=0.6,seed=4,weights=1..100:7"));
    let source = side * side / 2 + side / 2;
    let expected = sssp_reference(&g.csr, source);
    let mut plain = options(FusedMode::On);
    plain.worklist.prio_delta = Some(0);
    let without = run(&ctx, &g, source, &plain).unwrap();
    for solo in [Some(0), None] {
        let mut o = options(FusedMode::On);
        o.worklist.fused_tuning.solo_max = solo;
        let with = run(&ctx, &g, source, &o).unwrap();
        assert_eq!(with.distances, expected, "solo {solo:?}");
        assert_eq!(without.distances, expected);
        assert_eq!(
            with.stats.prio_delta,
            groute_sssp::default_prio_delta(&g.csr)
        );
        assert!(
            with.stats.epochs > 0 && with.stats.items_deferred > 0,
            "solo {solo:?}"
        );
        let reached = with.reached() as u64;
        assert!(
            with.stats.work_items <= 3 * reached,
            "solo {solo:?}: {} work items with priority for {reached} vertices (without: {})",
            with.stats.work_items,
            without.stats.work_items
        );
    }
}

#[test]
fn the_host_backend_runs_the_fused_mode_as_its_persistent_members() {
    let g = generated("road:side=16,p=0.7,seed=4,weights=1..20:3");
    let expected = sssp_reference(&g.csr, 0);
    for devices in [1, 3] {
        let ctx = Context::host(devices).unwrap();
        for mode in [FusedMode::On, FusedMode::Off] {
            let r = run(&ctx, &g, 0, &options(mode)).unwrap();
            assert_eq!(r.distances, expected, "{devices} devices, {mode:?}");
            assert_eq!(r.stats.fused, mode == FusedMode::On, "{devices} devices");
            assert_eq!(r.stats.worklist.device_driven, mode == FusedMode::On);
        }
    }
}

#[test]
fn a_fused_worklist_overflow_fails_naming_the_setting() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let g = generated("kron:scale=12,ef=16,sym,seed=4,weights=1..9:1");
    let mut o = options(FusedMode::On);
    o.worklist.wl_capacity = Some(1);
    let err = run(&ctx, &g, 0, &o).unwrap_err();
    assert!(err.to_string().contains("--wl-capacity"), "{err}");
}
