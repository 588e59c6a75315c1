//! The runs: [`Runner::bfs`], [`Runner::sssp`], [`Runner::pagerank`], [`Runner::cc`], and the
//! free functions that run them with [`Runner::new`]'s defaults.

use std::time::{Duration, Instant};

use groute_bfs::{BfsOptions, BfsSolver, MultiDriver};
use groute_cc::{CcOptions, CcSolver, CcStorage, LabelPropagation, component_stats};
use groute_core::{BackendKind, Context, Jitter, MAX_DEVICES};
use groute_graph::{InputOrder, NoProgress, PartitionedGraph, partition_graph};
use groute_pagerank::{DEFAULT_ALPHA, DEFAULT_EPSILON, Driver, PageRankOptions, PageRankSolver};
use groute_sssp::{SsspOptions, SsspSolver};
use groute_worklist::traversal::{FusedDriver, MinTraversalSolver};
use groute_worklist::{WorklistOptions, WorklistStats};
use serde::{Deserialize, Serialize};

use super::error::{Error, Result};
use super::graph::Graph;
use super::options::{Backend, Execution, Partition, Runner};
use super::results::{
    BfsRun, CcRun, DeviceMemory, PageRankRun, RunStats, SsspRun, UNREACHED, ms, note,
};

/// PageRank's parameters ([`Runner::pagerank_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageRankParams {
    /// Damping factor, in (0, 1) (default [`DEFAULT_ALPHA`], 0.85).
    pub alpha: f32,
    /// A vertex is pushed while its residual exceeds this (default [`DEFAULT_EPSILON`], 0.01;
    /// smaller is more precise and slower).
    pub epsilon: f32,
}

impl Default for PageRankParams {
    fn default() -> Self {
        PageRankParams {
            alpha: DEFAULT_ALPHA,
            epsilon: DEFAULT_EPSILON,
        }
    }
}

/// Breadth-first search from `source` (input order) with [`Runner::new`]'s defaults.
///
/// ```
/// let graph = groute::Graph::generate("road:side=64")?;
/// let run = groute::bfs(&graph, 0)?;
/// println!("{} vertices reached", run.reached());
/// # assert_eq!(run.levels, groute::bfs::bfs_reference(&graph.as_graph().csr, 0));
/// # Ok::<(), groute::Error>(())
/// ```
pub fn bfs(graph: &Graph, source: u32) -> Result<BfsRun> {
    Runner::new().bfs(graph, source)
}

/// Single-source shortest paths from `source` (input order) with [`Runner::new`]'s defaults.
///
/// ```
/// let graph = groute::Graph::from_edges(3, [(0, 1, 4), (1, 2, 3), (0, 2, 9)])?;
/// assert_eq!(groute::sssp(&graph, 0)?.distances, [0, 4, 7]);
/// # Ok::<(), groute::Error>(())
/// ```
pub fn sssp(graph: &Graph, source: u32) -> Result<SsspRun> {
    Runner::new().sssp(graph, source)
}

/// PageRank with [`Runner::new`]'s defaults and [`PageRankParams::default`].
///
/// ```
/// let graph = groute::Graph::generate("kron:scale=8,ef=8,sym")?;
/// let run = groute::pagerank(&graph)?;
/// let exact = groute::pagerank::pagerank_reference(&graph.as_graph().csr, 0.85);
/// let l1: f64 = run.ranks.iter().zip(&exact.ranks).map(|(a, b)| (f64::from(*a) - b).abs()).sum();
/// assert!(l1 <= run.error_bound() + 1e-3);
/// # Ok::<(), groute::Error>(())
/// ```
pub fn pagerank(graph: &Graph) -> Result<PageRankRun> {
    Runner::new().pagerank(graph)
}

/// Connected components (weakly connected on a directed graph) with [`Runner::new`]'s
/// defaults.
///
/// ```
/// let graph = groute::Graph::from_undirected_edges(5, [(0, 1), (3, 4)])?;
/// let run = groute::cc(&graph)?;
/// assert_eq!(run.labels, [0, 0, 2, 3, 3]);
/// assert_eq!(run.components, 3);
/// # Ok::<(), groute::Error>(())
/// ```
pub fn cc(graph: &Graph) -> Result<CcRun> {
    Runner::new().cc(graph)
}

/// What a partitioned run counted and how it ran, for its [`RunStats`].
pub(super) struct Counted {
    pub(super) rounds: u64,
    pub(super) work_items: u64,
    pub(super) elapsed: Duration,
    pub(super) device_time: Option<Duration>,
    pub(super) execution: Execution,
    pub(super) engine: String,
}

/// The [`Counted`] of a run's statistics `s` (any of the solvers' stats: their counters share
/// names and types), run as `execution` on `engine`.
macro_rules! counted {
    ($s:expr, $execution:expr, $engine:expr) => {
        Counted {
            rounds: $s.rounds,
            work_items: $s.work_items,
            elapsed: $s.elapsed,
            device_time: $s.device_time,
            execution: $execution,
            engine: $engine,
        }
    };
}

/// A run's context and what it took to build.
struct Setup {
    ctx: Context,
    started: Instant,
}

impl Runner {
    fn setup(&self, graph: &Graph) -> Result<Setup> {
        let started = Instant::now();
        graph.check_not_empty()?;
        if self.devices == 0 {
            return Err(Error::NoDevices);
        }
        if self.devices > MAX_DEVICES {
            return Err(Error::TooManyDevices {
                devices: self.devices,
                max: MAX_DEVICES,
            });
        }
        let mut builder = Context::builder()
            .devices(self.devices)
            .backend(self.backend.choice())
            .jitter(self.jitter.map(Jitter::seeded))
            .stall_timeout(self.stall_timeout)
            .faults(self.faults.clone());
        if let Some(limit) = self.device_memory_limit {
            builder = builder.device_memory_limit(limit);
        }
        let ctx = builder.build()?;
        Ok(Setup { ctx, started })
    }

    fn partitioned(&self, ctx: &Context, graph: &Graph) -> Result<PartitionedGraph> {
        Ok(partition_graph(
            graph.as_graph().clone(),
            ctx.num_devices(),
            self.partition.method(),
            &NoProgress,
        )?)
    }

    /// One run on the partitioned `graph`: builds the context, partitions the graph, makes the
    /// solver (`make`; the setup time ends here), runs it (`run`) and returns its output with
    /// the statistics every run shares, filled in from what `counted` read off the output.
    pub(super) fn partitioned_run<S, O>(
        &self,
        algorithm: &'static str,
        graph: &Graph,
        make: impl FnOnce(&Context, &PartitionedGraph) -> Result<S>,
        run: impl FnOnce(&mut S) -> Result<O>,
        counted: impl FnOnce(&Context, &O) -> Counted,
    ) -> Result<(O, RunStats)> {
        let setup = self.setup(graph)?;
        let parted = self.partitioned(&setup.ctx, graph)?;
        let mut solver = make(&setup.ctx, &parted)?;
        let setup_ms = ms(setup.started.elapsed());
        let out = run(&mut solver)?;
        let c = counted(&setup.ctx, &out);
        let stats = RunStats {
            rounds: Some(c.rounds),
            work_items: Some(c.work_items),
            time_ms: ms(c.elapsed),
            device_ms: c.device_time.map(ms),
            ..stats(
                algorithm,
                graph,
                &setup.ctx,
                Some(&parted),
                c.execution,
                c.engine,
                setup_ms,
            )
        };
        Ok((out, stats))
    }

    /// Breadth-first search from `source` (input order).
    ///
    /// A symmetric graph of at least
    /// [`AUTO_MIN_AVERAGE_DEGREE`](crate::bfs::AUTO_MIN_AVERAGE_DEGREE) arcs per vertex runs
    /// direction-optimizing, anything else on the asynchronous worklist
    /// ([`RunStats::engine`] says which).
    pub fn bfs(&self, graph: &Graph, source: u32) -> Result<BfsRun> {
        graph.check_vertex(source)?;
        let mut options = BfsOptions {
            tuning: self.tuning.bfs.clone(),
            ..BfsOptions::default()
        };
        self.apply_to_worklist(self.execution, &mut options.worklist);
        options.multi_driver = self.execution.multi_driver();
        let (out, stats) = self.partitioned_run(
            "bfs",
            graph,
            |ctx, parted| Ok(BfsSolver::new(ctx, parted, &options)?),
            |solver| Ok(solver.run(source)?),
            |ctx, out| {
                let s = &out.stats;
                let (execution, engine) = match s.do_driver {
                    Some(driver) => (
                        if driver == MultiDriver::Fused {
                            Execution::DeviceDriven
                        } else {
                            Execution::HostDriven
                        },
                        format!("direction-optimizing, driven {}", driven_by(driver)),
                    ),
                    None => worklist_engine(ctx, s.fused, &s.worklist),
                };
                counted!(s, execution, engine)
            },
        )?;
        Ok(BfsRun {
            source,
            levels: out.levels,
            stats,
            file_ids: graph.file_ids().clone(),
        })
    }

    /// Single-source shortest paths from `source` (input order) over the arcs' `u32` weights
    /// (an unweighted graph's arcs weigh 1); soft priority (near-far) by the crate's default
    /// band ([`groute::sssp`](mod@crate::sssp)).
    pub fn sssp(&self, graph: &Graph, source: u32) -> Result<SsspRun> {
        graph.check_vertex(source)?;
        let mut options = SsspOptions::default();
        self.apply_to_worklist(self.execution, &mut options.worklist);
        let (out, stats) = self.partitioned_run(
            "sssp",
            graph,
            |ctx, parted| Ok(SsspSolver::new(ctx, parted, &options)?),
            |solver| Ok(solver.run(source)?),
            |ctx, out| {
                let s = &out.stats;
                let (execution, engine) = worklist_engine(ctx, s.fused, &s.worklist);
                counted!(s, execution, engine)
            },
        )?;
        Ok(SsspRun {
            source,
            distances: out.distances,
            stats,
            file_ids: graph.file_ids().clone(),
        })
    }

    /// PageRank with [`PageRankParams::default`].
    pub fn pagerank(&self, graph: &Graph) -> Result<PageRankRun> {
        self.pagerank_with(graph, PageRankParams::default())
    }

    /// Residual-push PageRank with `params` (checked: `alpha` in (0, 1), `epsilon` positive).
    pub fn pagerank_with(&self, graph: &Graph, params: PageRankParams) -> Result<PageRankRun> {
        let options = PageRankOptions {
            alpha: params.alpha,
            epsilon: params.epsilon,
            driver: self.execution.pagerank_driver(),
            tuning: self.tuning.pagerank,
            ..PageRankOptions::default()
        };
        options.validate()?;
        let (out, stats) = self.partitioned_run(
            "pagerank",
            graph,
            |ctx, parted| Ok(PageRankSolver::new(ctx, parted, &options)?),
            |solver| Ok(solver.run()?),
            |_, out| {
                let s = &out.stats;
                let execution = if s.driver == Driver::Fused {
                    Execution::DeviceDriven
                } else {
                    Execution::HostDriven
                };
                let engine = format!("residual push, {} driver", s.driver);
                counted!(s, execution, engine)
            },
        )?;
        Ok(PageRankRun {
            ranks: out.ranks,
            alpha: params.alpha,
            epsilon: params.epsilon,
            residual_left: out.stats.residual_left,
            stats,
            file_ids: graph.file_ids().clone(),
        })
    }

    /// Connected components (weakly connected on a directed graph): each device links a block
    /// of the graph's rows into its parent array (arcs 0 to lower heads as parents, one round
    /// of sampling, then the rows outside the largest tree) on graphs of at least 8 arcs per
    /// vertex, or hooks the edge chunks the host streams to whichever device is free on sparser
    /// ones, and the arrays merge up a tree of devices ([`groute::cc`](mod@crate::cc)); the
    /// partition setting does not apply to it. [`Execution::DeviceDriven`] runs label
    /// propagation instead ([`LabelPropagation`](crate::cc::LabelPropagation): the same labels, one
    /// persistent kernel per device, as many rounds as the components' diameter), on the
    /// graph taken both ways and partitioned as the runner says.
    pub fn cc(&self, graph: &Graph) -> Result<CcRun> {
        if self.execution == Execution::DeviceDriven {
            return self.cc_by_label_propagation(graph);
        }
        let setup = self.setup(graph)?;
        let mut solver = CcSolver::new(&setup.ctx, graph.as_graph(), &CcOptions::default())?;
        let engine = match solver.storage() {
            CcStorage::HostStream => "hook and merge: scatter router in, tree reduction out",
            _ => "each device's rows linked (sampled where dense), tree reduction out",
        };
        let setup_ms = ms(setup.started.elapsed());
        let out = solver.run()?;
        let labels = labels_in_input_order(graph, out.labels);
        let s = &out.stats;
        Ok(CcRun {
            labels,
            components: out.components,
            largest_component: out.largest_component,
            stats: RunStats {
                time_ms: ms(s.elapsed_to_host),
                device_ms: s.device_time.map(ms),
                ..stats(
                    "cc",
                    graph,
                    &setup.ctx,
                    None,
                    Execution::HostDriven,
                    engine.to_owned(),
                    setup_ms,
                )
            },
            file_ids: graph.file_ids().clone(),
        })
    }
}

impl Runner {
    /// [`Runner::cc`] device-driven: label propagation in the worklist's device-driven
    /// executor.
    fn cc_by_label_propagation(&self, graph: &Graph) -> Result<CcRun> {
        // The errors that need no context, before the graph is copied.
        graph.check_not_empty()?;
        let both_ways;
        let symmetric = if graph.is_symmetric() {
            graph
        } else {
            let mut g = graph.as_graph().clone();
            g.csr = g.csr.symmetrized()?;
            g.symmetric = true;
            both_ways = Graph::from_graph(g);
            &both_ways
        };
        let mut options = WorklistOptions::default().for_graph(graph.vertices());
        self.apply_to_worklist(Execution::DeviceDriven, &mut options);
        let (labels, stats) = self.partitioned_run(
            "cc",
            symmetric,
            |ctx, parted| {
                let solver = MinTraversalSolver::new(
                    ctx,
                    LabelPropagation,
                    &parted.graph.csr,
                    &parted.partition,
                    &options,
                )?;
                Ok((solver, InputOrder::of(&parted.graph)))
            },
            |(solver, order)| {
                let out = solver.run(&[], &options)?;
                Ok((labels_by_rank(order, &out.values), out))
            },
            |ctx, (_, out)| {
                let s = &out.stats;
                let (execution, engine) = worklist_engine(ctx, out.fused, s);
                Counted {
                    rounds: s.rounds(),
                    work_items: s.items_processed(),
                    elapsed: s.elapsed,
                    device_time: out.device_time,
                    execution,
                    engine: format!("label propagation, {engine}"),
                }
            },
        )?;
        let labels = labels.0;
        // Label propagation labels each vertex with its component's least vertex id.
        let (components, largest_component) = component_stats(&labels);
        Ok(CcRun {
            components,
            largest_component,
            labels,
            stats,
            file_ids: graph.file_ids().clone(),
        })
    }
}

impl Runner {
    /// Sets on `worklist` what this runner asks of every worklist run: its fused kernel's
    /// tuning ([`Runner::tuning`]) and `execution` (`Auto` leaves the defaults).
    pub(super) fn apply_to_worklist(&self, execution: Execution, worklist: &mut WorklistOptions) {
        worklist.fused_tuning = self.tuning.fused.clone();
        apply_execution(execution, worklist);
    }
}

/// The worklist settings that ask for `execution` (`Auto` leaves the defaults).
fn apply_execution(execution: Execution, worklist: &mut WorklistOptions) {
    if execution == Execution::Auto {
        return;
    }
    worklist.fused = execution.fused_mode();
    worklist.fused_driver = if execution == Execution::DeviceDriven {
        FusedDriver::Device
    } else {
        FusedDriver::Host
    };
}

/// What drove a worklist traversal, and its engine in words.
fn worklist_engine(ctx: &Context, fused: bool, stats: &WorklistStats) -> (Execution, String) {
    let devices = ctx.num_devices();
    match (fused, stats.device_driven || devices == 1) {
        (true, true) if ctx.backend_kind() == BackendKind::Host => (
            Execution::DeviceDriven,
            "asynchronous worklist, one persistent member (host thread) per device".to_owned(),
        ),
        (true, true) => (
            Execution::DeviceDriven,
            "asynchronous worklist, one persistent kernel per device".to_owned(),
        ),
        (true, false) => (
            Execution::HostDriven,
            "asynchronous worklist, bounded fused rounds between the host's exchanges".to_owned(),
        ),
        (false, _) => (
            Execution::HostDriven,
            "asynchronous worklist, one launch per round".to_owned(),
        ),
    }
}

fn driven_by(driver: MultiDriver) -> &'static str {
    match driver {
        MultiDriver::Fused => "by one persistent kernel per device",
        _ => "by a host thread per device",
    }
}

/// The statistics every run shares; the algorithm fills in its times and counters.
fn stats(
    algorithm: &str,
    graph: &Graph,
    ctx: &Context,
    parted: Option<&PartitionedGraph>,
    execution: Execution,
    engine: String,
    setup_ms: f64,
) -> RunStats {
    RunStats {
        algorithm: algorithm.to_owned(),
        graph: graph.name().to_owned(),
        backend: Backend::of_kind(ctx.backend_kind()),
        backend_note: note(ctx.fallback_note()),
        devices: ctx.num_devices(),
        execution,
        engine,
        partition: parted.map(|p| Partition::of_method(p.method)),
        partition_note: note(parted.and_then(|p| p.fallback.as_ref())),
        time_ms: 0.0,
        device_ms: None,
        setup_ms,
        rounds: None,
        work_items: None,
        memory: ctx
            .memory_usage()
            .into_iter()
            .map(|usage| DeviceMemory {
                device: usage.device.0,
                peak_bytes: usage.peak_bytes,
                graph_bytes: usage.peak_graph_bytes,
            })
            .collect(),
    }
}

/// CC's labels (internal numbering, each the smallest internal id of its component) as labels
/// by input order, each the smallest input-order vertex of its component.
fn labels_in_input_order(graph: &Graph, labels: Vec<u32>) -> Vec<u32> {
    if graph.order().is_identity() {
        return labels;
    }
    labels_by_rank(graph.order(), &labels)
}

/// Labels naming one vertex of each component (internal numbering) as labels by input order
/// (`order`), each the smallest input-order vertex of its component.
fn labels_by_rank(order: &InputOrder, labels: &[u32]) -> Vec<u32> {
    // Ranks in increasing order: the first rank met in a component is its smallest.
    let mut smallest = vec![UNREACHED; labels.len()];
    (0..labels.len() as u32)
        .map(|rank| {
            let root = labels[order.vertex_of_rank(rank) as usize] as usize;
            if smallest[root] == UNREACHED {
                smallest[root] = rank;
            }
            smallest[root]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cc_labels_name_the_smallest_input_order_vertex_when_the_file_ids_have_gaps() {
        // Internal 0..4 carry file ids 40, 10, 30, 20: input order is 1, 3, 2, 0.
        // Edges (internal) 0-1 and 2-3: components {id 10, id 40} and {id 20, id 30}.
        let base = Graph::from_undirected_edges(4, [(0, 1), (2, 3)]).unwrap();
        let ids = groute_graph::VertexIds::from_table(0, vec![40, 10, 30, 20]).unwrap();
        let g = Graph::from_graph(groute_graph::Graph {
            ids,
            ..base.as_graph().clone()
        });
        let run = Runner::new().backend(Backend::Host).cc(&g).unwrap();
        // Input order: vertex 0 = id 10, 1 = id 20, 2 = id 30, 3 = id 40.
        assert_eq!(run.labels, [0, 1, 1, 0]);
        assert_eq!(run.components, 2);
    }
}
