//! Rounds by vertex ranges enqueued ahead of their counts, in a process alone
//! ([`PageRankTuning::sweep_run_ahead`](crate::PageRankTuning::sweep_run_ahead)).
//!
//! A ranged round ends on a read-back of every device's counts, which decide the next round:
//! whether the run leaves the ranges, or ends. Read back after the round, every round pays
//! the copy, the host's wake-up and the next round's first launches with the devices idle.
//! Instead, where the counts of the rounds before say that the next round will be ranged
//! too ([`stays_ranged`]), the host enqueues it before it waits for this round's
//! counts, which each device's stream copies into pinned host memory after the round's last
//! take (the stream orders the copy before the next round zeroes the counters; two slots by
//! round parity, so that the next round's copy cannot overwrite this round's counts before
//! the host reads them). The devices then run from one round into the next, and the host
//! decides while they do.
//!
//! A round enqueued ahead is a ranged round like any other, so the results are those of a run
//! that decided to run it: the loop treats it as the next round whatever this round's counts
//! say (no leaving the ranges, no end before it), and decides from its counts after it. Where
//! the guess was wrong the run spends one ranged round more: where this round's counts would
//! have left the ranges, a ranged round before the pass that leaves them and the push
//! rounds; where they would have ended the run, a ranged round that takes nothing. So the
//! guess asks for a margin.

use std::collections::VecDeque;

use groute_core::{Buffer, Error, Event};

use super::PageRankRanks;
use super::sweeps::SweepCounts;
use crate::PageRankError;
use crate::cuda::CTRL_WORDS;

/// A round is enqueued ahead only where the awaited round, at the pace of the two before it,
/// takes at least this many times the arcs at most which a run leaves the ranges
/// ([`stays_ranged`]). The arcs a round takes fall steeply at the end: PageRank on a
/// Kronecker graph of scale 21 by 4 ranges at epsilon 0.01 took 96M, 81M, then 8.5M arcs
/// in its last three ranged rounds (the bound 22.6M), so at 1.5 it guessed one ranged round
/// too many, which cost about what 20 rounds enqueued ahead saved.
const RUN_AHEAD_MARGIN: f64 = 4.0;

/// The counts of the rounds enqueued and not yet read back (at most two: the one the loop is
/// on and the one ahead of it).
pub(super) struct RunAhead {
    /// Per device: pinned host memory for the control words of two rounds, by parity.
    slots: Vec<Buffer<u32>>,
    /// The rounds enqueued, oldest first: each one's slot parity and, per device, the event
    /// of the copy of its counters into that slot.
    queued: VecDeque<(usize, Vec<Event>)>,
    /// The parity of the next round's slot.
    parity: usize,
    /// The rounds enqueued ahead so far.
    rounds_ahead: u64,
}

impl RunAhead {
    /// The slots of `ranks`' devices.
    pub(super) fn new(ranks: &PageRankRanks) -> Result<Self, Error> {
        let slots = (0..ranks.devices.len())
            .map(|_| ranks.context.alloc_host::<u32>(2 * CTRL_WORDS))
            .collect::<Result<_, _>>()?;
        Ok(RunAhead {
            slots,
            queued: VecDeque::with_capacity(2),
            parity: 0,
            rounds_ahead: 0,
        })
    }

    /// Whether a round is enqueued whose counts are not read yet: the loop's next round is
    /// that one, ranged.
    pub(super) fn pending(&self) -> bool {
        !self.queued.is_empty()
    }

    /// The rounds enqueued ahead of the counts of the round before them so far.
    pub(super) fn rounds_ahead(&self) -> u64 {
        self.rounds_ahead
    }

    /// Enqueues on every device's stream the copy of its counters (the round just enqueued)
    /// into this round's slot. At most two rounds are queued, so the slot's last round has
    /// been read. A copy that fails to enqueue leaves those before it queued, so that the
    /// slots outlive them.
    fn read_back(&mut self, ranks: &PageRankRanks) -> Result<(), Error> {
        if self.queued.len() >= 2 {
            return Err(Error::invalid(
                "PageRank rounds enqueued ahead",
                self.queued.len(),
                "at most two rounds whose counts are not read",
            ));
        }
        let devices = ranks.context.devices();
        let at = self.parity * CTRL_WORDS..(self.parity + 1) * CTRL_WORDS;
        let mut copied = Vec::with_capacity(devices.len());
        let mut failure = None;
        for ((device, sweeps), slots) in devices.iter().zip(&ranks.devices).zip(&self.slots) {
            let copy = slots
                .slice(at.clone())
                .and_then(|slot| device.stream().copy_and_record(&slot, sweeps.ctrl()));
            match copy {
                Ok(done) => copied.push(done),
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        self.queued.push_back((self.parity, copied));
        self.parity ^= 1;
        failure.map_or(Ok(()), Err)
    }

    /// The counts of the oldest round enqueued, per device (waits for their copies).
    fn counts(&mut self, ranks: &PageRankRanks) -> Result<Vec<SweepCounts>, Error> {
        let Some((parity, copied)) = self.queued.pop_front() else {
            return Err(Error::invalid(
                "PageRank ranged round",
                "no round",
                "a round's counts are read once, after it is enqueued",
            ));
        };
        // Every copy completes before any slot is read (or an error returns).
        copied.iter().try_for_each(Event::wait)?;
        let at = parity * CTRL_WORDS..(parity + 1) * CTRL_WORDS;
        let mut counts = Vec::with_capacity(copied.len());
        for (slots, sweeps) in self.slots.iter().zip(&ranks.devices) {
            let slot = slots.slice(at.clone())?;
            // SAFETY: the only write to this slot, this round's copy, has completed (waited
            // for above), and the next (two rounds on) is enqueued only after this returns.
            let words = unsafe { slot.as_host_slice() }.ok_or(Error::Unsupported {
                operation: "reading pinned host memory",
                backend: "this",
            })?;
            counts.push(sweeps.counts_of(words)?);
        }
        Ok(counts)
    }
}

impl Drop for RunAhead {
    /// A run that fails with a round in flight waits for its copies before the slots go back
    /// to the pool (errors ignored: the run reports its own).
    fn drop(&mut self) {
        for (_, copied) in self.queued.drain(..) {
            for done in copied {
                let _ = done.wait();
            }
        }
    }
}

impl PageRankRanks {
    /// A round by vertex ranges ([`PageRankRanks::ranged_round`]) in a process alone,
    /// enqueued ahead where it can be (module docs): this round, unless it already is, then
    /// the next one where the counts of the round before this one (`before`, and of the round
    /// before that, `earlier`) say it will be ranged too. Returns this round's counts.
    pub(super) fn ranged_round_ahead(
        &self,
        floor: f32,
        (earlier, before): (&SweepCounts, &SweepCounts),
        ahead: &mut RunAhead,
    ) -> Result<Vec<SweepCounts>, PageRankError> {
        if !ahead.pending() {
            self.enqueue_ranged_round(floor, &mut groute_worklist::OneProcess)?;
            ahead.read_back(self)?;
        }
        if stays_ranged(self.push_below, earlier.taken_arcs, before.taken_arcs) {
            self.enqueue_ranged_round(self.epsilon, &mut groute_worklist::OneProcess)?;
            ahead.read_back(self)?;
            ahead.rounds_ahead += 1;
        }
        Ok(ahead.counts(self)?)
    }
}

/// Whether the round after the one whose counts are awaited will be ranged, judged by the
/// arcs the two rounds before took (`earlier`, then `before`): at the pace `before` took
/// fewer than `earlier` (none faster than the same), the awaited round takes at least
/// [`RUN_AHEAD_MARGIN`] times the arcs at most which the run leaves the ranges
/// (`push_below`; 0: it never pushes, and nothing is guessed).
fn stays_ranged(push_below: u64, earlier: u64, before: u64) -> bool {
    let (earlier, before) = (earlier as f64, before as f64);
    let pace = if earlier > 0.0 {
        (before / earlier).min(1.0)
    } else {
        0.0
    };
    push_below > 0 && before * pace >= RUN_AHEAD_MARGIN * push_below as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_round_is_guessed_ranged_only_at_a_pace_that_stays_clear_of_the_bound() {
        // No history (the first rounds), or a run that never pushes: no guess.
        assert!(!stays_ranged(100, 0, 0));
        assert!(!stays_ranged(100, 0, 1_000));
        assert!(!stays_ranged(0, 1_000, 1_000));
        // Steady or rising: the awaited round is guessed at `before`.
        assert!(stays_ranged(100, 1_000, 1_000));
        assert!(stays_ranged(100, 500, 1_000));
        assert!(stays_ranged(100, 400, 400));
        assert!(!stays_ranged(100, 399, 399));
        // Falling by half: 1,600 -> 800 -> (400) is guessed at the margin, 1,000 -> 700 ->
        // (490) above it, 1,000 -> 600 -> (360) below.
        assert!(stays_ranged(100, 1_600, 800));
        assert!(stays_ranged(100, 1_000, 700));
        assert!(!stays_ranged(100, 1_000, 600));
    }
}
