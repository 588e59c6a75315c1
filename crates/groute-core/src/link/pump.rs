//! The pump of one link output: moves queued sends into receive buffers, packet by packet.
//!
//! One named thread per output. Its loop:
//!
//! 1. take a free receive buffer (blocking: the free list is the flow control, so never more
//!    than `num_buffers` packets are out with the receiver);
//! 2. if no send is in progress, take the next one from the output's queue (claiming it
//!    against the other outputs it was offered to);
//! 3. on the copy stream, wait for the buffer's release event (the consumer's reads are
//!    done) and, for the first packet, the send's ready event; enqueue the copy of the next
//!    packet; record an event; deliver a [`PendingSegment`] whose release hook hands the
//!    buffer back with the consumer's event;
//! 4. once the last packet of a send is enqueued, resolve the sender's future with the last
//!    copy's event (all copies of one send share one stream, so it covers them all).
//!
//! Buffers are allocated once, when the output is created, and only ever handed back and
//! forth (never reallocated on the hot path). The thread exits at end of stream (every input
//! closed, queue drained: receivers then see `None`) or when the last receiver is dropped.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytemuck::Pod;
use crossbeam::channel::{self, Receiver, Sender};

use super::config::LinkConfig;
use super::job::SendJob;
use super::queue::{OutputQueue, Take};
use super::receiver::LinkReceiver;
use crate::backend::StreamPriority;
use crate::context::{Context, DeviceId};
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::memory::Buffer;
use crate::segment::{PendingSegment, Segment};
use crate::stream::Stream;
use crate::sync::Mailbox;

/// A receive buffer handed back: its index and the event after which it may be overwritten.
struct FreeSlot {
    index: usize,
    release: Event,
}

/// A send whose packets are being copied.
struct InFlight<T> {
    job: SendJob<T>,
    /// Elements already copied (packets enqueued).
    sent: usize,
    /// The last packet's copy event.
    last: Option<Event>,
}

/// Where copies to a destination are enqueued.
enum CopyStreams {
    /// Destination is a device: one high-priority stream on it.
    OnDestination(Stream),
    /// Destination is the host: one high-priority stream per source device, made on first
    /// use (a copy out of device memory is issued by the device holding it).
    PerSource(HashMap<Option<DeviceId>, Stream>),
}

struct Pump<T> {
    ctx: Context,
    dst: Endpoint,
    packet_size: usize,
    queue: OutputQueue<SendJob<T>>,
    buffers: Vec<Buffer<T>>,
    free_tx: Sender<FreeSlot>,
    free_rx: Receiver<FreeSlot>,
    delivered: Arc<Mailbox<PendingSegment<T>>>,
    abandoned: Arc<AtomicBool>,
    streams: CopyStreams,
    current: Option<InFlight<T>>,
}

/// Allocates the receive buffers of an output to `dst`, starts its pump thread (named
/// `name`) and returns the receiving end.
pub(crate) fn spawn_output<T: Pod>(
    ctx: &Context,
    dst: Endpoint,
    config: LinkConfig,
    queue: OutputQueue<SendJob<T>>,
    name: String,
) -> Result<LinkReceiver<T>> {
    config.validate::<T>()?;
    let (buffers, streams) = match dst {
        Endpoint::Host => {
            let buffers = (0..config.num_buffers)
                .map(|_| ctx.alloc_host::<T>(config.packet_size))
                .collect::<Result<Vec<_>>>()?;
            (buffers, CopyStreams::PerSource(HashMap::new()))
        }
        Endpoint::Device(d) => {
            let device = ctx.device(d)?;
            let buffers = (0..config.num_buffers)
                .map(|_| device.alloc::<T>(config.packet_size))
                .collect::<Result<Vec<_>>>()?;
            let stream = device.new_stream(StreamPriority::High)?;
            (buffers, CopyStreams::OnDestination(stream))
        }
        Endpoint::Router(_) => {
            return Err(Error::invalid(
                "link destination",
                dst,
                "a link delivers to the host or a device; connect routers through their inputs",
            ));
        }
    };
    let (free_tx, free_rx) = channel::unbounded();
    for index in 0..buffers.len() {
        // The receiving end is held by this function until the pump starts.
        let _ = free_tx.send(FreeSlot {
            index,
            release: Event::ready(),
        });
    }
    let delivered = Arc::new(Mailbox::new());
    let abandoned = Arc::new(AtomicBool::new(false));
    let receiver = LinkReceiver::new(
        Arc::clone(&delivered),
        Arc::clone(&abandoned),
        queue.waker(),
        dst,
    );
    let pump = Pump {
        ctx: ctx.clone(),
        dst,
        packet_size: config.packet_size,
        queue,
        buffers,
        free_tx,
        free_rx,
        delivered,
        abandoned,
        streams,
        current: None,
    };
    std::thread::Builder::new()
        .name(name.clone())
        .spawn(move || pump.run())
        .map_err(|source| Error::Spawn { name, source })?;
    Ok(receiver)
}

impl<T: Pod> Pump<T> {
    fn run(mut self) {
        loop {
            if self.abandoned.load(Ordering::Acquire) {
                break;
            }
            let Some(slot) = self.wait_buffer() else {
                break;
            };
            if self.current.is_none() {
                match self.wait_job() {
                    Some(job) => {
                        self.current = Some(InFlight {
                            job,
                            sent: 0,
                            last: None,
                        })
                    }
                    None => break,
                }
            }
            self.send_packet(slot);
        }
        // End of stream (or abandoned): receivers see `None` once they have drained what
        // was delivered; a send still in progress fails its future (dropping it reports).
        self.delivered.close();
        if let Some(inflight) = self.current.take() {
            inflight
                .job
                .completion
                .finish(Err(Error::Disconnected(format!(
                    "the link output to {}",
                    self.dst
                ))));
        }
    }

    /// A free receive buffer; `None` when the pump should stop (abandoned, or end of stream
    /// with no send in progress, which needs no buffer).
    fn wait_buffer(&mut self) -> Option<FreeSlot> {
        // A consumer keeping up releases buffers within microseconds: poll briefly before
        // parking on the channels (a park/unpark pair per packet caps small-packet throughput).
        let start = std::time::Instant::now();
        while start.elapsed() < crate::sync::SPIN_BEFORE_PARKING {
            if let Ok(slot) = self.free_rx.try_recv() {
                return Some(slot);
            }
            std::hint::spin_loop();
        }
        loop {
            let mut sel = channel::Select::new();
            let free = sel.recv(&self.free_rx);
            let wake = sel.recv(self.queue.wake_channel());
            let op = sel.select();
            if op.index() == free {
                // `self.free_tx` keeps the channel connected.
                return op.recv(&self.free_rx).ok();
            }
            debug_assert_eq!(op.index(), wake);
            let _ = op.recv(self.queue.wake_channel());
            if self.abandoned.load(Ordering::Acquire) {
                return None;
            }
            if self.current.is_none() && self.queue.is_finished() {
                // Claimed-elsewhere duplicates may still sit in the channel: drain them.
                match self.queue.try_take() {
                    Take::Message(job) => {
                        self.current = Some(InFlight {
                            job,
                            sent: 0,
                            last: None,
                        })
                    }
                    Take::Finished => return None,
                    Take::Empty | Take::Woken => {}
                }
            }
        }
    }

    /// The next send for this output; `None` at end of stream or when abandoned.
    fn wait_job(&mut self) -> Option<SendJob<T>> {
        self.queue.set_waiting(true);
        let job = loop {
            if self.abandoned.load(Ordering::Acquire) {
                break None;
            }
            match self.queue.wait_once(None) {
                Take::Message(job) => break Some(job),
                Take::Finished => break None,
                Take::Empty | Take::Woken => {}
            }
        };
        self.queue.set_waiting(false);
        job
    }

    fn copy_stream(&mut self, source: Endpoint) -> Result<&Stream> {
        match &mut self.streams {
            CopyStreams::OnDestination(s) => Ok(s),
            CopyStreams::PerSource(map) => {
                let device = match source {
                    Endpoint::Device(d) => Some(d),
                    _ => None,
                };
                match map.entry(device) {
                    Entry::Occupied(e) => Ok(e.into_mut()),
                    Entry::Vacant(e) => {
                        let issuer = self.ctx.device(device.unwrap_or(DeviceId(0)))?;
                        Ok(e.insert(issuer.new_stream(StreamPriority::High)?))
                    }
                }
            }
        }
    }

    /// Copies the next packet of the send in progress into `slot` and delivers it.
    fn send_packet(&mut self, slot: FreeSlot) {
        let Some(mut inflight) = self.current.take() else {
            let _ = self.free_tx.send(slot);
            return;
        };
        let total_len = inflight.job.segment.len();
        let start = inflight.sent;
        let n = self.packet_size.min(total_len - start);
        let dst_buffer = match self.buffers[slot.index].slice(0..n) {
            Ok(b) => b,
            Err(e) => return self.fail(inflight, slot, e),
        };
        let copied = self.enqueue_copy(&inflight, &slot.release, &dst_buffer, start, n);
        let event = match copied {
            Ok(event) => event,
            Err(e) => return self.fail(inflight, slot, e),
        };
        let seg = &inflight.job.segment;
        let packet = Segment::packet(dst_buffer, self.dst, seg.offset() + start, seg.total())
            .with_metadata(seg.metadata());
        let free_tx = self.free_tx.clone();
        let index = slot.index;
        let copy_done = event.clone();
        let pending = PendingSegment::new(packet, event.clone(), move |consumer_done| {
            // The next copy into this buffer waits for the consumer's event and for this
            // copy itself (a packet dropped unread may still be in flight; copies from
            // different sources can use different streams).
            let release = Event::join([&copy_done, &consumer_done]);
            // The pump may be gone (then the buffer is simply freed with the last view).
            let _ = free_tx.send(FreeSlot { index, release });
        });
        if let Err(unwanted) = self.delivered.push(pending) {
            // Every receiver is gone: the drop hands the buffer straight back.
            drop(unwanted);
        }
        inflight.sent += n;
        inflight.last = Some(event);
        if inflight.sent == total_len {
            let done = inflight.last.take().unwrap_or_default();
            inflight.job.completion.finish(Ok(done));
        } else {
            self.current = Some(inflight);
        }
    }

    fn enqueue_copy(
        &mut self,
        inflight: &InFlight<T>,
        release: &Event,
        dst: &Buffer<T>,
        start: usize,
        n: usize,
    ) -> Result<Event> {
        let job = &inflight.job;
        let src = job.segment.data().slice(start..start + n)?;
        let first = start == 0;
        let ready = job.ready.clone();
        let stream = self.copy_stream(job.segment.endpoint())?;
        stream.wait(release)?;
        if first {
            stream.wait(&ready)?;
        }
        stream.copy(dst, &src)?;
        stream.record()
    }

    /// A copy could not be enqueued: the buffer goes back, the send fails.
    fn fail(&mut self, inflight: InFlight<T>, slot: FreeSlot, error: Error) {
        let _ = self.free_tx.send(slot);
        inflight.job.completion.finish(Err(error));
    }
}
