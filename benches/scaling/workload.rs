//! One algorithm prepared on one graph and context: the solver with the graph already on
//! the devices (CC: staged in pinned host memory, as its dataflow streams it from there),
//! ready to be run and timed again and again.

use std::error::Error;
use std::time::Duration;

use groute::bfs::{BfsOptions, BfsSolver};
use groute::cc::{CcOptions, CcSolver};
use groute::core::Context;
use groute::graph::{InputOrder, PartitionedGraph, WeightSpec};
use groute::pagerank::{BENCH_EPSILON, PageRankOptions, PageRankSolver};
use groute::sssp::{SsspOptions, SsspSolver};
use rayon::prelude::*;

/// The value the traversals give an unreachable vertex.
const UNREACHED: u32 = u32::MAX;

/// SSSP weights for a graph spec: the ranges of the published figures (road-like 1000..1500,
/// others 1..100), seeded, so every run of the bench weighs the same arcs alike.
pub fn weights_for(spec: &str) -> WeightSpec {
    let (min, max) = if spec.starts_with("road") {
        (1000, 1500)
    } else {
        (1, 100)
    };
    WeightSpec { min, max, seed: 1 }
}

/// The solver of one algorithm.
enum Solver {
    Bfs(BfsSolver, u32),
    Sssp(SsspSolver, u32),
    PageRank(Box<PageRankSolver>),
    Cc(CcSolver),
}

/// What one run reports besides its full-run time.
#[derive(Clone, Copy, Debug)]
pub struct RunReport {
    /// The solver's own host clock (algorithm only).
    pub solver_time: Duration,
    /// The solver's device-event time of the algorithm (`None` on the host backend).
    pub device_time: Option<Duration>,
    /// Work items processed.
    pub work_items: u64,
    /// Edges counted for the rate (see [`Workload::edges_kind`]).
    pub edges: u64,
    /// Bytes that crossed between devices (`None` where the run does not count them:
    /// direction-optimizing BFS, CC).
    pub bytes_sent: Option<u64>,
    /// BFS: the levels of the run (its largest level, plus one); `None` for the others.
    pub depth: Option<u32>,
}

/// An algorithm ready to run on a context.
pub struct Workload {
    solver: Solver,
    arcs: u64,
    /// Out-arcs of every vertex, in input order (for the traversed-edge count).
    degrees: Vec<u64>,
}

impl Workload {
    /// Prepares `algorithm` on `graph` (`weighted`: the same graph with SSSP weights).
    pub fn new(
        algorithm: &str,
        ctx: &Context,
        graph: &PartitionedGraph,
        weighted: &PartitionedGraph,
    ) -> Result<Workload, Box<dyn Error>> {
        let g = &graph.graph;
        let order = InputOrder::of(g);
        let n = g.num_vertices() as u32;
        let degrees: Vec<u64> = (0..n)
            .map(|r| g.csr.out_degree(order.vertex_of_rank(r)))
            .collect();
        // The first vertex (input order) of the largest out-degree: a hub of a Kronecker
        // graph, a degree-4 crossing of a road-like grid, so that the traversal covers the
        // giant component rather than a small one around vertex 0.
        let max_degree = degrees.iter().copied().max().unwrap_or(0);
        let source = degrees.iter().position(|&d| d == max_degree).unwrap_or(0) as u32;
        let solver = match algorithm {
            "bfs" => Solver::Bfs(BfsSolver::new(ctx, graph, &BfsOptions::default())?, source),
            "sssp" => Solver::Sssp(
                SsspSolver::new(ctx, weighted, &SsspOptions::default())?,
                source,
            ),
            // Epsilon 0.01 (`BENCH_EPSILON`), as the published figures compared with, not the
            // library's tighter default.
            "pagerank" => Solver::PageRank(Box::new(PageRankSolver::new(
                ctx,
                graph,
                &PageRankOptions {
                    epsilon: BENCH_EPSILON,
                    ..PageRankOptions::default()
                },
            )?)),
            "cc" => Solver::Cc(CcSolver::new(ctx, g, &CcOptions::default())?),
            other => return Err(format!("unknown algorithm {other}").into()),
        };
        Ok(Workload {
            solver,
            arcs: g.num_edges(),
            degrees,
        })
    }

    /// What [`RunReport::edges`] counts.
    pub fn edges_kind(&self) -> &'static str {
        match self.solver {
            Solver::Bfs(..) | Solver::Sssp(..) => "traversed",
            Solver::PageRank(_) => "input arcs",
            Solver::Cc(_) => "hooked",
        }
    }

    /// The out-arcs of the vertices `values` reaches and the largest value reached (`None`
    /// where none is), in one pass spread over the host's cores: the bench's bookkeeping
    /// between two timed runs stays a few milliseconds on graphs of tens of millions of
    /// vertices, so that consecutive runs follow each other as closely as the examples'
    /// repeats do (after a pause of a tenth of a second or more, the first peer transfers of
    /// a multi-GPU run take a few hundred microseconds longer).
    fn traversed(&self, values: &[u32]) -> (u64, Option<u32>) {
        values
            .par_iter()
            .zip(&self.degrees)
            .filter(|(v, _)| **v != UNREACHED)
            .fold(
                || (0u64, None),
                |(arcs, deepest): (u64, Option<u32>), (&v, &d)| (arcs + d, deepest.max(Some(v))),
            )
            .reduce(|| (0, None), |a, b| (a.0 + b.0, a.1.max(b.1)))
    }

    /// One full run (the body a full-run timer measures: nothing but the solver's `run`).
    pub fn run(&mut self) -> Result<FinishedRun, Box<dyn Error>> {
        let finished = match &mut self.solver {
            Solver::Bfs(s, source) => {
                let r = s.run(*source)?;
                let counted = !r.stats.direction_optimized;
                FinishedRun {
                    solver_time: r.stats.elapsed,
                    device_time: r.stats.device_time,
                    work_items: r.stats.work_items,
                    edges: EdgeCount::ArcsOfReached(r.levels),
                    bytes_sent: ring_bytes(&r.stats.worklist).filter(|_| counted),
                }
            }
            Solver::Sssp(s, source) => {
                let r = s.run(*source)?;
                FinishedRun {
                    solver_time: r.stats.elapsed,
                    device_time: r.stats.device_time,
                    work_items: r.stats.work_items,
                    edges: EdgeCount::ArcsOfReached(r.distances),
                    bytes_sent: ring_bytes(&r.stats.worklist),
                }
            }
            Solver::PageRank(s) => {
                let r = s.run()?;
                FinishedRun {
                    solver_time: r.stats.elapsed,
                    device_time: r.stats.device_time,
                    work_items: r.stats.work_items,
                    edges: EdgeCount::Counted(self.arcs),
                    bytes_sent: Some(r.stats.bytes_sent()),
                }
            }
            Solver::Cc(s) => {
                let r = s.run()?;
                let hooked = r.stats.edges_per_device.iter().sum();
                FinishedRun {
                    solver_time: r.stats.elapsed,
                    device_time: r.stats.device_time,
                    work_items: hooked,
                    edges: EdgeCount::Counted(hooked),
                    bytes_sent: None,
                }
            }
        };
        Ok(finished)
    }

    /// The report of a finished run, its edges counted (outside the timed run: the count
    /// is the bench's bookkeeping, not the solver's work).
    pub fn report(&self, run: FinishedRun) -> RunReport {
        let (edges, deepest) = match run.edges {
            EdgeCount::ArcsOfReached(values) => self.traversed(&values),
            EdgeCount::Counted(edges) => (edges, None),
        };
        let depth = match self.solver {
            Solver::Bfs(..) => deepest.map(|d| d + 1),
            _ => None,
        };
        RunReport {
            solver_time: run.solver_time,
            device_time: run.device_time,
            work_items: run.work_items,
            edges,
            bytes_sent: run.bytes_sent,
            depth,
        }
    }
}

/// A run as the timed body returns it: its report but for the edge count.
pub struct FinishedRun {
    solver_time: Duration,
    device_time: Option<Duration>,
    work_items: u64,
    edges: EdgeCount,
    bytes_sent: Option<u64>,
}

/// The bytes a worklist run put on the ring (8 per item: a vertex and its value), or a
/// device-driven one stored into the members' inboxes.
fn ring_bytes(w: &groute::worklist::WorklistStats) -> Option<u64> {
    Some(w.items_sent() * std::mem::size_of::<groute::worklist::VertexValue>() as u64)
}

/// What a finished run's edge count comes from.
enum EdgeCount {
    /// BFS and SSSP: the values, whose reached vertices' out-arcs are counted.
    ArcsOfReached(Vec<u32>),
    /// Known already.
    Counted(u64),
}
