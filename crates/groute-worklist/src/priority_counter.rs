//! Soft-priority scheduling: termination detection with a deferred low-priority band.
//!
//! [`PriorityCounter`] extends the single count of [`TerminationCounter`](crate::TerminationCounter)
//! to two counts, `active` and `deferred`, plus an *epoch* and its *threshold*. The crate docs
//! ("Soft priority: the epoch protocol") state the protocol and prove it; this module is its
//! state machine, small enough to be unit-tested without devices.
//!
//! ```
//! use groute_worklist::{PriorityCounter, StepCounts, StepOutcome};
//! // Two devices, threshold steps of 10: items with priority < 10 are worked on first.
//! let c = PriorityCounter::new(2, Some(10));
//! assert_eq!(c.threshold(), 10);
//! c.report(StepCounts::produced(1)); // the seed
//! // Device 0 expands the seed: one item kept (priority 3), two deferred (priorities 12, 25).
//! let step = StepCounts { consumed: 1, produced: 1, deferred_added: 2, min_deferred_prio: 12, ..StepCounts::default() };
//! assert_eq!(c.report(step), StepOutcome::Continue);
//! // It expands the kept item and produces nothing: no high-priority work is left anywhere,
//! // so this update advances the epoch to the bucket of priority 12 and adds one token per device.
//! let outcome = c.report(StepCounts { consumed: 1, ..StepCounts::default() });
//! assert_eq!(outcome, StepOutcome::Advanced { epoch: 1, threshold: 20 });
//! assert_eq!((c.active(), c.deferred()), (2, 2));
//! // Each device re-examines its low list under the new threshold and consumes its token.
//! c.report(StepCounts { consumed: 1, ..StepCounts::default() }); // device 1: empty low list
//! let reexamined = StepCounts { consumed: 1, produced: 1, deferred_taken: 2, deferred_added: 1, min_deferred_prio: 25 };
//! assert_eq!(c.report(reexamined), StepOutcome::Continue);
//! c.report(StepCounts { consumed: 1, ..StepCounts::default() }); // the item of priority 12
//! assert_eq!(c.epoch(), 2); // advanced again: the item of priority 25 is next
//! // Device 0 moves it to its worklist, device 1 has nothing; then the item is expanded.
//! c.report(StepCounts { consumed: 1, produced: 1, deferred_taken: 1, ..StepCounts::default() });
//! c.report(StepCounts { consumed: 1, ..StepCounts::default() });
//! assert_eq!(c.report(StepCounts { consumed: 1, ..StepCounts::default() }), StepOutcome::Ended);
//! assert!(c.is_done());
//! ```

use std::fmt;

use crate::sync::{AtomicBool, AtomicU64, Mutex, Ordering};

/// What one driver step did, reported in ONE update ([`PriorityCounter::report`]).
///
/// Items a step defers move from `active` to `deferred` in the same update: the step counts
/// the item it consumed in `consumed` and the deferred copy in `deferred_added`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepCounts {
    /// Active items the step created (kept in a worklist, put in an outgoing buffer, moved
    /// out of the low list); none of them may be visible to another step yet.
    pub produced: u64,
    /// Active items the step retired (expanded, split, dropped, or a re-examination token).
    pub consumed: u64,
    /// Items the step put in its device's low-priority list.
    pub deferred_added: u64,
    /// Items the step took out of its device's low-priority list (re-examination).
    pub deferred_taken: u64,
    /// The smallest priority among the `deferred_added` items (`u32::MAX` when none, or when
    /// unknown: it only guides how far the next advance jumps).
    pub min_deferred_prio: u32,
}

impl Default for StepCounts {
    fn default() -> Self {
        StepCounts {
            produced: 0,
            consumed: 0,
            deferred_added: 0,
            deferred_taken: 0,
            min_deferred_prio: u32::MAX,
        }
    }
}

impl StepCounts {
    /// A step that only produced `n` active items (the seeds of a run).
    pub fn produced(n: u64) -> Self {
        StepCounts {
            produced: n,
            ..StepCounts::default()
        }
    }
}

/// What an update did to the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepOutcome {
    /// Work remains; nothing changed globally.
    Continue,
    /// This update brought both counts to zero: the run is over (exactly once).
    Ended,
    /// This update brought `active` to zero with items still deferred: it advanced the epoch
    /// to `epoch` with threshold `threshold`, and added one token per device to `active`.
    Advanced {
        /// The new epoch.
        epoch: u64,
        /// Its threshold.
        threshold: u32,
    },
}

/// An epoch and its threshold, read together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PriorityEpoch {
    /// Advances so far (0 at the start of a run).
    pub epoch: u64,
    /// Items with a priority below this are worked on now; the others are deferred, except
    /// that nothing is deferred at `u32::MAX` (see [`defers`]).
    pub threshold: u32,
}

/// Whether an item of priority `prio` is deferred under `threshold`: `prio >= threshold`,
/// and never at the `u32::MAX` threshold (soft priority off, or the last band), so the last
/// epoch works on everything.
pub const fn defers(prio: u32, threshold: u32) -> bool {
    threshold != u32::MAX && prio >= threshold
}

#[derive(Debug)]
struct State {
    active: u64,
    deferred: u64,
    epoch: u64,
    threshold: u32,
    /// Smallest priority deferred since the last advance (an upper bound of the smallest
    /// priority in the low lists when `active` reaches zero; see the crate docs).
    min_deferred: u32,
}

/// The global state of soft-priority scheduling and termination, shared by every driver.
///
/// With priorities off (`prio_delta` `None` or `Some(0)`) the threshold is `u32::MAX`,
/// nothing is ever deferred, and the counter behaves exactly like
/// [`TerminationCounter`](crate::TerminationCounter).
pub struct PriorityCounter {
    state: Mutex<State>,
    /// Mirror of `state.epoch` for the drivers' lock-free check at the top of their loop.
    epoch: AtomicU64,
    devices: u64,
    delta: u32,
    done: AtomicBool,
    aborted: AtomicBool,
    /// Counts reaching zero do not end the run: [`PriorityCounter::finish`] does
    /// ([`PriorityCounter::held`]).
    held: bool,
    /// Items that a driver saw after the run was declared done (must stay 0).
    late: AtomicU64,
}

impl fmt::Debug for PriorityCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.state.lock();
        f.debug_struct("PriorityCounter")
            .field("active", &s.active)
            .field("deferred", &s.deferred)
            .field("epoch", &s.epoch)
            .field("threshold", &s.threshold)
            .field("done", &self.is_done())
            .finish()
    }
}

impl PriorityCounter {
    /// A counter for `devices` drivers (one re-examination token each per advance), at zero,
    /// epoch 0. `prio_delta`: the width of a priority band (`None` or `Some(0)`: off, the
    /// threshold is `u32::MAX`); the first threshold is `prio_delta`.
    pub fn new(devices: usize, prio_delta: Option<u32>) -> Self {
        let delta = prio_delta.unwrap_or(0);
        PriorityCounter {
            state: Mutex::new(State {
                active: 0,
                deferred: 0,
                epoch: 0,
                threshold: if delta == 0 { u32::MAX } else { delta },
                min_deferred: u32::MAX,
            }),
            epoch: AtomicU64::new(0),
            devices: devices.max(1) as u64,
            delta,
            done: AtomicBool::new(false),
            aborted: AtomicBool::new(false),
            held: false,
            late: AtomicU64::new(0),
        }
    }

    /// A counter whose run does not end when its counts reach zero: this process is then
    /// only *idle* ([`PriorityCounter::is_idle`]), as one process of a run spanning several,
    /// where items may still come from another process; the run ends when the caller, having
    /// learnt that every process is idle with nothing in flight, calls
    /// [`PriorityCounter::finish`]. Soft priority advances within the process as usual.
    pub fn held(devices: usize, prio_delta: Option<u32>) -> Self {
        PriorityCounter {
            held: true,
            ..Self::new(devices, prio_delta)
        }
    }

    /// Whether the counter is [`PriorityCounter::held`].
    pub fn is_held(&self) -> bool {
        self.held
    }

    /// Whether both counts are zero: no active item, no deferred one, no token.
    pub fn is_idle(&self) -> bool {
        let s = self.state.lock();
        s.active == 0 && s.deferred == 0
    }

    /// Ends a [`held`](PriorityCounter::held) run: the drivers stop as if the counts had
    /// reached zero. Call it only when the counts are zero and nothing more can arrive.
    pub fn finish(&self) {
        self.done.store(true, Ordering::Release);
    }

    /// Whether soft priority is on (a threshold below `u32::MAX` can ever be set).
    pub fn enabled(&self) -> bool {
        self.delta != 0
    }

    /// Reports one completed step in ONE update (see the crate docs for the rule: every
    /// produced item is reported before any consumer can see it). Returns
    /// [`StepOutcome::Ended`] when this update ended the run (the caller shuts the ring down),
    /// [`StepOutcome::Advanced`] when it advanced the epoch (every driver, the caller
    /// included, must then re-examine its low list and consume one token).
    ///
    /// # Panics
    ///
    /// If a count would go negative, which means a caller retired an item it never reported:
    /// a bug in the caller, not a condition of the input.
    pub fn report(&self, step: StepCounts) -> StepOutcome {
        if step == StepCounts::default() {
            return StepOutcome::Continue;
        }
        let mut s = self.state.lock();
        let active = (s.active + step.produced).checked_sub(step.consumed);
        let deferred = (s.deferred + step.deferred_added).checked_sub(step.deferred_taken);
        let (Some(active), Some(deferred)) = (active, deferred) else {
            let snapshot = format!("{s:?}");
            drop(s);
            panic!(
                "priority counter went negative ({snapshot} after {step:?}): an item was retired twice"
            );
        };
        s.active = active;
        s.deferred = deferred;
        if step.deferred_added > 0 {
            s.min_deferred = s.min_deferred.min(step.min_deferred_prio);
        }
        if active > 0 {
            return StepOutcome::Continue;
        }
        if deferred == 0 {
            if self.held {
                // Idle only: the holder ends the run (`finish`).
                return StepOutcome::Continue;
            }
            self.done.store(true, Ordering::Release);
            return StepOutcome::Ended;
        }
        // No high-priority work anywhere, deferred work left: advance. The next threshold
        // is at least one band higher, and jumps to the end of the band holding the smallest
        // deferred priority (no empty epochs).
        let delta = self.delta.max(1);
        let next_band = s.threshold.saturating_add(delta);
        let bucket_end = (s.min_deferred / delta)
            .saturating_add(1)
            .saturating_mul(delta);
        s.threshold = next_band.max(bucket_end);
        s.epoch += 1;
        s.min_deferred = u32::MAX;
        s.active = self.devices;
        self.epoch.store(s.epoch, Ordering::Release);
        StepOutcome::Advanced {
            epoch: s.epoch,
            threshold: s.threshold,
        }
    }

    /// The current epoch (lock-free; a driver compares it with the epoch it has seen).
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// The current threshold.
    pub fn threshold(&self) -> u32 {
        self.state.lock().threshold
    }

    /// The current epoch and its threshold, read together.
    pub fn current(&self) -> PriorityEpoch {
        let s = self.state.lock();
        PriorityEpoch {
            epoch: s.epoch,
            threshold: s.threshold,
        }
    }

    /// Active items: reported as produced and not yet consumed, not deferred (tokens included).
    pub fn active(&self) -> u64 {
        self.state.lock().active
    }

    /// Items in the devices' low-priority lists.
    pub fn deferred(&self) -> u64 {
        self.state.lock().deferred
    }

    /// Declares the run done without the counts reaching zero (an error elsewhere aborted it).
    pub fn abort(&self) {
        self.aborted.store(true, Ordering::Release);
        self.done.store(true, Ordering::Release);
    }

    /// Whether the run was aborted (rather than ended by the counts reaching zero).
    pub fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }

    /// Whether the run is over.
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// Records that a driver saw `n` items after the run was declared done (the protocol
    /// makes this impossible; tests assert [`PriorityCounter::late_items`] stays 0).
    pub fn note_late(&self, n: u64) {
        if !self.is_aborted() {
            self.late.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Items seen after the run was declared done (always 0 unless the protocol is broken).
    pub fn late_items(&self) -> u64 {
        self.late.load(Ordering::Relaxed)
    }
}
