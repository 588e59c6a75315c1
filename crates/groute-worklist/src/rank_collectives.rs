//! [`RankCollectives`]: the collectives a frontier executor needs from the other processes
//! of a run spanning several (the `groute-dist` crate's ranks), on this process's device 0.
//!
//! A level-synchronous executor (direction-optimizing BFS) spanning processes takes a level
//! step on every process's devices, then needs every process to see every other's
//! discoveries and the level's counts summed over all of them, before the next step. Both
//! are collectives: [`RankCollectives::sum`] of a few host words, and
//! [`RankCollectives::all_gather`] of one device buffer per process (a bitmap), enqueued on a
//! stream so that the host does not wait for the data.

use groute_core::{Buffer, Stream};

use crate::error::WorklistError;

/// Collectives over every process of a run, on this process's device 0 (CUDA: NCCL; host
/// backend: through the processes' all-reduce). Every process calls each one, in the same
/// order; each call may block until every process has made it.
pub trait RankCollectives {
    /// This process's rank.
    fn rank(&self) -> usize;

    /// Processes in the run.
    fn ranks(&self) -> usize;

    /// Blocking: the sum over every process of `words`, word by word (every process gives as
    /// many).
    fn sum(&mut self, words: &[u64]) -> Result<Vec<u64>, WorklistError>;

    /// Every process's `mine` into `all`, process `r`'s at words `r * mine.len()..`, in rank
    /// order: enqueued on `stream` (a stream of the device holding both buffers, this
    /// process's device 0) after the work enqueued there before, and complete for the work
    /// enqueued after. `all` holds `ranks() * mine.len()` words; every process gives as many.
    fn all_gather(
        &mut self,
        mine: &Buffer<u32>,
        all: &Buffer<u32>,
        stream: &Stream,
    ) -> Result<(), WorklistError>;
}
