//! # groute-bfs: breadth-first search on 1..N devices
//!
//! Asynchronous push BFS over groute's distributed worklist: each device owns a contiguous
//! range of the partitioned graph, holds only the CSR rows of the vertices it owns
//! ([`DeviceCsr`](groute_worklist::DeviceCsr)) and a full-length level array, and relaxes
//! out-arcs with `fetch_min` (`atomicMin` on CUDA). Remote updates are filtered
//! against the device's own copy of the level before they are sent (halo filtering) and
//! travel as [`VertexValue`](groute_worklist::VertexValue) pairs around the ring. The solver
//! is the generic [`groute_worklist::traversal`]; BFS contributes only `relax = level + 1`.
//!
//! A symmetric graph of at least [`AUTO_MIN_AVERAGE_DEGREE`] arcs per vertex runs
//! **direction-optimizing** instead ([`Direction`], `--direction`; module `direction`):
//! level-synchronous, each level a top-down push or a bottom-up pull step (Beamer et al.
//! 2012), switched by [`SwitchRule`], on one device or on several (each stepping over its owned
//! range, the level's discoveries all-gathered as bitmaps over links after every level).
//! [`Direction::PullPush`] forces it (a directed graph then pulls over its transpose);
//! [`Direction::Push`] keeps the worklist BFS.
//!
//! | item | what it is |
//! |---|---|
//! | [`BfsSolver`] | the solver with its device storage kept across runs (graph uploaded once) |
//! | [`BfsRanks`] | direction-optimizing BFS of one process's share of a run spanning processes (MPI ranks) |
//! | [`bfs`] | one-shot form: levels in the input's order plus statistics |
//! | [`BfsOptions`], [`BfsResult`], [`BfsStats`] | its settings and output |
//! | [`Direction`], [`SwitchRule`] | push (worklist) or direction-optimizing, and when to pull |
//! | [`MultiDriver`] | how the host drives a direction-optimizing run on several devices |
//! | [`DirectionTrace`] | a device-driven run's per-phase trace ([`BfsTuning::trace`]) |
//! | [`bfs_reference`] | sequential queue BFS, the oracle of the tests |
//! | [`Bfs`] | the [`WorklistAlgorithm`] implementation |
//! | [`BfsError`] | what can go wrong |
//!
//! ```
//! use groute_bfs::{bfs, bfs_reference, BfsOptions};
//! use groute_graph::{generate, partition_graph, GenSpec, NoProgress, PartitionMethod};
//!
//! let g = generate(&"road:side=16,p=0.6,seed=2".parse::<GenSpec>()?, &NoProgress)?;
//! let expected = bfs_reference(&g.csr, 0);
//! let ctx = groute_core::Context::host(3)?;
//! let parted = partition_graph(g, 3, PartitionMethod::Metis, &NoProgress)?;
//! let result = bfs(&ctx, &parted, 0, &BfsOptions::default())?;
//! assert_eq!(result.levels, expected);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Vertex numbering
//!
//! Partitioning renumbers vertices; the solver takes and returns vertices in the *input
//! order*: the rank of each vertex's external id (for generated graphs and every offset-
//! numbered format, simply the original vertex id).

mod direction;
mod ranks;
mod reference;

use std::time::Duration;

use groute_graph::{InputOrder, PartitionedGraph};
use groute_worklist::traversal::{
    MinTraversalSolver, TraversalKernels, TraversalStats, count_reached, max_reached,
};
use groute_worklist::{BandQuery, Combine, Start, WorklistAlgorithm};
use groute_worklist::{TraversalError, TraversalName, WorklistOptions, WorklistStats};

pub use direction::{
    AUTO_MIN_AVERAGE_DEGREE, DeviceTrace, Direction, DirectionTrace, MultiDriver, PULL_ALPHA,
    PULL_GAMMA, PUSH_BETA, PhaseTimes, StepKind, StepTrace, SwitchRule,
};
pub use groute_worklist::traversal::UNREACHED;
pub use ranks::BfsRanks;
pub use reference::bfs_reference;

use direction::DirectionSolver;
use groute_worklist::traversal::FusedMode;

/// BFS as a min traversal: a neighbour's level is one more than the vertex's.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bfs;

impl WorklistAlgorithm for Bfs {
    type Value = u32;
    const COMBINE: Combine = Combine::Min;
    const START: Start = Start::Sources;
    const WEIGHTED: bool = false;
    const CUDA_KERNELS: Option<TraversalKernels> = Some(TraversalKernels {
        source: &groute_kernels::bfs::BFS,
        fused_source: &groute_kernels::bfs::BFS_FUSED,
        expand: "bfs_expand",
        split_receive: "bfs_split_receive",
        fused: "bfs_fused",
        reexamine: "bfs_reexamine",
    });

    fn init(&self, _vertex: u32, source: bool) -> u32 {
        if source { 0 } else { UNREACHED }
    }

    fn relax(&self, level: u32, _weight: u32, _out_degree: u32) -> Option<u32> {
        // Saturate below UNREACHED, like `groute::BfsRelax` in kernels/include/traversal.cuh.
        (level != UNREACHED).then(|| level.saturating_add(1).min(UNREACHED - 1))
    }

    /// [`PRIO_DELTA_DEVICE_DRIVEN`] levels in a run device-driven on several CUDA devices;
    /// elsewhere none (the rounds of an asynchronous BFS on one device, or driven by the
    /// hosts, already run roughly level by level).
    fn default_band(run: &BandQuery) -> Option<u32> {
        run.device_driven.then_some(PRIO_DELTA_DEVICE_DRIVEN)
    }
}

/// The soft-priority band, in levels, of a worklist BFS that runs device-driven on several
/// CUDA devices where [`BfsOptions::worklist`] leaves `prio_delta` open. Each device runs
/// its levels at its own pace there, so a device that the search enters early through the cut
/// races ahead along its own paths, and settles the same vertices again at lower levels when
/// the shorter paths arrive from its peer: on a road network, without a band, two devices
/// expand several times the items of one. A band keeps each device within that many levels
/// of the lowest level it holds. A narrow band costs an epoch per band, a wide one bounds the
/// race less, and a graph shallower than the band defers nothing.
pub const PRIO_DELTA_DEVICE_DRIVEN: u32 = 256;

/// Settings of [`bfs`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BfsOptions {
    /// The distributed worklist's settings (capacities, packet size, batch, time limit, soft
    /// priority by level: `prio_delta` `Some(0)` is off; `None`, the default, is off too,
    /// since the rounds of an asynchronous BFS on one device already run roughly level by
    /// level, except in device-driven runs on several CUDA devices, which take bands of
    /// [`PRIO_DELTA_DEVICE_DRIVEN`] levels). A direction-optimizing run uses only its
    /// `time_limit`.
    pub worklist: WorklistOptions,
    /// Worklist (push) or direction-optimizing BFS ([`Direction::Auto`] by default).
    pub direction: Direction,
    /// What drives a direction-optimizing run's levels (by default the devices, one
    /// persistent kernel each, where the context supports it; else the host, a thread per
    /// device).
    pub multi_driver: MultiDriver,
    /// The direction-optimizing runs' tuning (the example's `--do-*` flags), for benchmarks
    /// and experiments. None of it changes the levels.
    #[doc(hidden)]
    pub tuning: BfsTuning,
}

/// The direction-optimizing BFS's tuning (`BfsOptions::tuning`; the example's `--do-*`
/// flags, listed by `--help-tuning`). Every setting computes the same levels.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BfsTuning {
    /// When a direction-optimizing run pulls ([`PULL_ALPHA`], [`PUSH_BETA`], [`PULL_GAMMA`] by
    /// default).
    pub switch_rule: SwitchRule,
    /// A device-driven run ([`MultiDriver::Fused`] only) stamps every phase of every level on
    /// every device ([`DirectionTrace`], in [`BfsStats::do_trace`]); off (the default): no
    /// stamps, no cost but one branch each.
    pub trace: bool,
    /// The pulls of a run on CUDA devices (device-driven, or host-driven on several devices
    /// or across processes) test each in-neighbour against a bitmap of the frontier (two
    /// bitmaps of n / 8 bytes per device) instead of its level, and scan lists of the owned
    /// vertices still to reach instead of every owned vertex (`None`: where the level array,
    /// 4 bytes a vertex, outgrows the smallest L2 of the devices). A host-driven run on one
    /// device reads levels.
    pub pull_bitmap: Option<bool>,
}

/// Statistics of one BFS run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BfsStats {
    /// Expand rounds of the busiest device: levels of a fused or per-level run; bounded fused
    /// launches (of many levels each) on several devices; direction-optimizing: level steps,
    /// the last of which finds nothing new.
    pub rounds: u64,
    /// Work items processed on all devices (direction-optimizing: the vertices each push step
    /// expanded plus the unvisited vertices each pull step scanned).
    pub work_items: u64,
    /// Whether the run was direction-optimizing ([`Direction`]).
    pub direction_optimized: bool,
    /// Pull (bottom-up) level steps of a direction-optimizing run (0 otherwise).
    pub pull_levels: u64,
    /// Arcs the direction-optimizing run read: every out-arc of each pushed frontier and each
    /// in-arc a pull step scanned up to its first hit (`None` for the worklist BFS, which does
    /// not count them).
    pub arcs_examined: Option<u64>,
    /// As [`TraversalStats::items_sent`].
    pub items_sent: u64,
    /// As [`TraversalStats::items_deferred`].
    pub items_deferred: u64,
    /// As [`TraversalStats::epochs`].
    pub epochs: u64,
    /// The soft-priority band the run used, in levels (0: off, and for a
    /// direction-optimizing run).
    pub prio_delta: u32,
    /// As [`TraversalStats::elapsed`].
    pub elapsed: Duration,
    /// Whether the run used the fused kernel (CUDA; see [`FusedMode`]): one persistent launch
    /// on one device, bounded launches of many levels each on several; else one launch per
    /// level. A direction-optimizing run: whether the devices drove it
    /// ([`MultiDriver::Fused`], one persistent launch per device).
    pub fused: bool,
    /// As [`TraversalStats::device_time`].
    pub device_time: Option<Duration>,
    /// The worklist's per-device counters (empty for a direction-optimizing run).
    pub worklist: WorklistStats,
    /// What drove a direction-optimizing run's levels (never [`MultiDriver::Auto`]; `None`
    /// for the worklist BFS).
    pub do_driver: Option<MultiDriver>,
    /// The per-phase trace of a device-driven run that asked for it
    /// ([`BfsTuning::trace`]; `None` otherwise).
    pub do_trace: Option<DirectionTrace>,
}

/// The result of [`bfs`].
#[derive(Clone, Debug)]
pub struct BfsResult {
    /// Level of each vertex in the input order ([`UNREACHED`] where unreachable).
    pub levels: Vec<u32>,
    /// Statistics.
    pub stats: BfsStats,
}

impl BfsResult {
    /// Vertices reached from the source.
    pub fn reached(&self) -> usize {
        count_reached(&self.levels)
    }

    /// The largest level reached (the source's eccentricity).
    pub fn depth(&self) -> u32 {
        max_reached(&self.levels)
    }
}

/// What can go wrong in [`bfs`]: the traversal error of [`Bfs`].
pub type BfsError = TraversalError<Bfs>;

impl TraversalName for Bfs {
    const NAME: &'static str = "BFS";
}

/// BFS on one partitioned graph, with the graph uploaded and the device storage allocated
/// once ([`BfsSolver::new`]); each [`BfsSolver::run`] only resets the levels and traverses.
pub struct BfsSolver {
    engine: Engine,
    order: InputOrder,
    num_vertices: usize,
    options: BfsOptions,
}

/// The BFS a solver runs.
enum Engine {
    Worklist(Box<MinTraversalSolver<Bfs>>),
    Direction(Box<DirectionSolver>),
}

impl std::fmt::Debug for BfsSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BfsSolver")
            .field("num_vertices", &self.num_vertices)
            .field("options", &self.options)
            .finish()
    }
}

impl BfsSolver {
    /// Uploads `graph` to every device of `context` (device `d` owns
    /// `graph.partition.range(d)`) and allocates the run storage.
    pub fn new(
        context: &groute_core::Context,
        graph: &PartitionedGraph,
        options: &BfsOptions,
    ) -> Result<Self, BfsError> {
        BfsError::check_graph(context, graph)?;
        let n = graph.graph.num_vertices();
        let average_degree = graph.graph.num_edges() as f64 / n as f64;
        let fused_forced = options.worklist.fused == FusedMode::On;
        let optimizes = options.direction.optimizes(
            context.num_devices(),
            graph.graph.symmetric,
            average_degree,
            fused_forced,
        )?;
        let engine = if optimizes {
            Engine::Direction(Box::new(DirectionSolver::new(
                context,
                &graph.graph,
                &graph.partition,
                (options.multi_driver, &options.tuning),
            )?))
        } else {
            Engine::Worklist(Box::new(MinTraversalSolver::new(
                context,
                Bfs,
                &graph.graph.csr,
                &graph.partition,
                &options.worklist,
            )?))
        };
        Ok(BfsSolver {
            engine,
            order: InputOrder::of(&graph.graph),
            num_vertices: n,
            options: options.clone(),
        })
    }

    /// BFS from `source` (input order).
    pub fn run(&mut self, source: u32) -> Result<BfsResult, BfsError> {
        BfsError::check_source(source, self.num_vertices)?;
        let src = self.order.vertex_of_rank(source);
        let solver = match &mut self.engine {
            Engine::Worklist(solver) => solver,
            Engine::Direction(solver) => {
                let mut out = solver.run(src, self.options.worklist.time_limit)?;
                let levels = self.order.to_rank_order(std::mem::take(&mut out.levels));
                return Ok(direction_result(out, levels));
            }
        };
        let out = solver.run(&[src], &self.options.worklist)?;
        let (levels, stats) = out.into_values_and_stats();
        Ok(BfsResult {
            levels: self.order.to_rank_order(levels),
            stats: worklist_stats(stats),
        })
    }
}

/// The statistics of a worklist (push) run: its [`TraversalStats`], with none of a
/// direction-optimizing run's.
fn worklist_stats(stats: TraversalStats) -> BfsStats {
    BfsStats {
        rounds: stats.rounds,
        work_items: stats.work_items,
        items_sent: stats.items_sent,
        items_deferred: stats.items_deferred,
        epochs: stats.epochs,
        prio_delta: stats.prio_delta,
        elapsed: stats.elapsed,
        fused: stats.fused,
        device_time: stats.device_time,
        worklist: stats.worklist,
        direction_optimized: false,
        pull_levels: 0,
        arcs_examined: None,
        do_driver: None,
        do_trace: None,
    }
}

/// The result of a direction-optimizing run with its `levels` (in the caller's numbering).
fn direction_result(out: direction::DirectionRun, levels: Vec<u32>) -> BfsResult {
    BfsResult {
        levels,
        stats: BfsStats {
            rounds: out.stats.levels,
            work_items: out.stats.items,
            direction_optimized: true,
            pull_levels: out.stats.pull_levels,
            arcs_examined: Some(out.stats.arcs_examined),
            elapsed: out.elapsed,
            device_time: out.device_time,
            fused: out.driver == MultiDriver::Fused,
            do_driver: Some(out.driver),
            do_trace: out.trace,
            ..BfsStats::default()
        },
    }
}

/// BFS from `source` (input order) over `graph` on every device of `context`; device `d`
/// owns `graph.partition.range(d)` (a one-shot [`BfsSolver`]).
pub fn bfs(
    context: &groute_core::Context,
    graph: &PartitionedGraph,
    source: u32,
    options: &BfsOptions,
) -> Result<BfsResult, BfsError> {
    let n = graph.graph.num_vertices();
    if n > 0 {
        BfsError::check_source(source, n)?;
    }
    BfsSolver::new(context, graph, options)?.run(source)
}
