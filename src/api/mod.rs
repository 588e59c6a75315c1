//! The high-level API: load or generate a [`Graph`], run an algorithm, get a typed result.
//!
//! ```
//! let graph = groute::Graph::generate("road:side=64")?;
//! let run = groute::bfs(&graph, graph.default_source()?)?;
//! println!("{} vertices reached", run.reached());
//! # assert_eq!(run.reached(), graph.vertices() - run.levels.iter().filter(|&&l| l == groute::UNREACHED).count());
//! # Ok::<(), groute::Error>(())
//! ```
//!
//! | item | what it is |
//! |---|---|
//! | [`Graph`] | a graph from a file ([`Graph::load`]), a generator spec ([`Graph::generate`]), edges ([`Graph::from_edges`]), petgraph or sprs (features) |
//! | [`bfs()`], [`sssp()`], [`pagerank()`], [`cc()`] | one run with the defaults: one device, the best backend present |
//! | [`Runner`] | the same runs with devices, [`Backend`], [`Execution`] and [`Partition`] chosen |
//! | [`BfsRun`], [`SsspRun`], [`PageRankRun`], [`CcRun`] | levels, distances, ranks, component labels in input order, with [`RunStats`]; serde, `write_text` |
//! | [`RunFuture`] | `bfs_async` and the others: the run on its own thread, awaitable from any executor |
//! | [`Runner::run_algorithm`], [`AlgorithmRun`] | a program's own [`WorklistAlgorithm`](crate::worklist::WorklistAlgorithm), one module, run over the devices (host backend) |
//! | [`Error`] | everything that can go wrong, the crates' errors kept as sources |
//!
//! ## Vertex numbering
//!
//! Sources and results use the **input order**: vertices `0..n` by their id in the input file
//! (vertex `v` is id `v` for generated graphs and 0-based files, id `v + 1` for Matrix
//! Market, DIMACS and METIS files). Partitioning renumbers vertices inside a run, never in
//! what a run returns. [`Graph::vertex`] converts a file's id; `write_text` writes the file's
//! ids, as the examples' `--output` does.
//!
//! ## Choosing how to run
//!
//! ```
//! use groute::{Backend, Execution, Graph, Runner};
//!
//! let graph = Graph::generate("road:side=32,weights=1..100")?;
//! let runner = Runner::new().devices(3).backend(Backend::Host);
//! let run = runner.sssp(&graph, 5)?;
//! assert_eq!(run.distances, groute::sssp::sssp_reference(&graph.as_graph().csr, 5));
//! // What Auto picked is recorded: the host backend drives every round from the host.
//! assert_eq!(run.stats.execution, Execution::HostDriven);
//! println!("{}", serde_json::to_string_pretty(&run.stats).unwrap());
//!
//! // Device-driven: one persistent kernel per GPU, or on the host backend one persistent
//! // member (a thread) per device; the same distances either way.
//! let device = runner.execution(Execution::DeviceDriven).sssp(&graph, 5)?;
//! assert_eq!(device.distances, run.distances);
//! assert_eq!(device.stats.execution, Execution::DeviceDriven);
//! # Ok::<(), groute::Error>(())
//! ```
//!
//! ## Blocking and asynchronous
//!
//! The runs block until their result is on the host; no async runtime is involved, so a
//! program using them needs nothing but `groute` in its `Cargo.toml`. The `_async` forms
//! ([`Runner::bfs_async`], [`bfs_async`], ...) run on a thread of their own and return a
//! [`RunFuture`], which tokio and every other executor can await (module [`asynchronous`]
//! explains the design).

mod algorithm;
pub mod asynchronous;
mod engine_switches;
mod error;
mod graph;
pub mod interop;
mod options;
mod results;
mod run;
mod tuning;

pub use algorithm::AlgorithmRun;
pub use asynchronous::{RunFuture, bfs_async, cc_async, pagerank_async, sssp_async};
pub use error::{Error, Result, WeightProblem};
pub use graph::{FileIds, Graph, IntoArc};
pub use groute_core::ParseChoiceError;
pub use interop::ArcWeight;
pub use options::{Backend, Execution, Partition, Runner};
pub use results::{BfsRun, CcRun, DeviceMemory, PageRankRun, RunStats, SsspRun, UNREACHED};
pub use run::{PageRankParams, bfs, cc, pagerank, sssp};
#[doc(hidden)]
pub use tuning::Tuning;
