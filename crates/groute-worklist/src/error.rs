//! The worklist's error type.

use std::time::Duration;

/// What can go wrong in a distributed worklist run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorklistError {
    /// A runtime error: a capacity exceeded (with the setting to raise), a backend failure, a
    /// panicked kernel.
    #[error(transparent)]
    Runtime(#[from] groute_core::Error),
    /// The run exceeded its time limit.
    #[error(
        "the worklist run exceeded its time limit of {limit:?} with {outstanding} items outstanding; raise time_limit"
    )]
    TimedOut {
        /// The limit.
        limit: Duration,
        /// The termination count when it was hit.
        outstanding: i64,
    },
}
