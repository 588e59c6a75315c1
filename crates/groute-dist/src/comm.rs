//! What a run spanning processes needs from the layer between them: [`RankComm`].

use crate::error::Result;

/// How [`RankComm::all_reduce`] combines the ranks' words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// The sum (wrapping past `u64::MAX`).
    Sum,
    /// The largest.
    Max,
}

impl Reduction {
    /// Combines `word` into `into`.
    pub fn apply(self, into: &mut u64, word: u64) {
        match self {
            Reduction::Sum => *into = into.wrapping_add(word),
            Reduction::Max => *into = (*into).max(word),
        }
    }
}

/// The words a termination wave sums over the ranks ([`RankComm::start_wave`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaveCounts {
    /// Items this rank (all ranks, in a result) handed to the next rank since the run began.
    pub sent: u64,
    /// Items this rank (all ranks) took from the previous rank since the run began.
    pub received: u64,
    /// 1 if this rank failed (in a result: how many failed).
    pub failed: u64,
}

impl WaveCounts {
    /// The counts as the words a collective sums.
    pub fn to_words(self) -> [u64; 3] {
        [self.sent, self.received, self.failed]
    }

    /// The counts from summed words.
    pub fn from_words(w: [u64; 3]) -> Self {
        WaveCounts {
            sent: w[0],
            received: w[1],
            failed: w[2],
        }
    }
}

/// The communication between the ranks of a run: a ring of messages (rank `r` sends to
/// `r + 1 mod size` and receives from `r - 1`), non-blocking sums over every rank (the
/// termination waves) and gathers to rank 0. [`crate::LocalRanks`] implements it with
/// threads of one process (tests, and the protocol's jitter checks); `MpiComm` (feature
/// `mpi`) with MPI.
///
/// Every method is called from one thread at a time; none blocks, except the collectives
/// said to (which every rank calls in the same order).
pub trait RankComm {
    /// This rank.
    fn rank(&self) -> usize;
    /// Ranks in the run.
    fn size(&self) -> usize;
    /// Starts sending `bytes` to the next rank; returns at once (the message is delivered in
    /// order after the ones sent before it).
    fn start_send(&mut self, bytes: Vec<u8>) -> Result<()>;
    /// Advances the sends started; returns how many are not yet complete.
    fn progress_sends(&mut self) -> Result<usize>;
    /// The next message from the previous rank, if one has arrived.
    fn try_receive(&mut self) -> Result<Option<Vec<u8>>>;
    /// Starts a wave: a sum over every rank of each rank's `counts`, non-blocking. Every
    /// rank starts its waves in the same order; one wave at a time.
    fn start_wave(&mut self, counts: WaveCounts) -> Result<()>;
    /// The sum of the wave started last, once every rank has joined it.
    fn test_wave(&mut self) -> Result<Option<WaveCounts>>;
    /// Blocking: `op` over every rank of `words`, word by word (each rank gives as many).
    fn all_reduce(&mut self, words: &[u64], op: Reduction) -> Result<Vec<u64>>;
    /// Blocking: each rank's `bytes`, concatenated in rank order, on rank 0 (`None` on the
    /// others).
    fn gather_to_root(&mut self, bytes: &[u8]) -> Result<Option<Vec<Vec<u8>>>>;

    /// Blocking: rank 0's `words` on every rank (the others' `words` are not read), by two
    /// [`RankComm::all_reduce`]s: what rank 0 alone decides (a default source found on the
    /// whole graph, which the other ranks may not hold).
    fn broadcast_from_root(&mut self, words: &[u64]) -> Result<Vec<u64>> {
        let root = self.rank() == 0;
        let len = if root { words.len() as u64 } else { 0 };
        let len = self.all_reduce(&[len], Reduction::Max)?[0];
        let mine = if root {
            words.to_vec()
        } else {
            vec![0; len as usize]
        };
        self.all_reduce(&mine, Reduction::Sum)
    }
}
