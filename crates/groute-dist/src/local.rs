//! Ranks as threads of one process: [`LocalRanks`], the [`RankComm`] of the tests and of the
//! protocol's jitter checks.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crossbeam::channel::{Receiver, Sender, unbounded};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::comm::{RankComm, Reduction, WaveCounts};
use crate::error::{DistError, Result};

/// The state the ranks share: sums being formed and gathers.
#[derive(Default)]
struct Shared {
    /// Per collective sequence number: the words reduced so far.
    sums: HashMap<u64, Reduced>,
    /// Per gather sequence number: each rank's bytes.
    gathers: HashMap<u64, Vec<Option<Vec<u8>>>>,
}

/// One reduction being formed.
struct Reduced {
    words: Vec<u64>,
    /// Ranks that gave their words.
    given: usize,
    /// Ranks that took the result (the last one removes it).
    taken: usize,
}

impl Shared {
    /// The result of reduction `seq` for one rank, once every one of `size` ranks gave.
    fn take(&mut self, seq: u64, size: usize) -> Option<Vec<u64>> {
        let reduced = self.sums.get_mut(&seq)?;
        if reduced.given < size {
            return None;
        }
        reduced.taken += 1;
        let words = reduced.words.clone();
        if reduced.taken == size {
            self.sums.remove(&seq);
        }
        Some(words)
    }
}

/// One rank of a run whose ranks are threads of this process (make them with
/// [`LocalRanks::new`] and move one to each thread).
///
/// With a jitter seed, the rank delays what it sees at random (a message stays unseen for a
/// while, a wave's result too), so tests shake the termination protocol's orderings.
pub struct LocalRanks {
    rank: usize,
    size: usize,
    to_next: Sender<Vec<u8>>,
    from_previous: Receiver<Vec<u8>>,
    shared: Arc<(Mutex<Shared>, Condvar)>,
    /// Sequence number of this rank's next collective (waves and blocking ones alike).
    next_collective: u64,
    /// The wave in flight: its sequence number.
    wave: Option<u64>,
    jitter: Option<ChaCha8Rng>,
}

impl std::fmt::Debug for LocalRanks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalRanks")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish()
    }
}

impl LocalRanks {
    /// `size` ranks, rank `r` at index `r`; `jitter`: a seed to delay deliveries at random.
    pub fn new(size: usize, jitter: Option<u64>) -> Vec<LocalRanks> {
        let shared = Arc::new((Mutex::new(Shared::default()), Condvar::new()));
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..size).map(|_| unbounded::<Vec<u8>>()).unzip();
        (0..size)
            .map(|rank| LocalRanks {
                rank,
                size,
                // Rank r sends into rank r + 1's channel and reads its own.
                to_next: senders[(rank + 1) % size].clone(),
                from_previous: receivers[rank].clone(),
                shared: Arc::clone(&shared),
                next_collective: 0,
                wave: None,
                jitter: jitter.map(|s| ChaCha8Rng::seed_from_u64(s ^ (rank as u64) << 32)),
            })
            .collect()
    }

    /// Under jitter: whether to pretend that nothing has arrived yet (and sleep a little).
    fn hold_back(&mut self) -> bool {
        let Some(rng) = &mut self.jitter else {
            return false;
        };
        if rng.random_bool(0.3) {
            std::thread::sleep(Duration::from_micros(rng.random_range(0..200)));
            return true;
        }
        false
    }

    fn contribute(&mut self, words: &[u64], op: Reduction) -> u64 {
        let seq = self.next_collective;
        self.next_collective += 1;
        let (lock, ready) = &*self.shared;
        let mut shared = lock.lock().unwrap_or_else(|p| p.into_inner());
        let entry = shared.sums.entry(seq).or_insert_with(|| Reduced {
            words: words.to_vec(),
            given: 0,
            taken: 0,
        });
        if entry.given > 0 {
            for (s, &w) in entry.words.iter_mut().zip(words) {
                op.apply(s, w);
            }
        }
        entry.given += 1;
        ready.notify_all();
        seq
    }

    /// The result of collective `seq` if every rank gave.
    fn result_of(&self, seq: u64) -> Option<Vec<u64>> {
        let (lock, _) = &*self.shared;
        let mut shared = lock.lock().unwrap_or_else(|p| p.into_inner());
        shared.take(seq, self.size)
    }
}

impl RankComm for LocalRanks {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn start_send(&mut self, bytes: Vec<u8>) -> Result<()> {
        // A rank that has left (its run failed and it returned) takes nothing more; a run
        // that ends normally sends nothing after its last wave.
        let _ = self.to_next.send(bytes);
        Ok(())
    }

    fn progress_sends(&mut self) -> Result<usize> {
        Ok(0)
    }

    fn try_receive(&mut self) -> Result<Option<Vec<u8>>> {
        if self.hold_back() {
            return Ok(None);
        }
        // A previous rank that has left sends nothing more.
        Ok(self.from_previous.try_recv().ok())
    }

    fn start_wave(&mut self, counts: WaveCounts) -> Result<()> {
        if self.wave.is_some() {
            return Err(DistError::Comm("a wave is already in flight".into()));
        }
        self.wave = Some(self.contribute(&counts.to_words(), Reduction::Sum));
        Ok(())
    }

    fn test_wave(&mut self) -> Result<Option<WaveCounts>> {
        let Some(seq) = self.wave else {
            return Err(DistError::Comm("no wave in flight".into()));
        };
        if self.hold_back() {
            return Ok(None);
        }
        Ok(self.result_of(seq).map(|w| {
            self.wave = None;
            WaveCounts::from_words([w[0], w[1], w[2]])
        }))
    }

    fn all_reduce(&mut self, words: &[u64], op: Reduction) -> Result<Vec<u64>> {
        let seq = self.contribute(words, op);
        let (lock, ready) = &*self.shared;
        let mut shared = lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(words) = shared.take(seq, self.size) {
                return Ok(words);
            }
            shared = ready.wait(shared).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn gather_to_root(&mut self, bytes: &[u8]) -> Result<Option<Vec<Vec<u8>>>> {
        let seq = self.next_collective;
        self.next_collective += 1;
        let (lock, ready) = &*self.shared;
        let mut shared = lock.lock().unwrap_or_else(|p| p.into_inner());
        let size = self.size;
        shared
            .gathers
            .entry(seq)
            .or_insert_with(|| vec![None; size])[self.rank] = Some(bytes.to_vec());
        ready.notify_all();
        if self.rank != 0 {
            return Ok(None);
        }
        loop {
            if shared.gathers[&seq].iter().all(Option::is_some) {
                let all = shared.gathers.remove(&seq).unwrap_or_default();
                return Ok(Some(
                    all.into_iter().map(Option::unwrap_or_default).collect(),
                ));
            }
            shared = ready.wait(shared).unwrap_or_else(|p| p.into_inner());
        }
    }
}
