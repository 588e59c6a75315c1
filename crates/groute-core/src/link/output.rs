//! The shared core of one link output: its receive buffers, the send in progress, and the
//! step that moves queued sends into free buffers.
//!
//! # Who pumps
//!
//! The step ([`Output::pump`]) runs under the output's state lock, on whichever thread
//! gets there first: the sender's thread right after it queues a send, the consumer's thread
//! right after it releases a buffer, or the output's pump thread. An idle link therefore
//! enqueues a small send's copy on the sending thread, and a consumer that keeps up enqueues
//! the next packet's copy as it gives a buffer back, with no thread hand-off on either path.
//! The pump thread ([`super::pump`]) is the fallback: a thread that adds work (a send, a
//! freed buffer) and cannot take the lock at once (someone else is pumping), or may not call
//! the backend (inside a CUDA host callback), rings the pump thread's doorbell instead, and
//! the pump thread also handles end-of-stream and abandonment. Whoever holds the lock runs
//! the step until it runs out of free buffers or of sends, so nothing that was added while
//! the lock was held is left behind: its adder rang the doorbell.
//!
//! # One step
//!
//! While a free buffer and a send are both at hand: claim the next send from the queue if
//! none is in progress (only with a free buffer in hand, so that availability routing hands
//! sends to outputs that can take them); take the next copy stream round-robin (see
//! [`super::copy_streams`]); on it, wait for what the buffer's release needs (see
//! [`FreeSlot`]) and, for the send's first packet on that stream, the send's ready event;
//! enqueue the copy and record one event after it (`Stream::copy_and_record_with`, by the
//! link's [`CopyMethod`]: on CUDA that event is also the copy's keep-alive, one
//! `cuEventRecord`); deliver a [`PendingSegment`]
//! whose release hands the buffer back. The sender's future resolves to the join of the last
//! packet event on each stream the send used (stream order covers the earlier ones).
//!
//! Nothing on this path waits on the host for a copy to complete: buffer reuse, the ready
//! event and the consumer's event are all stream waits, so a consumer that releases at once
//! lets the host enqueue copies as far ahead as the free buffers allow.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use bytemuck::Pod;
use crossbeam::channel::{Receiver, Sender};
use parking_lot::Mutex;

use super::copy_method::CopyMethod;
use super::copy_streams::{CopyStreams, StreamKey};
use super::job::SendJob;
use super::queue::{OutputQueue, Take};
use crate::context::Context;
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::memory::Buffer;
use crate::segment::{PendingSegment, Segment};
use crate::sync::Mailbox;

/// A receive buffer handed back.
pub(crate) struct FreeSlot {
    pub(crate) index: usize,
    /// After this the consumer's reads are done.
    pub(crate) consumer_done: Event,
    /// The last copy into the buffer (a packet dropped unread may still be in flight).
    pub(crate) copy_done: Event,
    /// The stream of that copy: a later copy on the same stream is ordered after it already,
    /// so only a copy on another stream waits for `copy_done`.
    pub(crate) copied_on: Option<StreamKey>,
}

impl FreeSlot {
    /// A buffer that has never been written.
    pub(crate) fn fresh(index: usize) -> Self {
        FreeSlot {
            index,
            consumer_done: Event::ready(),
            copy_done: Event::ready(),
            copied_on: None,
        }
    }
}

/// A send whose packets are being copied.
struct InFlight<T> {
    job: SendJob<T>,
    /// Elements already copied (packets enqueued).
    sent: usize,
    /// The streams this send has used, each with its last packet's event (the stream has
    /// waited for the send's ready event).
    last_on: Vec<(StreamKey, Event)>,
}

impl<T> InFlight<T> {
    fn new(job: SendJob<T>) -> Self {
        InFlight {
            job,
            sent: 0,
            last_on: Vec::new(),
        }
    }

    /// Whether a packet of this send was already copied on `key` (so that stream has waited
    /// for the ready event).
    fn used(&self, key: StreamKey) -> bool {
        self.last_on.iter().any(|(k, _)| *k == key)
    }

    /// Notes a packet copied on `key`, finished by `event`.
    fn note(&mut self, key: StreamKey, event: Event) {
        match self.last_on.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = event,
            None => self.last_on.push((key, event)),
        }
    }

    /// The event after which every copy of this send is done.
    fn all_done(&self) -> Event {
        match self.last_on.as_slice() {
            [(_, only)] => only.clone(),
            many => Event::join(many.iter().map(|(_, e)| e)),
        }
    }
}

/// Why a pump step stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Blocked {
    /// Work is waiting for a receive buffer (or there is neither work nor a buffer).
    NeedBuffer,
    /// Buffers are free and nothing is queued.
    NeedJob,
    /// End of stream or abandoned: the pump thread must stop the output.
    Stop,
}

/// What the state lock guards.
pub(crate) struct OutputState<T> {
    /// `None` once the output has stopped (dropping it disconnects the queue, so later sends
    /// fail and queued ones fail their futures).
    queue: Option<OutputQueue<SendJob<T>>>,
    ctx: Context,
    buffers: Vec<Buffer<T>>,
    streams: CopyStreams,
    current: Option<InFlight<T>>,
}

/// One output of a link or router (see the module docs).
pub(crate) struct Output<T> {
    dst: Endpoint,
    packet_size: usize,
    /// How packets are copied (the kernel only where it applies, see [`CopyMethod`]).
    copy_method: CopyMethod,
    free_tx: Sender<FreeSlot>,
    free_rx: Receiver<FreeSlot>,
    delivered: Arc<Mailbox<PendingSegment<T>>>,
    abandoned: Arc<AtomicBool>,
    /// The pump thread's doorbell.
    doorbell: Sender<()>,
    state: Mutex<OutputState<T>>,
    /// For the release hooks of delivered packets (which must not keep the output alive).
    me: Weak<Output<T>>,
}

/// Whether the calling thread may enqueue backend work (not inside a CUDA host callback).
fn may_enqueue_here() -> bool {
    !crate::backend::cuda::in_host_callback()
}

impl<T> Output<T> {
    /// The endpoint this output delivers to.
    pub(crate) fn dst(&self) -> Endpoint {
        self.dst
    }
}

impl<T: Pod> Output<T> {
    /// An output to `dst` over `buffers` (every one free), fed by `queue`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        ctx: &Context,
        dst: Endpoint,
        packet_size: usize,
        copy_method: CopyMethod,
        buffers: Vec<Buffer<T>>,
        streams: CopyStreams,
        queue: OutputQueue<SendJob<T>>,
        delivered: Arc<Mailbox<PendingSegment<T>>>,
        abandoned: Arc<AtomicBool>,
    ) -> Arc<Self> {
        let (free_tx, free_rx) = crossbeam::channel::unbounded();
        for index in 0..buffers.len() {
            // `free_rx` lives in the same output: the send cannot fail.
            let _ = free_tx.send(FreeSlot::fresh(index));
        }
        let doorbell = queue.waker();
        Arc::new_cyclic(|me| Output {
            dst,
            packet_size,
            copy_method,
            free_tx,
            free_rx,
            delivered,
            abandoned,
            doorbell,
            state: Mutex::new(OutputState {
                queue: Some(queue),
                ctx: ctx.clone(),
                buffers,
                streams,
                current: None,
            }),
            me: me.clone(),
        })
    }

    /// Makes the pump thread stop the output (for a router whose construction failed after
    /// this output was made: no input will ever close it).
    pub(crate) fn abandon(&self) {
        self.abandoned.store(true, Ordering::Release);
        self.ring();
    }

    /// Wakes the pump thread.
    pub(crate) fn ring(&self) {
        let _ = self.doorbell.send(());
    }

    /// Runs a step on this thread if the lock is free and backend calls are allowed here;
    /// otherwise rings the pump thread. Call after adding work (a send queued, a buffer
    /// freed).
    pub(crate) fn pump_or_ring(&self) {
        if may_enqueue_here() {
            if let Some(mut st) = self.state.try_lock() {
                if self.pump(&mut st) == Blocked::Stop {
                    drop(st);
                    self.ring();
                }
                return;
            }
        }
        self.ring();
    }

    /// Gives a receive buffer back and pumps (see [`Output::pump_or_ring`]).
    fn give_back(&self, slot: FreeSlot) {
        // `free_rx` lives in `self`: the send cannot fail.
        let _ = self.free_tx.send(slot);
        self.pump_or_ring();
    }

    /// Locks the state (for the pump thread, which may block on it).
    pub(crate) fn lock(&self) -> parking_lot::MutexGuard<'_, OutputState<T>> {
        self.state.lock()
    }

    /// Moves queued sends into free buffers until one of them runs out (module docs).
    pub(crate) fn pump(&self, st: &mut OutputState<T>) -> Blocked {
        loop {
            if self.abandoned.load(Ordering::Acquire) {
                return Blocked::Stop;
            }
            let Some(queue) = st.queue.as_ref() else {
                return Blocked::Stop;
            };
            if st.current.is_none() {
                // Claim a send only with a buffer in hand, except to see end-of-stream (or
                // to drain the last sends once every input has closed).
                if self.free_rx.is_empty() && !queue.inputs_closed() {
                    return Blocked::NeedBuffer;
                }
                match queue.try_take() {
                    Take::Message(job) => {
                        queue.set_waiting(false);
                        st.current = Some(InFlight::new(job));
                    }
                    Take::Finished => return Blocked::Stop,
                    Take::Empty | Take::Woken => {
                        if self.free_rx.is_empty() {
                            return Blocked::NeedBuffer;
                        }
                        queue.set_waiting(true);
                        return Blocked::NeedJob;
                    }
                }
            }
            let Ok(slot) = self.free_rx.try_recv() else {
                return Blocked::NeedBuffer;
            };
            self.send_packet(st, slot);
        }
    }

    /// Stops the output for good (pump thread only, at end of stream or when abandoned):
    /// receivers see `None` once they have drained what was delivered, a send in progress
    /// fails its future, queued and later sends fail theirs, and the buffers are dropped
    /// (packets still out keep theirs alive).
    pub(crate) fn stop(&self) {
        let (current, queue) = {
            let mut st = self.state.lock();
            self.delivered.close();
            st.buffers.clear();
            (st.current.take(), st.queue.take())
        };
        drop(queue);
        if let Some(inflight) = current {
            let error = Error::Disconnected(format!("the link output to {}", self.dst));
            inflight.job.completion.finish(Err(error));
        }
    }

    /// Copies the next packet of the send in progress into `slot` and delivers it.
    fn send_packet(&self, st: &mut OutputState<T>, slot: FreeSlot) {
        let Some(mut inflight) = st.current.take() else {
            let _ = self.free_tx.send(slot);
            return;
        };
        let total_len = inflight.job.segment.len();
        let start = inflight.sent;
        let n = self.packet_size.min(total_len - start);
        // Every segment ends within its message (its constructors check it), so its packets do.
        let seg = &inflight.job.segment;
        if seg.offset() + start + n > seg.total() {
            let _ = self.free_tx.send(slot);
            inflight.job.completion.finish(Err(Error::OutOfBounds {
                start: seg.offset() + start,
                end: seg.offset() + start + n,
                len: seg.total(),
            }));
            return;
        }
        let copied = self.enqueue_copy(st, &inflight, &slot, start, n);
        let (dst_buffer, event, key) = match copied {
            Ok(done) => done,
            Err(e) => {
                let _ = self.free_tx.send(slot);
                inflight.job.completion.finish(Err(e));
                return;
            }
        };
        let seg = &inflight.job.segment;
        let packet = match Segment::packet(dst_buffer, self.dst, seg.offset() + start, seg.total())
        {
            Ok(p) => p.with_metadata(seg.metadata()),
            Err(e) => {
                // Not reached (checked before the copy). The slot stays out of the free list:
                // its copy may still be writing it.
                inflight.job.completion.finish(Err(e));
                return;
            }
        };
        let output = self.me.clone();
        let index = slot.index;
        let copy_done = event.clone();
        let pending = PendingSegment::new(packet, event.clone(), move |consumer_done| {
            // The output may be gone (then the buffer is simply freed with the last view).
            if let Some(output) = output.upgrade() {
                output.give_back(FreeSlot {
                    index,
                    consumer_done,
                    copy_done,
                    copied_on: Some(key),
                });
            }
        });
        if let Err(unwanted) = self.delivered.push(pending) {
            // Every receiver is gone: the drop hands the buffer straight back.
            drop(unwanted);
        }
        inflight.note(key, event);
        inflight.sent += n;
        if inflight.sent == total_len {
            let all_done = inflight.all_done();
            inflight.job.completion.finish(Ok(all_done));
        } else {
            st.current = Some(inflight);
        }
    }

    /// Enqueues one packet's copy into `slot`'s buffer; the buffer view, the copy's event and
    /// the stream it went on.
    fn enqueue_copy(
        &self,
        st: &mut OutputState<T>,
        inflight: &InFlight<T>,
        slot: &FreeSlot,
        start: usize,
        n: usize,
    ) -> Result<(Buffer<T>, Event, StreamKey)> {
        let buffer = st
            .buffers
            .get(slot.index)
            .ok_or_else(|| Error::Disconnected(format!("the link output to {}", self.dst)))?;
        let dst = buffer.slice(0..n)?;
        let job = &inflight.job;
        let src = job.segment.data().slice(start..start + n)?;
        let (key, stream) = st.streams.next(&st.ctx, job.segment.endpoint())?;
        if slot.copied_on != Some(key) {
            stream.wait(&slot.copy_done)?;
        }
        // Waiting for the copy event (above, or by stream order) covers a consumer that
        // released with it: only a consumer event of its own needs a wait.
        if !slot.consumer_done.is_covered_by(&slot.copy_done) {
            stream.wait(&slot.consumer_done)?;
        }
        if !inflight.used(key) {
            stream.wait(&job.ready)?;
        }
        let copied = stream.copy_and_record_with(&dst, &src, self.copy_method)?;
        Ok((dst, copied, key))
    }
}
