//! The facade's one error type.

use std::path::PathBuf;

use groute_bfs::BfsError;
use groute_cc::CcError;
use groute_graph::GraphError;
use groute_pagerank::PageRankError;
use groute_sssp::SsspError;
use groute_worklist::WorklistError;

use super::options::Backend;

/// What can go wrong in the high-level API ([`Graph`](crate::Graph), [`Runner`](crate::Runner),
/// [`bfs`](crate::bfs()) and the other runs): the crates' own errors, kept whole as the
/// source, and the facade's checks of its arguments.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Loading, generating, building or partitioning the graph failed.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// The runtime failed: no such backend, a device, an allocation, a copy.
    #[error(transparent)]
    Runtime(#[from] groute_core::Error),
    /// The BFS solver failed.
    #[error(transparent)]
    Bfs(#[from] BfsError),
    /// The SSSP solver failed.
    #[error(transparent)]
    Sssp(#[from] SsspError),
    /// The PageRank solver failed (its parameters included).
    #[error(transparent)]
    PageRank(#[from] PageRankError),
    /// The connected-components solver failed.
    #[error(transparent)]
    Cc(#[from] CcError),
    /// The graph has no vertices.
    #[error("the graph {name} has no vertices; give a graph with at least one vertex")]
    EmptyGraph {
        /// The graph's name.
        name: String,
    },
    /// A vertex given to a run is not a vertex of the graph.
    #[error(
        "vertex {vertex} is not a vertex of {name}: it has {vertices} vertices, numbered 0..{vertices} in input order (Graph::vertex converts an id of the input file)"
    )]
    VertexOutOfRange {
        /// The vertex asked for (input order, 0-based).
        vertex: u64,
        /// Vertices in the graph.
        vertices: usize,
        /// The graph's name.
        name: String,
    },
    /// A run was asked for zero devices.
    #[error("a run needs at least one device; ask for devices(1) or more")]
    NoDevices,
    /// A run was asked for more devices than a context holds (`groute_core::MAX_DEVICES`).
    #[error(
        "a run holds at most {max} devices (asked for {devices}); ask for devices({max}) or fewer"
    )]
    TooManyDevices {
        /// Devices asked for.
        devices: usize,
        /// The most a run holds.
        max: usize,
    },
    /// The backend asked for has no executor for this run.
    #[error(
        "{algorithm} cannot run on the {backend} backend: {reason}; ask for Backend::Auto or {instead}"
    )]
    BackendUnavailable {
        /// The run.
        algorithm: &'static str,
        /// The backend asked for.
        backend: Backend,
        /// Why it is unavailable.
        reason: &'static str,
        /// The backend that runs it.
        instead: Backend,
    },
    /// The distributed worklist failed (a program's own algorithm,
    /// [`Runner::run_algorithm`](crate::Runner::run_algorithm)).
    #[error(transparent)]
    Worklist(#[from] WorklistError),
    /// A vertex id of an edge is not below the vertex count given.
    #[error(
        "edge {index} ({from} -> {to}) names a vertex outside 0..{vertices}; give a vertex count above every endpoint"
    )]
    EdgeOutOfRange {
        /// Position of the edge in the input.
        index: usize,
        /// Its source.
        from: u64,
        /// Its target.
        to: u64,
        /// The vertex count given.
        vertices: usize,
    },
    /// A graph handed over by another crate has more vertices than groute numbers (`u32`).
    #[error(
        "the graph has {vertices} vertices; groute numbers vertices with u32, so at most {max}",
        max = u32::MAX
    )]
    TooManyVertices {
        /// Its vertex count.
        vertices: usize,
    },
    /// An edge weight handed over by another crate is not a `u32` (groute's arc weights).
    #[error(
        "edge {index} ({from} -> {to}) has a weight that is not an integer in 0..=4294967295 ({problem}); convert the weights to u32 first"
    )]
    InvalidWeight {
        /// Position of the edge in the input.
        index: usize,
        /// Its source.
        from: u64,
        /// Its target.
        to: u64,
        /// What is wrong with it.
        problem: WeightProblem,
    },
    /// A sparse matrix handed over as an adjacency matrix is not square.
    #[error(
        "a {rows} x {cols} matrix is not an adjacency matrix; give a square matrix (rows = columns = vertices)"
    )]
    NotSquare {
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
    },
    /// Writing a result failed.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The thread of an asynchronous run could not be started.
    #[error("cannot start a thread to run {algorithm}")]
    Spawn {
        /// The algorithm it was to run.
        algorithm: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The thread running an asynchronous run ended without a result (it panicked).
    #[error("the thread running {algorithm} ended without a result (it panicked)")]
    WorkerLost {
        /// The algorithm it ran.
        algorithm: &'static str,
    },
}

impl Error {
    /// The runtime's error at the bottom of this one, if the run failed in the runtime (a
    /// device, an allocation, a copy), whichever algorithm's error carries it.
    pub fn runtime(&self) -> Option<&groute_core::Error> {
        fn worklist(e: &WorklistError) -> Option<&groute_core::Error> {
            match e {
                WorklistError::Runtime(core) => Some(core),
                _ => None,
            }
        }
        match self {
            Error::Runtime(core)
            | Error::Cc(CcError::Core(core))
            | Error::Cc(CcError::RowsDoNotFit(core)) => Some(core),
            Error::Worklist(e)
            | Error::Bfs(BfsError::Worklist(e))
            | Error::Sssp(SsspError::Worklist(e))
            | Error::PageRank(PageRankError::Worklist(e)) => worklist(e),
            _ => None,
        }
    }

    /// Whether a device ran out of memory: past the run's
    /// [`device_memory_limit`](crate::Runner::device_memory_limit) or out of what the device
    /// has. Fewer vertices per device (more devices) or a higher limit is the fix.
    pub fn is_device_memory_exhausted(&self) -> bool {
        matches!(
            self.runtime(),
            Some(
                groute_core::Error::DeviceMemoryLimit { .. }
                    | groute_core::Error::DeviceOutOfMemory { .. }
            )
        )
    }
}

/// Why a weight is not a `u32` ([`Error::InvalidWeight`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WeightProblem {
    /// Below zero.
    #[error("negative")]
    Negative,
    /// Above `u32::MAX`.
    #[error("too large")]
    TooLarge,
    /// A float with a fractional part.
    #[error("not an integer")]
    Fractional,
    /// NaN or infinite.
    #[error("not finite")]
    NotFinite,
}

/// `Result` with the facade's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
