//! One queued send: the segment, the event after which it is valid, and how to report back.
//!
//! A send that a router broadcasts becomes several jobs (one per destination) sharing one
//! [`SendCompletion`]: the sender's [`EventFuture`](crate::EventFuture) resolves once every
//! copy has been enqueued, to the join of their events. A job dropped before it completes
//! (its output went away) fails the sender's future instead of leaving it pending forever.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use crate::error::Error;
use crate::event::{Event, EventPromise};
use crate::segment::Segment;

/// A send refused by a link or router: the error and the segment, given back.
///
/// Boxed, so that `Result<EventFuture, SendError<T>>` stays small on the success path.
pub struct SendError<T>(Box<(Error, Segment<T>)>);

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendError")
            .field("error", &self.0.0)
            .field("segment", &self.0.1)
            .finish()
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.0, f)
    }
}

impl<T> std::error::Error for SendError<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0.0)
    }
}

impl<T> From<SendError<T>> for Error {
    /// Drops the segment, keeping the error (so `?` works in functions returning
    /// [`crate::Result`]).
    fn from(e: SendError<T>) -> Self {
        e.0.0
    }
}

impl<T> SendError<T> {
    pub(crate) fn new(error: Error, segment: Segment<T>) -> Self {
        SendError(Box::new((error, segment)))
    }

    /// Why the send was refused.
    pub fn error(&self) -> &Error {
        &self.0.0
    }

    /// The segment that was not sent.
    pub fn segment(&self) -> &Segment<T> {
        &self.0.1
    }

    /// Takes the segment back.
    pub fn into_segment(self) -> Segment<T> {
        self.0.1
    }

    /// Splits into the error and the segment.
    pub fn into_parts(self) -> (Error, Segment<T>) {
        let (e, s) = *self.0;
        (e, s)
    }
}

/// What the parts of one send report into.
struct CompletionState {
    /// Parts still outstanding (incremented by every clone, decremented by every finish).
    remaining: AtomicUsize,
    events: Mutex<Vec<Event>>,
    error: Mutex<Option<Error>>,
    promise: Mutex<Option<EventPromise>>,
}

/// One part of a send's completion; finishing the last part resolves the sender's future.
pub(crate) struct SendCompletion {
    state: Arc<CompletionState>,
    finished: bool,
}

impl SendCompletion {
    pub(crate) fn new(promise: EventPromise) -> Self {
        SendCompletion {
            state: Arc::new(CompletionState {
                remaining: AtomicUsize::new(1),
                events: Mutex::new(Vec::new()),
                error: Mutex::new(None),
                promise: Mutex::new(Some(promise)),
            }),
            finished: false,
        }
    }

    /// Reports this part: the event after which its copies are done, or why it failed.
    pub(crate) fn finish(mut self, outcome: Result<Event, Error>) {
        self.report(outcome);
    }

    /// Marks the part finished without reporting (the send is being handed back).
    fn defuse(&mut self) {
        self.finished = true;
    }

    fn report(&mut self, outcome: Result<Event, Error>) {
        if self.finished {
            return;
        }
        self.finished = true;
        match outcome {
            Ok(event) => self.state.events.lock().push(event),
            Err(error) => {
                let mut slot = self.state.error.lock();
                if slot.is_none() {
                    *slot = Some(error);
                }
            }
        }
        if self.state.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            let Some(promise) = self.state.promise.lock().take() else {
                return;
            };
            match self.state.error.lock().take() {
                Some(error) => promise.fail(error),
                None => promise.fulfill(Event::join(self.state.events.lock().iter())),
            }
        }
    }
}

impl Clone for SendCompletion {
    /// A further part of the same send (for broadcast copies). Every clone must be made
    /// before any part finishes.
    fn clone(&self) -> Self {
        self.state.remaining.fetch_add(1, Ordering::AcqRel);
        SendCompletion {
            state: Arc::clone(&self.state),
            finished: false,
        }
    }
}

impl Drop for SendCompletion {
    fn drop(&mut self) {
        self.report(Err(Error::Disconnected(
            "a link output (its receivers were dropped before the send was copied)".into(),
        )));
    }
}

/// One send queued for a link output.
pub(crate) struct SendJob<T> {
    pub(crate) segment: Segment<T>,
    pub(crate) ready: Event,
    pub(crate) completion: SendCompletion,
}

impl<T: bytemuck::Pod> Clone for SendJob<T> {
    fn clone(&self) -> Self {
        SendJob {
            segment: self.segment.clone(),
            ready: self.ready.clone(),
            completion: self.completion.clone(),
        }
    }
}

impl<T> SendJob<T> {
    /// Gives the segment back without resolving the sender's future (the caller reports the
    /// failure synchronously instead).
    pub(crate) fn into_segment(mut self) -> Segment<T> {
        self.completion.defuse();
        self.segment
    }
}
