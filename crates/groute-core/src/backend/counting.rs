//! A backend wrapper that counts the calls made through the seam.
//!
//! [`CountingBackend`] wraps any backend and counts every stream and event operation
//! (copies, records, stream waits, queries, notifications, synchronisations, host
//! callbacks). Streams and events it hands out forward [`RawStream::as_any`] and
//! [`RawEvent::as_any`] to the wrapped ones, so backend-specific downcasts (host kernels, CUDA
//! launches) keep working. Tests and benchmarks use it to state what a hot path costs in
//! backend calls (on CUDA, one call is one or more driver calls):
//!
//! ```
//! use std::sync::Arc;
//! use groute_core::backend::counting::CountingBackend;
//! use groute_core::backend::host::HostBackend;
//! use groute_core::Context;
//!
//! # fn main() -> groute_core::Result<()> {
//! let counting = CountingBackend::new(Arc::new(HostBackend::new(1, None)?));
//! let counts = counting.counts();
//! let ctx = Context::from_backend(Arc::new(counting), 1, None, None)?;
//! let before = counts.snapshot();
//! ctx.devices()[0].stream().record()?;
//! assert_eq!((counts.snapshot() - before).records, 1);
//! # Ok(())
//! # }
//! ```

use std::any::Any;
use std::fmt;
use std::ops::Sub;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{
    Backend, BackendKind, DeviceProperties, EventKind, MemoryLocation, PhysicalDevice, RawEvent,
    RawMemory, RawSlice, RawStream, StreamPriority,
};
use crate::error::Result;

/// Running totals of the calls made through a [`CountingBackend`].
#[derive(Debug, Default)]
pub struct CallCounts {
    copies: AtomicU64,
    fills: AtomicU64,
    records: AtomicU64,
    stream_waits: AtomicU64,
    host_fns: AtomicU64,
    stream_syncs: AtomicU64,
    queries: AtomicU64,
    notifies: AtomicU64,
    event_syncs: AtomicU64,
}

impl CallCounts {
    fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The totals now.
    pub fn snapshot(&self) -> CallSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CallSnapshot {
            copies: get(&self.copies),
            fills: get(&self.fills),
            records: get(&self.records),
            stream_waits: get(&self.stream_waits),
            host_fns: get(&self.host_fns),
            stream_syncs: get(&self.stream_syncs),
            queries: get(&self.queries),
            notifies: get(&self.notifies),
            event_syncs: get(&self.event_syncs),
        }
    }
}

/// Call totals at one moment; subtract two to get the calls in between.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallSnapshot {
    /// [`RawStream::copy`] calls (and [`RawStream::copy_and_record`] calls, which count as
    /// one copy and one record).
    pub copies: u64,
    /// [`RawStream::fill_u32`] calls.
    pub fills: u64,
    /// [`RawStream::record`] calls.
    pub records: u64,
    /// [`RawStream::wait_event`] calls.
    pub stream_waits: u64,
    /// [`RawStream::host_fn`] calls.
    pub host_fns: u64,
    /// [`RawStream::synchronize`] calls.
    pub stream_syncs: u64,
    /// [`RawEvent::query`] calls.
    pub queries: u64,
    /// [`RawEvent::notify`] calls.
    pub notifies: u64,
    /// [`RawEvent::synchronize`] calls.
    pub event_syncs: u64,
}

impl CallSnapshot {
    /// Calls that enqueue work or order streams (copies, fills, records, stream waits, host
    /// callbacks): what a transfer's hot path costs on the issuing thread.
    pub fn enqueued(&self) -> u64 {
        self.copies + self.fills + self.records + self.stream_waits + self.host_fns
    }

    /// Every counted call.
    pub fn total(&self) -> u64 {
        self.enqueued() + self.stream_syncs + self.queries + self.notifies + self.event_syncs
    }
}

impl Sub for CallSnapshot {
    type Output = CallSnapshot;
    fn sub(self, o: CallSnapshot) -> CallSnapshot {
        CallSnapshot {
            copies: self.copies - o.copies,
            fills: self.fills - o.fills,
            records: self.records - o.records,
            stream_waits: self.stream_waits - o.stream_waits,
            host_fns: self.host_fns - o.host_fns,
            stream_syncs: self.stream_syncs - o.stream_syncs,
            queries: self.queries - o.queries,
            notifies: self.notifies - o.notifies,
            event_syncs: self.event_syncs - o.event_syncs,
        }
    }
}

impl fmt::Display for CallSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} copies, {} records, {} stream waits, {} queries, {} notifies, {} event syncs, \
             {} host fns, {} fills, {} stream syncs",
            self.copies,
            self.records,
            self.stream_waits,
            self.queries,
            self.notifies,
            self.event_syncs,
            self.host_fns,
            self.fills,
            self.stream_syncs
        )
    }
}

/// A backend that forwards to another and counts the calls (see the module docs).
#[derive(Debug)]
pub struct CountingBackend {
    inner: Arc<dyn Backend>,
    counts: Arc<CallCounts>,
}

impl CountingBackend {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Backend>) -> Self {
        CountingBackend {
            inner,
            counts: Arc::new(CallCounts::default()),
        }
    }

    /// The running totals (shared: keep it to read counts after the context takes the
    /// backend).
    pub fn counts(&self) -> Arc<CallCounts> {
        Arc::clone(&self.counts)
    }
}

impl Backend for CountingBackend {
    fn kind(&self) -> BackendKind {
        self.inner.kind()
    }
    fn physical_devices(&self) -> usize {
        self.inner.physical_devices()
    }
    fn properties(&self, device: PhysicalDevice) -> Result<DeviceProperties> {
        self.inner.properties(device)
    }
    fn can_access_peer(&self, from: PhysicalDevice, to: PhysicalDevice) -> bool {
        self.inner.can_access_peer(from, to)
    }
    fn allocate(&self, location: MemoryLocation, bytes: usize) -> Result<Arc<dyn RawMemory>> {
        self.inner.allocate(location, bytes)
    }
    fn create_stream(
        &self,
        device: PhysicalDevice,
        priority: StreamPriority,
    ) -> Result<Arc<dyn RawStream>> {
        Ok(Arc::new(CountingStream {
            inner: self.inner.create_stream(device, priority)?,
            counts: Arc::clone(&self.counts),
        }))
    }
    fn create_event(&self, device: PhysicalDevice, kind: EventKind) -> Result<Arc<dyn RawEvent>> {
        Ok(Arc::new(CountingEvent {
            inner: self.inner.create_event(device, kind)?,
            counts: Arc::clone(&self.counts),
        }))
    }
    fn as_any(&self) -> &dyn Any {
        self.inner.as_any()
    }
}

/// A stream of a [`CountingBackend`].
#[derive(Debug)]
struct CountingStream {
    inner: Arc<dyn RawStream>,
    counts: Arc<CallCounts>,
}

impl RawStream for CountingStream {
    fn device(&self) -> PhysicalDevice {
        self.inner.device()
    }
    fn priority(&self) -> StreamPriority {
        self.inner.priority()
    }
    fn copy(&self, dst: &RawSlice, src: &RawSlice) -> Result<()> {
        CallCounts::bump(&self.counts.copies);
        self.inner.copy(dst, src)
    }
    fn fill_u32(&self, dst: &RawSlice, value: u32) -> Result<()> {
        CallCounts::bump(&self.counts.fills);
        self.inner.fill_u32(dst, value)
    }
    fn record(&self, event: &dyn RawEvent) -> Result<()> {
        CallCounts::bump(&self.counts.records);
        self.inner.record(event)
    }
    fn copy_and_record(&self, dst: &RawSlice, src: &RawSlice, event: &dyn RawEvent) -> Result<()> {
        CallCounts::bump(&self.counts.copies);
        CallCounts::bump(&self.counts.records);
        self.inner.copy_and_record(dst, src, event)
    }
    fn wait_event(&self, event: &dyn RawEvent) -> Result<()> {
        CallCounts::bump(&self.counts.stream_waits);
        self.inner.wait_event(event)
    }
    fn host_fn(&self, callback: Box<dyn FnOnce() + Send>) -> Result<()> {
        CallCounts::bump(&self.counts.host_fns);
        self.inner.host_fn(callback)
    }
    fn synchronize(&self) -> Result<()> {
        CallCounts::bump(&self.counts.stream_syncs);
        self.inner.synchronize()
    }
    fn as_any(&self) -> &dyn Any {
        self.inner.as_any()
    }
}

/// An event of a [`CountingBackend`].
#[derive(Debug)]
struct CountingEvent {
    inner: Arc<dyn RawEvent>,
    counts: Arc<CallCounts>,
}

impl RawEvent for CountingEvent {
    fn device(&self) -> PhysicalDevice {
        self.inner.device()
    }
    fn query(&self) -> Result<bool> {
        CallCounts::bump(&self.counts.queries);
        self.inner.query()
    }
    fn synchronize(&self) -> Result<()> {
        CallCounts::bump(&self.counts.event_syncs);
        self.inner.synchronize()
    }
    fn notify(&self, callback: Box<dyn FnOnce() + Send>) -> Result<()> {
        CallCounts::bump(&self.counts.notifies);
        self.inner.notify(callback)
    }
    fn elapsed_ms_since(&self, start: &dyn RawEvent) -> Result<f32> {
        self.inner.elapsed_ms_since(start)
    }
    fn as_any(&self) -> &dyn Any {
        self.inner.as_any()
    }
}
