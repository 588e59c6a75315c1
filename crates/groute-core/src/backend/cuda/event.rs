//! CUDA events: [`CudaEvent`] (the seam's [`RawEvent`]) over recycled driver events.
//!
//! A `CudaEvent` points at one driver event at a time. `notify` keeps an `Arc` to that driver
//! event until the watched recording completes; if the `CudaEvent` is recorded again while a
//! notification is still pending, the new recording goes to a fresh driver event, so a pending
//! notification always watches exactly the recording it was asked about (even when the event
//! is re-recorded on another stream).

use std::any::Any;
use std::sync::Arc;

use parking_lot::Mutex;

use super::device::DeviceInner;
use super::sys;
use crate::backend::{EventKind, PhysicalDevice, RawEvent, downcast};
use crate::error::{Error, Result};

/// One driver event, returned to its device's free list on drop.
pub(crate) struct EventHandle {
    pub(crate) raw: sys::CUevent,
    kind: EventKind,
    pub(crate) device: Arc<DeviceInner>,
}

// SAFETY: a driver event may be queried, recorded and waited on from any thread.
unsafe impl Send for EventHandle {}
// SAFETY: as above; the handle has no interior mutability.
unsafe impl Sync for EventHandle {}

impl EventHandle {
    /// Takes a driver event of `kind` from `device`'s free list (or creates one).
    pub(crate) fn new(device: &Arc<DeviceInner>, kind: EventKind) -> Result<Arc<EventHandle>> {
        let raw = device.take_event(kind)?;
        Ok(Arc::new(EventHandle {
            raw,
            kind,
            device: device.clone(),
        }))
    }

    /// True once the most recent recording has completed.
    pub(crate) fn query(&self) -> Result<bool> {
        // SAFETY: `raw` is live while `self` is.
        unsafe { sys::event_query(self.raw) }
    }

    /// Records this driver event on `stream` (of the same device).
    ///
    /// # Safety
    /// `stream` is a live stream of `self.device`.
    pub(crate) unsafe fn record_on(&self, stream: sys::CUstream) -> Result<()> {
        self.device.bind()?;
        // SAFETY: caller's guarantee for `stream`; `raw` is live and of the same context.
        unsafe { sys::event_record(self.raw, stream) }
    }
}

impl Drop for EventHandle {
    fn drop(&mut self) {
        // A free-list push, no driver call: safe inside host callbacks too.
        self.device.return_event(self.kind, self.raw);
    }
}

/// A CUDA event (the CUDA backend's [`RawEvent`]).
pub struct CudaEvent {
    device: Arc<DeviceInner>,
    kind: EventKind,
    current: Mutex<Arc<EventHandle>>,
}

impl std::fmt::Debug for CudaEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaEvent")
            .field("device", &self.device.index)
            .field("kind", &self.kind)
            .finish()
    }
}

impl CudaEvent {
    pub(crate) fn new(device: &Arc<DeviceInner>, kind: EventKind) -> Result<CudaEvent> {
        Ok(CudaEvent {
            device: device.clone(),
            kind,
            current: Mutex::new(EventHandle::new(device, kind)?),
        })
    }

    /// Downcasts a seam event to a CUDA event.
    pub fn from_raw(event: &dyn RawEvent) -> Result<&CudaEvent> {
        downcast(event.as_any(), "using an event of another backend", "cuda")
    }

    /// The driver event holding the most recent recording.
    pub(crate) fn handle(&self) -> Arc<EventHandle> {
        self.current.lock().clone()
    }

    /// The raw driver event of the most recent recording (for timing and ordering calls).
    pub fn raw(&self) -> sys::CUevent {
        self.current.lock().raw
    }

    /// Records on `stream` (a live stream of this event's device).
    ///
    /// # Safety
    /// `stream` is a live stream of this event's device.
    pub(crate) unsafe fn record_on(&self, stream: sys::CUstream) -> Result<()> {
        let mut cur = self.current.lock();
        if Arc::strong_count(&cur) > 1 {
            // A notification still watches the previous recording: leave it that driver event.
            *cur = EventHandle::new(&self.device, self.kind)?;
        }
        // SAFETY: caller's guarantee.
        unsafe { cur.record_on(stream) }
    }
}

impl RawEvent for CudaEvent {
    fn device(&self) -> PhysicalDevice {
        self.device.index
    }

    fn query(&self) -> Result<bool> {
        self.handle().query()
    }

    fn synchronize(&self) -> Result<()> {
        let h = self.handle();
        // SAFETY: `h.raw` is live while `h` is.
        unsafe { sys::event_synchronize(h.raw) }
    }

    fn notify(&self, callback: Box<dyn FnOnce() + Send>) -> Result<()> {
        let h = self.handle();
        if h.query()? {
            callback();
            return Ok(());
        }
        self.device.watcher.watch(h, callback);
        Ok(())
    }

    fn elapsed_ms_since(&self, start: &dyn RawEvent) -> Result<f32> {
        let start = CudaEvent::from_raw(start)?;
        if self.kind != EventKind::Timing || start.kind != EventKind::Timing {
            return Err(Error::Unsupported {
                operation: "elapsed time between events created without EventKind::Timing",
                backend: "cuda",
            });
        }
        let (s, e) = (start.handle(), self.handle());
        // SAFETY: both driver events are live while their handles are.
        unsafe { sys::event_elapsed_ms(s.raw, e.raw) }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
