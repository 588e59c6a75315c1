//! One run of a min traversal on one CUDA device ([`CudaTraversalWorker`]): the host's view of
//! the worklist, the outgoing buffers and soft priority's low lists between read-backs, and
//! the [`DeviceWorker`] the driver steps.

use std::collections::VecDeque;

use groute_core::cuda::DevicePtr;
use groute_core::{Device, Endpoint, Error, Event, PendingSegment, Segment};

use super::{
    CTRL_LOW_END, CTRL_LOW_MIN, CTRL_SEND_END, CTRL_WL_END, CTRL_WORDS, CudaTraversalDevice,
    OUTGOING_BUFFERS,
};
use crate::driver::{
    DeviceWorker, Outgoing, ReceiveCounts, Reexamined, RoundCounts, check_another_outgoing_buffer,
};
use crate::error::WorklistError;
use crate::split::VertexValue;
use crate::traversal::fused_rounds::FusedRounds;

/// One run of a CUDA min traversal on one device.
pub(crate) struct CudaTraversalWorker<'a> {
    pub(in crate::traversal) device: &'a Device,
    pub(in crate::traversal) storage: &'a mut CudaTraversalDevice,
    /// First unconsumed worklist position.
    pub(in crate::traversal) start: u32,
    /// End of the worklist's valid range (`ctrl[CTRL_WL_END]` as last read back).
    pub(in crate::traversal) end: u32,
    /// Outgoing reservation counter (`ctrl[CTRL_SEND_END]` as last read back).
    pub(in crate::traversal) send_end: u32,
    /// Position of the current outgoing buffer's first item.
    pub(in crate::traversal) send_base: u32,
    /// Index of the current outgoing buffer.
    pub(in crate::traversal) current: usize,
    /// Outgoing buffers free for reuse.
    pub(super) free: Vec<usize>,
    /// Outgoing buffers being sent, oldest first.
    pub(super) in_flight: VecDeque<usize>,
    pub(super) seeds: u64,
    /// Soft priority's threshold (`u32::MAX`: off, the kernels get a null low list).
    pub(in crate::traversal) threshold: u32,
    /// Index of the current low list in `storage.low`.
    pub(in crate::traversal) low_current: usize,
    /// Items in the current low list (`ctrl[CTRL_LOW_END]` as last read back).
    pub(in crate::traversal) low_end: u32,
    /// Smallest priority deferred since the last re-examination (`ctrl[CTRL_LOW_MIN]`).
    pub(in crate::traversal) low_min: u32,
    /// Rounds run as bounded fused launches (`fused_rounds.rs`), else one expand per round.
    pub(super) fused_rounds: Option<FusedRounds>,
}

impl CudaTraversalWorker<'_> {
    /// The same worker with its rounds run as bounded fused launches.
    pub(crate) fn with_fused_rounds(self, rounds: FusedRounds) -> Self {
        CudaTraversalWorker {
            fused_rounds: Some(rounds),
            ..self
        }
    }

    /// Reads the control block back (one 32-byte copy, then a synchronisation) and turns an
    /// overflow into the error naming the setting to raise.
    pub(in crate::traversal) fn read_back(&mut self) -> Result<(), Error> {
        let s = &self.storage.stream;
        s.copy(
            &self.storage.ctrl_host,
            &self.storage.ctrl.slice(0..CTRL_WORDS)?,
        )?;
        s.synchronize()?;
        // SAFETY: the copy into the pinned host block has completed (stream synchronised) and
        // nothing else writes it.
        let words =
            unsafe { self.storage.ctrl_host.as_host_slice() }.ok_or(Error::Unsupported {
                operation: "reading the control block back",
                backend: "cuda",
            })?;
        let mut w = [0u32; CTRL_WORDS];
        w.copy_from_slice(&words[..CTRL_WORDS]);
        self.storage.overflow_error(
            &w,
            "device ring send buffer",
            self.storage.outgoing[0].len(),
        )?;
        self.end = w[CTRL_WL_END];
        self.send_end = w[CTRL_SEND_END];
        self.low_end = w[CTRL_LOW_END];
        self.low_min = w[CTRL_LOW_MIN];
        Ok(())
    }

    fn low_args(&self) -> Result<(DevicePtr<VertexValue>, u32, u32), Error> {
        self.storage.low_args(self.low_current, self.threshold)
    }

    /// The smallest deferred priority to report (0, "unknown", when none was recorded).
    pub(in crate::traversal) fn deferred_min(&self, deferred: u64) -> u32 {
        if deferred == 0 || self.low_min == u32::MAX {
            0
        } else {
            self.low_min
        }
    }
}

impl DeviceWorker for CudaTraversalWorker<'_> {
    type Packed = VertexValue;

    fn initial_items(&self) -> u64 {
        self.seeds
    }

    fn split_receive(
        &mut self,
        packets: Vec<PendingSegment<VertexValue>>,
    ) -> Result<ReceiveCounts, WorklistError> {
        let (old_end, old_send, old_low) = (self.end, self.send_end, self.low_end);
        let mut received = 0u64;
        let out = &self.storage.outgoing[self.current];
        let low = self.low_args()?;
        for p in &packets {
            received += p.segment().len() as u64;
            self.storage.stream.wait(p.ready())?;
            self.storage
                .launch_split(p.segment().data(), self.start, out, self.send_base, low)?;
        }
        self.read_back()?;
        // Synchronised: the split kernels no longer read the packets.
        for p in packets {
            p.release(Event::ready());
        }
        Ok(ReceiveCounts {
            received,
            kept: u64::from(self.end.wrapping_sub(old_end)),
            passed: u64::from(self.send_end.wrapping_sub(old_send)),
            deferred: u64::from(self.low_end - old_low),
            deferred_min_prio: self.deferred_min(u64::from(self.low_end - old_low)),
        })
    }

    fn local_len(&self) -> usize {
        self.end.wrapping_sub(self.start) as usize
    }

    fn expand_round(&mut self, max_batch: usize) -> Result<RoundCounts, WorklistError> {
        if let Some(rounds) = self.fused_rounds {
            return self.fused_round(&rounds);
        }
        let count = self.local_len().min(max_batch) as u32;
        if count == 0 {
            return Ok(RoundCounts::default());
        }
        let (old_end, old_send, old_low) = (self.end, self.send_end, self.low_end);
        let out = &self.storage.outgoing[self.current];
        let low = self.low_args()?;
        self.storage
            .launch_expand(self.start, count, out, self.send_base, low)?;
        self.read_back()?;
        self.start = self.start.wrapping_add(count);
        let kept = u64::from(self.end.wrapping_sub(old_end));
        let sent = u64::from(self.send_end.wrapping_sub(old_send));
        Ok(RoundCounts {
            consumed: u64::from(count),
            processed: u64::from(count),
            produced: kept + sent,
            kept,
            sent,
            deferred: u64::from(self.low_end - old_low),
            deferred_min_prio: self.deferred_min(u64::from(self.low_end - old_low)),
            // The kernels do not count the arcs they relax across parts.
            cut_arcs: None,
        })
    }

    fn outgoing_len(&self) -> usize {
        self.send_end.wrapping_sub(self.send_base) as usize
    }

    fn take_outgoing(&mut self) -> Result<Option<Outgoing<VertexValue>>, WorklistError> {
        let len = self.outgoing_len();
        if len == 0 {
            return Ok(None);
        }
        let data = self.storage.outgoing[self.current].slice(0..len)?;
        let ready = self.storage.stream.record()?;
        self.in_flight.push_back(self.current);
        self.current = match self.free.pop() {
            Some(i) => i,
            None => {
                // Every buffer is still being copied: a new one, up to `OUTGOING_BUFFERS`
                // (`outgoing_available`); past that the driver does not send, but a new
                // buffer is taken rather than waiting.
                let n = self.storage.outgoing.len();
                check_another_outgoing_buffer(n)?;
                let cap = self.storage.outgoing[0].len();
                self.storage
                    .outgoing
                    .push(self.device.alloc::<VertexValue>(cap)?);
                n
            }
        };
        self.send_base = self.send_end;
        Ok(Some((
            Segment::new(data, Endpoint::Device(self.device.id())),
            ready,
        )))
    }

    fn reuses_outgoing(&self) -> bool {
        true
    }

    fn set_threshold(&mut self, threshold: u32) -> Result<(), WorklistError> {
        if threshold != u32::MAX {
            self.storage.ensure_low_lists(self.device)?;
        }
        self.threshold = threshold;
        Ok(())
    }

    fn reexamine(&mut self) -> Result<Reexamined, WorklistError> {
        let taken = self.low_end;
        if taken == 0 || self.storage.low.len() < 2 {
            return Ok(Reexamined::default());
        }
        let old_end = self.end;
        let from = self.low_current;
        self.low_current = 1 - from;
        let s = &self.storage.stream;
        s.fill(
            &self.storage.ctrl.slice(CTRL_LOW_END..CTRL_LOW_END + 1)?,
            0u32,
        )?;
        s.fill(
            &self.storage.ctrl.slice(CTRL_LOW_MIN..CTRL_LOW_MIN + 1)?,
            u32::MAX,
        )?;
        self.storage
            .launch_reexamine(from, taken, self.start, self.low_current, self.threshold)?;
        self.read_back()?;
        let still_low = u64::from(self.low_end);
        Ok(Reexamined {
            taken: u64::from(taken),
            moved: u64::from(self.end.wrapping_sub(old_end)),
            still_low,
            still_low_min_prio: self.deferred_min(still_low),
        })
    }

    /// A free buffer, or room for another: two at least (one being filled, one in flight),
    /// more up to [`OUTGOING_BUFFERS`] where they fit under the device's memory limit (past
    /// it the driver waits for a copy to finish instead of failing the run).
    fn outgoing_available(&self) -> bool {
        let n = self.storage.outgoing.len();
        let bytes = self.storage.outgoing[0].len() * std::mem::size_of::<VertexValue>();
        !self.free.is_empty()
            || n < 2
            || (n < OUTGOING_BUFFERS && self.device.fits_under_limit(bytes))
    }

    fn reclaim(&mut self, done: Event) -> Result<(), WorklistError> {
        if let Some(i) = self.in_flight.pop_front() {
            self.storage.stream.wait(&done)?;
            self.free.push(i);
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), WorklistError> {
        Ok(self.storage.stream.synchronize()?)
    }
}
