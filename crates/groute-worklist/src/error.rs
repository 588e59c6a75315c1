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
    /// Items go around the ring without any device keeping them: the split
    /// ([`SplitOps::on_receive`](crate::SplitOps::on_receive)) passes on items that their owner should
    /// keep, and the run would never end.
    #[error(
        "no progress: the split keeps items on no device ({sent} items sent onto a ring of \
         {devices} devices, {passed} passed on; an item its owner keeps is passed on at most \
         devices - 2 times, and on one device nothing should be sent); make the split keep each \
         item on the device that owns it"
    )]
    NoProgress {
        /// Items passed on by the devices that received them, in all.
        passed: u64,
        /// Items expand rounds sent onto the ring, in all.
        sent: u64,
        /// Devices on the ring.
        devices: usize,
    },
    /// The collectives between the processes of a run failed
    /// ([`RankCollectives`](crate::RankCollectives): the `groute-dist` crate's error, which
    /// says what failed and on which rank).
    #[error(transparent)]
    Ranks(Box<dyn std::error::Error + Send + Sync>),
}
