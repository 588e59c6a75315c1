//! The ring transport: device `d` sends to device `d + 1 mod N`.
//!
//! The worklist drivers talk to the ring only through [`RingTransport`], so the transport
//! can be the runtime's ring router or, until that lands in `groute-core`, the small
//! [`MailboxRing`] below (real copies between the devices' memories, packetized, ordered by
//! events, one mailbox per device). Swapping the transport changes nothing above it.

use std::sync::Arc;
use std::time::Duration;

use bytemuck::Pod;
use groute_core::sync::Mailbox;
use groute_core::{
    Context, DeviceId, Endpoint, Error, Event, PendingSegment, Result, Segment, Stream,
    StreamPriority,
};

/// What the worklist drivers need from the ring.
pub trait RingTransport<P: Pod>: Send + Sync {
    /// Sends `segment` (on device `from`, valid once `ready` completes) to `from`'s ring
    /// successor, split into packets. Returns the event after which the segment's buffer may
    /// be reused.
    fn send(&self, from: DeviceId, segment: Segment<P>, ready: &Event) -> Result<Event>;
    /// Waits up to `timeout` for a packet addressed to device `at`: `Ok(Some)` a packet,
    /// `Ok(None)` nothing yet, `Err(Disconnected)` after [`RingTransport::shutdown`].
    fn receive(&self, at: DeviceId, timeout: Duration) -> Result<Option<PendingSegment<P>>>;
    /// Takes a packet addressed to `at` if one is queued, without waiting.
    fn try_receive(&self, at: DeviceId) -> Result<Option<PendingSegment<P>>>;
    /// Shuts the ring down: later receives see `Disconnected` once drained, sends fail.
    fn shutdown(&self);
}

/// A ring over per-device mailboxes: each packet is copied into a fresh buffer on the
/// successor (from its memory pool, so buffers are recycled) on the sender's copy stream.
pub struct MailboxRing<P> {
    context: Context,
    packet_size: usize,
    inboxes: Vec<Mailbox<PendingSegment<P>>>,
    copy_streams: Vec<Stream>,
}

impl<P> std::fmt::Debug for MailboxRing<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailboxRing")
            .field("devices", &self.inboxes.len())
            .field("packet_size", &self.packet_size)
            .finish()
    }
}

impl<P: Pod + Send + Sync> MailboxRing<P> {
    /// A ring over every device of `context`, with packets of at most `packet_size` items.
    pub fn new(context: &Context, packet_size: usize) -> Result<Arc<Self>> {
        if packet_size == 0 {
            return Err(Error::invalid(
                "packet_size (--packet-size)",
                0,
                "a packet holds at least one item",
            ));
        }
        let copy_streams = context
            .devices()
            .iter()
            .map(|d| d.new_stream(StreamPriority::Normal))
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(MailboxRing {
            context: context.clone(),
            packet_size,
            inboxes: (0..context.num_devices()).map(|_| Mailbox::new()).collect(),
            copy_streams,
        }))
    }

    fn inbox(&self, at: DeviceId) -> Result<&Mailbox<PendingSegment<P>>> {
        self.inboxes.get(at.0).ok_or(Error::NoSuchDevice {
            device: at.0,
            count: self.inboxes.len(),
        })
    }
}

impl<P: Pod + Send + Sync> RingTransport<P> for MailboxRing<P> {
    fn send(&self, from: DeviceId, segment: Segment<P>, ready: &Event) -> Result<Event> {
        let n = self.inboxes.len();
        let to = DeviceId((from.0 + 1) % n);
        let inbox = self.inbox(to)?;
        if inbox.is_closed() {
            return Err(Error::SendAfterShutdown(format!("ring {from} -> {to}")));
        }
        let stream = self.copy_streams.get(from.0).ok_or(Error::NoSuchDevice {
            device: from.0,
            count: n,
        })?;
        stream.wait(ready)?;
        let target = self.context.device(to)?;
        let mut start = 0;
        while start < segment.len() {
            let end = (start + self.packet_size).min(segment.len());
            let src = segment.sub(start, end)?;
            let dst = target.alloc::<P>(end - start)?;
            stream.copy(&dst, src.data())?;
            let arrived = stream.record()?;
            let packet = Segment::packet(dst, Endpoint::Device(to), src.offset(), src.total())
                .with_metadata(segment.metadata());
            inbox
                .push(PendingSegment::unowned(packet, arrived))
                .map_err(|_| Error::SendAfterShutdown(format!("ring {from} -> {to}")))?;
            start = end;
        }
        stream.record()
    }

    fn receive(&self, at: DeviceId, timeout: Duration) -> Result<Option<PendingSegment<P>>> {
        match self.inbox(at)?.recv_timeout(timeout) {
            Ok(Some(p)) => Ok(Some(p)),
            Ok(None) => Err(Error::Disconnected(format!("ring input of device {at}"))),
            Err(()) => Ok(None),
        }
    }

    fn try_receive(&self, at: DeviceId) -> Result<Option<PendingSegment<P>>> {
        let inbox = self.inbox(at)?;
        match inbox.try_recv() {
            Some(p) => Ok(Some(p)),
            None if inbox.is_closed() => {
                Err(Error::Disconnected(format!("ring input of device {at}")))
            }
            None => Ok(None),
        }
    }

    fn shutdown(&self) {
        for inbox in &self.inboxes {
            inbox.close();
        }
    }
}
