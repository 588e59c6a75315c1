//! The fused persistent kernel on one CUDA device (`GROUTE_TEST_CUDA=1`; the bodies return
//! at once elsewhere): equal to the reference and to the per-round mode on every graph shape,
//! on every block size, barrier variant and grid, with its single-block mode on one block, as
//! a shared frontier or on a cluster, and with soft priority. Each body shares the GPU with
//! the process's other tests ([`cuda_shared`]); its sweep runs every combination, or on
//! reduced inputs each value of each option once (`groute_core::testing::combinations`).

use groute_core::testing::combinations;
use groute_graph::Graph;

use super::{
    TraversalRun, TraversalUnderTest, cuda_shared, fused_options, run_matching_the_reference,
    sweep_source, tuned,
};
use crate::traversal::{FusedBarrier, FusedMode};

/// Whether `run` went more than `levels` levels deep: BFS's deepest level, or where values
/// count no levels (SSSP) more than `levels` vertices reached.
fn deeper_than<T: TraversalUnderTest>(run: &TraversalRun, levels: u32) -> bool {
    if T::VALUES_ARE_LEVELS {
        run.deepest > levels
    } else {
        run.reached > levels as usize
    }
}

/// From 0, the middle and the last vertex of each of `T`'s graphs, fused and per round: both
/// equal the reference; the fused run reports its device time, sends nothing and expands
/// every vertex it reaches (in more rounds than its depth, where values are levels).
pub fn fused_equals_the_reference_and_the_per_round_mode<T: TraversalUnderTest>() {
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    let graphs = T::graphs();
    for [gi, si] in combinations([graphs.len(), 3]) {
        let g = &graphs[gi];
        let s = sweep_source(g, si);
        let label = format!("{} from {s}", g.name);
        let fused = run_matching_the_reference::<T>(
            &ctx,
            g,
            s,
            &fused_options::<T>(FusedMode::On),
            &format!("{label}, fused"),
        );
        let per_round = run_matching_the_reference::<T>(
            &ctx,
            g,
            s,
            &fused_options::<T>(FusedMode::Off),
            &format!("{label}, per round"),
        );
        assert!(fused.fused && !per_round.fused, "{label}");
        assert!(fused.device_time.is_some(), "{label}");
        assert!(fused.work_items >= fused.reached as u64, "{label}");
        if T::VALUES_ARE_LEVELS {
            assert!(fused.rounds > u64::from(fused.deepest), "{label}");
        }
        assert_eq!(fused.items_sent, 0, "{label}");
    }
}

/// The sweep of [`block_sizes_and_barrier_variants`].
#[derive(Debug)]
pub struct BarrierSweep {
    /// The graphs, each run from vertex 0.
    pub graphs: Vec<Graph>,
    /// Block sizes (`fused_tuning.block`).
    pub blocks: &'static [u32],
    /// Barrier variants: `(spin_ns, fenced, tagged)` of [`FusedBarrier`].
    pub barriers: &'static [(u32, bool, bool)],
    /// Grids (`fused_tuning.grid`; `None`: the default).
    pub grids: &'static [Option<u32>],
    /// `(fused_tuning.solo_max, prio_delta, fused_tuning.direct_min)`.
    pub settings: &'static [(Option<u32>, Option<u32>, bool)],
}

/// The barrier variants and block sizes of the fused kernel (`FusedBarrier`,
/// `fused_tuning.block`) on the grids of `sweep`, in and out of single-block mode, with and
/// without soft priority and direct atomicMin: the reference, fused (in more rounds than its
/// depth, where values are levels).
pub fn block_sizes_and_barrier_variants<T: TraversalUnderTest>(sweep: &BarrierSweep) {
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    let sweep_lens = [
        sweep.graphs.len(),
        sweep.blocks.len(),
        sweep.barriers.len(),
        sweep.grids.len(),
        sweep.settings.len(),
    ];
    for [gi, bi, ri, di, si] in combinations(sweep_lens) {
        let (g, block, grid) = (&sweep.graphs[gi], sweep.blocks[bi], sweep.grids[di]);
        let (spin_ns, fenced, tagged) = sweep.barriers[ri];
        let (solo, prio, direct) = sweep.settings[si];
        let o = tuned::<T>(FusedMode::On, |w| {
            w.fused_tuning.block = Some(block);
            w.fused_tuning.barrier = FusedBarrier {
                spin_ns,
                fenced,
                tagged,
            };
            w.fused_tuning.grid = grid;
            w.fused_tuning.solo_max = solo;
            w.prio_delta = prio;
            w.fused_tuning.direct_min = direct;
        });
        let label = format!(
            "{}: block {block}, spin {spin_ns}, fenced {fenced}, tagged {tagged}, \
             grid {grid:?}, solo {solo:?}, prio {prio:?}, direct min {direct}",
            g.name
        );
        let r = run_matching_the_reference::<T>(&ctx, g, 0, &o, &label);
        assert!(r.fused, "{label}");
        if T::VALUES_ARE_LEVELS {
            assert!(r.rounds > u64::from(r.deepest), "{label}");
        }
    }
}

/// A sweep of the single-block mode ([`single_block_frontier`], [`cluster_mode`]): every
/// combination of its graphs, sources, block sizes, bounds and `settings`, or on reduced
/// inputs each value of each once.
#[derive(Debug)]
pub struct SoloSweep<S: 'static> {
    /// The graphs.
    pub graphs: Vec<Graph>,
    /// How many of each graph's sweep sources to run from (vertex 0, the middle vertex).
    pub sources: usize,
    /// Block sizes (`fused_tuning.block`).
    pub blocks: &'static [u32],
    /// Bounds of the single-block mode (`fused_tuning.solo_max`).
    pub solos: &'static [Option<u32>],
    /// The settings the body sweeps besides.
    pub settings: &'static [S],
}

impl<S: Copy> SoloSweep<S> {
    /// The sweep's runs: a graph, a source, a block size, a bound and a setting.
    fn runs(&self) -> impl Iterator<Item = (&Graph, u32, u32, Option<u32>, S)> + '_ {
        let lens = [
            self.graphs.len(),
            self.sources,
            self.blocks.len(),
            self.solos.len(),
            self.settings.len(),
        ];
        combinations(lens).into_iter().map(|[gi, si, bi, oi, ti]| {
            let g = &self.graphs[gi];
            (
                g,
                sweep_source(g, si),
                self.blocks[bi],
                self.solos[oi],
                self.settings[ti],
            )
        })
    }
}

/// The sweep of [`single_block_frontier`]: its settings are `(fused_tuning.solo_shared,
/// fused_tuning.solo_direct_min, prio_delta)`; blocks of up to 256 threads keep no frontier.
pub type FrontierSweep = SoloSweep<(bool, bool, Option<u32>)>;

/// The single-block mode's shared frontier (`fused_tuning.solo_shared`) on and off, with and
/// without direct atomicMin in that mode, on both builds (blocks of up to 256 threads keep no
/// frontier), with bounds from a few items to none, with and without soft priority: always
/// the reference, fused, with every vertex reached expanded and every item produced (listed,
/// or moved back from a low list) expanded exactly once, the source too; where values are
/// levels, single-block levels in runs more than two levels deep.
pub fn single_block_frontier<T: TraversalUnderTest>(sweep: &FrontierSweep) {
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    for (g, s, block, solo, (shared, direct, prio)) in sweep.runs() {
        let o = tuned::<T>(FusedMode::On, |w| {
            w.fused_tuning.block = Some(block);
            w.fused_tuning.solo_max = solo;
            w.fused_tuning.solo_shared = shared;
            w.fused_tuning.solo_direct_min = direct;
            w.prio_delta = prio;
        });
        let label = format!(
            "{} from {s}: block {block}, solo {solo:?}, shared {shared}, solo \
             direct min {direct}, prio {prio:?}",
            g.name
        );
        let r = run_matching_the_reference::<T>(&ctx, g, s, &o, &label);
        assert!(r.fused, "{label}");
        assert!(r.work_items >= r.reached as u64, "{label}");
        let d = &r.worklist.devices[0];
        assert_eq!(d.items_processed, d.items_produced + 1, "{label}");
        if T::VALUES_ARE_LEVELS && r.deepest > 2 {
            assert!(r.worklist.solo_rounds() > 0, "{label}");
        }
    }
}

/// The sweep of [`cluster_mode`]: its settings are `(fused_tuning.cluster, prio_delta)`.
pub type ClusterSweep = SoloSweep<(bool, Option<u32>)>;

/// The single-block mode on a cluster of four blocks (`fused_tuning.cluster`, the default
/// where the GPU has clusters and every list is under 32 arcs:
/// kernels/include/cluster_solo.cuh) and on one block: always the reference, every item
/// produced expanded exactly once, the source too; the cluster's levels counted where it
/// runs (compute capability 9.0 or later, lists under 32 arcs) in runs more than two levels
/// deep, none where it does not, and never more than the single-block levels.
pub fn cluster_mode<T: TraversalUnderTest>(sweep: &ClusterSweep) {
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    let clusters = ctx.devices()[0].properties().compute_capability >= (9, 0);
    for (g, s, block, solo, (cluster, prio)) in sweep.runs() {
        let max_degree = g
            .csr
            .offsets()
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0);
        let o = tuned::<T>(FusedMode::On, |w| {
            w.fused_tuning.block = Some(block);
            w.fused_tuning.solo_max = solo;
            w.fused_tuning.cluster = Some(cluster);
            w.prio_delta = prio;
        });
        let label = format!(
            "{} from {s}: block {block}, solo {solo:?}, cluster {cluster}, prio \
             {prio:?}",
            g.name
        );
        let r = run_matching_the_reference::<T>(&ctx, g, s, &o, &label);
        let d = &r.worklist.devices[0];
        assert_eq!(d.items_processed, d.items_produced + 1, "{label}");
        let on = cluster && clusters && max_degree < 32;
        if on && deeper_than::<T>(&r, 2) {
            assert!(d.solo_cluster_rounds > 0, "{label}: ran on one block");
        }
        if !on {
            assert_eq!(d.solo_cluster_rounds, 0, "{label}");
        }
        assert!(d.solo_cluster_rounds <= d.solo_rounds, "{label}");
    }
}

/// The sweep of [`soft_priority`].
#[derive(Debug)]
pub struct PrioritySweep {
    /// The graphs.
    pub graphs: Vec<Graph>,
    /// How many of each graph's sweep sources to run from (vertex 0, the middle vertex).
    pub sources: usize,
    /// Soft-priority bands (`prio_delta`; `Some(0)`: off, `None`: the default).
    pub prios: &'static [Option<u32>],
    /// Bounds of the single-block mode (`fused_tuning.solo_max`).
    pub solos: &'static [Option<u32>],
}

/// Soft priority run inside the fused kernel, in and out of single-block mode: always the
/// reference, fused, its epochs those of the worklist; off, no epoch and nothing deferred; on
/// a band `delta` narrower than a run's levels less one (where values are levels), epochs
/// that deferred items.
pub fn soft_priority<T: TraversalUnderTest>(sweep: &PrioritySweep) {
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    let PrioritySweep {
        graphs,
        sources,
        prios,
        solos,
    } = sweep;
    for [gi, si, pi, oi] in combinations([graphs.len(), *sources, prios.len(), solos.len()]) {
        let g = &graphs[gi];
        let s = sweep_source(g, si);
        let (prio, solo) = (prios[pi], solos[oi]);
        let o = tuned::<T>(FusedMode::On, |w| {
            w.prio_delta = prio;
            w.fused_tuning.solo_max = solo;
        });
        let label = format!("{} from {s}, prio {prio:?}, solo {solo:?}", g.name);
        let r = run_matching_the_reference::<T>(&ctx, g, s, &o, &label);
        assert!(r.fused, "{label}");
        assert_eq!(r.worklist.epochs, r.epochs, "{label}");
        match prio {
            Some(0) => assert_eq!((r.epochs, r.items_deferred), (0, 0), "{label}"),
            Some(delta) if T::VALUES_ARE_LEVELS && r.deepest > delta + 1 => {
                assert!(r.epochs > 0 && r.items_deferred > 0, "{label}");
            }
            _ => {}
        }
    }
}
