//! What a run of [`connected_components`](crate::connected_components) takes and gives: its
//! input ([`CcInput`]), its settings ([`CcOptions`], [`CcStorage`]), and its labels
//! ([`CcResult`]) with their measurements ([`CcStats`]).

use std::time::Duration;

use groute_core::Context;

use crate::{DeviceRows, StagedEdges};

/// What a run of [`connected_components`](crate::connected_components) links: the edge list
/// streamed from pinned host memory through the scatter router, or the rows each device holds.
#[derive(Clone, Copy, Debug)]
pub enum CcInput<'a> {
    /// Edge chunks, to whichever device is free ([`StagedEdges`]).
    Streamed(&'a StagedEdges),
    /// Each device's own rows ([`DeviceRows`]).
    Rows(&'a DeviceRows),
}

impl<'a> From<&'a StagedEdges> for CcInput<'a> {
    fn from(staged: &'a StagedEdges) -> Self {
        CcInput::Streamed(staged)
    }
}

impl<'a> From<&'a DeviceRows> for CcInput<'a> {
    fn from(rows: &'a DeviceRows) -> Self {
        CcInput::Rows(rows)
    }
}

impl CcInput<'_> {
    pub(crate) fn num_vertices(&self) -> usize {
        match self {
            CcInput::Streamed(s) => s.num_vertices(),
            CcInput::Rows(r) => r.num_vertices(),
        }
    }

    pub(crate) fn belongs_to(&self, ctx: &Context) -> bool {
        match self {
            CcInput::Streamed(s) => s.belongs_to(ctx),
            CcInput::Rows(r) => r.belongs_to(ctx),
        }
    }
}

/// Settings of [`connected_components`](crate::connected_components). `None` means "chosen
/// from the graph" (see each field). The chunk, buffer, prefill and compress settings apply
/// where the edges stream from host memory ([`CcInput::Streamed`]); the merge and timeout
/// settings to every run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CcOptions {
    /// Edges per chunk sent through the scatter router (the packet size of its links).
    /// Default: the vertex count for dense graphs (average degree >= 8, Groute's choice), one
    /// chunk per device for sparse ones (road networks: few large chunks).
    pub chunk_edges: Option<usize>,
    /// Receive buffers per device on the scatter router. Default: 88% of a device's fair
    /// share of the chunks (Groute's auto configuration keeps 12% streaming while the devices
    /// work), one for sparse graphs (one chunk per device).
    pub input_buffers: Option<usize>,
    /// Parent entries per packet on the reduction router. Default: a quarter of the vertices.
    pub merge_packet: Option<usize>,
    /// Receive buffers per output of the reduction router. Default 4.
    pub merge_buffers: usize,
    /// Fill every device's receive buffers before the clock starts (Groute's timing: the first
    /// copies are excluded). Default true. Chunks beyond the buffers still stream while the
    /// devices work, to whichever device frees a buffer first.
    pub prefill: bool,
    /// Compress after every `compress_every`-th chunk (and always before merging). Default
    /// `usize::MAX`: only once, before merging (every find of the hook shortens the paths it
    /// climbs, so trees stay shallow without compressing between chunks).
    pub compress_every: usize,
    /// How long a device or the host waits for the next message before giving up. Default 120 s.
    pub timeout: Duration,
    /// Where [`CcSolver`](crate::CcSolver) keeps the edges between runs. Default
    /// [`CcStorage::Auto`].
    pub storage: CcStorage,
}

/// Where [`CcSolver`](crate::CcSolver) keeps a graph's edges: what its runs link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CcStorage {
    /// [`CcStorage::DeviceRows`] on graphs of at least [`CcStorage::DENSE_DEGREE`] arcs per
    /// vertex, where sampling lets a run skip most arcs; [`CcStorage::HostStream`] on sparser
    /// ones (road networks), where sampling links most arcs anyway and the stream's hook is
    /// the faster way to link every edge once.
    #[default]
    Auto,
    /// Each device holds a block of the graph's rows and links them: by sampling first on
    /// dense graphs, every arc once on sparse ones ([`DeviceRows`]).
    DeviceRows,
    /// The edge list stays in pinned host memory and streams to whichever device is free at
    /// every run ([`StagedEdges`], Groute's dataflow): device memory holds only the receive
    /// buffers and the parent arrays, for graphs whose arcs do not fit the devices. The
    /// chunk and prefill settings apply to it alone.
    HostStream,
}

impl CcStorage {
    /// Arcs per vertex from which [`CcStorage::Auto`] keeps the rows on the devices.
    pub const DENSE_DEGREE: u64 = 8;

    /// The storage this setting takes for a graph of `vertices` and `arcs` (itself, but for
    /// [`CcStorage::Auto`]).
    pub fn resolve(self, vertices: usize, arcs: u64) -> CcStorage {
        match self {
            CcStorage::Auto if arcs >= Self::DENSE_DEGREE.saturating_mul(vertices as u64) => {
                CcStorage::DeviceRows
            }
            CcStorage::Auto => CcStorage::HostStream,
            chosen => chosen,
        }
    }
}

impl Default for CcOptions {
    fn default() -> Self {
        CcOptions {
            chunk_edges: None,
            input_buffers: None,
            merge_packet: None,
            merge_buffers: 4,
            prefill: true,
            compress_every: usize::MAX,
            timeout: Duration::from_secs(120),
            storage: CcStorage::Auto,
        }
    }
}

impl CcOptions {
    /// With `chunk_edges` edges per chunk.
    pub fn with_chunk_edges(mut self, chunk_edges: usize) -> Self {
        self.chunk_edges = Some(chunk_edges);
        self
    }

    /// With `input_buffers` receive buffers per device for the chunks.
    pub fn with_input_buffers(mut self, input_buffers: usize) -> Self {
        self.input_buffers = Some(input_buffers);
        self
    }

    /// With `merge_packet` entries per merge packet.
    pub fn with_merge_packet(mut self, merge_packet: usize) -> Self {
        self.merge_packet = Some(merge_packet);
        self
    }

    /// With the edges kept as `storage` says.
    pub fn with_storage(mut self, storage: CcStorage) -> Self {
        self.storage = storage;
        self
    }

    /// With or without prefilled receive buffers.
    pub fn with_prefill(mut self, prefill: bool) -> Self {
        self.prefill = prefill;
        self
    }
}

/// Measurements of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcStats {
    /// The algorithm, as Groute times it: from the devices' start (receive buffers prefilled
    /// when [`CcOptions::prefill`](crate::CcOptions::prefill), else before the first chunk is
    /// sent) to the final labels on device 0.
    pub elapsed: Duration,
    /// From the same start to the labels in host memory.
    pub elapsed_to_host: Duration,
    /// The algorithm's time on the devices: CUDA timing events from the same start to each
    /// device's last hook, merge or compress (before its array is sent up the tree), max over
    /// devices; what benchmarks report. `None` on the host backend.
    pub device_time: Option<Duration>,
    /// Copies of the prefilled chunks, before the clock starts (zero without prefill).
    pub prefill: Duration,
    /// Routers, receive buffers, parent arrays and kernel loading, before the clock starts.
    pub setup: Duration,
    /// Edges hooked by each device: from the edge chunks it took
    /// ([`StagedEdges`](crate::StagedEdges)), or the arcs of its own rows it linked
    /// ([`DeviceRows`](crate::DeviceRows); the rest it skipped).
    pub edges_per_device: Vec<u64>,
    /// Chunks taken by each device.
    pub chunks_per_device: Vec<u64>,
    /// Parent entries each device merged from its children.
    pub merged_per_device: Vec<u64>,
    /// Edges per chunk used.
    pub chunk_edges: usize,
    /// Receive buffers per device used.
    pub input_buffers: usize,
    /// Number of chunks.
    pub chunks: usize,
}

/// Labels and statistics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcResult {
    /// `labels[v]`: the smallest vertex id of `v`'s component (internal numbering, which for
    /// CC is the graph's own: map with [`groute_graph::Graph::external_id`]).
    pub labels: Vec<u32>,
    /// Number of components.
    pub components: usize,
    /// Vertices in the largest component.
    pub largest_component: usize,
    /// Measurements.
    pub stats: CcStats,
}
