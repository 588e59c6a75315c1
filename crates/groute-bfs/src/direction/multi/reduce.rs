//! [`LevelReduce`]: the per-level sum of the devices' counts when every device's share of the
//! level loop runs on its own host thread (`MultiDriver::PerDevice`): every thread adds its
//! device's counts and gets the total back, so every thread's switch rule decides alike.
//!
//! In a run spanning processes one thread, device 0's, *leads*: once every thread of its
//! process has added its counts, it sums the process's total with the other processes'
//! ([`LevelReduce::all_reduce`]'s `across`) and hands that back to every thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use groute_core::Error;
use groute_core::sync::SPIN_BEFORE_PARKING;

use crate::BfsError;
use crate::direction::StepCounts;

/// The leader's sum of its process's counts over every process.
pub(super) type Across<'a> = &'a mut dyn FnMut(StepCounts) -> Result<StepCounts, BfsError>;

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
    /// Whether one thread leads (passes `across`): it publishes every total.
    led: bool,
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
    /// A reduction among `parties` threads; `led`: one of them passes `across` to every
    /// [`LevelReduce::all_reduce`].
    pub(super) fn new(parties: usize, led: bool) -> Self {
        LevelReduce {
            parties,
            led,
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
    /// or an error once a thread [`LevelReduce::abort`]ed. The leader of a led reduction
    /// passes `across`, which turns its process's total into the total over every process.
    pub(super) fn all_reduce(
        &self,
        counts: StepCounts,
        across: Option<Across<'_>>,
    ) -> Result<StepCounts, BfsError> {
        let mut st = self.lock();
        if st.aborted {
            return Err(aborted().into());
        }
        st.sum = st.sum.plus(&counts);
        st.arrived += 1;
        let generation = self.generation.load(Ordering::Acquire);
        if let Some(across) = across {
            while st.arrived < self.parties && !st.aborted {
                st = self.done.wait(st).unwrap_or_else(PoisonError::into_inner);
            }
            if st.aborted {
                return Err(aborted().into());
            }
            let local = std::mem::take(&mut st.sum);
            st.arrived = 0;
            drop(st);
            // The others wait for the generation: none can arrive again before it moves.
            let total = match across(local) {
                Ok(total) => total,
                Err(e) => {
                    self.abort();
                    return Err(e);
                }
            };
            let mut st = self.lock();
            st.result = total;
            self.generation.store(generation + 1, Ordering::Release);
            self.done.notify_all();
            return Ok(total);
        }
        if st.arrived == self.parties {
            if self.led {
                // Wake the leader, which publishes.
                self.done.notify_all();
            } else {
                st.result = std::mem::take(&mut st.sum);
                st.arrived = 0;
                self.generation.store(generation + 1, Ordering::Release);
                self.done.notify_all();
                return Ok(st.result);
            }
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
            return Err(aborted().into());
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
        let reduce = LevelReduce::new(4, false);
        let totals: Vec<Vec<u64>> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..4u64)
                .map(|t| {
                    let reduce = &reduce;
                    s.spawn(move || {
                        (0..50u64)
                            .map(|level| {
                                reduce.all_reduce(counts(t + level), None).unwrap().frontier
                            })
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
        let reduce = LevelReduce::new(3, false);
        std::thread::scope(|s| {
            let waiting = s.spawn(|| reduce.all_reduce(counts(1), None));
            std::thread::sleep(std::time::Duration::from_millis(20));
            reduce.abort();
            let e = waiting.join().unwrap().unwrap_err();
            assert!(e.to_string().contains("another device failed"), "{e}");
        });
        assert!(reduce.all_reduce(counts(1), None).is_err());
    }

    /// The leader's `across` sees its process's total once every thread has added, and
    /// every thread gets what it returns (here: the total of two processes alike).
    #[test]
    fn a_led_reduction_hands_every_thread_the_leaders_total() {
        let reduce = LevelReduce::new(3, true);
        let totals: Vec<Vec<u64>> = std::thread::scope(|s| {
            let reduce = &reduce;
            let others: Vec<_> = (1..3u64)
                .map(|t| {
                    s.spawn(move || {
                        (0..40u64)
                            .map(|level| {
                                reduce.all_reduce(counts(t * level), None).unwrap().frontier
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            let mut seen = Vec::new();
            let led: Vec<u64> = (0..40u64)
                .map(|level| {
                    let mut across = |local: StepCounts| {
                        seen.push(local.frontier);
                        Ok(local.plus(&local))
                    };
                    reduce
                        .all_reduce(counts(level), Some(&mut across))
                        .unwrap()
                        .frontier
                })
                .collect();
            // The leader adds `level`, the others `level` and `2 level`.
            let expected_local: Vec<u64> = (0..40u64).map(|level| 4 * level).collect();
            assert_eq!(seen, expected_local);
            let mut all = vec![led];
            all.extend(others.into_iter().map(|t| t.join().unwrap()));
            all
        });
        let expected: Vec<u64> = (0..40u64).map(|level| 8 * level).collect();
        for got in totals {
            assert_eq!(got, expected);
        }
    }

    /// A leader whose `across` fails releases the waiting threads with an error.
    #[test]
    fn a_failing_leader_releases_the_others() {
        let reduce = LevelReduce::new(2, true);
        std::thread::scope(|s| {
            let other = s.spawn(|| reduce.all_reduce(counts(1), None));
            let mut across = |_: StepCounts| -> Result<StepCounts, BfsError> {
                Err(Error::Disconnected("the other processes".into()).into())
            };
            assert!(reduce.all_reduce(counts(1), Some(&mut across)).is_err());
            assert!(other.join().unwrap().is_err());
        });
    }
}
