//! The fused persistent kernel (`--fused`): on one CUDA device it equals the sequential
//! reference and the per-round mode, counts its rounds and work, fails clearly on overflow,
//! a bad grid or the time limit, with and without its single-block mode and soft priority,
//! with its single-block mode as levels or as a barrier-free queue (SOLO-ASYNC), and on
//! several devices runs fused (On, and Auto on sparse graphs): device-driven (one persistent
//! kernel per device) or in bounded rounds between the host's exchanges.
//! The CUDA tests run under `GROUTE_TEST_CUDA=1`; the host backend ignores the mode.

mod common;

use std::time::Duration;

use common::{
    cuda, cuda_alone, cuda_alone_on, cuda_one_gpu, fan_chain, from_pairs, fused_options, generated,
    graphs, hub_ladder, run,
};
use groute_bfs::{BfsError, BfsOptions, UNREACHED, bfs_reference};
use groute_core::Context;
use groute_core::cuda::{GpuSharing, PEER_MAX_DEVICES, PeerGroup};
use groute_worklist::WorklistError;
use groute_worklist::traversal::{FusedBarrier, FusedDriver, FusedMode};

fn options(mode: FusedMode) -> BfsOptions {
    fused_options(mode)
}

#[test]
fn fused_equals_the_reference_and_the_per_round_mode_on_one_cuda_device() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    for g in graphs() {
        let n = g.num_vertices() as u32;
        for s in [0, n / 2, n - 1] {
            let expected = bfs_reference(&g.csr, s);
            let fused = run(&ctx, &g, s, &options(FusedMode::On))
                .unwrap_or_else(|e| panic!("{} from {s}, fused: {e}", g.name));
            let per_round = run(&ctx, &g, s, &options(FusedMode::Off))
                .unwrap_or_else(|e| panic!("{} from {s}, per round: {e}", g.name));
            assert_eq!(fused.levels, expected, "{} from {s}, fused", g.name);
            assert_eq!(per_round.levels, fused.levels, "{} from {s}", g.name);
            assert!(fused.stats.fused && !per_round.stats.fused);
            assert!(fused.stats.device_time.is_some());
            // Every reached vertex is expanded at least once, in at least depth + 1 rounds.
            assert!(
                fused.stats.work_items >= fused.reached() as u64,
                "{}",
                g.name
            );
            assert!(fused.stats.rounds > u64::from(fused.depth()), "{}", g.name);
            assert_eq!(fused.stats.items_sent, 0);
        }
    }
}

#[test]
fn fused_hub_rounds_agree_with_the_reference_on_every_grid() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let g = hub_ladder();
    for source in [0, 1, 10, 21] {
        let expected = bfs_reference(&g.csr, source);
        for grid in [None, Some(1), Some(2), Some(7), Some(64)] {
            for solo in [Some(0), None, Some(u32::MAX)] {
                let mut o = options(FusedMode::On);
                o.worklist.fused_grid = grid;
                o.worklist.fused_solo_max = solo;
                let label = format!("from {source}, grid {grid:?}, solo {solo:?}");
                let r = run(&ctx, &g, source, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
                assert_eq!(r.levels, expected, "{label}");
            }
        }
    }
}

/// The barrier variants and block sizes of the fused kernel (`FusedBarrier`, `fused_block`):
/// acquire/release or fenced ordering, polling with and without sleeping, blocks of one warp
/// to 1,024 threads (the wide build), on grids of one block to 64, in and out of single-block
/// mode, with hub rounds and with soft priority.
#[test]
fn fused_block_sizes_and_barrier_variants_agree_with_the_reference() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let barriers = [
        (20, false, false),
        (0, false, false),
        (20, true, false),
        (0, false, true),
        (20, true, true),
    ];
    for g in [hub_ladder(), generated("road:side=48,p=0.6,seed=8")] {
        let expected = bfs_reference(&g.csr, 0);
        for block in [32, 256, 512, 1024] {
            for (spin_ns, fenced, tagged) in barriers {
                for grid in [None, Some(1), Some(3), Some(64)] {
                    for (solo, prio, direct) in [
                        (Some(0), None, false),
                        (None, None, false),
                        (None, Some(2), false),
                        (Some(0), None, true),
                        (None, Some(2), true),
                    ] {
                        let mut o = options(FusedMode::On);
                        o.worklist.fused_block = Some(block);
                        o.worklist.fused_barrier = FusedBarrier {
                            spin_ns,
                            fenced,
                            tagged,
                        };
                        o.worklist.fused_grid = grid;
                        o.worklist.fused_solo_max = solo;
                        o.worklist.prio_delta = prio;
                        o.worklist.fused_direct_min = direct;
                        let label = format!(
                            "{}: block {block}, spin {spin_ns}, fenced {fenced}, tagged {tagged}, \
                             grid {grid:?}, solo {solo:?}, prio {prio:?}, direct min {direct}",
                            g.name
                        );
                        let r = run(&ctx, &g, 0, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
                        assert_eq!(r.levels, expected, "{label}");
                        assert!(r.stats.rounds > u64::from(r.depth()), "{label}");
                    }
                }
            }
        }
    }
}

/// The single-block mode's shared frontier (`fused_solo_shared`) on and off, with and without
/// direct atomicMin in that mode, on road grids (long runs of small levels), a fan chain (lists
/// of every granularity appended and read back from the frontier, a hub ending the mode) and
/// the hub ladder, on both builds (blocks of up to 256 threads keep no frontier), with bounds
/// from one item to none (the frontier holds two items per thread; levels larger than it read
/// the rest from the worklist),
/// with soft priority, and as SOLO-ASYNC (`fused_solo_async`, the wide build: a barrier-free
/// queue whose 2,048-entry ring the fans and hubs fill, spilling to the worklist): always the
/// reference, and single-block phases where the mode is on.
#[test]
fn the_single_block_frontier_agrees_with_the_reference_either_way() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let graphs = [
        generated("road:side=96,p=0.6,seed=11"),
        generated("road:side=40,p=0.9,seed=12"),
        fan_chain(),
        hub_ladder(),
    ];
    for g in &graphs {
        let expected = bfs_reference(&g.csr, 0);
        for block in [64, 256, 512, 1024] {
            for solo in [None, Some(1), Some(37), Some(1500), Some(u32::MAX)] {
                for (shared, direct, prio, solo_async) in [
                    (false, false, None, false),
                    (true, false, None, false),
                    (true, true, None, false),
                    (false, true, None, false),
                    (true, false, Some(2), false),
                    (true, false, None, true),
                    (true, true, None, true),
                    (true, false, Some(2), true),
                ] {
                    let mut o = options(FusedMode::On);
                    o.worklist.fused_block = Some(block);
                    o.worklist.fused_solo_max = solo;
                    o.worklist.fused_solo_shared = shared;
                    o.worklist.fused_solo_direct_min = direct;
                    o.worklist.prio_delta = prio;
                    o.worklist.fused_solo_async = solo_async;
                    let label = format!(
                        "{}: block {block}, solo {solo:?}, shared {shared}, solo direct min \
                         {direct}, prio {prio:?}, solo async {solo_async}",
                        g.name
                    );
                    let r = run(&ctx, g, 0, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
                    assert_eq!(r.levels, expected, "{label}");
                    assert!(r.stats.work_items >= r.reached() as u64, "{label}");
                    // Every item produced (listed, in SOLO-ASYNC's ring, moved back from a
                    // low list) was expanded exactly once, the seed too: the counts the
                    // host's `outstanding` is made of (issue #6: ring items were not counted
                    // as produced).
                    let d = &r.stats.worklist.devices[0];
                    assert_eq!(d.items_processed, d.items_produced + 1, "{label}");
                    if r.depth() > 2 {
                        assert!(r.stats.worklist.solo_rounds() > 0, "{label}");
                    }
                }
            }
        }
    }
}

/// A tree of `fanout`^3 leaves: levels of 1, `fanout`, `fanout`^2 and `fanout`^3 items, every
/// list under 32 arcs (the cluster mode's graphs) while the last level outgrows the cluster's
/// 4,096 frontier entries.
fn wide_tree(fanout: u32) -> groute_graph::Graph {
    let mut pairs = Vec::new();
    let mut level = vec![0u32];
    let mut next_id = 1u32;
    for _ in 0..3 {
        let mut children = Vec::new();
        for &v in &level {
            for _ in 0..fanout {
                pairs.push((v, next_id));
                children.push(next_id);
                next_id += 1;
            }
        }
        level = children;
    }
    from_pairs(next_id as usize, &pairs, "wide tree")
}

/// The single-block mode on a cluster of four blocks (`fused_cluster`, the default where the
/// GPU has clusters and every list is under 32 arcs: kernels/include/cluster_solo.cuh) and on
/// one block: the reference on road grids (p from 0.5 to 1), a sparse random graph, a path and
/// a wide tree (a level past the cluster's frontiers, read from the worklist, and past the
/// bound, handed to the grid), from several sources, with bounds from one item to none, with
/// soft priority; the cluster's levels counted where it runs (compute capability 9.0 or later),
/// none where it was not asked for.
#[test]
fn the_cluster_mode_agrees_with_the_reference_either_way() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let clusters = ctx.devices()[0].properties().compute_capability >= (9, 0);
    let chain: Vec<(u32, u32)> = (0..2999).map(|i| (i, i + 1)).collect();
    let graphs = [
        generated("road:side=96,p=0.6,seed=31"),
        generated("road:side=150,p=0.5,seed=32"),
        generated("road:side=64,p=1,seed=33"),
        generated("random:n=5000,m=12000,seed=34"),
        from_pairs(3000, &chain, "directed path"),
        wide_tree(30),
    ];
    for g in &graphs {
        let n = g.num_vertices() as u32;
        let max_degree = g
            .csr
            .offsets()
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap();
        for s in [0, n / 2] {
            let expected = bfs_reference(&g.csr, s);
            for block in [512, 1024] {
                for solo in [None, Some(1), Some(7), Some(300), Some(u32::MAX)] {
                    for (cluster, prio) in [
                        (true, None),
                        (true, Some(2)),
                        (false, None),
                        (false, Some(2)),
                    ] {
                        let mut o = options(FusedMode::On);
                        o.worklist.fused_block = Some(block);
                        o.worklist.fused_solo_max = solo;
                        o.worklist.fused_cluster = Some(cluster);
                        o.worklist.prio_delta = prio;
                        let label = format!(
                            "{} from {s}: block {block}, solo {solo:?}, cluster {cluster}, prio \
                             {prio:?}",
                            g.name
                        );
                        let r = run(&ctx, g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
                        assert_eq!(r.levels, expected, "{label}");
                        let d = &r.stats.worklist.devices[0];
                        assert_eq!(d.items_processed, d.items_produced + 1, "{label}");
                        let on = cluster && clusters && max_degree < 32;
                        if on && r.depth() > 2 {
                            assert!(d.solo_cluster_rounds > 0, "{label}: ran on one block");
                        }
                        if !on {
                            assert_eq!(d.solo_cluster_rounds, 0, "{label}");
                        }
                        assert!(d.solo_cluster_rounds <= d.solo_rounds, "{label}");
                    }
                }
            }
        }
    }
}

/// The shared frontier in bounded fused rounds on several devices (each device's
/// single-block levels between the host's exchanges): on and off, one level per launch to
/// unbounded, with soft priority.
#[test]
fn bounded_rounds_with_the_single_block_frontier_equal_the_reference() {
    let Some(ctx) = cuda(2) else {
        return;
    };
    for g in [generated("road:side=80,p=0.6,seed=13"), fan_chain()] {
        let expected = bfs_reference(&g.csr, 0);
        for levels in [Some(1), Some(5), None] {
            for (shared, direct, prio) in [
                (false, false, None),
                (true, false, None),
                (true, true, Some(3)),
            ] {
                let mut o = options(FusedMode::On);
                o.worklist.fused_driver = FusedDriver::Host;
                o.worklist.fused_round_levels = levels;
                o.worklist.fused_solo_shared = shared;
                o.worklist.fused_solo_direct_min = direct;
                o.worklist.prio_delta = prio;
                let label = format!(
                    "{}: levels {levels:?}, shared {shared}, solo direct min {direct}, prio \
                     {prio:?}",
                    g.name
                );
                let r = run(&ctx, &g, 0, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
                assert_eq!(r.levels, expected, "{label}");
                assert!(r.stats.fused, "{label}");
            }
        }
    }
}

#[test]
fn bad_fused_tuning_fails_naming_the_setting() {
    let g = generated("road:side=16,p=0.6,seed=1");
    // A zero level budget is refused on every backend and device count, bounded or not.
    for devices in [1, 2] {
        let host = Context::host(devices).unwrap();
        let mut o = options(FusedMode::Auto);
        o.worklist.fused_round_levels = Some(0);
        let err = run(&host, &g, 0, &o).unwrap_err().to_string();
        assert!(err.contains("--fused-round-levels"), "{devices}: {err}");
    }
    let Some(ctx) = cuda(1) else {
        return;
    };
    for block in [0, 48, 2048] {
        let mut o = options(FusedMode::On);
        o.worklist.fused_block = Some(block);
        let err = run(&ctx, &g, 0, &o).unwrap_err().to_string();
        assert!(err.contains("--fused-block"), "{block}: {err}");
    }
    let mut o = options(FusedMode::On);
    o.worklist.fused_barrier.spin_ns = u32::MAX;
    let err = run(&ctx, &g, 0, &o).unwrap_err().to_string();
    assert!(err.contains("--fused-spin-ns"), "{err}");
    // A grid far beyond every resident block.
    let mut o = options(FusedMode::On);
    o.worklist.fused_block = Some(1024);
    o.worklist.fused_grid = Some(64 * 1024);
    let err = run(&ctx, &g, 0, &o).unwrap_err().to_string();
    assert!(err.contains("--fused-grid"), "{err}");
}

#[test]
fn fused_bfs_with_soft_priority_equals_the_reference() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    for g in [
        generated("road:side=64,p=0.6,seed=5"),
        generated("kron:scale=16,ef=16,sym,seed=3"),
        hub_ladder(),
    ] {
        let expected = bfs_reference(&g.csr, 0);
        for delta in [1, 3] {
            let mut o = options(FusedMode::On);
            o.worklist.prio_delta = Some(delta);
            let r =
                run(&ctx, &g, 0, &o).unwrap_or_else(|e| panic!("{}, delta {delta}: {e}", g.name));
            assert_eq!(r.levels, expected, "{}, delta {delta}", g.name);
            if r.depth() > delta + 1 {
                assert!(
                    r.stats.epochs > 0 && r.stats.items_deferred > 0,
                    "{}",
                    g.name
                );
            }
        }
    }
}

#[test]
fn several_devices_run_bounded_fused_rounds_on_sparse_graphs_or_when_asked() {
    let g = generated("road:side=24,p=0.6,seed=2");
    let expected = bfs_reference(&g.csr, 0);
    if let Some(ctx) = cuda(1) {
        let r = run(&ctx, &g, 0, &options(FusedMode::Auto)).unwrap();
        assert!(r.stats.fused);
        assert_eq!(r.levels, expected);
    }
    let Some(ctx) = cuda(2) else {
        return;
    };
    // A sparse graph: bounded fused rounds on several devices, unless turned off.
    let r = run(&ctx, &g, 0, &options(FusedMode::Auto)).unwrap();
    assert!(r.stats.fused);
    assert_eq!(r.levels, expected);
    let r = run(&ctx, &g, 0, &options(FusedMode::Off)).unwrap();
    assert!(!r.stats.fused);
    assert_eq!(r.levels, expected);
    // A dense one: one launch per level, unless asked for.
    let dense = generated("kron:scale=10,ef=16,sym,seed=3");
    let expected = bfs_reference(&dense.csr, 1);
    let r = run(&ctx, &dense, 1, &options(FusedMode::Auto)).unwrap();
    assert!(!r.stats.fused);
    assert_eq!(r.levels, expected);
    let r = run(&ctx, &dense, 1, &options(FusedMode::On)).unwrap();
    assert!(
        r.stats.fused,
        "On runs bounded fused rounds on several devices"
    );
    assert_eq!(r.levels, expected);
}

/// Bounded fused rounds on several devices (`--fused --devices N`): every graph shape, from
/// several sources, with level budgets from one level per launch to more than the graph's
/// depth, in and out of single-block mode, with soft priority (the host's epochs across
/// devices), on 2 and 3 devices.
#[test]
fn bounded_fused_rounds_on_several_devices_equal_the_reference() {
    for devices in [2, 3] {
        let Some(ctx) = cuda(devices) else {
            return;
        };
        for g in graphs().into_iter().filter(|g| g.num_vertices() >= devices) {
            let n = g.num_vertices() as u32;
            for s in [0, n / 2] {
                let expected = bfs_reference(&g.csr, s);
                for (levels, solo, prio) in [
                    (Some(1), None, None),
                    (Some(3), Some(0), None),
                    (None, None, None),
                    (Some(100_000), None, Some(2)),
                ] {
                    let mut o = options(FusedMode::On);
                    o.worklist.fused_driver = FusedDriver::Host;
                    o.worklist.fused_round_levels = levels;
                    o.worklist.fused_solo_max = solo;
                    o.worklist.prio_delta = prio;
                    let label = format!(
                        "{} from {s} on {devices} devices, levels {levels:?}, solo {solo:?}, \
                         prio {prio:?}",
                        g.name
                    );
                    let r = run(&ctx, &g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
                    assert_eq!(r.levels, expected, "{label}");
                    assert!(r.stats.fused, "{label}");
                    assert!(
                        !r.stats.worklist.device_driven,
                        "{label}: host-driven asked"
                    );
                    assert!(r.stats.work_items >= r.reached() as u64, "{label}");
                }
            }
        }
        let mut zero = options(FusedMode::On);
        zero.worklist.fused_round_levels = Some(0);
        let g = generated("road:side=16,p=0.6,seed=2");
        let err = run(&ctx, &g, 0, &zero).unwrap_err().to_string();
        assert!(err.contains("--fused-round-levels"), "{err}");
    }
}

/// Device-driven fused runs (`--fused-driver device`: one persistent kernel per device, items
/// stored into the next device's inbox, termination counted on the devices): every graph
/// shape, from several sources, in and out of single-block mode, with soft priority (each
/// device's own epochs), on 2 and 3 devices (distinct GPUs with peer access, or members
/// sharing GPUs where there are fewer, each on its share) and in a group of one (the members'
/// kernel on one GPU, nothing crossing). At the end every item was expanded where it was
/// listed and every published item was received: the termination count cannot have reached 0
/// early. The GPUs are the test's alone: members sharing one start only beside no other
/// test's kernel.
#[test]
fn device_driven_fused_runs_on_several_devices_equal_the_reference() {
    for devices in [1, 2, 3] {
        let Some(ctx) = cuda_alone_on(devices) else {
            return;
        };
        if !members_can_run(&ctx) {
            let mut o = options(FusedMode::On);
            o.worklist.fused_driver = FusedDriver::Device;
            let g = generated("road:side=16,p=0.6,seed=2");
            let err = run(&ctx, &g, 0, &o).unwrap_err().to_string();
            assert!(err.contains("--fused-driver"), "{devices}: {err}");
            continue;
        }
        for g in graphs().into_iter().filter(|g| g.num_vertices() >= devices) {
            let n = g.num_vertices() as u32;
            for s in [0, n / 2, n - 1] {
                let expected = bfs_reference(&g.csr, s);
                for (solo, shared, prio, cluster) in [
                    (None, true, None, true),
                    (None, true, None, false),
                    (Some(0), true, None, true),
                    (None, false, Some(2), true),
                    (None, true, Some(2), true),
                    (Some(u32::MAX), true, None, true),
                    (Some(u32::MAX), true, None, false),
                ] {
                    let mut o = options(FusedMode::On);
                    o.worklist.fused_driver = FusedDriver::Device;
                    o.worklist.fused_solo_max = solo;
                    o.worklist.fused_solo_shared = shared;
                    o.worklist.fused_cluster = Some(cluster);
                    o.worklist.prio_delta = prio;
                    let label = format!(
                        "{} from {s} on {devices} devices, solo {solo:?}, shared {shared}, \
                         prio {prio:?}, cluster {cluster}",
                        g.name
                    );
                    let r = run(&ctx, &g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
                    assert_eq!(r.levels, expected, "{label}");
                    assert!(r.stats.fused, "{label}");
                    assert!(r.stats.worklist.device_driven, "{label}: not device-driven");
                    assert!(r.stats.work_items >= r.reached() as u64, "{label}");
                    let w = &r.stats.worklist;
                    assert_eq!(
                        w.items_processed(),
                        w.items_produced() + 1,
                        "{label}: every listed item expanded once, the seed too"
                    );
                    assert_eq!(
                        w.items_sent(),
                        w.items_received(),
                        "{label}: every published item received"
                    );
                }
            }
        }
    }
}

/// The single-block mode on a cluster in the members of a device-driven run (the
/// `_peer_cluster` build: each member's cluster 0 runs levels back to back while its block 0's
/// last warp, in a loop of its own, receives, releases and counts for the group,
/// kernels/include/fused.cuh SoloPeerWarp): the reference on road grids cut by the block
/// partition (many levels cross it both ways), a sparse random graph, a path and a wide tree
/// (a level past the cluster's frontiers: spills), from several sources, with bounds from one
/// item to none, with soft priority, in blocks of 1,024 and 512 threads (block 0 expands on
/// all but the peer warp), on 2 and 3 devices and in a group of one; every listed or unlisted
/// item expanded once, every published item received, and the cluster's levels counted where
/// it runs.
#[test]
fn the_cluster_mode_runs_in_device_driven_members() {
    for devices in [1, 2, 3] {
        let Some(ctx) = cuda_alone_on(devices) else {
            return;
        };
        if !members_can_run(&ctx) {
            continue;
        }
        let clusters = ctx.devices()[0].properties().compute_capability >= (9, 0);
        let chain: Vec<(u32, u32)> = (0..2999).flat_map(|i| [(i, i + 1), (i + 1, i)]).collect();
        let graphs = [
            generated("road:side=120,p=0.6,seed=41"),
            generated("road:side=64,p=1,seed=42"),
            generated("random:n=5000,m=12000,seed=43"),
            from_pairs(3000, &chain, "symmetric path"),
            wide_tree(30),
        ];
        for g in &graphs {
            let n = g.num_vertices() as u32;
            for s in [0, n / 2, n - 1] {
                let expected = bfs_reference(&g.csr, s);
                for (solo, prio, block) in [
                    (None, None, 1024),
                    (None, Some(2), 1024),
                    (Some(1), None, 1024),
                    (Some(300), None, 512),
                    (Some(u32::MAX), Some(2), 1024),
                    (Some(u32::MAX), None, 512),
                ] {
                    let mut o = options(FusedMode::On);
                    o.worklist.fused_driver = FusedDriver::Device;
                    o.worklist.fused_block = Some(block);
                    o.worklist.fused_solo_max = solo;
                    o.worklist.fused_cluster = Some(true);
                    o.worklist.prio_delta = prio;
                    let label = format!(
                        "{} from {s} on {devices} devices, block {block}, solo {solo:?}, prio \
                         {prio:?}",
                        g.name
                    );
                    let r = run(&ctx, g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
                    assert_eq!(r.levels, expected, "{label}");
                    let w = &r.stats.worklist;
                    assert!(w.device_driven, "{label}: not device-driven");
                    assert_eq!(w.items_processed(), w.items_produced() + 1, "{label}");
                    assert_eq!(w.items_sent(), w.items_received(), "{label}");
                    let cluster_rounds: u64 = w.devices.iter().map(|d| d.solo_cluster_rounds).sum();
                    if !clusters {
                        assert_eq!(cluster_rounds, 0, "{label}");
                    } else if (g.name.starts_with("road") || (g.name == "wide tree" && s == 0))
                        && solo != Some(1)
                    {
                        // The wide tree's level of 900 items runs on the cluster (unless the
                        // bound is under it) and appends about 27,000 / devices: spills.
                        assert!(cluster_rounds > 0, "{label}: ran on one block");
                    }
                }
            }
        }
    }
}

/// On one device the driver picks the kernel: `Device` runs the members' kernel in a group of
/// one (reported as device-driven), `Auto` and `Host` the one-device kernel, and the
/// asynchronous mode, which has no members' kernel, runs as always under any driver.
#[test]
fn one_device_runs_the_members_kernel_only_when_asked() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let g = generated("road:side=40,p=0.6,seed=5");
    let expected = bfs_reference(&g.csr, 0);
    for (mode, driver, device_driven) in [
        (FusedMode::On, FusedDriver::Auto, false),
        (FusedMode::On, FusedDriver::Host, false),
        (FusedMode::On, FusedDriver::Device, true),
        (FusedMode::Async, FusedDriver::Device, false),
        (FusedMode::Async, FusedDriver::Auto, false),
    ] {
        let mut o = options(mode);
        o.worklist.fused_driver = driver;
        let label = format!("{mode:?} under {driver:?}");
        let r = run(&ctx, &g, 0, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.levels, expected, "{label}");
        assert!(r.stats.fused, "{label}");
        assert_eq!(r.stats.worklist.device_driven, device_driven, "{label}");
    }
}

/// A device-driven run whose inbox rings are far smaller than what crosses the partition over
/// the run: the rings wrap many times (each receiver frees what it read, each sender writes
/// only freed positions), and the result still equals the reference. The GPUs are this
/// test's alone: a member held back by another test's kernel on its GPU cannot read its
/// inbox, so a small ring fills and the run fails naming `--send-capacity` (as it should; seen
/// in 1 of 3 runs of the suite on 2 x H200 while sharing the GPUs).
#[test]
fn small_inbox_rings_wrap_around_in_a_device_driven_run() {
    let Some(ctx) = cuda_alone_on(2) else {
        return;
    };
    if !members_can_run(&ctx) {
        return;
    }
    // Rings of 256 items: what crosses at once is far less (a few items a level, read a
    // level or two later), what crosses over the run far more.
    let ring = 256;
    let g = generated("road:side=600,p=0.6,seed=7");
    let n = g.num_vertices() as u32;
    let mut most_sent = 0;
    for s in [0, n / 2, n - 1] {
        let expected = bfs_reference(&g.csr, s);
        let mut o = options(FusedMode::On);
        o.worklist.fused_driver = FusedDriver::Device;
        o.worklist.send_capacity = Some(ring);
        let r = run(&ctx, &g, s, &o).unwrap_or_else(|e| panic!("from {s}: {e}"));
        assert_eq!(r.levels, expected, "from {s}");
        most_sent = most_sent.max(r.stats.worklist.items_sent());
    }
    assert!(
        most_sent > 2 * ring as u64,
        "{most_sent} items sent at most: the rings never wrapped"
    );
}

/// Members sharing one GPU (virtual devices under `--fused-driver device`) each run on their
/// share of it: the default grids run, equal to the reference with items crossing between the
/// members; Auto runs the same devices host-driven; a grid beyond a member's share is refused
/// naming `--fused-grid` and the share, never launched (it could not start beside its peers);
/// and more members than a group holds are refused naming `--fused-driver`.
#[test]
fn members_sharing_one_gpu_run_on_their_share_of_it() {
    if let Some(ctx) = cuda_one_gpu(PEER_MAX_DEVICES + 1) {
        let g = generated("road:side=40,p=0.6,seed=8");
        let mut o = options(FusedMode::On);
        o.worklist.fused_driver = FusedDriver::Device;
        let err = run(&ctx, &g, 0, &o).unwrap_err().to_string();
        assert!(
            err.contains("--fused-driver") && err.contains(&format!("at most {PEER_MAX_DEVICES}")),
            "{err}"
        );
    }
    for devices in [2, 3] {
        let Some(ctx) = cuda_one_gpu(devices) else {
            return;
        };
        let g = generated("road:side=200,p=0.6,seed=8");
        let s = g.num_vertices() as u32 / 2;
        let expected = bfs_reference(&g.csr, s);
        let mut o = options(FusedMode::On);
        o.worklist.fused_driver = FusedDriver::Device;
        let label = format!("{devices} members on one GPU");
        let r = run(&ctx, &g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.levels, expected, "{label}");
        let w = &r.stats.worklist;
        assert!(w.device_driven, "{label}: not device-driven");
        assert!(w.items_received() > 0, "{label}: nothing crossed");
        assert_eq!(w.items_sent(), w.items_received(), "{label}");
        let auto = run(&ctx, &g, s, &options(FusedMode::On)).unwrap();
        assert_eq!(auto.levels, expected, "{label}, auto");
        assert!(!auto.stats.worklist.device_driven, "{label}, auto");
        // More blocks than any GPU holds resident on one multiprocessor.
        let multiprocessors = ctx.devices()[0].properties().multiprocessors;
        o.worklist.fused_grid = Some(64 * multiprocessors);
        let err = run(&ctx, &g, s, &o).unwrap_err().to_string();
        assert!(
            err.contains("--fused-grid") && err.contains(&format!("1/{devices}")),
            "{label}: {err}"
        );
    }
}

/// Auto picks the device-driven run on several devices with peer access, and the same run
/// repeated on one solver gives the same levels (the inboxes and counters reset per run).
#[test]
fn auto_runs_device_driven_where_the_gpus_allow_it_and_repeats() {
    let Some(ctx) = cuda(2) else {
        return;
    };
    let g = generated("road:side=40,p=0.6,seed=5");
    let n = g.num_vertices();
    // A source whose component spans both devices' halves (block partition), so the run
    // must exchange items.
    let (source, expected) = [0, n / 2, n / 2 - 1, n / 3, n - 1]
        .into_iter()
        .map(|s| (s as u32, bfs_reference(&g.csr, s as u32)))
        .find(|(_, levels)| {
            let reached = |r: std::ops::Range<usize>| levels[r].iter().any(|&l| l != UNREACHED);
            reached(0..n / 2) && reached(n / 2..n)
        })
        .expect("a source of the test grid reaches both halves");
    let devices = ctx.num_devices();
    let parted = groute_graph::partition_graph(
        g.clone(),
        devices,
        groute_graph::PartitionMethod::Block,
        &groute_graph::NoProgress,
    )
    .unwrap();
    let mut solver = groute_bfs::BfsSolver::new(&ctx, &parted, &options(FusedMode::Auto)).unwrap();
    for round in 0..3 {
        let r = solver
            .run(source)
            .unwrap_or_else(|e| panic!("run {round}: {e}"));
        assert_eq!(r.levels, expected, "run {round}");
        assert!(r.stats.fused, "run {round}");
        // Never on devices sharing a GPU: Auto leaves members sharing one to --fused-driver
        // device.
        assert_eq!(
            r.stats.worklist.device_driven,
            PeerGroup::supported(&ctx),
            "run {round}"
        );
        if PeerGroup::supported(&ctx) {
            assert!(
                r.stats.worklist.items_received() > 0,
                "run {round}: the traversal crosses the partition"
            );
        }
    }
}

#[test]
fn auto_fuses_dense_graphs_too() {
    // Kronecker with edge factor 16, symmetrised: about 30 arcs per vertex, above
    // FUSED_SPARSE_MAX_AVERAGE_DEGREE: the fused kernel runs with its dense-graph shape (every
    // resident block, no single-block mode), whose levels then never run single-block.
    let g = generated("kron:scale=10,ef=16,sym,seed=3");
    let average = g.csr.num_edges() as f64 / g.csr.num_vertices() as f64;
    assert!(average > groute_worklist::traversal::FUSED_SPARSE_MAX_AVERAGE_DEGREE);
    let Some(ctx) = cuda(1) else {
        return;
    };
    let source = (0..g.csr.num_vertices() as u32)
        .find(|&v| g.csr.out_degree(v) > 0)
        .unwrap();
    let expected = bfs_reference(&g.csr, source);
    let auto = run(&ctx, &g, source, &options(FusedMode::Auto)).unwrap();
    assert!(auto.stats.fused);
    assert_eq!(auto.stats.worklist.solo_rounds(), 0);
    assert_eq!(auto.levels, expected);
    let off = run(&ctx, &g, source, &options(FusedMode::Off)).unwrap();
    assert!(!off.stats.fused);
    assert_eq!(off.levels, expected);
}

#[test]
fn the_host_backend_ignores_the_fused_mode() {
    let g = generated("road:side=20,p=0.6,seed=4");
    let expected = bfs_reference(&g.csr, 3);
    for devices in [1, 2] {
        let ctx = Context::host(devices).unwrap();
        for mode in [FusedMode::On, FusedMode::Off, FusedMode::Auto] {
            let r = run(&ctx, &g, 3, &options(mode)).unwrap();
            assert_eq!(r.levels, expected, "{devices} devices, {mode:?}");
            assert!(!r.stats.fused);
            assert_eq!(r.stats.device_time, None);
        }
    }
}

#[test]
fn fused_grids_of_any_resident_size_agree() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let g = generated("kron:scale=11,ef=16,sym,seed=9");
    let expected = bfs_reference(&g.csr, 0);
    for grid in [1, 2, 7, 64] {
        for solo in [Some(0), Some(1), None, Some(u32::MAX)] {
            let mut o = options(FusedMode::On);
            o.worklist.fused_grid = Some(grid);
            o.worklist.fused_solo_max = solo;
            let r =
                run(&ctx, &g, 0, &o).unwrap_or_else(|e| panic!("grid {grid}, solo {solo:?}: {e}"));
            assert_eq!(r.levels, expected, "grid {grid}, solo {solo:?}");
            // Every level counts as a round, in single-block mode too.
            assert!(
                r.stats.rounds > u64::from(r.depth()),
                "grid {grid}, solo {solo:?}"
            );
            // With the mode off no level runs in it; with no bound, every one does.
            let solo_rounds = r.stats.worklist.solo_rounds();
            match solo {
                Some(0) => assert_eq!(solo_rounds, 0, "grid {grid}"),
                Some(u32::MAX) => assert_eq!(solo_rounds, r.stats.rounds, "grid {grid}"),
                _ => assert!(solo_rounds <= r.stats.rounds, "grid {grid}, solo {solo:?}"),
            }
        }
    }
    for grid in [0, u32::MAX] {
        let mut o = options(FusedMode::On);
        o.worklist.fused_grid = Some(grid);
        let err = run(&ctx, &g, 0, &o).unwrap_err();
        assert!(err.to_string().contains("--fused-grid"), "{err}");
    }
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
    // SOLO-ASYNC's hand-over (more than 1,024 items queued: written to the worklist)
    // overflows it too.
    o.worklist.fused_solo_async = true;
    o.worklist.fused_block = Some(1024);
    o.worklist.fused_solo_max = Some(1024);
    let err = run(&ctx, &g, 0, &o).unwrap_err();
    assert!(
        err.to_string().contains("--wl-capacity"),
        "solo async: {err}"
    );
    // With room, the same graph succeeds.
    let r = run(&ctx, &g, 0, &options(FusedMode::On)).unwrap();
    assert_eq!(r.levels, bfs_reference(&g.csr, 0));
    // The cluster mode's appends (a tree level of 900 items appending 27,000) overflow it.
    let tree = wide_tree(30);
    let mut o = options(FusedMode::On);
    o.worklist.wl_capacity = Some(1);
    o.worklist.fused_block = Some(1024);
    o.worklist.fused_solo_max = Some(u32::MAX);
    let err = run(&ctx, &tree, 0, &o).unwrap_err();
    assert!(err.to_string().contains("--wl-capacity"), "cluster: {err}");
}

#[test]
fn a_fused_run_past_its_time_limit_is_aborted() {
    let Some(ctx) = cuda_alone() else {
        return;
    };
    // A directed path of 20000 vertices: one round per vertex, far beyond the abort poll.
    let chain: Vec<(u32, u32)> = (0..19_999).map(|i| (i, i + 1)).collect();
    let g = from_pairs(20_000, &chain, "long path");
    let mut o = options(FusedMode::On);
    o.worklist.time_limit = Some(Duration::ZERO);
    let err = run(&ctx, &g, 0, &o).unwrap_err();
    assert!(
        matches!(err, BfsError::Worklist(WorklistError::TimedOut { .. })),
        "{err}"
    );
    let r = run(&ctx, &g, 0, &options(FusedMode::On)).unwrap();
    assert_eq!(r.depth(), 19_999);
}

/// The kernel itself honours the abort word, in single-block mode (block 0's level loop polls
/// it; SOLO-ASYNC's claims poll it) and with the mode off (the barrier's action polls it), in
/// both builds (narrow, wide):
/// past its limit on a path far longer than any host delay (400,000 levels, each polled within
/// 64, SOLO-ASYNC's claims within 2,048 items), a run leaves exactly one item outstanding:
/// the kernel stopped early rather than running to completion after the host asked it to
/// stop (0), and handed the path's one queued item over, counted (issue #6: SOLO-ASYNC
/// reported 0, its ring items being expanded but not counted as produced).
#[test]
fn the_fused_kernel_stops_early_when_asked_to() {
    let Some(ctx) = cuda_alone() else {
        return;
    };
    const N: u32 = 400_000;
    let chain: Vec<(u32, u32)> = (0..N - 1).map(|i| (i, i + 1)).collect();
    let g = from_pairs(N as usize, &chain, "very long path");
    for block in [256, 1024] {
        for (solo, solo_async) in [(None, false), (Some(0), false), (None, true)] {
            let mut o = options(FusedMode::On);
            o.worklist.fused_block = Some(block);
            o.worklist.fused_solo_max = solo;
            o.worklist.fused_solo_async = solo_async;
            o.worklist.time_limit = Some(Duration::ZERO);
            let label = format!("block {block}, solo_max {solo:?}, solo async {solo_async}");
            match run(&ctx, &g, 0, &o) {
                Err(BfsError::Worklist(WorklistError::TimedOut { outstanding, .. })) => {
                    assert_ne!(
                        outstanding, 0,
                        "{label}: the kernel ran all {N} levels after the host asked it to \
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
}

/// Whether `ctx`'s devices can run device-driven under `FusedDriver::Device`: on distinct GPUs
/// with peer access, or as members sharing a GPU (virtual devices, e.g. 2 or 3 devices on one
/// GPU), each on its share of it.
fn members_can_run(ctx: &Context) -> bool {
    PeerGroup::check_sharing(ctx, GpuSharing::Split).is_ok()
}
