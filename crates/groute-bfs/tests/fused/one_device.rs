//! The fused kernel on one CUDA device: equal to the sequential reference and to the
//! per-round mode on every graph shape, on every grid, block size and barrier variant, with
//! its single-block mode as levels, as a shared frontier or on a cluster, with
//! soft priority; Auto fuses dense graphs too; the host backend ignores the mode.

use groute_core::testing::{combinations, full_or_reduced};
use groute_graph::testing::{directed_path, generated, hub_ladder};
use groute_worklist::testing::fused_host;
use groute_worklist::testing::fused_one_device::{
    self as shared, BarrierSweep, ClusterSweep, FrontierSweep, PrioritySweep,
};
use groute_worklist::testing::{
    assert_fails_naming, cuda_shared, run_matching_the_reference, tuned,
};
use groute_worklist::traversal::FusedMode;

use crate::common::{BfsUnderTest, fan_chain};
use crate::{options, wide_tree};

#[test]
fn fused_equals_the_reference_and_the_per_round_mode_on_one_cuda_device() {
    shared::fused_equals_the_reference_and_the_per_round_mode::<BfsUnderTest>();
}

#[test]
fn fused_hub_rounds_agree_with_the_reference_on_every_grid() {
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    let g = hub_ladder();
    let sources = [0, 1, 10, 21];
    let grids = [None, Some(1), Some(2), Some(7), Some(64)];
    let solos = [Some(0), None, Some(u32::MAX)];
    for [si, gi, oi] in combinations([sources.len(), grids.len(), solos.len()]) {
        let (source, grid, solo) = (sources[si], grids[gi], solos[oi]);
        let o = tuned::<BfsUnderTest>(FusedMode::On, |w| {
            w.fused_tuning.grid = grid;
            w.fused_tuning.solo_max = solo;
        });
        let label = format!("from {source}, grid {grid:?}, solo {solo:?}");
        run_matching_the_reference::<BfsUnderTest>(&ctx, &g, source, &o, &label);
    }
}

/// The barrier variants and block sizes of the fused kernel (`FusedBarrier`, `fused_tuning.block`):
/// acquire/release or fenced ordering, polling with and without sleeping, blocks of one warp
/// to 1,024 threads (the wide build), on grids of one block to 64, in and out of single-block
/// mode, with hub rounds and with soft priority.
#[test]
fn fused_block_sizes_and_barrier_variants_agree_with_the_reference() {
    shared::block_sizes_and_barrier_variants::<BfsUnderTest>(&BarrierSweep {
        graphs: vec![hub_ladder(), generated("road:side=48,p=0.6,seed=8")],
        blocks: &[32, 256, 512, 1024],
        barriers: &[
            (20, false, false),
            (0, false, false),
            (20, true, false),
            (0, false, true),
            (20, true, true),
        ],
        grids: &[None, Some(1), Some(3), Some(64)],
        settings: &[
            (Some(0), None, false),
            (None, None, false),
            (None, Some(2), false),
            (Some(0), None, true),
            (None, Some(2), true),
        ],
    });
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
    shared::single_block_frontier::<BfsUnderTest>(&FrontierSweep {
        graphs: vec![
            generated("road:side=96,p=0.6,seed=11"),
            generated("road:side=40,p=0.9,seed=12"),
            fan_chain(),
            hub_ladder(),
        ],
        sources: 1,
        blocks: &[64, 256, 512, 1024],
        solos: &[None, Some(1), Some(37), Some(1500), Some(u32::MAX)],
        settings: &[
            (false, false, None),
            (true, false, None),
            (true, true, None),
            (false, true, None),
            (true, false, Some(2)),
        ],
    });
}

/// The single-block mode on a cluster of four blocks (`fused_tuning.cluster`) and on one block:
/// the reference on road grids (p from 0.5 to 1), a sparse random graph, a path and a wide tree
/// (a level past the cluster's frontiers, read from the worklist, and past the bound, handed to
/// the grid), from several sources, with bounds from one item to none, with soft priority.
#[test]
fn the_cluster_mode_agrees_with_the_reference_either_way() {
    shared::cluster_mode::<BfsUnderTest>(&ClusterSweep {
        graphs: vec![
            generated("road:side=96,p=0.6,seed=31"),
            generated("road:side=150,p=0.5,seed=32"),
            generated("road:side=64,p=1,seed=33"),
            generated("random:n=5000,m=12000,seed=34"),
            directed_path(3000, "directed path"),
            wide_tree(30),
        ],
        sources: 2,
        blocks: &[512, 1024],
        solos: &[None, Some(1), Some(7), Some(300), Some(u32::MAX)],
        settings: &[
            (true, None),
            (true, Some(2)),
            (false, None),
            (false, Some(2)),
        ],
    });
}

/// Bands of one and three levels on a road grid, a Kronecker graph and the hub ladder.
#[test]
fn fused_bfs_with_soft_priority_equals_the_reference() {
    shared::soft_priority::<BfsUnderTest>(&PrioritySweep {
        graphs: vec![
            generated("road:side=64,p=0.6,seed=5"),
            generated(full_or_reduced(
                "kron:scale=16,ef=16,sym,seed=3",
                "kron:scale=12,ef=16,sym,seed=3",
            )),
            hub_ladder(),
        ],
        sources: 1,
        prios: &[Some(1), Some(3)],
        solos: &[None],
    });
}

#[test]
fn auto_fuses_dense_graphs_too() {
    // Kronecker with edge factor 16, symmetrised: about 30 arcs per vertex, above
    // FUSED_SPARSE_MAX_AVERAGE_DEGREE: the fused kernel runs with its dense-graph shape (every
    // resident block, no single-block mode), whose levels then never run single-block.
    let g = generated("kron:scale=10,ef=16,sym,seed=3");
    let average = g.csr.num_edges() as f64 / g.csr.num_vertices() as f64;
    assert!(average > groute_worklist::traversal::FUSED_SPARSE_MAX_AVERAGE_DEGREE);
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    let source = (0..g.csr.num_vertices() as u32)
        .find(|&v| g.csr.out_degree(v) > 0)
        .unwrap();
    let run = |mode| {
        run_matching_the_reference::<BfsUnderTest>(
            &ctx,
            &g,
            source,
            &options(mode),
            &format!("{mode:?}"),
        )
    };
    let auto = run(FusedMode::Auto);
    assert!(auto.fused);
    assert_eq!(auto.worklist.solo_rounds(), 0);
    let off = run(FusedMode::Off);
    assert!(!off.fused);
}

#[test]
fn the_host_backend_runs_the_fused_mode_as_its_persistent_members() {
    fused_host::the_host_backend_runs_the_fused_mode_as_its_persistent_members::<BfsUnderTest>(
        &generated("road:side=20,p=0.6,seed=4"),
        3,
        &[1, 2, 3],
        &[FusedMode::On, FusedMode::Off, FusedMode::Auto],
    );
}

#[test]
fn fused_grids_of_any_resident_size_agree() {
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    let g = generated("kron:scale=11,ef=16,sym,seed=9");
    let (grids, solos) = ([1, 2, 7, 64], [Some(0), Some(1), None, Some(u32::MAX)]);
    for [gi, si] in combinations([grids.len(), solos.len()]) {
        let (grid, solo) = (grids[gi], solos[si]);
        let o = tuned::<BfsUnderTest>(FusedMode::On, |w| {
            w.fused_tuning.grid = Some(grid);
            w.fused_tuning.solo_max = solo;
        });
        let label = format!("grid {grid}, solo {solo:?}");
        let r = run_matching_the_reference::<BfsUnderTest>(&ctx, &g, 0, &o, &label);
        // Every level counts as a round, in single-block mode too.
        assert!(r.rounds > u64::from(r.deepest), "{label}");
        // With the mode off no level runs in it; with no bound, every one does.
        let solo_rounds = r.worklist.solo_rounds();
        match solo {
            Some(0) => assert_eq!(solo_rounds, 0, "{label}"),
            Some(u32::MAX) => assert_eq!(solo_rounds, r.rounds, "{label}"),
            _ => assert!(solo_rounds <= r.rounds, "{label}"),
        }
    }
    for grid in [0, u32::MAX] {
        let o = tuned::<BfsUnderTest>(FusedMode::On, |w| w.fused_tuning.grid = Some(grid));
        assert_fails_naming::<BfsUnderTest>(&ctx, &g, &o, "--fused-grid");
    }
}
