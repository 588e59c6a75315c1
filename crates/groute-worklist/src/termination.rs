//! Termination detection: one global count of outstanding work items.
//!
//! See the crate documentation for the protocol and the argument that the count cannot
//! reach zero before the work is really done.

use std::fmt;

use crate::priority_counter::{PriorityCounter, StepCounts, StepOutcome};

/// The global count of outstanding items, shared by every device driver: a
/// [`PriorityCounter`] with soft priority off, seen through the single count.
///
/// ```
/// use groute_worklist::TerminationCounter;
/// let t = TerminationCounter::new();
/// assert!(!t.report(1, 0)); // the seed item exists
/// assert!(!t.report(2, 1)); // it was consumed and produced two items
/// assert!(!t.report(0, 1));
/// assert!(t.report(0, 1)); // the last item retired: this call ended the run
/// assert!(t.is_done());
/// ```
pub struct TerminationCounter {
    inner: PriorityCounter,
}

impl fmt::Debug for TerminationCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TerminationCounter")
            .field("outstanding", &self.outstanding())
            .field("done", &self.is_done())
            .finish()
    }
}

impl Default for TerminationCounter {
    fn default() -> Self {
        Self::new()
    }
}

impl TerminationCounter {
    /// A counter at zero, not done (seed it with [`TerminationCounter::report`]`(n, 0)`).
    pub fn new() -> Self {
        TerminationCounter {
            inner: PriorityCounter::new(1, None),
        }
    }

    /// Reports one completed step in ONE update: `produced` new items (which must not be
    /// visible to any consumer yet) and `consumed` items retired (processed or dropped).
    /// Returns `true` when this call brought the count to zero, that is, when it ended the
    /// run; the caller then shuts the ring down.
    ///
    /// # Panics
    ///
    /// If the count would go negative, which means a caller retired an item it never
    /// reported: a bug in the caller, not a condition of the input.
    pub fn report(&self, produced: u64, consumed: u64) -> bool {
        let step = StepCounts {
            produced,
            consumed,
            ..StepCounts::default()
        };
        self.inner.report(step) == StepOutcome::Ended
    }

    /// Declares the run done without the count reaching zero (an error elsewhere aborted it).
    pub fn abort(&self) {
        self.inner.abort();
    }

    /// Whether the run was aborted (rather than ended by the count reaching zero).
    pub fn is_aborted(&self) -> bool {
        self.inner.is_aborted()
    }

    /// Whether the run is over.
    pub fn is_done(&self) -> bool {
        self.inner.is_done()
    }

    /// The current count.
    pub fn outstanding(&self) -> i64 {
        self.inner.active() as i64
    }

    /// Records that a driver saw `n` items after the run was declared done (the protocol
    /// makes this impossible; tests assert [`TerminationCounter::late_items`] stays 0).
    pub fn note_late(&self, n: u64) {
        self.inner.note_late(n);
    }

    /// Items seen after the run was declared done (always 0 unless the protocol is broken).
    pub fn late_items(&self) -> u64 {
        self.inner.late_items()
    }
}
