//! Events, event pools and event futures.
//!
//! - [`Event`]: a recorded marker (or a group of them). Complete once all the work enqueued
//!   before each recording has completed. Clone it freely; a stream can wait on it without
//!   blocking the host ([`crate::Stream::wait`]), the host can block on it ([`Event::wait`])
//!   or await it ([`Event::completion`]).
//! - [`EventPool`]: pre-allocated backend events, recycled when the last [`Event`] handle to
//!   a recording drops.
//! - [`EventFuture`]: the paper's *event future*, an event that will be recorded later (a
//!   link's `send` returns one: it resolves once the copies are enqueued, to an event that
//!   completes when the source buffer may be reused).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use parking_lot::Mutex;

use crate::backend::{Backend, EventKind, PhysicalDevice, RawEvent, RawStream};
use crate::error::{Error, Result};
use crate::sync::{Oneshot, OneshotSender, oneshot};

/// One recording of a pooled backend event; returns the event to its pool on drop.
struct Recording {
    raw: Option<Arc<dyn RawEvent>>,
    pool: Weak<PoolInner>,
}

impl Recording {
    fn raw(&self) -> &Arc<dyn RawEvent> {
        self.raw
            .as_ref()
            .expect("recording holds its event until drop")
    }
}

impl Drop for Recording {
    /// Returns the event to its pool once this recording has *completed*, not before: a
    /// stream wait enqueued earlier still refers to this recording, and re-recording the
    /// event elsewhere first could satisfy that wait early (the host backend completes
    /// generations as a high-water mark; CUDA is safe either way).
    fn drop(&mut self) {
        let Some(raw) = self.raw.take() else {
            return;
        };
        let pool = self.pool.clone();
        let event = Arc::clone(&raw);
        let give_back = Box::new(move || {
            if let Some(pool) = pool.upgrade() {
                pool.free.lock().push(event);
            }
        });
        // If the backend cannot notify, the event is simply not reused (the pool makes a
        // new one when it runs dry).
        let _ = raw.notify(give_back);
    }
}

/// A recorded event, or a group of recorded events (complete when all are), or the event
/// that is already complete ([`Event::ready`]).
#[derive(Clone)]
pub struct Event {
    parts: Arc<[Arc<Recording>]>,
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("parts", &self.parts.len())
            .finish()
    }
}

impl Default for Event {
    fn default() -> Self {
        Self::ready()
    }
}

impl Event {
    /// An event that is already complete.
    pub fn ready() -> Self {
        Event {
            parts: Arc::from(Vec::new()),
        }
    }

    /// An event complete when every event in `events` is.
    pub fn join<'a>(events: impl IntoIterator<Item = &'a Event>) -> Self {
        let mut parts: Vec<Arc<Recording>> = Vec::new();
        for e in events {
            for p in e.parts.iter() {
                if !parts.iter().any(|q| Arc::ptr_eq(p, q)) {
                    parts.push(Arc::clone(p));
                }
            }
        }
        Event {
            parts: Arc::from(parts),
        }
    }

    /// Whether every recording of `self` is also one of `other`'s (so anything ordered after
    /// `other` is ordered after `self`; the ready event is covered by every event).
    pub(crate) fn is_covered_by(&self, other: &Event) -> bool {
        self.parts
            .iter()
            .all(|p| other.parts.iter().any(|q| Arc::ptr_eq(p, q)))
    }

    /// Whether this is the trivially complete event.
    pub fn is_ready_event(&self) -> bool {
        self.parts.is_empty()
    }

    /// Whether every part has completed (never blocks).
    pub fn is_complete(&self) -> Result<bool> {
        for p in self.parts.iter() {
            if !p.raw().query()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Blocks the calling thread until the event has completed.
    pub fn wait(&self) -> Result<()> {
        for p in self.parts.iter() {
            p.raw().synchronize()?;
        }
        Ok(())
    }

    /// Calls `callback` (on some runtime thread; it must not block) once complete.
    pub fn on_complete(&self, callback: impl FnOnce() + Send + 'static) -> Result<()> {
        if self.parts.is_empty() {
            callback();
            return Ok(());
        }
        let remaining = Arc::new(AtomicUsize::new(self.parts.len()));
        let callback = Arc::new(Mutex::new(Some(callback)));
        for p in self.parts.iter() {
            let remaining = Arc::clone(&remaining);
            let callback = Arc::clone(&callback);
            p.raw().notify(Box::new(move || {
                if remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                    if let Some(cb) = callback.lock().take() {
                        cb();
                    }
                }
            }))?;
        }
        Ok(())
    }

    /// A future that resolves once the event has completed.
    pub fn completion(&self) -> EventCompletion {
        let (tx, rx) = oneshot::<()>();
        let registered = self.on_complete(move || tx.send(()));
        EventCompletion {
            rx,
            error: registered.err(),
            event: self.clone(),
        }
    }

    /// Milliseconds between two completed [`EventKind::Timing`] events of one device.
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32> {
        match (start.parts.first(), end.parts.first()) {
            (Some(s), Some(e)) if start.parts.len() == 1 && end.parts.len() == 1 => {
                e.raw().elapsed_ms_since(s.raw().as_ref())
            }
            _ => Err(Error::invalid(
                "event",
                "group or ready event",
                "elapsed time needs two single recorded timing events",
            )),
        }
    }

    /// [`Event::elapsed_ms`] as a [`Duration`], refusing a negative or non-finite time (a
    /// bug, reported as one).
    pub fn elapsed(start: &Event, end: &Event) -> Result<Duration> {
        let ms = Event::elapsed_ms(start, end)?;
        if !ms.is_finite() || ms < 0.0 {
            return Err(Error::invalid(
                "device timing",
                ms,
                "device events gave a negative or non-finite time; report this as a bug",
            ));
        }
        Ok(Duration::from_secs_f64(f64::from(ms) / 1e3))
    }

    /// The longest [`Event::elapsed`] of `spans` (start, end), each pair of one device: the
    /// time of a run on several devices, whose events cannot be compared across devices, is
    /// its slowest device's. Zero for no spans.
    pub fn longest_span(spans: &[(Event, Event)]) -> Result<Duration> {
        spans
            .iter()
            .try_fold(Duration::ZERO, |longest, (start, end)| {
                Ok(longest.max(Event::elapsed(start, end)?))
            })
    }

    /// The backend events (for stream waits).
    pub(crate) fn raw_parts(&self) -> impl Iterator<Item = &Arc<dyn RawEvent>> {
        self.parts.iter().map(|p| p.raw())
    }
}

/// Future returned by [`Event::completion`].
#[must_use = "futures do nothing unless awaited"]
pub struct EventCompletion {
    rx: Oneshot<()>,
    error: Option<Error>,
    event: Event,
}

impl fmt::Debug for EventCompletion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventCompletion").finish_non_exhaustive()
    }
}

impl Future for EventCompletion {
    type Output = Result<()>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Result<()>> {
        if let Some(e) = self.error.take() {
            return Poll::Ready(Err(e));
        }
        match self.rx.poll_recv(cx) {
            // Completion (or a dropped notifier): surface any backend error through a query.
            Poll::Ready(_) => Poll::Ready(self.event.is_complete().map(|_| ())),
            Poll::Pending => Poll::Pending,
        }
    }
}

struct PoolInner {
    backend: Arc<dyn Backend>,
    device: PhysicalDevice,
    kind: EventKind,
    free: Mutex<Vec<Arc<dyn RawEvent>>>,
    created: AtomicUsize,
}

/// Pre-allocated backend events of one device, recycled after use.
#[derive(Clone)]
pub struct EventPool {
    inner: Arc<PoolInner>,
}

impl fmt::Debug for EventPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventPool")
            .field("device", &self.inner.device)
            .field("created", &self.created())
            .field("free", &self.inner.free.lock().len())
            .finish()
    }
}

impl EventPool {
    /// A pool of `kind` events on physical `device`, with `preallocate` events made now.
    pub fn new(
        backend: Arc<dyn Backend>,
        device: PhysicalDevice,
        kind: EventKind,
        preallocate: usize,
    ) -> Result<Self> {
        let mut free = Vec::with_capacity(preallocate);
        for _ in 0..preallocate {
            free.push(backend.create_event(device, kind)?);
        }
        Ok(EventPool {
            inner: Arc::new(PoolInner {
                backend,
                device,
                kind,
                created: AtomicUsize::new(preallocate),
                free: Mutex::new(free),
            }),
        })
    }

    /// Events created so far (in use or free).
    pub fn created(&self) -> usize {
        self.inner.created.load(Ordering::Relaxed)
    }

    /// Records an event of the pool on `stream` (which must belong to the pool's device).
    pub fn record(&self, stream: &dyn RawStream) -> Result<Event> {
        self.record_with(|raw| stream.record(raw))
    }

    /// Takes an event of the pool and has `record` record it (on a stream of the pool's
    /// device), e.g. right after a copy ([`RawStream::copy_and_record`]).
    pub(crate) fn record_with(
        &self,
        record: impl FnOnce(&dyn RawEvent) -> Result<()>,
    ) -> Result<Event> {
        let raw = match self.inner.free.lock().pop() {
            Some(e) => e,
            None => {
                self.inner.created.fetch_add(1, Ordering::Relaxed);
                self.inner
                    .backend
                    .create_event(self.inner.device, self.inner.kind)?
            }
        };
        let recording = Recording {
            raw: Some(raw),
            pool: Arc::downgrade(&self.inner),
        };
        record(recording.raw().as_ref())?;
        Ok(Event {
            parts: Arc::from(vec![Arc::new(recording)]),
        })
    }
}

/// An event that will be recorded later: resolves to the [`Event`] once it exists.
#[must_use = "an EventFuture says when a buffer may be reused; wait on it"]
pub struct EventFuture {
    state: FutureState,
}

enum FutureState {
    Ready(Option<Result<Event>>),
    Pending(Oneshot<Result<Event>>),
}

impl fmt::Debug for EventFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventFuture").finish_non_exhaustive()
    }
}

/// The producing side of an [`EventFuture`].
#[derive(Debug)]
pub struct EventPromise {
    tx: OneshotSender<Result<Event>>,
}

impl EventPromise {
    /// Resolves the future with `event`.
    pub fn fulfill(self, event: Event) {
        self.tx.send(Ok(event));
    }

    /// Resolves the future with an error.
    pub fn fail(self, error: Error) {
        self.tx.send(Err(error));
    }
}

/// A connected promise/future pair.
pub fn event_promise() -> (EventPromise, EventFuture) {
    let (tx, rx) = oneshot();
    (
        EventPromise { tx },
        EventFuture {
            state: FutureState::Pending(rx),
        },
    )
}

impl EventFuture {
    /// A future already resolved to `event`.
    pub fn ready(event: Event) -> Self {
        EventFuture {
            state: FutureState::Ready(Some(Ok(event))),
        }
    }

    /// Blocks until the event exists (not until it completes: see [`Event::wait`]).
    pub fn get(self) -> Result<Event> {
        match self.state {
            FutureState::Ready(v) => v.unwrap_or_else(|| Ok(Event::ready())),
            FutureState::Pending(rx) => rx
                .recv_blocking()
                .unwrap_or_else(|| Err(Error::Disconnected("event promise".into()))),
        }
    }

    /// Blocks until the event exists and has completed.
    pub fn wait(self) -> Result<()> {
        self.get()?.wait()
    }
}

impl Future for EventFuture {
    type Output = Result<Event>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Result<Event>> {
        match &mut self.state {
            FutureState::Ready(v) => Poll::Ready(v.take().unwrap_or_else(|| Ok(Event::ready()))),
            FutureState::Pending(rx) => match rx.poll_recv(cx) {
                Poll::Ready(Some(v)) => Poll::Ready(v),
                Poll::Ready(None) => Poll::Ready(Err(Error::Disconnected("event promise".into()))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}
