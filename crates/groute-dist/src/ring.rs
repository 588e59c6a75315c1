//! [`RankRing`]: one rank's devices on the ring that spans every rank.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytemuck::Pod;
use crossbeam::channel::{Receiver, RecvTimeoutError, Sender, TryRecvError, unbounded};
use groute_core::{
    Buffer, Context, DeviceId, Endpoint, Error, Event, EventFuture, PendingSegment, Segment,
    Stream, StreamPriority,
};
use groute_worklist::{RingTransport, RouterRing};

/// The ring as one rank's drivers see it: its devices `0..L` in order over the runtime's
/// router, device `L - 1` sending to the next rank instead of to device 0, and device 0
/// receiving from the previous rank. The two rank edges are channels to the rank's progress
/// loop ([`crate::DistSolver`]), which moves their items over the [`RankComm`](crate::RankComm)
/// (host backend) or the device plane (CUDA: NCCL).
pub struct RankRing<P> {
    local: RouterRing<P>,
    last: usize,
    /// Where device `L - 1`'s items for the next rank are copied (device memory): its own
    /// copy stream and the device the copies land on. `None`: they leave as host data.
    staging: Option<(Stream, Context, DeviceId)>,
    to_next_rank: Sender<Outbound<P>>,
    from_previous_rank: Receiver<PendingSegment<P>>,
    shut: AtomicBool,
}

/// Items that device `L - 1` handed to the progress loop for the next rank.
pub(crate) enum Outbound<P> {
    /// Host data (the host backend): sent inside the message.
    Host(Vec<P>),
    /// A copy in device memory, valid once `ready` completes (CUDA): the message carries its
    /// length, the device plane the items.
    Device {
        /// The copy (the whole buffer).
        items: Buffer<P>,
        /// Completes once the copy is made.
        ready: Event,
    },
}

impl<P> std::fmt::Debug for RankRing<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RankRing")
            .field("devices", &(self.last + 1))
            .finish()
    }
}

/// The progress loop's ends of a [`RankRing`]: items leaving for the next rank, and the
/// input of device 0.
pub(crate) struct RankEdges<P> {
    pub(crate) outgoing: Receiver<Outbound<P>>,
    pub(crate) incoming: Sender<PendingSegment<P>>,
}

impl<P: Pod + Send + Sync> RankRing<P> {
    /// The ring over `context`'s devices (packets of `packet_size` items, `num_buffers`
    /// receive buffers per device) and the progress loop's ends of it. `stage_on`: the
    /// device that device `L - 1`'s items for the next rank are copied onto (CUDA: the last
    /// device itself for the device plane, device 0 when the ring closes within one rank);
    /// `None`: they leave as host data (host backend).
    pub(crate) fn new(
        context: &Context,
        packet_size: usize,
        num_buffers: usize,
        stage_on: Option<DeviceId>,
    ) -> Result<(Self, RankEdges<P>), Error> {
        let local = RouterRing::new(context, packet_size, num_buffers)?;
        let last = context.num_devices() - 1;
        let staging = match stage_on {
            Some(target) => Some((
                context.devices()[last].new_stream(StreamPriority::High)?,
                context.clone(),
                target,
            )),
            None => None,
        };
        let (to_next_rank, outgoing) = unbounded();
        let (incoming, from_previous_rank) = unbounded();
        Ok((
            RankRing {
                local,
                last,
                staging,
                to_next_rank,
                from_previous_rank,
                shut: AtomicBool::new(false),
            },
            RankEdges { outgoing, incoming },
        ))
    }

    fn disconnected(&self) -> Error {
        Error::Disconnected("ring input of device 0 (from the previous rank)".into())
    }
}

impl<P: Pod + Send + Sync> RingTransport<P> for RankRing<P> {
    fn send(
        &self,
        from: DeviceId,
        segment: Segment<P>,
        ready: Event,
    ) -> Result<EventFuture, Error> {
        if from.0 != self.last {
            return self.local.send(from, segment, ready);
        }
        if self.shut.load(Ordering::Acquire) {
            return Err(Error::SendAfterShutdown(
                "the ring edge to the next rank".into(),
            ));
        }
        let (outbound, reusable) = match &self.staging {
            // The items leave as host data: copied out once valid, the buffer free at once.
            None => {
                let items = PendingSegment::unowned(segment, ready)
                    .to_vec()?
                    .ok_or_else(|| Error::Unsupported {
                        operation: "a ring spanning processes over device memory without a \
                                    device plane",
                        backend: "cuda",
                    })?;
                (Outbound::Host(items), Event::ready())
            }
            // Copied into a buffer of their own; the segment's buffer is free once it is made.
            Some((stream, context, target)) => {
                let items = context.device(*target)?.alloc::<P>(segment.len())?;
                stream.wait(&ready)?;
                let copied = stream.copy_and_record(&items, segment.data())?;
                (
                    Outbound::Device {
                        items,
                        ready: copied.clone(),
                    },
                    copied,
                )
            }
        };
        self.to_next_rank
            .send(outbound)
            .map_err(|_| Error::SendAfterShutdown("the ring edge to the next rank".into()))?;
        Ok(EventFuture::ready(reusable))
    }

    fn receive(&self, at: DeviceId, timeout: Duration) -> Result<Option<PendingSegment<P>>, Error> {
        if at.0 != 0 {
            return self.local.receive(at, timeout);
        }
        match self.from_previous_rank.recv_timeout(timeout) {
            Ok(p) => Ok(Some(p)),
            Err(RecvTimeoutError::Timeout) if !self.shut.load(Ordering::Acquire) => Ok(None),
            Err(_) => Err(self.disconnected()),
        }
    }

    fn try_receive(&self, at: DeviceId) -> Result<Option<PendingSegment<P>>, Error> {
        if at.0 != 0 {
            return self.local.try_receive(at);
        }
        match self.from_previous_rank.try_recv() {
            Ok(p) => Ok(Some(p)),
            Err(TryRecvError::Empty) if !self.shut.load(Ordering::Acquire) => Ok(None),
            Err(_) => Err(self.disconnected()),
        }
    }

    fn shutdown(&self) {
        self.shut.store(true, Ordering::Release);
        self.local.shutdown();
    }
}

/// Items from the previous rank as a pending segment on `context`'s device 0.
pub(crate) fn arrived<P: Pod>(context: &Context, items: &[P]) -> Result<PendingSegment<P>, Error> {
    let device = &context.devices()[0];
    let buffer = device.upload(items)?;
    Ok(on_device_zero(buffer, Event::ready()))
}

/// `items` (on device 0), valid once `ready` completes, as a pending segment of device 0.
pub(crate) fn on_device_zero<P: Pod>(items: Buffer<P>, ready: Event) -> PendingSegment<P> {
    PendingSegment::unowned(Segment::new(items, Endpoint::Device(DeviceId(0))), ready)
}
