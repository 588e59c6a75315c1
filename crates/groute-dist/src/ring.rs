//! [`RankRing`]: one rank's devices on the ring that spans every rank.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytemuck::Pod;
use crossbeam::channel::{Receiver, RecvTimeoutError, Sender, TryRecvError, unbounded};
use groute_core::{
    Context, DeviceId, Endpoint, Error, Event, EventFuture, PendingSegment, Segment,
};
use groute_worklist::{RingTransport, RouterRing};

/// The ring as one rank's drivers see it: its devices `0..L` in order over the runtime's
/// router, device `L - 1` sending to the next rank instead of to device 0, and device 0
/// receiving from the previous rank. The two rank edges are channels to the rank's progress
/// loop ([`crate::DistSolver`]), which moves their items over the [`RankComm`](crate::RankComm).
pub struct RankRing<P> {
    local: RouterRing<P>,
    last: usize,
    to_next_rank: Sender<Vec<P>>,
    from_previous_rank: Receiver<PendingSegment<P>>,
    shut: AtomicBool,
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
    pub(crate) outgoing: Receiver<Vec<P>>,
    pub(crate) incoming: Sender<PendingSegment<P>>,
}

impl<P: Pod + Send + Sync> RankRing<P> {
    /// The ring over `context`'s devices (packets of `packet_size` items, `num_buffers`
    /// receive buffers per device) and the progress loop's ends of it.
    pub(crate) fn new(
        context: &Context,
        packet_size: usize,
        num_buffers: usize,
    ) -> Result<(Self, RankEdges<P>), Error> {
        let local = RouterRing::new(context, packet_size, num_buffers)?;
        let (to_next_rank, outgoing) = unbounded();
        let (incoming, from_previous_rank) = unbounded();
        Ok((
            RankRing {
                local,
                last: context.num_devices() - 1,
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
        // The items leave as host data: copied out once valid, the buffer free at once.
        let items = PendingSegment::unowned(segment, ready)
            .to_vec()?
            .ok_or_else(|| Error::Unsupported {
                operation: "a ring spanning processes over device memory (the CUDA data plane is NCCL's)",
                backend: "cuda",
            })?;
        self.to_next_rank
            .send(items)
            .map_err(|_| Error::SendAfterShutdown("the ring edge to the next rank".into()))?;
        Ok(EventFuture::ready(Event::ready()))
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
    Ok(PendingSegment::unowned(
        Segment::new(buffer, Endpoint::Device(DeviceId(0))),
        Event::ready(),
    ))
}
