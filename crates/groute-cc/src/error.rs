//! The crate's error type.

use std::time::Duration;

/// What can go wrong in connected components.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CcError {
    /// The runtime failed (allocation, copy, launch, link).
    #[error(transparent)]
    Core(#[from] groute_core::Error),
    /// The devices' memory cannot hold the graph's rows ([`crate::DeviceRows`]).
    #[error(
        "{0}; or keep the edges in host memory and stream them to the devices at every run \
         (CcOptions::storage = CcStorage::HostStream, the cc example's --storage stream)"
    )]
    RowsDoNotFit(groute_core::Error),
    /// The graph cannot be split or held as asked.
    #[error(transparent)]
    Graph(#[from] groute_graph::GraphError),
    /// A collective step between the processes of a run spanning several failed
    /// ([`CcRanks`](crate::CcRanks)).
    #[error(transparent)]
    Ranks(#[from] groute_worklist::WorklistError),
    /// A setting is out of range.
    #[error("invalid {setting} = {value}: {reason}")]
    InvalidOption {
        /// The setting (`chunk_edges`, `input_buffers`, ...).
        setting: &'static str,
        /// The value given.
        value: String,
        /// Why it is refused, and what to use instead.
        reason: String,
    },
    /// The staged edges or device rows were built on another context than the one solving.
    #[error(
        "the staged edges or device rows belong to another context; build them (StagedEdges::new, DeviceRows::new) on the solving context"
    )]
    ForeignStaging,
    /// A link ended before delivering what the protocol promised.
    #[error("{what}: expected {expected} elements, got {got} before end of stream")]
    ShortMessage {
        /// Which message (`device 1 merge input`, `labels at the host`).
        what: String,
        /// Elements expected.
        expected: usize,
        /// Elements received.
        got: usize,
    },
    /// A packet of a merged parent array lies outside the vertex range.
    #[error("{what}: packet at offset {offset} with {len} entries exceeds {num_vertices} vertices")]
    PacketOutOfRange {
        /// Which message.
        what: String,
        /// The packet's offset in its message.
        offset: usize,
        /// Its length.
        len: usize,
        /// Vertices of the graph.
        num_vertices: usize,
    },
    /// Another device failed, so this one stopped waiting.
    #[error("device {device} stopped: another participant failed")]
    Aborted {
        /// The device that stopped.
        device: usize,
    },
    /// Nothing arrived for too long: a participant hangs.
    #[error(
        "{what}: nothing arrived for {waited:?} (raise CcOptions::timeout for very large graphs)"
    )]
    Timeout {
        /// What was waited for.
        what: String,
        /// How long.
        waited: Duration,
    },
    /// A worker thread panicked.
    #[error("worker thread of device {device} panicked")]
    WorkerPanicked {
        /// The device.
        device: usize,
    },
}

impl CcError {
    pub(crate) fn invalid(
        setting: &'static str,
        value: impl std::fmt::Display,
        reason: impl Into<String>,
    ) -> Self {
        CcError::InvalidOption {
            setting,
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

impl<T> From<groute_core::SendError<T>> for CcError {
    fn from(e: groute_core::SendError<T>) -> Self {
        CcError::Core(e.into())
    }
}
