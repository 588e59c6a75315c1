//! The ring transport: device `d` sends to device `d + 1 mod N`.
//!
//! The worklist drivers talk to the ring only through [`RingTransport`]; the product's
//! transport is [`RouterRing`], the runtime's [`Router`] with the [`Ring`] policy: every
//! device is one input and one output, each output owns `num_buffers` receive buffers of
//! `packet_size` items on its device (allocated once), and packets are copied device to
//! device by the output's pump (peer copies on CUDA, real copies between the executors'
//! memories on the host backend). A test can swap in its own transport; nothing above the
//! trait changes.

use std::time::Duration;

use bytemuck::Pod;
use groute_core::router::{Ring, Router};
use groute_core::{
    Context, DeviceId, Endpoint, Error, Event, EventFuture, LinkConfig, LinkReceiver, LinkSender,
    PendingSegment, Result, Segment,
};

/// What the worklist drivers need from the ring.
pub trait RingTransport<P: Pod>: Send + Sync {
    /// Sends `segment` (on device `from`, valid once `ready` completes) to `from`'s ring
    /// successor, split into packets. Returns the future of the event after which the
    /// segment's buffer may be reused.
    fn send(&self, from: DeviceId, segment: Segment<P>, ready: Event) -> Result<EventFuture>;
    /// Waits up to `timeout` for a packet addressed to device `at`: `Ok(Some)` a packet,
    /// `Ok(None)` nothing yet, `Err(Disconnected)` after [`RingTransport::shutdown`] once
    /// drained.
    fn receive(&self, at: DeviceId, timeout: Duration) -> Result<Option<PendingSegment<P>>>;
    /// Takes a packet addressed to `at` if one is queued, without waiting.
    fn try_receive(&self, at: DeviceId) -> Result<Option<PendingSegment<P>>>;
    /// Shuts the ring down: later sends fail, receivers see `Disconnected` once drained.
    fn shutdown(&self);
}

/// The ring over the runtime's router (see the module docs).
pub struct RouterRing<P> {
    senders: Vec<LinkSender<P>>,
    receivers: Vec<LinkReceiver<P>>,
}

impl<P> std::fmt::Debug for RouterRing<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouterRing")
            .field("devices", &self.senders.len())
            .finish()
    }
}

impl<P: Pod> RouterRing<P> {
    /// A ring over every device of `context`: packets of at most `packet_size` items,
    /// `num_buffers` receive buffers per device.
    pub fn new(context: &Context, packet_size: usize, num_buffers: usize) -> Result<Self> {
        if packet_size == 0 {
            return Err(Error::invalid(
                "packet_size (--packet-size)",
                0,
                "a packet holds at least one item",
            ));
        }
        let devices: Vec<Endpoint> = (0..context.num_devices())
            .map(|d| Endpoint::Device(DeviceId(d)))
            .collect();
        let router = Router::<P>::new(
            context,
            Ring,
            &devices,
            &devices,
            LinkConfig::new(packet_size, num_buffers),
        )?;
        let (senders, receivers) = router.into_parts();
        Ok(RouterRing { senders, receivers })
    }

    fn sender(&self, d: DeviceId) -> Result<&LinkSender<P>> {
        self.senders.get(d.0).ok_or(Error::NoSuchDevice {
            device: d.0,
            count: self.senders.len(),
        })
    }

    fn receiver(&self, d: DeviceId) -> Result<&LinkReceiver<P>> {
        self.receivers.get(d.0).ok_or(Error::NoSuchDevice {
            device: d.0,
            count: self.receivers.len(),
        })
    }
}

impl<P: Pod + Send + Sync> RingTransport<P> for RouterRing<P> {
    fn send(&self, from: DeviceId, segment: Segment<P>, ready: Event) -> Result<EventFuture> {
        self.sender(from)?.send(segment, ready).map_err(Error::from)
    }

    fn receive(&self, at: DeviceId, timeout: Duration) -> Result<Option<PendingSegment<P>>> {
        match self.receiver(at)?.receive_timeout(timeout) {
            Ok(Some(p)) => Ok(Some(p)),
            Ok(None) => Err(Error::Disconnected(format!("ring input of device {at}"))),
            Err(_) => Ok(None),
        }
    }

    fn try_receive(&self, at: DeviceId) -> Result<Option<PendingSegment<P>>> {
        let rx = self.receiver(at)?;
        match rx.try_receive() {
            Some(p) => Ok(Some(p)),
            None if rx.is_finished() => {
                Err(Error::Disconnected(format!("ring input of device {at}")))
            }
            None => Ok(None),
        }
    }

    fn shutdown(&self) {
        for s in &self.senders {
            s.shutdown();
        }
    }
}
