//! The error type of runs spanning processes.

use groute_worklist::WorklistError;

/// What can go wrong in a run spanning processes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DistError {
    /// This process's share of the run failed.
    #[error(transparent)]
    Worklist(#[from] WorklistError),
    /// The communication layer failed (a message that cannot be sent or decoded, a lost peer).
    #[error("communication between ranks failed: {0}")]
    Comm(String),
    /// Another rank failed; its own error is printed by that rank.
    #[error(
        "{failed} of {ranks} ranks failed during the run (this rank, {rank}, stopped with them; \
         the failing ranks print why)"
    )]
    PeerFailed {
        /// Ranks that failed.
        failed: u64,
        /// Ranks in the run.
        ranks: usize,
        /// This rank.
        rank: usize,
    },
    /// The ranks disagree on something every rank must give the same (device counts,
    /// graph size, sources).
    #[error("the ranks disagree on {what}: {detail}; {fix}")]
    Mismatch {
        /// What differs.
        what: &'static str,
        /// The values seen.
        detail: String,
        /// How to make them agree.
        fix: &'static str,
    },
}

impl From<groute_core::Error> for DistError {
    fn from(e: groute_core::Error) -> Self {
        DistError::Worklist(e.into())
    }
}

/// A result of this crate.
pub type Result<T, E = DistError> = std::result::Result<T, E>;
