//! The fused kernel's state block as the host sees it ([`FusedStateBlock`] of
//! `groute_kernels::abi`, `kernels/include/abi_traversal.h`): the words it writes before a run
//! ([`start_words`]), what it makes of the block after it ([`StateBlock`]: the counters, the
//! trace summary) and whether the run stopped on its time limit ([`timed_out`]).

use groute_kernels::abi::{FusedStateBlock, read_block, words_of};
use groute_kernels::abi_word;

use crate::engine::DeviceStats;

pub(in crate::traversal) use groute_kernels::abi::{
    FUSED_PHASE_DONE, FUSED_PHASE_EXPAND, FUSED_PHASE_SOLO, FUSED_STOP_ABORTED, FUSED_STOP_PEER,
};

/// Words of the state block.
pub(in crate::traversal) const FUSED_WORDS: usize = words_of::<FusedStateBlock>();

/// The words a run's state block starts from, beside zeros: its first phase, the end of its
/// first batch (which starts at 0) and soft priority's threshold.
pub(in crate::traversal) fn start_words(phase: u32, end: u32, threshold: u32) -> [(usize, u32); 3] {
    [
        (abi_word!(FusedStateBlock, phase), phase),
        (abi_word!(FusedStateBlock, end), end),
        (abi_word!(FusedStateBlock, threshold), threshold),
    ]
}

/// The state block as read back after a run
/// ([`FusedKernel::read_state`](super::FusedKernel::read_state)).
pub(in crate::traversal) struct StateBlock(pub(in crate::traversal) FusedStateBlock);

impl StateBlock {
    /// The block held by `words` ([`FUSED_WORDS`] of them; a shorter slice is a broken
    /// invariant: the state buffers hold exactly that many).
    pub(in crate::traversal) fn from_words(words: &[u32]) -> Self {
        StateBlock(read_block(words).expect("a fused state block holds FUSED_WORDS words"))
    }

    /// For the fused trace: the phases and levels run, of them the single-block levels, and in
    /// kernels built for it (`GROUTE_TRACE_CLUSTER`, `GROUTE_TRACE_LEVEL`) the cluster mode's
    /// time per level and when it reached the traced level.
    pub(in crate::traversal) fn trace_summary(&self) -> String {
        let s = &self.0;
        let (phases, rounds, levels) = (s.phases, s.rounds, s.solo_rounds);
        let mut summary = format!("phases {phases}, levels {rounds}, single-block levels {levels}");
        let us = s.solo_us;
        if us != 0 && levels != 0 {
            let per_level = u64::from(us) * 1000 / u64::from(levels);
            summary.push_str(&format!(", cluster mode {us} us ({per_level} ns a level)"));
        }
        let traced = s.trace_level;
        if traced != 0 {
            summary.push_str(&format!(
                "; traced level reached after {} us at {} MHz",
                traced & 0xF_FFFF,
                traced >> 20
            ));
        }
        summary
    }

    /// The counters every fused run reports from its state block (rounds, items expanded,
    /// soft priority's); the caller adds what it counts elsewhere (produced, sent, received).
    pub(in crate::traversal) fn stats(&self) -> DeviceStats {
        let s = &self.0;
        DeviceStats {
            rounds: u64::from(s.rounds),
            items_processed: s.processed,
            items_deferred: s.deferred,
            items_stale_dropped: s.stale,
            epochs: u64::from(s.epochs),
            solo_rounds: u64::from(s.solo_rounds),
            ..DeviceStats::default()
        }
    }
}

/// Whether a fused run fails with [`WorklistError::TimedOut`](crate::WorklistError::TimedOut): the
/// host asked the kernel to stop (it saw the time limit pass while the kernel ran), or the kernel
/// reports that it stopped on the abort word (`stop_word`, [`FusedStateBlock::stop`]).
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
    use groute_kernels::abi::{FUSED_STOP_NONE, FUSED_STOP_OVERFLOW};

    use super::{FUSED_STOP_ABORTED, timed_out};

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
