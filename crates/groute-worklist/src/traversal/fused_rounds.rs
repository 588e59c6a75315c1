//! Fused rounds on several devices ([`FusedMode::On`](super::FusedMode::On) with more than
//! one device, `--fused --devices N`): each round of a device's worker is one bounded launch of
//! the fused kernel (`fused.rs`, `kernels/include/fused.cuh`) that runs level after level over
//! the device's local worklist, grid barriers between them, until it has run
//! [`FUSED_ROUND_LEVELS`] levels (`fused_tuning.round_levels`), holds a packet's worth of outgoing
//! items, or runs out of local work; then the host does what it does after any round: sends
//! the outgoing buffer over the ring, splits the received packets into the worklist, counts
//! for termination and runs soft priority's epochs. On road networks a per-level launch and
//! read-back costs more than the level itself; a bounded launch pays it once per batch of
//! levels, and other devices' updates reach a device at the latest a batch later (the
//! traversal is label correcting, so a late update only costs re-expansions, never a wrong
//! value).
//!
//! ## Protocol of one round
//!
//! - The host writes the state block (pinned staging, one copy): the phase (single-block or
//!   grid expand, by the batch's size), the batch `[start, end)` (the worker's unconsumed
//!   worklist positions), the soft-priority threshold and low list; everything else 0.
//! - One cooperative launch, given the device's current outgoing buffer, its capacity and
//!   base position, the level budget and the outgoing items at which to return. The kernel
//!   appends improved vertices the device owns to its worklist, others to the outgoing buffer,
//!   defers vertices at or above the threshold to the low list, and never advances the
//!   threshold itself (the host's epochs do, across devices).
//! - The host copies the state block and the control words back (one synchronisation): the
//!   batch start the kernel stopped at is the worker's new start, the items it expanded the
//!   round's consumed count, the worklist and outgoing ends give the kept and sent counts.
//!   Overflows fail the run naming the setting, as after a per-level round.

use groute_core::cuda::DevicePtr;
use groute_core::{Error, Stream};
use groute_kernels::abi::{FusedStateBlock, block_words};

use super::cuda::{CudaTraversalDevice, CudaTraversalWorker};
use super::fused::{
    FUSED_PHASE_EXPAND, FUSED_PHASE_SOLO, FUSED_WORDS, FusedBounds, FusedRole, FusedShape,
    StateBlock,
};
use super::fused_tuning::{FusedDefaults, fused_kernel_flags};
use crate::RoundCounts;
use crate::engine::WorklistOptions;
use crate::error::WorklistError;

/// Levels of one bounded launch when [`FusedTuning::round_levels`](crate::traversal::FusedTuning::round_levels) is `None`.
pub const FUSED_ROUND_LEVELS: u32 = 64;

/// The levels of one bounded launch `options` ask for, or the error naming the setting
/// (checked on every run, whether or not its rounds are bounded).
pub(crate) fn round_levels(options: &WorklistOptions) -> Result<u32, Error> {
    match options.fused_tuning.round_levels {
        None => Ok(FUSED_ROUND_LEVELS),
        Some(0) => Err(Error::invalid(
            "fused_tuning.round_levels (--fused-round-levels)",
            0,
            "give at least 1 level per bounded launch",
        )),
        Some(n) => Ok(n),
    }
}

/// How a worker's rounds run as bounded fused launches (fixed for a run).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FusedRounds {
    shape: FusedShape,
    barrier: (u32, u32),
    level_budget: u32,
}

impl CudaTraversalDevice {
    /// The bounded launches of a run with `options` on a graph with `defaults` (the launch
    /// shape, barrier and level budget; errors name the setting).
    pub(crate) fn fused_rounds(
        &self,
        options: &WorklistOptions,
        defaults: FusedDefaults,
    ) -> Result<FusedRounds, Error> {
        let shape = self.fused.shape(options, defaults, None, None)?;
        let barrier = fused_kernel_flags(options, self.graph_arcs)?;
        // A bounded launch is never asked to stop (the driver checks the time limit between
        // rounds): the abort word must read 0.
        self.fused.set_abort(0)?;
        let level_budget = round_levels(options)?;
        Ok(FusedRounds {
            shape,
            barrier,
            level_budget,
        })
    }
}

impl CudaTraversalWorker<'_> {
    /// One round as a bounded launch of the fused kernel (module docs).
    pub(super) fn fused_round(
        &mut self,
        rounds: &FusedRounds,
    ) -> Result<RoundCounts, WorklistError> {
        let count = self.end.wrapping_sub(self.start);
        if count == 0 {
            return Ok(RoundCounts::default());
        }
        let (old_start, old_end, old_send, old_low) =
            (self.start, self.end, self.send_end, self.low_end);
        let phase = if count <= rounds.shape.solo_max {
            FUSED_PHASE_SOLO
        } else {
            FUSED_PHASE_EXPAND
        };
        let storage = &*self.storage;
        let stream: &Stream = &storage.stream;
        let host = &storage.fused.state_host;
        {
            // SAFETY: the staging block is this worker's alone, and the stream was synchronised
            // after the last copy that touched it (the previous round's read-back).
            let words = unsafe { host.as_host_slice_mut() }.ok_or(Error::Unsupported {
                operation: "writing the fused state block",
                backend: "cuda",
            })?;
            let block = FusedStateBlock {
                phase,
                start: self.start,
                end: self.end,
                threshold: self.threshold,
                low_current: self.low_current as u32,
                ..bytemuck::Zeroable::zeroed()
            };
            words.copy_from_slice(block_words(&block));
        }
        stream.copy(&storage.fused.state, host)?;
        let out = &storage.outgoing[self.current];
        let send_capacity = u32::try_from(out.len()).unwrap_or(u32::MAX);
        let bounds = FusedBounds {
            send: DevicePtr::from_slice(&out.raw())?,
            send_capacity,
            send_base: self.send_base,
            level_budget: rounds.level_budget,
            // Return with half the buffer used: a level appends at most what a per-level round
            // would, and the rest of the buffer takes it.
            send_yield: (send_capacity / 2).max(1),
        };
        storage.launch_fused(
            rounds.shape,
            rounds.barrier,
            0,
            rounds.shape.solo_max,
            &FusedRole::Bounded(bounds),
        )?;
        stream.copy(host, &storage.fused.state)?;
        self.read_back()?;
        // SAFETY: read_back synchronised the stream after the copy into the staging block.
        let words =
            unsafe { self.storage.fused.state_host.as_host_slice() }.ok_or(Error::Unsupported {
                operation: "reading the fused state block",
                backend: "cuda",
            })?;
        debug_assert_eq!(words.len(), FUSED_WORDS);
        let state = StateBlock::from_words(words).0;
        // Overflows were reported by read_back (naming the setting); any other stop would leave
        // the launch's hub list unexpanded, so it must never pass silently.
        if state.stop != 0 {
            return Err(Error::invalid(
                "fused kernel stop word",
                state.stop,
                "a bounded fused launch stopped early without an overflow: a bug, please \
                 report it (run with --no-fused meanwhile)",
            )
            .into());
        }
        let processed = state.processed;
        self.start = state.start;
        debug_assert_eq!(
            u64::from(self.start.wrapping_sub(old_start)),
            processed,
            "the kernel consumes its batches in order"
        );
        let kept = u64::from(self.end.wrapping_sub(old_end));
        let sent = u64::from(self.send_end.wrapping_sub(old_send));
        let deferred = u64::from(self.low_end - old_low);
        Ok(RoundCounts {
            consumed: processed,
            processed,
            produced: kept + sent,
            kept,
            sent,
            deferred,
            deferred_min_prio: self.deferred_min(deferred),
            // The kernels do not count the arcs they relax across parts.
            cut_arcs: None,
        })
    }
}
