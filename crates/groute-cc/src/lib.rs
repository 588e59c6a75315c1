//! # groute-cc: connected components on 1..N devices
//!
//! Topology-driven connected components (weakly connected on directed inputs) in the dataflow
//! model of Groute (Ben-Nun et al., ACM TOPC 2020, section 5.1.4 and Figure 15): no worklist,
//! two routers and asynchronous merging.
//!
//! ```text
//!  host (pinned edge list) --chunks--> Scatter router (first available) --> device 0..N-1
//!        every device: parent[] ; per chunk: find (path shortening) + hook (high to low, atomic)
//!  device i --parent[] as edges (v, parent[v])--> TreeReduction router --> device i & (i-1)
//!        ... --> device 0 --labels--> host
//! ```
//!
//! - The host streams the edge list in chunks through a first-available [`Scatter`] router:
//!   whichever device has a free receive buffer takes the next chunk, so faster devices take
//!   more chunks.
//! - Each device keeps a full parent array and hooks every edge of every chunk it receives
//!   (finds both roots, pointing every vertex it passes at its grandparent, and hooks the higher
//!   root under the lower one with a compare-and-swap); after its last chunk (or every
//!   [`CcOptions::compress_every`] chunks) it compresses (pointer jumping until every vertex
//!   points at its root): its array is the components of the edges it has seen.
//!   On CUDA the hook is warp-cooperative, for CSR-ordered chunks: the lanes sharing `u` find
//!   its root once and elect one CAS when that root is hooked, so a hub's entries are not
//!   loaded and CASed by every lane. Every
//!   find stops at vertex 0 without loading it (0 is always a root).
//! - Once its scatter output reaches end of stream, a device merges its children's arrays (in
//!   the binomial tree of [`TreeReduction`]; each entry `(v, parent[v])` is one more edge to
//!   hook), compresses, and sends its array up to its parent; device 0 sends the final array
//!   to the host. Large arrays are packetized by the links, so merging pipelines with the copies.
//!
//! Labels are the minimum vertex id of each component (the roots: hooks only point a root at a
//! smaller vertex).
//!
//! | item | what it is |
//! |---|---|
//! | [`CcSolver`] | the solver with the graph staged once and reused by every run |
//! | [`connected_components`] | one run over staged edges |
//! | [`StagedEdges`] | the edge list in pinned host memory, staged once and reused by every run |
//! | [`CcOptions`], [`CcResult`], [`CcStats`] | settings, labels and measurements |
//! | [`CcRanks`], [`CcRanksResult`], [`CcRanksStats`] | one process's share of a run spanning processes (MPI ranks): hook and compress, then the processes' forests gathered (two processes: once; more: owned labels in rounds) |
//! | [`cc_reference`] | sequential union-find, the oracle of the tests |
//! | [`LabelPropagation`] | connected components as a `groute_worklist::WorklistAlgorithm`, for the worklist's executors |
//! | [`Edge`] | one edge `(u, v)` as it travels over the scatter router |
//! | [`host`], [`cuda`] | the kernels of each backend (hook, compress, merge) |
//! | [`CcError`] | what can go wrong |
//!
//! ```
//! use groute_cc::{cc_reference, connected_components, CcOptions, StagedEdges};
//! use groute_graph::{generate, GenSpec, NoProgress};
//!
//! let g = generate(&"random:n=300,m=200,seed=4".parse::<GenSpec>()?, &NoProgress)?;
//! let ctx = groute_core::Context::host(3)?;
//! let staged = StagedEdges::new(&ctx, &g)?;
//! let result = connected_components(&ctx, &staged, &CcOptions::default().with_chunk_edges(16))?;
//! assert_eq!(result.labels, cc_reference(&g.csr));
//! assert_eq!(result.stats.edges_per_device.iter().sum::<u64>(), staged.num_edges() as u64);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Timing
//!
//! Like the original Groute's timer, [`CcStats::elapsed`] excludes loading, staging and
//! allocation (routers and parent arrays are built before it starts) and, with
//! [`CcOptions::prefill`] (the default), the copies that fill the devices' receive buffers
//! before the devices start (Groute's `PipelineSync`): it runs from the moment the devices
//! start to the final labels being ready on device 0. [`CcStats::elapsed_to_host`] runs on to
//! the labels in host memory. Without prefill the clock starts before the first chunk is sent,
//! so every copy is timed. [`CcStats::device_time`] times the same span with CUDA events on
//! every device's stream (each device up to its array being final, before it is sent on;
//! max over devices), the figure benchmarks report.
//!
//! [`Scatter`]: groute_core::Scatter
//! [`TreeReduction`]: groute_core::TreeReduction

mod component_stats;
pub mod cuda;
mod dataflow;
mod error;
pub mod host;
mod kernels;
mod label_propagation;
mod ranks;
mod reference;
mod solver;
mod staged_edges;

pub use component_stats::component_stats;
pub use dataflow::{CcOptions, CcResult, CcStats, connected_components};
pub use error::CcError;
pub use label_propagation::LabelPropagation;
pub use ranks::{CcRanks, CcRanksResult, CcRanksStats};
pub use reference::cc_reference;
pub use solver::CcSolver;
pub use staged_edges::StagedEdges;

/// One edge `(u, v)`: the element type of the scatter router's chunks.
///
/// `#[repr(C)]`, 8 bytes: the CUDA kernels read it as a `uint2` (`x = u`, `y = v`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Edge {
    /// One endpoint.
    pub u: u32,
    /// The other endpoint.
    pub v: u32,
}

impl Edge {
    /// The edge `(u, v)`.
    pub const fn new(u: u32, v: u32) -> Self {
        Edge { u, v }
    }
}

const _: () = assert!(std::mem::size_of::<Edge>() == 8);
