//! Links: packetized, multi-buffered transfers from one endpoint to another.
//!
//! A [`Link<T>`] from `src` to `dst` owns `num_buffers` receive buffers of `packet_size`
//! elements on `dst` (device memory, or pinned host memory when `dst` is the host),
//! allocated once, [`LinkConfig::copy_streams`] high-priority copy streams (packets go
//! round-robin over them, so consecutive copies overlap) and a pump thread. [`Link::send`] queues a
//! segment and returns at once with an [`EventFuture`]; the segment is
//! split into packets that pipeline through the free receive buffers, each packet costing one
//! copy and one event record. The copies are enqueued by whichever thread finds a free buffer
//! and the link idle: the sender's own thread (so a small send on an idle link is copied
//! before `send` returns), the consumer's thread as it releases a buffer, or, as a fallback,
//! the pump thread (see `output.rs` in this module for the protocol). The receiver gets one
//! [`PendingSegment`] per packet (with its offset in the message and
//! the message's metadata) and gives each buffer back with the event after which its own
//! reads are done. [`Link::shutdown`] is socket-like: the receiver sees `None` after all the
//! data.
//!
//! Copies between devices are made by the copy engines by default. With
//! [`LinkConfig::with_copy_method`]`(`[`CopyMethod::kernel`]`())` a copy kernel on the issuing
//! device (`kernels/runtime/peer_copy.cu`) moves each packet instead, storing 16-byte vectors
//! straight into the peer's buffer: the copy engines' fixed cost per copy caps a train of
//! packet-sized copies well below one large copy, the SMs have no such cost. The kernel
//! runs on the copy stream the packet was given, so stream order, events and buffer reuse
//! are exactly as for DMA copies; it is loaded on every device of the context when the link
//! is built. It applies only on the CUDA backend between device memory the issuing device can
//! address (one GPU, or two with peer access); copies to or from the host, between GPUs
//! without peer access (staged through host memory) and on the host backend keep the copy
//! engines (see [`CopyMethod`]). With many copy streams and receive buffers
//! ([`LinkConfig::bulk`]) a kernel-method link comes close to one raw copy of the whole
//! message, where DMA copies of the same packet size fall well short of it.
//!
//! ```
//! use groute_core::{Context, DeviceId, Endpoint, Event, Link, LinkConfig, Segment};
//!
//! # fn main() -> groute_core::Result<()> {
//! let ctx = Context::host(1)?;
//! let link = Link::<u32>::new(&ctx, Endpoint::Host, Endpoint::Device(DeviceId(0)), LinkConfig::new(4, 2))?;
//! let data = ctx.host_buffer_from(&(0..10).collect::<Vec<u32>>())?;
//! let sent = link.send(Segment::new(data, Endpoint::Host).with_metadata(42), Event::ready())?;
//! link.shutdown();
//! let mut got = Vec::new();
//! while let Some(packet) = link.receive_blocking() {
//!     assert_eq!(packet.segment().metadata(), 42);
//!     got.push((packet.segment().offset(), packet.to_vec()?.unwrap_or_default()));
//!     packet.release(Event::ready());
//! }
//! sent.wait()?; // every copy is done: `data` may be reused
//! assert_eq!(got, vec![(0, vec![0, 1, 2, 3]), (4, vec![4, 5, 6, 7]), (8, vec![8, 9])]);
//! # Ok(())
//! # }
//! ```

mod config;
mod copy_method;
mod copy_streams;
mod job;
pub(crate) mod output;
pub(crate) mod pump;
pub(crate) mod queue;
mod receiver;
mod sender;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytemuck::Pod;

pub use self::config::{CopyIssuer, LinkConfig};
pub use self::copy_method::CopyMethod;
pub use self::job::SendError;
pub use self::queue::{OutputQueue, Take};
pub use self::receiver::{LinkReceiver, ReceiveTimeout};
pub use self::sender::LinkSender;
pub(crate) use self::sender::RouterFabric;
use crate::context::Context;
use crate::endpoint::{Endpoint, RouterId};
use crate::error::{Error, Result};
use crate::event::{Event, EventFuture};
use crate::router::{PointToPoint, Router};
use crate::segment::{PendingSegment, Segment};

/// A link from one endpoint to another (see the module docs).
///
/// Cloning shares the link. The sending and receiving halves can also be taken apart
/// ([`Link::sender`], [`Link::receiver`]) and moved to different threads. When every handle
/// to the sending half is gone the link shuts down; when every handle to the receiving half
/// is gone the pump thread exits.
pub struct Link<T> {
    src: Endpoint,
    dst: Endpoint,
    sender: LinkSender<T>,
    receiver: LinkReceiver<T>,
}

impl<T> Clone for Link<T> {
    fn clone(&self) -> Self {
        Link {
            src: self.src,
            dst: self.dst,
            sender: self.sender.clone(),
            receiver: self.receiver.clone(),
        }
    }
}

impl<T> fmt::Debug for Link<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Link")
            .field("src", &self.src)
            .field("dst", &self.dst)
            .finish()
    }
}

impl<T: Pod> Link<T> {
    /// A link from `src` to `dst` (the host or devices of `ctx`; distinct, or
    /// [`Error::SelfLoop`]), with its receive buffers allocated now on `dst`.
    pub fn new(ctx: &Context, src: Endpoint, dst: Endpoint, config: LinkConfig) -> Result<Self> {
        if src == dst {
            return Err(Error::SelfLoop(src));
        }
        if let Endpoint::Router(_) = src {
            return Err(Error::invalid(
                "link source",
                src,
                "connect to a router with Router::sender instead",
            ));
        }
        let label = format!("link {src} -> {dst}");
        let router = Router::<T>::build(
            ctx,
            RouterId::fresh(),
            Arc::new(PointToPoint),
            &[src],
            &[dst],
            config,
            Some(label),
        )?;
        let (mut senders, mut receivers) = router.into_parts();
        match (senders.pop(), receivers.pop()) {
            (Some(sender), Some(receiver)) => Ok(Link {
                src,
                dst,
                sender,
                receiver,
            }),
            _ => Err(Error::invalid(
                "link",
                "router",
                "a link has one input and one output",
            )),
        }
    }
}

impl<T: Pod> Link<T> {
    /// The source endpoint.
    pub fn src(&self) -> Endpoint {
        self.src
    }

    /// The destination endpoint.
    pub fn dst(&self) -> Endpoint {
        self.dst
    }

    /// The sending half.
    pub fn sender(&self) -> LinkSender<T> {
        self.sender.clone()
    }

    /// The receiving half.
    pub fn receiver(&self) -> LinkReceiver<T> {
        self.receiver.clone()
    }

    /// Sends `segment` once `ready` completes (see [`LinkSender::send`]).
    pub fn send(&self, segment: Segment<T>, ready: Event) -> Result<EventFuture, SendError<T>> {
        self.sender.send(segment, ready)
    }

    /// Shuts the sending side down: the receiver sees end-of-stream after all the data.
    pub fn shutdown(&self) {
        self.sender.shutdown();
    }

    /// Awaits the next packet; `None` at end of stream.
    pub async fn receive(&self) -> Option<PendingSegment<T>> {
        self.receiver.receive().await
    }

    /// Blocks until the next packet; `None` at end of stream.
    pub fn receive_blocking(&self) -> Option<PendingSegment<T>> {
        self.receiver.receive_blocking()
    }

    /// Like [`Link::receive_blocking`], giving up after `timeout`.
    pub fn receive_timeout(
        &self,
        timeout: Duration,
    ) -> Result<Option<PendingSegment<T>>, ReceiveTimeout> {
        self.receiver.receive_timeout(timeout)
    }
}
