//! The sending end of a link (or one input of a router).

use std::fmt;
use std::sync::Arc;

use bytemuck::Pod;
use parking_lot::RwLock;

use super::job::{SendCompletion, SendError, SendJob};
use super::output::Output;
use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::event::{Event, EventFuture, event_promise};
use crate::router::{MessageInfo, Multiplexer, RoutingPolicy};
use crate::segment::Segment;

/// What every input of one router (or link) shares: the policy that routes its messages, the
/// multiplexer of its outputs and the outputs behind it.
pub(crate) struct RouterFabric<T> {
    pub(crate) policy: Arc<dyn RoutingPolicy>,
    pub(crate) mux: Arc<Multiplexer<SendJob<T>>>,
    /// The outputs behind `mux`, in its order: after queueing a send, the sender pumps the
    /// outputs it went to (an idle output enqueues the first copies on the sender's thread).
    pub(crate) outputs: Arc<[Arc<Output<T>>]>,
}

impl<T> Clone for RouterFabric<T> {
    fn clone(&self) -> Self {
        RouterFabric {
            policy: Arc::clone(&self.policy),
            mux: Arc::clone(&self.mux),
            outputs: Arc::clone(&self.outputs),
        }
    }
}

struct SenderShared<T> {
    endpoint: Endpoint,
    /// Where this input leads (`"link host -> device 0"`, `"router 3 input 1"`), for errors.
    label: String,
    /// This input's index among the router's.
    input: usize,
    fabric: RouterFabric<T>,
    /// Set once by shutdown. Sends hold the read lock while they queue, so that shutdown
    /// (write lock) orders after every send that was accepted: receivers get all the data
    /// before end-of-stream. The lock is per input, never shared across a router.
    shut: RwLock<bool>,
}

impl<T> SenderShared<T> {
    fn shutdown(&self) {
        let mut shut = self.shut.write();
        if !*shut {
            *shut = true;
            self.fabric.mux.close_input();
        }
    }
}

impl<T> Drop for SenderShared<T> {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The sending end of a link, or one input of a router.
///
/// Clones share the input. [`LinkSender::shutdown`] (or dropping the last clone) closes it;
/// the receivers see end-of-stream after all data once every input feeding them is closed.
pub struct LinkSender<T> {
    inner: Arc<SenderShared<T>>,
}

impl<T> Clone for LinkSender<T> {
    fn clone(&self) -> Self {
        LinkSender {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> fmt::Debug for LinkSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LinkSender")
            .field("endpoint", &self.inner.endpoint)
            .field("to", &self.inner.label)
            .field("shut", &*self.inner.shut.read())
            .finish()
    }
}

impl<T: Pod> LinkSender<T> {
    pub(crate) fn new(
        endpoint: Endpoint,
        label: String,
        input: usize,
        fabric: RouterFabric<T>,
    ) -> Self {
        LinkSender {
            inner: Arc::new(SenderShared {
                endpoint,
                label,
                input,
                fabric,
                shut: RwLock::new(false),
            }),
        }
    }

    /// Sends `segment` (which must live on [`LinkSender::endpoint`]) once `ready` completes.
    ///
    /// Never blocks: the copies are enqueued as receive buffers free up (the first ones on
    /// this thread when the link is idle, the rest by whoever frees a buffer, or by the
    /// link's pump thread).
    /// The returned future resolves, once every packet's copy is enqueued, to an event that
    /// completes when all of them are done (then the source buffer may be reused; until then
    /// it must not be written). An empty segment is accepted and delivers nothing: its future
    /// is ready at once.
    ///
    /// A refused send (after shutdown, a segment on the wrong endpoint, a route the policy
    /// got wrong, or all receivers gone) gives the segment back in the [`SendError`].
    pub fn send(&self, segment: Segment<T>, ready: Event) -> Result<EventFuture, SendError<T>> {
        let inner = &self.inner;
        if segment.endpoint() != inner.endpoint {
            return Err(SendError::new(
                Error::invalid(
                    "segment endpoint",
                    segment.endpoint(),
                    format!(
                        "this sender ({}) sends from {}; send a segment that lives there",
                        inner.label, inner.endpoint
                    ),
                ),
                segment,
            ));
        }
        let shut = inner.shut.read();
        if *shut {
            return Err(SendError::new(
                Error::SendAfterShutdown(inner.label.clone()),
                segment,
            ));
        }
        if segment.is_empty() {
            return Ok(EventFuture::ready(Event::ready()));
        }
        let info = MessageInfo {
            len: segment.len(),
            metadata: segment.metadata(),
            offset: segment.offset(),
            total: segment.total(),
        };
        let route = inner
            .fabric
            .policy
            .route(inner.input, &info, inner.fabric.mux.num_outputs());
        // A route back to the sender's own endpoint would copy a segment onto itself.
        if route.destinations.iter().any(|&d| {
            inner
                .fabric
                .outputs
                .get(d)
                .is_some_and(|o| o.dst() == inner.endpoint)
        }) {
            return Err(SendError::new(Error::SelfLoop(inner.endpoint), segment));
        }
        let (promise, future) = event_promise();
        let job = SendJob {
            segment,
            ready,
            completion: SendCompletion::new(promise),
        };
        if let Err(e) = inner.fabric.mux.dispatch(&route, job) {
            return Err(SendError::new(e.error, e.message.into_segment()));
        }
        drop(shut);
        // The route was checked by `dispatch`: every destination is an output index.
        for &d in &route.destinations {
            if let Some(output) = inner.fabric.outputs.get(d) {
                output.pump_or_ring();
            }
        }
        Ok(future)
    }
}

impl<T> LinkSender<T> {
    /// The endpoint segments are sent from.
    pub fn endpoint(&self) -> Endpoint {
        self.inner.endpoint
    }

    /// Closes this input: later sends fail with [`Error::SendAfterShutdown`]; the receivers
    /// see end-of-stream after all data once every input feeding them is closed. Idempotent.
    pub fn shutdown(&self) {
        self.inner.shutdown();
    }

    /// Whether [`LinkSender::shutdown`] was called.
    pub fn is_shut_down(&self) -> bool {
        *self.inner.shut.read()
    }
}
