//! The fused kernel's state block as the host sees it: the words of `groute::FUSED_*`
//! (`kernels/include/fused.cuh`) it writes before a run and reads after it, and what it makes
//! of them ([`StateWords`]: the counters, the trace summary; [`timed_out`]: whether the run
//! stopped on its time limit).

use crate::engine::DeviceStats;

/// Words of the fused state block (`groute::FUSED_*` of fused.cuh) the host writes or reads.
pub(in crate::traversal) const FUSED_WORDS: usize = 100;
pub(in crate::traversal) const FUSED_PHASE: usize = 64;
pub(in crate::traversal) const FUSED_STOP: usize = 65;
pub(in crate::traversal) const FUSED_ROUNDS: usize = 66;
pub(in crate::traversal) const FUSED_START: usize = 67;
pub(in crate::traversal) const FUSED_PROCESSED: usize = 68;
pub(in crate::traversal) const FUSED_END: usize = 70;
pub(in crate::traversal) const FUSED_THRESHOLD: usize = 71;
pub(in crate::traversal) const FUSED_LOW_CURRENT: usize = 72;
const FUSED_EPOCHS: usize = 75;
const FUSED_DEFERRED: usize = 76;
const FUSED_STALE: usize = 78;
const FUSED_SOLO_ROUNDS: usize = 80;
/// `groute::FUSED_PHASES`: phases run (grid barriers passed).
const FUSED_PHASES: usize = 81;
/// `groute::FUSED_UNLISTED`: items produced that the worklist's end does not count (64-bit,
/// two's complement: SOLO-ASYNC's ring items less its entry items written to the worklist
/// again).
pub(in crate::traversal) const FUSED_UNLISTED: usize = 82;
/// `groute::FUSED_IN_END`: a device-driven member's items taken from its inbox.
pub(in crate::traversal) const FUSED_IN_END: usize = 85;
/// `groute::FUSED_SOLO_US`: in kernels compiled with `-DGROUTE_TRACE_CLUSTER`, the time of the
/// run's cluster-mode phases (global-timer µs); 0 otherwise.
const FUSED_SOLO_US: usize = 98;
/// `groute::FUSED_TRACE_LEVEL`: in kernels compiled with `-DGROUTE_TRACE_LEVEL=N`, the SM clock
/// (MHz, high 12 bits) and the microseconds (low 20 bits) from the start of the first cluster
/// phase that ran level `N` to its end; 0 otherwise.
const FUSED_TRACE_LEVEL: usize = 99;
/// The first word the host reads back (the barrier words before it are the kernel's own).
pub(super) const FUSED_READ_FROM: usize = FUSED_PHASE;
/// `groute::FusedPhase`: the first phase of a run.
pub(super) const FUSED_PHASE_DONE: u32 = 0;
pub(in crate::traversal) const FUSED_PHASE_EXPAND: u32 = 1;
pub(in crate::traversal) const FUSED_PHASE_SOLO: u32 = 2;
/// `groute::FUSED_STOP_ABORTED`.
pub(in crate::traversal) const FUSED_STOP_ABORTED: u32 = 2;
/// `groute::FUSED_STOP_PEER`: a device-driven member stopped on a failed wait, its
/// `PeerStatus` added.
pub(in crate::traversal) const FUSED_STOP_PEER: u32 = 16;

/// The state block's words `[FUSED_PHASE, FUSED_WORDS)` as read back after a run
/// ([`FusedKernel::read_state`](super::FusedKernel::read_state)).
pub(in crate::traversal) struct StateWords(pub(super) Vec<u32>);

impl StateWords {
    /// State word `w` (`groute::FUSED_*`).
    pub(in crate::traversal) fn word(&self, w: usize) -> u32 {
        self.0[w - FUSED_READ_FROM]
    }

    /// For the fused trace: the phases and levels run, of them the single-block levels, and in
    /// kernels built for it (`GROUTE_TRACE_CLUSTER`, `GROUTE_TRACE_LEVEL`) the cluster mode's
    /// time per level and when it reached the traced level.
    pub(in crate::traversal) fn trace_summary(&self) -> String {
        let phases = self.word(FUSED_PHASES);
        let rounds = self.word(FUSED_ROUNDS);
        let levels = self.word(FUSED_SOLO_ROUNDS);
        let mut summary = format!("phases {phases}, levels {rounds}, single-block levels {levels}");
        let us = self.word(FUSED_SOLO_US);
        if us != 0 && levels != 0 {
            let per_level = u64::from(us) * 1000 / u64::from(levels);
            summary.push_str(&format!(", cluster mode {us} us ({per_level} ns a level)"));
        }
        let traced = self.word(FUSED_TRACE_LEVEL);
        if traced != 0 {
            summary.push_str(&format!(
                "; traced level reached after {} us at {} MHz",
                traced & 0xF_FFFF,
                traced >> 20
            ));
        }
        summary
    }

    /// The 64-bit state word at `w`, `w + 1`.
    pub(in crate::traversal) fn wide(&self, w: usize) -> u64 {
        u64::from(self.word(w)) | (u64::from(self.word(w + 1)) << 32)
    }

    /// The counters every fused run reports from its state block (rounds, items expanded,
    /// soft priority's); the caller adds what it counts elsewhere (produced, sent, received).
    pub(in crate::traversal) fn stats(&self) -> DeviceStats {
        DeviceStats {
            rounds: u64::from(self.word(FUSED_ROUNDS)),
            items_processed: self.wide(FUSED_PROCESSED),
            items_deferred: self.wide(FUSED_DEFERRED),
            items_stale_dropped: self.wide(FUSED_STALE),
            epochs: u64::from(self.word(FUSED_EPOCHS)),
            solo_rounds: u64::from(self.word(FUSED_SOLO_ROUNDS)),
            ..DeviceStats::default()
        }
    }
}

/// Whether a fused run fails with [`WorklistError::TimedOut`](crate::WorklistError::TimedOut): the
/// host asked the kernel to stop (it saw the time limit pass while the kernel ran), or the kernel
/// reports that it stopped on the abort word (`stop_word`, the state block's `FUSED_STOP`).
///
/// Either alone suffices. The host's side: the run exceeded its limit whether or not the
/// kernel polled the word before it finished (a kernel can complete between the host's store
/// and its next poll, up to `FUSED_ABORT_POLL` levels later), and the non-fused driver fails
/// the same way as soon as it sees its deadline pass with work outstanding. The kernel's
/// side: a kernel that stopped early left items unprocessed, so its values must never be
/// returned as a result.
pub(super) fn timed_out(asked_to_stop: bool, stop_word: u32) -> bool {
    asked_to_stop || stop_word == FUSED_STOP_ABORTED
}

#[cfg(test)]
mod tests {
    use super::{FUSED_STOP_ABORTED, timed_out};

    /// `groute::FUSED_STOP_NONE` and `FUSED_STOP_OVERFLOW` (fused.cuh).
    const FUSED_STOP_NONE: u32 = 0;
    const FUSED_STOP_OVERFLOW: u32 = 1;

    #[test]
    fn a_run_the_host_asked_to_stop_times_out_even_if_the_kernel_finished_first() {
        assert!(timed_out(true, FUSED_STOP_NONE));
        assert!(timed_out(true, FUSED_STOP_ABORTED));
    }

    #[test]
    fn a_kernel_that_stopped_on_the_abort_word_never_yields_a_result() {
        assert!(timed_out(false, FUSED_STOP_ABORTED));
    }

    #[test]
    fn a_run_within_its_limit_succeeds() {
        assert!(!timed_out(false, FUSED_STOP_NONE));
        // An overflow is reported from the control words, not as a time-out.
        assert!(!timed_out(false, FUSED_STOP_OVERFLOW));
    }
}
