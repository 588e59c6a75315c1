//! [`LevelReduce`]: the per-level sum of the devices' counts when every device's share of the
//! level loop runs on its own host thread (`MultiDriver::PerDevice`): every thread adds its
//! device's counts and gets the total back, so every thread's switch rule decides alike.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use groute_core::Error;
use groute_core::sync::SPIN_BEFORE_PARKING;

use crate::direction::StepCounts;

struct ReduceState {
    arrived: usize,
    sum: StepCounts,
    /// The total of the last completed reduction.
    result: StepCounts,
    aborted: bool,
}

/// An all-reduce (sum) of [`StepCounts`] among a fixed number of threads, once per level.
pub(super) struct LevelReduce {
    parties: usize,
    state: Mutex<ReduceState>,
    /// Completed reductions (read without the lock while spinning).
    generation: AtomicU64,
    done: Condvar,
}

/// The error of a thread whose reduction another thread abandoned.
fn aborted() -> Error {
    Error::Disconnected("the level reduction (another device failed)".into())
}

impl LevelReduce {
    /// A reduction among `parties` threads.
    pub(super) fn new(parties: usize) -> Self {
        LevelReduce {
            parties,
            state: Mutex::new(ReduceState {
                arrived: 0,
                sum: StepCounts::default(),
                result: StepCounts::default(),
                aborted: false,
            }),
            generation: AtomicU64::new(0),
            done: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ReduceState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `counts` and waits for every other thread's; the total (the same on every thread),
    /// or an error once a thread [`LevelReduce::abort`]ed.
    pub(super) fn all_reduce(&self, counts: StepCounts) -> Result<StepCounts, Error> {
        let mut st = self.lock();
        if st.aborted {
            return Err(aborted());
        }
        st.sum = st.sum.plus(&counts);
        st.arrived += 1;
        let generation = self.generation.load(Ordering::Acquire);
        if st.arrived == self.parties {
            st.result = std::mem::take(&mut st.sum);
            st.arrived = 0;
            self.generation.store(generation + 1, Ordering::Release);
            self.done.notify_all();
            return Ok(st.result);
        }
        drop(st);
        // The others are usually microseconds behind: spin before parking.
        let spin_until = Instant::now() + SPIN_BEFORE_PARKING;
        while self.generation.load(Ordering::Acquire) == generation && Instant::now() < spin_until {
            std::hint::spin_loop();
        }
        let mut st = self.lock();
        while self.generation.load(Ordering::Acquire) == generation && !st.aborted {
            st = self.done.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        if self.generation.load(Ordering::Acquire) == generation {
            return Err(aborted());
        }
        // No later reduction can complete before this thread arrives at it: `result` is
        // still this one's.
        Ok(st.result)
    }

    /// Fails every waiting and later reduction (a thread's device failed).
    pub(super) fn abort(&self) {
        self.lock().aborted = true;
        self.done.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(frontier: u64) -> StepCounts {
        StepCounts {
            frontier,
            ..StepCounts::default()
        }
    }

    #[test]
    fn every_thread_gets_the_sum_of_every_level() {
        let reduce = LevelReduce::new(4);
        let totals: Vec<Vec<u64>> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..4u64)
                .map(|t| {
                    let reduce = &reduce;
                    s.spawn(move || {
                        (0..50u64)
                            .map(|level| reduce.all_reduce(counts(t + level)).unwrap().frontier)
                            .collect()
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let expected: Vec<u64> = (0..50u64).map(|level| 6 + 4 * level).collect();
        for got in totals {
            assert_eq!(got, expected);
        }
    }

    #[test]
    fn an_abort_releases_the_waiting_threads() {
        let reduce = LevelReduce::new(3);
        std::thread::scope(|s| {
            let waiting = s.spawn(|| reduce.all_reduce(counts(1)));
            std::thread::sleep(std::time::Duration::from_millis(20));
            reduce.abort();
            let e = waiting.join().unwrap().unwrap_err();
            assert!(e.to_string().contains("another device failed"), "{e}");
        });
        assert!(reduce.all_reduce(counts(1)).is_err());
    }
}
