//! # groute-cc: connected components on 1..N devices
//!
//! Topology-driven connected components (weakly connected on directed inputs) in the dataflow
//! model of Groute (Ben-Nun et al., ACM TOPC 2020, section 5.1.4 and Figure 15): no worklist,
//! a tree-reduction router and asynchronous merging. Where the edges are kept between runs
//! ([`CcStorage`]) decides how they reach the devices:
//!
//! ```text
//!  DeviceRows: device d holds rows [r_d, r_d+1)       HostStream: host (pinned edge list)
//!    each row's arc 0 to a lower head: its parent         --chunks--> Scatter router
//!    dense: sample arc 1 of every row; compress its rows     (first available) --> device
//!      link the rest of the rows outside the anchor's tree  every chunk: lower ends as
//!    sparse: compress its rows; link every other arc once    roots' parents, find + hook
//!  every device: parent[] --(v, parent[v]) as edges--> TreeReduction router
//!        --> device i & (i-1) ... --> device 0 --labels--> host
//! ```
//!
//! - **Rows on the devices** ([`DeviceRows`], [`CcStorage::DeviceRows`], what
//!   [`CcStorage::Auto`] takes on graphs of at least 8 arcs per vertex): each device holds a
//!   block of the graph's rows. It first makes each row's arc 0 the row's parent where its head is
//!   lower (a plain store per row, no find and no atomic: ECL-CC's initialisation, Jaiganesh and
//!   Burtscher, HPDC 2018). On a dense graph it then links as Afforest does (Sutton, Ben-Nun and
//!   Barak, IPDPS 2018): arc 1 of every row (the first arc being mostly linked already), then the
//!   rest of every row outside the tree of the anchor (the vertex of largest degree), which on a
//!   power-law graph is most of them. On a symmetric graph the skipped arcs are linked from their
//!   other ends or join nothing new (see [`DeviceRows`]); a directed graph links every arc. On a
//!   sparse graph sampling would link most arcs anyway, so it links every arc once (on a symmetric
//!   graph, each edge from its higher end).
//! - **Edges streamed from the host** ([`StagedEdges`], [`CcStorage::HostStream`], `Auto` on
//!   sparser graphs): the host streams the edge list (each edge once) in chunks through a
//!   first-available [`Scatter`] router: whichever device has a free receive buffer takes the
//!   next chunk, so faster devices take more chunks, and the devices' memory need not hold the
//!   arcs. Before hooking a chunk, a device points every root that is the higher end of one of
//!   its edges at the lower end (plain stores, the same initialisation over an edge list), so
//!   the hook finds most of a sparse chunk's edges joined already.
//! - Each device keeps a full parent array and hooks every edge it links (finds both roots,
//!   pointing every vertex it passes at its grandparent, and hooks the higher root under the
//!   lower one with a compare-and-swap): its array is a forest of the components of the edges
//!   it has seen.
//!   On CUDA the hook is warp-cooperative: the lanes sharing `u` (a CSR-ordered chunk, a long
//!   row) find its root once, lanes that would hook the same root elect one CAS, and the reads
//!   that may be stale go through the L1 (any ancestor read is good enough; see
//!   `kernels/cc/cc.cu`). Every find stops at vertex 0 without loading it (0 is always a
//!   root), and an edge whose one end is the other's parent ends after two loads.
//! - A device then merges its children's arrays (in the binomial tree of [`TreeReduction`];
//!   each entry `(v, parent[v])` is one more edge to hook, whether `parent[v]` is a root or
//!   not) and sends its array up to its parent; device 0 sends the labels to the host. Device
//!   0 compresses (pointer jumping until every vertex points at its root) after its merges.
//!   Over the devices' rows no other compress follows the linking: it would cost time on the
//!   way to the root and save the merge little. The streamed edges' forests, deep on road
//!   networks, are compressed before they merge too, and after it. Large arrays are
//!   packetized by the links, so merging pipelines with the copies.
//!
//! Labels are the minimum vertex id of each component (the roots: hooks only point a root at a
//! smaller vertex).
//!
//! | item | what it is |
//! |---|---|
//! | [`CcSolver`] | the solver with the graph staged once (as [`CcStorage`] says) and reused by every run |
//! | [`connected_components`] | one run over a [`CcInput`]: rows on the devices or staged edges |
//! | [`DeviceRows`] | each device's rows in device memory, uploaded once and linked by every run |
//! | [`StagedEdges`] | the edge list in pinned host memory, staged once and reused by every run |
//! | [`CcOptions`], [`CcResult`], [`CcStats`] | settings, labels and measurements |
//! | [`CcRanks`], [`CcRanksResult`], [`CcRanksStats`] | one process's share of a run spanning processes (MPI ranks): link the rows (or hook the edges), then the processes' forests gathered (two processes: once; more: owned labels in rounds) |
//! | [`cc_reference`] | sequential union-find, the oracle of the tests |
//! | [`LabelPropagation`] | connected components as a `groute_worklist::WorklistAlgorithm`, for the worklist's executors |
//! | [`Edge`] | one edge `(u, v)` as it travels over the scatter router |
//! | [`host`], [`cuda`] | the kernels of each backend (hook, compress, merge) |
//! | [`CcError`] | what can go wrong |
//!
//! ```
//! use groute_cc::{cc_reference, connected_components, CcOptions, CcSolver, StagedEdges};
//! use groute_graph::{generate, GenSpec, NoProgress};
//!
//! let g = generate(&"random:n=300,m=200,seed=4".parse::<GenSpec>()?, &NoProgress)?;
//! let ctx = groute_core::Context::host(3)?;
//! // The solver keeps the edges as `CcOptions::storage` says (here, as `Auto` picks).
//! let mut solver = CcSolver::new(&ctx, &g, &CcOptions::default())?;
//! assert_eq!(solver.run()?.labels, cc_reference(&g.csr));
//! // One run over the edges streamed from pinned host memory.
//! let staged = StagedEdges::new(&ctx, &g)?;
//! let result = connected_components(&ctx, &staged, &CcOptions::default().with_chunk_edges(16))?;
//! assert_eq!(result.labels, cc_reference(&g.csr));
//! assert_eq!(result.stats.edges_per_device.iter().sum::<u64>(), staged.num_edges() as u64);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Timing
//!
//! Like the original Groute's timer, [`CcStats::elapsed`] excludes loading, staging (the rows'
//! upload, or the edge list's copy into pinned memory) and allocation (routers and parent
//! arrays are built before it starts) and, streaming with [`CcOptions::prefill`] (the
//! default), the copies that fill the devices' receive buffers
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
mod device_rows;
mod error;
pub mod host;
mod interface;
mod kernels;
mod label_propagation;
mod ranks;
mod reference;
mod solver;
mod staged_edges;

pub use component_stats::component_stats;
pub use dataflow::connected_components;
pub use device_rows::{DeviceRows, SAMPLED_ARCS, TILE_ARCS};
pub use error::CcError;
pub use interface::{CcInput, CcOptions, CcResult, CcStats, CcStorage};
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
