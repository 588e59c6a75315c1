//! The CUDA [`DeviceWorker`] of PageRank: the device-resident rows of the owned vertices
//! ([`groute_worklist::DeviceCsr`]), a full-length `f32` residual
//! (owned residuals and halo accumulations) and the owned `f32` ranks, the device circular
//! worklist of `kernels/include/worklist.cuh`, a remote list (one entry per remote vertex
//! touched by a round), rotating outgoing buffers of [`VertexResidual`]s, and one control
//! block (64 bytes read back after each kernel that reports counts, then the hub list).
//!
//! A round is `pagerank_sweep` or `pagerank_expand`, followed, when the graph has owned hubs
//! (degree >= [`HUB_MIN_DEGREE`](crate::cuda::HUB_MIN_DEGREE)), by `pagerank_push_hubs` (the hubs
//! the round listed, spread over the whole grid in tiles), and, when another device owns any
//! vertex, by `pagerank_pack_remote` (merge before send: one item per remote vertex carrying its
//! whole halo accumulation), which reads the remote list's length on the device: the host reads the
//! control block back ONCE per round, after the pack (the outgoing buffer has room for one item per
//! remote vertex before the round starts). A receive step is one more read-back (the kept count
//! must reach the termination count before the next round), unless
//! [`crate::PageRankTuning::lazy_receive`]: then the receive only enqueues its split kernels and
//! the next round reports its counts with its own (a round with no kernel when nothing else is
//! pending; a sweep records on the device the worklist end it starts from, so it consumes the
//! receive's kept items too; nothing is sent while a receive is unsettled). The worker counts its
//! rounds, receives, synchronisations and host time ([`DeviceProfile`]).
//!
//! **Push or pull sweep.** With [`SweepMode::Pull`](crate::sweep::SweepMode::Pull) a sweep is
//! `pagerank_pull_take`, then on several devices `pagerank_pull_cut` over the cut lists (and
//! `pagerank_push_hubs` over them when a list may be a hub), then `pagerank_pull_gather`
//! ([`PullStorage`](crate::cuda::pull_storage::PullStorage); crate docs, "Pull sweeps"); worklist rounds are
//! the same in both modes.
//!
//! **Sweep or worklist.** The first round is a sweep over the owned range (every vertex,
//! floor 0). A later round is a sweep too (floor epsilon, consuming *every* pending item,
//! whatever `max_batch`) when the pending items are at least `1 / sweep_divisor`
//! ([`crate::PageRankTuning::sweep_divisor`]) of the owned range, else a worklist round over up to `max_batch` items. Every pending vertex has a
//! residual above epsilon until it is taken, so the sweep pushes all of them (and any other
//! vertex above epsilon); a vertex that crosses epsilon during the sweep is appended as in a
//! worklist round, so nothing pending is lost. Cost model per item (bytes through L2): a
//! worklist item reads its slot (4, coalesced) and, scattered, its offsets, residual and rank
//! sectors (about 3 x 32); a sweep reads 4 coalesced bytes per owned vertex and touches the
//! pushed vertices' offsets, residuals and ranks in increasing order (shared sectors). The
//! sweep wins once pending / owned exceeds about 4 / 96 = 1/24; the default divisor 16 keeps
//! a margin for the sweep's idle threads. A receive is
//! `pagerank_split_receive` over every packet. Overflow of any buffer is an error naming the
//! setting to raise ([`Error::CapacityExceeded`]), never a loss.
//!
//! The storage a worker runs over, kept across runs, is in `cuda/storage.rs`
//! ([`CudaPageRankStorage`]).

use std::collections::VecDeque;
use std::time::Instant;

use groute_core::backend::RawStream;
use groute_core::{Buffer, Device, Endpoint, Error, Event, PendingSegment, Segment};
use groute_worklist::{
    DeviceWorker, Outgoing, ReceiveCounts, RoundCounts, WorklistError,
    check_another_outgoing_buffer,
};

use crate::VertexResidual;
use crate::cuda::pull_launch::{
    PullBuffers, launch_pull_cut, launch_pull_gather, launch_pull_take,
};
use crate::cuda::storage::CudaPageRankStorage;
use crate::cuda::{
    AppendBuffers, CTRL_HUB_COUNTER, CTRL_PUSHED, CTRL_WORDS, DeviceWorklistBuffers,
    PageRankBuffers, launch_expand, launch_pack_remote, launch_push_hubs, launch_split_receive,
    launch_sweep,
};
use crate::profile::DeviceProfile;

/// Outgoing buffers per device: the current one plus up to three sends in flight. The
/// storage holds the first; a run allocates the others when a send finds every buffer in
/// flight (a ring whose copies keep up, and a ring of one device, use one).
const OUTGOING_BUFFERS: usize = 4;
// Control block words: 0 and 2 are `groute::DeviceWorklist`'s (`CTRL_WL_END`,
// `CTRL_WL_OVERFLOW`); the others are the append counters of `kernels/pagerank/pagerank.cu`.
const CTRL_WL_END: usize = 0;
const CTRL_SEND_COUNT: usize = 1;
pub(super) const CTRL_WL_OVERFLOW: usize = 2;
const CTRL_SEND_OVERFLOW: usize = 3;
const CTRL_REMOTE_COUNT: usize = 4;
const CTRL_REMOTE_OVERFLOW: usize = 5;
const CTRL_DROPPED: usize = 6;
/// The worklist end a sweep round started from, copied on the device before its kernels
/// when a lazy receive may have appended items the host has not read back.
const CTRL_ROUND_FIRST: usize = 10;

pub(super) const WL_SETTING: &str = "wl_capacity (--wl-capacity)";
const SEND_SETTING: &str = "send_capacity (--send-capacity)";

/// One device's PageRank run on CUDA, over the buffers of a [`CudaPageRankStorage`] (buffer
/// handles share the storage's memory; an outgoing buffer enlarged during a run is the run's
/// own).
pub(crate) struct CudaPageRankWorker<'a> {
    pub(super) device: &'a Device,
    /// The storage's buffers (shared handles).
    pub(super) store: CudaPageRankStorage,
    /// This run's outgoing buffers (the storage's, plus any enlarged or added by the run).
    pub(super) outgoing: Vec<Buffer<VertexResidual>>,
    /// First unconsumed worklist position.
    pub(super) start: u32,
    /// End of the worklist's valid range (as last read back).
    pub(super) end: u32,
    /// Items in the current outgoing buffer (as last read back).
    pub(super) send_count: u32,
    /// Vertices the last sweep pushed (as last read back).
    pub(super) pushed: u32,
    /// [`CTRL_ROUND_FIRST`] as last read back.
    pub(super) round_first: u32,
    /// Items of a lazy receive whose counts wait for the next read-back (0: none).
    pub(super) unsettled: u64,
    /// Index of the current outgoing buffer.
    pub(super) current: usize,
    pub(super) free: Vec<usize>,
    pub(super) in_flight: VecDeque<usize>,
    /// This run's counters, stored in the storage's sink when the worker is dropped.
    pub(super) profile: DeviceProfile,
}

impl Drop for CudaPageRankWorker<'_> {
    fn drop(&mut self) {
        self.store.profile.store(std::mem::take(&mut self.profile));
    }
}

impl<'a> CudaPageRankWorker<'a> {
    fn raw_stream(&self) -> &dyn RawStream {
        self.device.stream().raw().as_ref()
    }

    fn pr(&self) -> PageRankBuffers {
        self.store.pr_buffers()
    }

    fn wl_buffers(&self) -> DeviceWorklistBuffers {
        DeviceWorklistBuffers {
            data: self.store.wl.raw(),
            first: self.start,
            ctrl: self.store.ctrl.raw(),
            hub_capacity: self.store.hub_capacity,
        }
    }

    fn word(&self, w: usize) -> Result<groute_core::backend::RawSlice, Error> {
        Ok(self.store.ctrl.slice(w..w + 1)?.raw())
    }

    fn remote_append(&self) -> Result<AppendBuffers, Error> {
        Ok(AppendBuffers {
            data: self.store.remote.raw(),
            count: self.word(CTRL_REMOTE_COUNT)?,
            overflow: self.word(CTRL_REMOTE_OVERFLOW)?,
        })
    }

    fn send_append(&self) -> Result<AppendBuffers, Error> {
        Ok(AppendBuffers {
            data: self.outgoing[self.current].raw(),
            count: self.word(CTRL_SEND_COUNT)?,
            overflow: self.word(CTRL_SEND_OVERFLOW)?,
        })
    }

    /// Makes room for `more` items after the current outgoing buffer's `send_count` (which
    /// the last read-back made exact; no kernel is running): while the driver cannot send
    /// (every other buffer in flight), receives keep passing items into the current buffer,
    /// so its fill has no fixed bound on 3 or more devices. A buffer too small is replaced
    /// by a larger one holding the same items, unless the caller fixed `send_capacity`.
    fn reserve_send(&mut self, more: usize) -> Result<(), Error> {
        // A lazy receive may have passed up to `unsettled` items the host has not counted.
        let have = self.send_count as usize + self.unsettled as usize;
        let cap = self.outgoing[self.current].len();
        if self.store.fixed_send || have + more <= cap {
            return Ok(());
        }
        let new_cap = (have + more).max(2 * cap).min(u32::MAX as usize);
        let bigger = self.device.alloc::<VertexResidual>(new_cap)?;
        if have > 0 {
            self.device.stream().copy(
                &bigger.slice(0..have)?,
                &self.outgoing[self.current].slice(0..have)?,
            )?;
            // Rare: wait for the copy before the old buffer is released.
            self.device.stream().synchronize()?;
            self.profile.buffer_growths += 1;
        }
        self.outgoing[self.current] = bigger;
        Ok(())
    }

    /// Waits for the stream, counted in the profile.
    fn synchronize(&mut self) -> Result<(), Error> {
        let start = Instant::now();
        let r = self.device.stream().synchronize();
        self.profile.syncs += 1;
        self.profile.sync_wait += start.elapsed();
        r
    }

    /// Reads the control block back (one 32-byte copy, then a synchronisation) and turns an
    /// overflow into the error naming the setting to raise; returns the dropped count.
    fn read_back(&mut self) -> Result<u32, Error> {
        self.device.stream().copy(
            &self.store.ctrl_host,
            &self.store.ctrl.slice(0..CTRL_WORDS)?,
        )?;
        self.synchronize()?;
        // SAFETY: the copy into the pinned host block has completed (stream synchronised) and
        // nothing else writes it.
        let words = unsafe { self.store.ctrl_host.as_host_slice() }.ok_or(Error::Unsupported {
            operation: "reading the control block back",
            backend: "cuda",
        })?;
        let mut w = [0u32; CTRL_WORDS];
        w.copy_from_slice(&words[..CTRL_WORDS]);
        self.pushed = w[CTRL_PUSHED];
        if w[CTRL_WL_OVERFLOW] != 0 {
            return Err(Error::capacity_exceeded(
                "device local worklist",
                self.store.wl.len(),
                w[CTRL_WL_OVERFLOW] as usize,
                WL_SETTING,
            ));
        }
        if w[CTRL_SEND_OVERFLOW] != 0 {
            return Err(Error::capacity_exceeded(
                "device ring send buffer",
                self.outgoing[self.current].len(),
                w[CTRL_SEND_OVERFLOW] as usize,
                SEND_SETTING,
            ));
        }
        if w[CTRL_REMOTE_OVERFLOW] != 0 {
            return Err(Error::capacity_exceeded(
                "device remote list (one entry per remote vertex)",
                self.store.remote.len(),
                w[CTRL_REMOTE_OVERFLOW] as usize,
                "none: the remote list holds every remote vertex (a bug)",
            ));
        }
        self.end = w[CTRL_WL_END];
        self.send_count = w[CTRL_SEND_COUNT];
        self.round_first = w[CTRL_ROUND_FIRST];
        Ok(w[CTRL_DROPPED])
    }

    /// Before a round's kernels: makes room in the current outgoing buffer for the round's
    /// pack (at most one item per remote vertex: the remote list's length, so the pack needs
    /// no read-back of its count first), zeroes the pushed count and the hub counter, and
    /// returns the worklist end and send count the round starts from.
    fn begin_round(&mut self) -> Result<(u32, u32), Error> {
        if self.store.has_remote {
            self.reserve_send(self.store.remote.len())?;
        }
        self.device.stream().fill(
            &self.store.ctrl.slice(CTRL_PUSHED..CTRL_HUB_COUNTER + 2)?,
            0u32,
        )?;
        Ok((self.end, self.send_count))
    }

    /// After a round's kernel: pushes the hubs it listed (when the graph has owned hubs).
    fn push_hubs(&self) -> Result<(), Error> {
        if self.store.hub_capacity == 0 {
            return Ok(());
        }
        launch_push_hubs(
            self.raw_stream(),
            &self.pr(),
            &self.wl_buffers(),
            &self.remote_append()?,
        )
    }

    /// A sweep round over the owned range pushing every vertex above `floor`; consumes
    /// `consumed` items and reports the vertices pushed as processed.
    fn sweep_round(&mut self, floor: f32, consumed: u64) -> Result<RoundCounts, WorklistError> {
        let (old_end, old_send) = self.begin_round()?;
        // A lazy receive's kept items lie past the host's `end`: the sweep takes them too, so
        // it consumes up to the end it starts from, recorded on the device.
        let snapshot = self.unsettled > 0;
        if snapshot {
            self.device.stream().copy(
                &self
                    .store
                    .ctrl
                    .slice(CTRL_ROUND_FIRST..CTRL_ROUND_FIRST + 1)?,
                &self.store.ctrl.slice(CTRL_WL_END..CTRL_WL_END + 1)?,
            )?;
        }
        match &self.store.pull {
            None => {
                launch_sweep(
                    self.raw_stream(),
                    &self.pr(),
                    &self.wl_buffers(),
                    floor,
                    &self.remote_append()?,
                )?;
                self.push_hubs()?;
            }
            Some(pull) => self.pull_sweep(&pull.buffers(), floor)?,
        }
        let mut counts = self.finish_round(consumed, 0, old_end, old_send)?;
        counts.processed = u64::from(self.pushed);
        if snapshot {
            counts.consumed += u64::from(self.round_first.wrapping_sub(old_end));
            self.start = self.round_first;
        }
        self.profile.sweep_rounds += 1;
        Ok(counts)
    }

    /// The kernels of a pull sweep: take, the cut arcs (and their hubs), gather.
    fn pull_sweep(&self, pull: &PullBuffers, floor: f32) -> Result<(), Error> {
        let (pr, wl, remote) = (self.pr(), self.wl_buffers(), self.remote_append()?);
        let stream = self.raw_stream();
        launch_pull_take(stream, &pr, pull, &wl, (floor, false))?;
        launch_pull_cut(stream, &pr, pull, &wl, &remote)?;
        launch_pull_gather(stream, &pr, pull, &wl)
    }

    /// A worklist round over up to `max_batch` pending items.
    fn worklist_round(&mut self, max_batch: usize) -> Result<RoundCounts, WorklistError> {
        let count = self.pending().min(max_batch) as u32;
        let (old_end, old_send) = self.begin_round()?;
        launch_expand(
            self.raw_stream(),
            &self.pr(),
            &self.wl_buffers(),
            self.start,
            count,
            &self.remote_append()?,
        )?;
        self.push_hubs()?;
        self.start = self.start.wrapping_add(count);
        let c = u64::from(count);
        self.profile.worklist_rounds += 1;
        self.finish_round(c, c, old_end, old_send)
    }

    /// Items pending in the worklist as last read back.
    fn pending(&self) -> usize {
        self.end.wrapping_sub(self.start) as usize
    }

    /// A round with no kernel: reads the counts back to report a lazy receive.
    fn settle_round(&mut self) -> Result<RoundCounts, WorklistError> {
        let (old_end, old_send) = (self.end, self.send_count);
        self.read_back()?;
        self.profile.settle_rounds += 1;
        Ok(self.counts_since(0, 0, old_end, old_send))
    }

    /// After a round's kernels: packs the halo accumulations of the remote vertices the round
    /// touched into the outgoing buffer (when another device owns any vertex; the pack reads
    /// the remote list's length on the device), then reads the counts back: ONE host
    /// synchronisation per round.
    fn finish_round(
        &mut self,
        consumed: u64,
        processed: u64,
        old_end: u32,
        old_send: u32,
    ) -> Result<RoundCounts, WorklistError> {
        if self.store.has_remote {
            launch_pack_remote(
                self.raw_stream(),
                &self.pr(),
                &self.remote_append()?,
                &self.send_append()?,
            )?;
            self.device.stream().fill(
                &self
                    .store
                    .ctrl
                    .slice(CTRL_REMOTE_COUNT..CTRL_REMOTE_COUNT + 1)?,
                0u32,
            )?;
        }
        self.read_back()?;
        Ok(self.counts_since(consumed, processed, old_end, old_send))
    }

    /// The counts of a round read back, from the worklist end and send count it started
    /// from. Kept and sent include a lazy receive's kept and passed items, which the round
    /// reports with its own in the one update, the received items consumed.
    fn counts_since(
        &mut self,
        consumed: u64,
        processed: u64,
        old_end: u32,
        old_send: u32,
    ) -> RoundCounts {
        self.profile.rounds += 1;
        let kept = u64::from(self.end.wrapping_sub(old_end));
        let sent = u64::from(self.send_count.wrapping_sub(old_send));
        RoundCounts {
            consumed: consumed + std::mem::take(&mut self.unsettled),
            processed,
            produced: kept + sent,
            kept,
            sent,
            ..RoundCounts::default()
        }
    }
}

impl DeviceWorker for CudaPageRankWorker<'_> {
    type Packed = VertexResidual;

    fn initial_items(&self) -> u64 {
        u64::from(!self.store.owned.is_empty())
    }

    fn initial_sweep(&mut self) -> Result<Option<RoundCounts>, WorklistError> {
        if self.store.owned.is_empty() {
            return Ok(None);
        }
        let start = Instant::now();
        // Every owned vertex (residual 1 - alpha > 0); the sweep consumes its token.
        let counts = self.sweep_round(0.0, 1);
        self.profile.round_time += start.elapsed();
        counts.map(Some)
    }

    fn split_receive(
        &mut self,
        packets: Vec<PendingSegment<VertexResidual>>,
    ) -> Result<ReceiveCounts, WorklistError> {
        let started = Instant::now();
        self.profile.receives += 1;
        self.profile.packets += packets.len() as u64;
        let (old_end, old_send) = (self.end, self.send_count);
        let incoming: usize = packets.iter().map(|p| p.segment().len()).sum();
        // Lazy: no read-back now when no other receive is unsettled and the passed items fit
        // without enlarging the outgoing buffer (which needs the exact count).
        let fits = self.store.fixed_send
            || self.send_count as usize + incoming <= self.outgoing[self.current].len();
        let lazy = self.store.lazy_receive && self.unsettled == 0 && fits;
        if !lazy {
            self.reserve_send(incoming)?;
        }
        let mut received = 0u64;
        let pr = self.pr();
        let wl = self.wl_buffers();
        let send = self.send_append()?;
        let dropped = self.word(CTRL_DROPPED)?;
        for p in &packets {
            let len = p.segment().len();
            if len == 0 {
                continue;
            }
            received += len as u64;
            self.profile.items_received += len as u64;
            let count = u32::try_from(len).map_err(|_| {
                Error::invalid("packet_size (--packet-size)", len, "at most u32::MAX items")
            })?;
            self.device.stream().wait(p.ready())?;
            launch_split_receive(
                self.raw_stream(),
                &pr,
                &p.segment().data().raw(),
                count,
                &wl,
                &send,
                &dropped,
            )?;
        }
        if lazy && received > 0 {
            // The packets are reused once the split kernels are done; the counts wait for
            // the next read-back (the received items stay outstanding until then).
            let done = self.device.stream().record()?;
            for p in packets {
                p.release(done.clone());
            }
            self.unsettled = received;
            self.profile.lazy_receives += 1;
            self.profile.receive_time += started.elapsed();
            return Ok(ReceiveCounts::default());
        }
        self.read_back()?;
        // Synchronised: the split kernels no longer read the packets.
        for p in packets {
            p.release(Event::ready());
        }
        self.profile.receive_time += started.elapsed();
        Ok(ReceiveCounts {
            received: received + std::mem::take(&mut self.unsettled),
            kept: u64::from(self.end.wrapping_sub(old_end)),
            passed: u64::from(self.send_count.wrapping_sub(old_send)),
            ..ReceiveCounts::default()
        })
    }

    fn local_len(&self) -> usize {
        // An unsettled receive counts as one item: the driver then runs a round, which
        // reports it.
        self.pending() + usize::from(self.unsettled > 0)
    }

    fn expand_round(&mut self, max_batch: usize) -> Result<RoundCounts, WorklistError> {
        let pending = self.pending();
        if pending == 0 && self.unsettled == 0 {
            return Ok(RoundCounts::default());
        }
        let start = Instant::now();
        let owned = u64::from(self.store.owned.end - self.store.owned.start);
        let divisor = u64::from(self.store.sweep_divisor);
        let counts = if pending == 0 {
            self.settle_round()
        } else if divisor != 0 && pending as u64 * divisor >= owned {
            // Every pending vertex is above epsilon until taken: the sweep covers them all.
            self.start = self.end;
            self.sweep_round(self.store.epsilon, pending as u64)
        } else {
            self.worklist_round(max_batch)
        };
        self.profile.round_time += start.elapsed();
        counts
    }

    fn outgoing_len(&self) -> usize {
        self.send_count as usize
    }

    fn take_outgoing(&mut self) -> Result<Option<Outgoing<VertexResidual>>, WorklistError> {
        let len = self.outgoing_len();
        // With a lazy receive unsettled the device's count may be larger: wait for the
        // round that reads it back (and reports the passed items) first.
        if len == 0 || self.unsettled > 0 {
            return Ok(None);
        }
        let start = Instant::now();
        let s = self.device.stream();
        let data = self.outgoing[self.current].slice(0..len)?;
        let ready = s.record()?;
        self.in_flight.push_back(self.current);
        self.current = match self.free.pop() {
            Some(i) => i,
            None => {
                let n = self.outgoing.len();
                check_another_outgoing_buffer(n)?;
                let cap = self.outgoing[0].len();
                self.outgoing
                    .push(self.device.alloc::<VertexResidual>(cap)?);
                n
            }
        };
        // The next buffer's appends start at 0 (stream-ordered after the recorded event).
        s.fill(
            &self
                .store
                .ctrl
                .slice(CTRL_SEND_COUNT..CTRL_SEND_COUNT + 1)?,
            0u32,
        )?;
        self.send_count = 0;
        self.profile.send_time += start.elapsed();
        Ok(Some((
            Segment::new(data, Endpoint::Device(self.device.id())),
            ready,
        )))
    }

    fn reuses_outgoing(&self) -> bool {
        true
    }

    /// A free buffer, or room for another: two at least (one being filled, one in flight),
    /// more up to [`OUTGOING_BUFFERS`] where they fit under the device's memory limit (past
    /// it the driver waits for a copy to finish instead of failing the run).
    fn outgoing_available(&self) -> bool {
        let n = self.outgoing.len();
        let bytes = self.outgoing[0].len() * std::mem::size_of::<VertexResidual>();
        !self.free.is_empty()
            || n < 2
            || (n < OUTGOING_BUFFERS && self.device.fits_under_limit(bytes))
    }

    fn reclaim(&mut self, done: Event) -> Result<(), WorklistError> {
        if let Some(i) = self.in_flight.pop_front() {
            self.device.stream().wait(&done)?;
            self.free.push(i);
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), WorklistError> {
        let start = Instant::now();
        let r = self.synchronize();
        self.profile.finish_time += start.elapsed();
        Ok(r?)
    }
}
