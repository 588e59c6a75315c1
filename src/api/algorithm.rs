//! A program's own algorithm: [`Runner::run_algorithm`] runs any
//! [`WorklistAlgorithm`] over the devices, with the vertex numbering of the other runs.

use groute_core::BackendKind;
use groute_graph::InputOrder;
use groute_worklist::algorithm::HostSolver;
use groute_worklist::{Combine, Start, WorklistAlgorithm, WorklistOptions};

use super::error::{Error, Result};
use super::graph::{FileIds, Graph};
use super::options::{Backend, Execution, Runner};
use super::results::RunStats;

/// The result of [`Runner::run_algorithm`], in input order.
#[derive(Clone, Debug)]
pub struct AlgorithmRun<V> {
    /// Each vertex's result: its value under [`Combine::Min`]; under [`Combine::Sum`] the sum
    /// of what its items took.
    pub values: Vec<V>,
    /// Under [`Combine::Sum`], the value left on each vertex (never made an item); empty under
    /// [`Combine::Min`].
    pub left: Vec<V>,
    /// What ran.
    pub stats: RunStats,
    /// The input file's numbering.
    pub file_ids: FileIds,
}

/// `A` with the vertex ids its `init` sees in input order (those of the runs' sources and
/// results), not the partitioned numbering the executors use.
struct InInputOrder<A> {
    algorithm: A,
    /// The input-order rank of each partitioned vertex (`None`: the identity).
    rank: Option<Vec<u32>>,
}

impl<A: WorklistAlgorithm> WorklistAlgorithm for InInputOrder<A> {
    type Value = A::Value;
    const COMBINE: Combine = A::COMBINE;
    const START: Start = A::START;
    const WEIGHTED: bool = A::WEIGHTED;

    fn init(&self, vertex: u32, source: bool) -> A::Value {
        let rank = self.rank.as_ref().map_or(vertex, |r| r[vertex as usize]);
        self.algorithm.init(rank, source)
    }

    fn relax(&self, value: A::Value, weight: u32, out_degree: u32) -> Option<A::Value> {
        self.algorithm.relax(value, weight, out_degree)
    }

    fn schedules(&self, old: A::Value, new: A::Value) -> bool {
        self.algorithm.schedules(old, new)
    }

    fn priority(&self, value: A::Value) -> u32 {
        self.algorithm.priority(value)
    }
}

/// The input-order rank of each vertex of a graph whose input order is `order` (`None` for
/// the identity).
fn ranks(order: &InputOrder, n: usize) -> Option<Vec<u32>> {
    if order.is_identity() {
        return None;
    }
    let mut rank = vec![0u32; n];
    for r in 0..n as u32 {
        rank[order.vertex_of_rank(r) as usize] = r;
    }
    Some(rank)
}

impl Runner {
    /// Runs `algorithm` (any [`WorklistAlgorithm`]: a program's own, or one of the crates')
    /// from `sources` (input order; ignored by algorithms that start from every vertex) on the
    /// host backend's executor, over the runner's devices and partition. The vertex ids that
    /// `algorithm.init` sees and the results are in input order.
    ///
    /// The CUDA executors run the crates' algorithms through [`Runner::bfs`] and the others;
    /// this run needs no kernels, so [`Backend::Auto`] picks the host backend here and
    /// [`Backend::Cuda`] is [`Error::BackendUnavailable`].
    ///
    /// ```
    /// use groute::worklist::{Combine, Start, WorklistAlgorithm};
    ///
    /// /// Widest paths: a vertex's value is `u32::MAX` minus its widest path's width.
    /// struct Widest;
    ///
    /// impl WorklistAlgorithm for Widest {
    ///     type Value = u32;
    ///     const COMBINE: Combine = Combine::Min;
    ///     const START: Start = Start::Sources;
    ///     const WEIGHTED: bool = true;
    ///     fn init(&self, _vertex: u32, source: bool) -> u32 {
    ///         if source { 0 } else { u32::MAX }
    ///     }
    ///     fn relax(&self, narrowing: u32, weight: u32, _out_degree: u32) -> Option<u32> {
    ///         (narrowing != u32::MAX).then(|| narrowing.max(u32::MAX - weight))
    ///     }
    /// }
    ///
    /// let graph = groute::Graph::from_edges(4, [(0, 1, 5), (1, 2, 3), (0, 2, 2), (2, 3, 9)])?;
    /// let run = groute::Runner::new().devices(2).run_algorithm(&graph, Widest, &[0])?;
    /// let widths: Vec<u32> = run.values.iter().map(|v| u32::MAX - v).collect();
    /// assert_eq!(widths, [u32::MAX, 5, 3, 3]);
    /// # Ok::<(), groute::Error>(())
    /// ```
    pub fn run_algorithm<A: WorklistAlgorithm>(
        &self,
        graph: &Graph,
        algorithm: A,
        sources: &[u32],
    ) -> Result<AlgorithmRun<A::Value>> {
        const NAME: &str = "run_algorithm";
        if self.backend == Backend::Cuda {
            return Err(Error::BackendUnavailable {
                algorithm: NAME,
                backend: Backend::Cuda,
                reason: "a program's own algorithm runs on the host backend's executor (the \
                         CUDA executors run the crates' algorithms with their kernels)",
                instead: Backend::Host,
            });
        }
        for &s in sources {
            graph.check_vertex(s)?;
        }
        let runner = self.clone().backend(Backend::Host);
        let (out, stats) = runner.partitioned_run(
            NAME,
            graph,
            |ctx, parted| {
                debug_assert_eq!(ctx.backend_kind(), BackendKind::Host);
                let order = InputOrder::of(&parted.graph);
                let n = parted.graph.num_vertices();
                let algorithm = InInputOrder {
                    algorithm,
                    rank: ranks(&order, n),
                };
                let mut options = WorklistOptions::default().for_graph(n);
                runner.apply_to_worklist(runner.execution, &mut options);
                let solver = HostSolver::new(
                    ctx,
                    algorithm,
                    &parted.graph.csr,
                    &parted.partition,
                    &options,
                )?;
                let sources = sources.iter().map(|&s| order.vertex_of_rank(s)).collect();
                Ok((solver, order, sources, options))
            },
            |(solver, order, sources, options): &mut (_, InputOrder, Vec<u32>, WorklistOptions)| {
                let out = solver.run(sources, options)?;
                let values = order.to_rank_order(out.values);
                let left = if out.left.is_empty() {
                    out.left
                } else {
                    order.to_rank_order(out.left)
                };
                Ok((values, left, out.stats))
            },
            |_, (_, _, s)| super::run::Counted {
                rounds: s.devices.iter().map(|d| d.rounds).max().unwrap_or(0),
                work_items: s.items_processed(),
                elapsed: s.elapsed,
                device_time: None,
                execution: if s.device_driven {
                    Execution::DeviceDriven
                } else {
                    Execution::HostDriven
                },
                engine: if s.device_driven {
                    "asynchronous worklist, one persistent member (host thread) per device"
                } else {
                    "asynchronous worklist, host executor"
                }
                .to_owned(),
            },
        )?;
        let (values, left, _) = out;
        Ok(AlgorithmRun {
            values,
            left,
            stats,
            file_ids: graph.file_ids().clone(),
        })
    }
}
