//! The receiving end of a link (or of one router output).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam::channel::Sender;

use crate::endpoint::Endpoint;
use crate::segment::PendingSegment;
use crate::sync::Mailbox;

/// A receive that gave up waiting ([`LinkReceiver::receive_timeout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no segment arrived on the link within {0:?}")]
pub struct ReceiveTimeout(pub Duration);

struct ReceiverShared<T> {
    delivered: Arc<Mailbox<PendingSegment<T>>>,
    abandoned: Arc<AtomicBool>,
    wake: Sender<()>,
    endpoint: Endpoint,
    /// The link's pump thread, joined when the last receiver handle goes.
    pump: Option<JoinHandle<()>>,
}

impl<T> Drop for ReceiverShared<T> {
    /// The last receiver handle is gone: stop the pump, give every queued packet's buffer
    /// back so that it can exit, and wait for it. The pump frees the link's receive buffers
    /// as it stops; waiting means no backend call of the link outlives its last handle (a
    /// pump still freeing device memory while the process exits raced the CUDA driver's
    /// teardown).
    fn drop(&mut self) {
        self.abandoned.store(true, Ordering::Release);
        self.delivered.close();
        while let Some(p) = self.delivered.try_recv() {
            drop(p);
        }
        let _ = self.wake.send(());
        if let Some(pump) = self.pump.take() {
            // The pump never holds a receiver, so it never runs this drop; checked anyway,
            // since joining oneself would fail.
            if pump.thread().id() != std::thread::current().id() {
                let _ = pump.join();
            }
        }
    }
}

/// The receiving end of a link or of one router output: a stream of [`PendingSegment`]s
/// (one per packet) and then end-of-stream (`None`) once every sender has shut down and all
/// data has been received.
///
/// Clones share the stream (each packet goes to one of them). When the last clone is
/// dropped, packets still queued are released and the link's pump thread exits; sends that
/// have not been copied yet fail their [`crate::EventFuture`] with
/// [`crate::Error::Disconnected`].
///
/// Each packet occupies one receive buffer until it is released
/// ([`PendingSegment::release`], or dropped): at most `num_buffers` packets are out at once,
/// so release them promptly.
pub struct LinkReceiver<T> {
    inner: Arc<ReceiverShared<T>>,
}

impl<T> Clone for LinkReceiver<T> {
    fn clone(&self) -> Self {
        LinkReceiver {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> fmt::Debug for LinkReceiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LinkReceiver")
            .field("endpoint", &self.inner.endpoint)
            .field("queued", &self.inner.delivered.len())
            .finish()
    }
}

impl<T> LinkReceiver<T> {
    pub(crate) fn new(
        delivered: Arc<Mailbox<PendingSegment<T>>>,
        abandoned: Arc<AtomicBool>,
        wake: Sender<()>,
        endpoint: Endpoint,
        pump: JoinHandle<()>,
    ) -> Self {
        LinkReceiver {
            inner: Arc::new(ReceiverShared {
                delivered,
                abandoned,
                wake,
                endpoint,
                pump: Some(pump),
            }),
        }
    }

    /// The endpoint the packets arrive on (their buffers live there).
    pub fn endpoint(&self) -> Endpoint {
        self.inner.endpoint
    }

    /// Awaits the next packet; `None` at end of stream.
    pub async fn receive(&self) -> Option<PendingSegment<T>> {
        self.inner.delivered.recv().await
    }

    /// Blocks until the next packet; `None` at end of stream.
    pub fn receive_blocking(&self) -> Option<PendingSegment<T>> {
        self.inner.delivered.recv_blocking()
    }

    /// Like [`LinkReceiver::receive_blocking`], giving up after `timeout`.
    pub fn receive_timeout(
        &self,
        timeout: Duration,
    ) -> Result<Option<PendingSegment<T>>, ReceiveTimeout> {
        self.inner
            .delivered
            .recv_timeout(timeout)
            .map_err(|()| ReceiveTimeout(timeout))
    }

    /// Takes a packet if one has arrived (never blocks; `None` also at end of stream).
    pub fn try_receive(&self) -> Option<PendingSegment<T>> {
        self.inner.delivered.try_recv()
    }

    /// Whether end of stream has been reached (every sender shut down, all packets taken).
    pub fn is_finished(&self) -> bool {
        self.inner.delivered.is_closed() && self.inner.delivered.is_empty()
    }
}
