//! The fused kernel on one CUDA device: equal to the sequential reference and to the
//! per-round mode on every graph shape, on every grid, block size and barrier variant, with
//! its single-block mode as levels, as a shared frontier or on a cluster, with
//! soft priority; Auto fuses dense graphs too; the host backend ignores the mode.

use groute_bfs::bfs_reference;
use groute_core::Context;
use groute_core::testing::{combinations, full_or_reduced};
use groute_worklist::traversal::{FusedBarrier, FusedMode};

use crate::common::{cuda, directed_path, fan_chain, generated, graphs, hub_ladder, run};
use crate::{options, wide_tree};

#[test]
fn fused_equals_the_reference_and_the_per_round_mode_on_one_cuda_device() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let graphs = graphs();
    for [gi, si] in combinations([graphs.len(), 3]) {
        let g = &graphs[gi];
        let n = g.num_vertices() as u32;
        let s = [0, n / 2, n - 1][si];
        let expected = bfs_reference(&g.csr, s);
        let fused = run(&ctx, g, s, &options(FusedMode::On))
            .unwrap_or_else(|e| panic!("{} from {s}, fused: {e}", g.name));
        let per_round = run(&ctx, g, s, &options(FusedMode::Off))
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

#[test]
fn fused_hub_rounds_agree_with_the_reference_on_every_grid() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let g = hub_ladder();
    let sources = [0, 1, 10, 21];
    let grids = [None, Some(1), Some(2), Some(7), Some(64)];
    let solos = [Some(0), None, Some(u32::MAX)];
    for [si, gi, oi] in combinations([sources.len(), grids.len(), solos.len()]) {
        let (source, grid, solo) = (sources[si], grids[gi], solos[oi]);
        let expected = bfs_reference(&g.csr, source);
        let mut o = options(FusedMode::On);
        o.worklist.fused_tuning.grid = grid;
        o.worklist.fused_tuning.solo_max = solo;
        let label = format!("from {source}, grid {grid:?}, solo {solo:?}");
        let r = run(&ctx, &g, source, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.levels, expected, "{label}");
    }
}

/// The barrier variants and block sizes of the fused kernel (`FusedBarrier`, `fused_tuning.block`):
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
    let graphs = [hub_ladder(), generated("road:side=48,p=0.6,seed=8")];
    let blocks = [32, 256, 512, 1024];
    let grids = [None, Some(1), Some(3), Some(64)];
    let settings = [
        (Some(0), None, false),
        (None, None, false),
        (None, Some(2), false),
        (Some(0), None, true),
        (None, Some(2), true),
    ];
    let sweep = combinations([
        graphs.len(),
        blocks.len(),
        barriers.len(),
        grids.len(),
        settings.len(),
    ]);
    for [gi, bi, ri, di, si] in sweep {
        let (g, block, grid) = (&graphs[gi], blocks[bi], grids[di]);
        let (spin_ns, fenced, tagged) = barriers[ri];
        let (solo, prio, direct) = settings[si];
        let expected = bfs_reference(&g.csr, 0);
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
            "{}: block {block}, spin {spin_ns}, fenced {fenced}, tagged {tagged}, \
             grid {grid:?}, solo {solo:?}, prio {prio:?}, direct min {direct}",
            g.name
        );
        let r = run(&ctx, g, 0, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.levels, expected, "{label}");
        assert!(r.stats.rounds > u64::from(r.depth()), "{label}");
    }
}

/// The single-block mode's shared frontier (`fused_tuning.solo_shared`) on and off, with and without
/// direct atomicMin in that mode, on road grids (long runs of small levels), a fan chain (lists
/// of every granularity appended and read back from the frontier, a hub ending the mode) and
/// the hub ladder, on both builds (blocks of up to 256 threads keep no frontier), with bounds
/// from one item to none (the frontier holds two items per thread; levels larger than it read
/// the rest from the worklist), and with soft priority: always the reference, and single-block
/// phases where the mode is on.
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
    let blocks = [64, 256, 512, 1024];
    let solos = [None, Some(1), Some(37), Some(1500), Some(u32::MAX)];
    let settings = [
        (false, false, None),
        (true, false, None),
        (true, true, None),
        (false, true, None),
        (true, false, Some(2)),
    ];
    let sweep = combinations([graphs.len(), blocks.len(), solos.len(), settings.len()]);
    for [gi, bi, oi, si] in sweep {
        let (g, block, solo) = (&graphs[gi], blocks[bi], solos[oi]);
        let (shared, direct, prio) = settings[si];
        let expected = bfs_reference(&g.csr, 0);
        let mut o = options(FusedMode::On);
        o.worklist.fused_tuning.block = Some(block);
        o.worklist.fused_tuning.solo_max = solo;
        o.worklist.fused_tuning.solo_shared = shared;
        o.worklist.fused_tuning.solo_direct_min = direct;
        o.worklist.prio_delta = prio;
        let label = format!(
            "{}: block {block}, solo {solo:?}, shared {shared}, solo direct min \
             {direct}, prio {prio:?}",
            g.name
        );
        let r = run(&ctx, g, 0, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.levels, expected, "{label}");
        assert!(r.stats.work_items >= r.reached() as u64, "{label}");
        // Every item produced (listed, or moved back from a low list) was
        // expanded exactly once, the seed too: the counts the host's
        // `outstanding` is made of.
        let d = &r.stats.worklist.devices[0];
        assert_eq!(d.items_processed, d.items_produced + 1, "{label}");
        if r.depth() > 2 {
            assert!(r.stats.worklist.solo_rounds() > 0, "{label}");
        }
    }
}

/// The single-block mode on a cluster of four blocks (`fused_tuning.cluster`, the default where the
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
    let graphs = [
        generated("road:side=96,p=0.6,seed=31"),
        generated("road:side=150,p=0.5,seed=32"),
        generated("road:side=64,p=1,seed=33"),
        generated("random:n=5000,m=12000,seed=34"),
        directed_path(3000, "directed path"),
        wide_tree(30),
    ];
    let blocks = [512, 1024];
    let solos = [None, Some(1), Some(7), Some(300), Some(u32::MAX)];
    let settings = [
        (true, None),
        (true, Some(2)),
        (false, None),
        (false, Some(2)),
    ];
    let sweep = combinations([graphs.len(), 2, blocks.len(), solos.len(), settings.len()]);
    for [gi, si, bi, oi, ci] in sweep {
        let g = &graphs[gi];
        let n = g.num_vertices() as u32;
        let max_degree = g
            .csr
            .offsets()
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap();
        let s = [0, n / 2][si];
        let (block, solo, (cluster, prio)) = (blocks[bi], solos[oi], settings[ci]);
        let expected = bfs_reference(&g.csr, s);
        let mut o = options(FusedMode::On);
        o.worklist.fused_tuning.block = Some(block);
        o.worklist.fused_tuning.solo_max = solo;
        o.worklist.fused_tuning.cluster = Some(cluster);
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

#[test]
fn fused_bfs_with_soft_priority_equals_the_reference() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    for g in [
        generated("road:side=64,p=0.6,seed=5"),
        generated(full_or_reduced(
            "kron:scale=16,ef=16,sym,seed=3",
            "kron:scale=12,ef=16,sym,seed=3",
        )),
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
fn the_host_backend_runs_the_fused_mode_as_its_persistent_members() {
    let g = generated("road:side=20,p=0.6,seed=4");
    let expected = bfs_reference(&g.csr, 3);
    for devices in [1, 2, 3] {
        let ctx = Context::host(devices).unwrap();
        for mode in [FusedMode::On, FusedMode::Off, FusedMode::Auto] {
            let r = run(&ctx, &g, 3, &options(mode)).unwrap();
            assert_eq!(r.levels, expected, "{devices} devices, {mode:?}");
            // On: one persistent member per device, device-driven; else driven rounds.
            let members = mode == FusedMode::On;
            assert_eq!(r.stats.fused, members, "{devices} devices, {mode:?}");
            assert_eq!(r.stats.worklist.device_driven, members);
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
    let (grids, solos) = ([1, 2, 7, 64], [Some(0), Some(1), None, Some(u32::MAX)]);
    for [gi, si] in combinations([grids.len(), solos.len()]) {
        let (grid, solo) = (grids[gi], solos[si]);
        let mut o = options(FusedMode::On);
        o.worklist.fused_tuning.grid = Some(grid);
        o.worklist.fused_tuning.solo_max = solo;
        let r = run(&ctx, &g, 0, &o).unwrap_or_else(|e| panic!("grid {grid}, solo {solo:?}: {e}"));
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
    for grid in [0, u32::MAX] {
        let mut o = options(FusedMode::On);
        o.worklist.fused_tuning.grid = Some(grid);
        let err = run(&ctx, &g, 0, &o).unwrap_err();
        assert!(err.to_string().contains("--fused-grid"), "{err}");
    }
}
