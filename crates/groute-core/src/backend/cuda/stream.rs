//! CUDA streams: [`CudaStream`] (the seam's [`RawStream`]), copy routing and the in-flight
//! keep-alive list.
//!
//! # Copy routing
//!
//! A stream of device `X` copies directly (one `cuMemcpyAsync`, or `cuMemcpyPeerAsync` between
//! two devices) when `X` can reach every device involved (it is that device, or peer access is
//! enabled). Otherwise the copy *hops*: an event recorded on this stream orders the copy on the
//! internal transfer stream of a device that can reach both ends, and an event recorded there
//! orders this stream's later work after it. Between two devices with no peer access in either
//! direction the data goes through the stream's pinned host staging ring, pipelined in chunks
//! (see `staged.rs`).
//!
//! # Keep-alive
//!
//! Every operation that takes memory pushes the allocations (and staging buffers) with an
//! internal event recorded right after it onto the stream's in-flight list. Entries are released
//! once their event has completed: checked at every later operation on the stream (copies,
//! fills and kernel launches' keep-alives) and at
//! [`RawStream::synchronize`], and handed to the device's service thread when the stream drops.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;

use super::backend::Shared;
use super::callback::{enqueue_host_fn, in_host_callback};
use super::device::DeviceInner;
use super::event::{CudaEvent, EventHandle};
use super::memory::CudaMemory;
use super::staging::StagingBuffer;
use super::sys;
use crate::backend::{
    EventKind, MemoryLocation, PhysicalDevice, RawEvent, RawMemory, RawSlice, RawStream,
    StreamPriority, downcast,
};
use crate::error::{Error, Result};

type InFlight = (Arc<EventHandle>, Vec<Arc<dyn RawMemory>>);

/// A non-blocking CUDA stream with a priority (the CUDA backend's [`RawStream`]).
pub struct CudaStream {
    device: Arc<DeviceInner>,
    raw: sys::CUstream,
    priority: StreamPriority,
    pub(super) shared: Arc<Shared>,
    /// This stream's staging ring for host-staged copies (`staged.rs`), taken on first use.
    pub(super) staging: Mutex<Option<Arc<StagingBuffer>>>,
    in_flight: Mutex<VecDeque<InFlight>>,
    /// Completed keep-alive events, recorded again by later operations (creating a driver
    /// event per copy cost several microseconds per link packet).
    spare_events: Mutex<Vec<Arc<EventHandle>>>,
}

// SAFETY: a driver stream may be used from any thread; the in-flight list is behind a mutex.
unsafe impl Send for CudaStream {}
// SAFETY: as above.
unsafe impl Sync for CudaStream {}

impl std::fmt::Debug for CudaStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaStream")
            .field("device", &self.device.index)
            .field("priority", &self.priority)
            .finish()
    }
}

/// Completed keep-alive events a stream keeps for reuse.
const MAX_SPARE_EVENTS: usize = 64;

/// Checks that `s` lies inside its allocation and returns its unified address and device.
fn resolve(s: &RawSlice) -> Result<(u64, Option<PhysicalDevice>)> {
    let total = s.memory.len_bytes();
    let end = s.offset.saturating_add(s.len);
    if end > total {
        return Err(Error::OutOfBounds {
            start: s.offset,
            end,
            len: total,
        });
    }
    let m = CudaMemory::from_raw(&*s.memory)?;
    let dev = match s.memory.location() {
        MemoryLocation::Device(d) => Some(d),
        _ => None,
    };
    Ok((m.address() + s.offset as u64, dev))
}

impl CudaStream {
    pub(crate) fn new(
        device: &Arc<DeviceInner>,
        priority: StreamPriority,
        shared: &Arc<Shared>,
    ) -> Result<CudaStream> {
        device.bind()?;
        // SAFETY: the device's context is current.
        let raw =
            unsafe { sys::stream_create(device.priority_value(priority == StreamPriority::High))? };
        Ok(CudaStream {
            device: device.clone(),
            raw,
            priority,
            shared: shared.clone(),
            in_flight: Mutex::new(VecDeque::new()),
            spare_events: Mutex::new(Vec::new()),
            staging: Mutex::new(None),
        })
    }

    /// Downcasts a seam stream to a CUDA stream.
    pub fn from_raw(stream: &dyn RawStream) -> Result<&CudaStream> {
        downcast(
            stream.as_any(),
            "launching CUDA work on a stream of another backend",
            "cuda",
        )
    }

    /// The driver stream (valid while `self` lives).
    pub fn raw(&self) -> sys::CUstream {
        self.raw
    }

    pub(crate) fn device_inner(&self) -> &Arc<DeviceInner> {
        &self.device
    }

    /// Makes this stream's device context current on the calling thread.
    pub fn bind(&self) -> Result<()> {
        self.device.bind()
    }

    /// Keeps `memory` alive until all work enqueued on this stream so far has completed (use
    /// after launching a kernel that reads or writes it). Releases the entries that have
    /// completed first, as every copy does: a stream that only launches kernels (a
    /// connected-components run, for one) would otherwise hold every buffer its kernels ever
    /// touched until its next synchronisation.
    pub fn keep_alive(&self, memory: Vec<Arc<dyn RawMemory>>) -> Result<()> {
        if memory.is_empty() {
            return Ok(());
        }
        self.reclaim();
        let spare = self.spare_events.lock().pop();
        let h = match spare {
            Some(h) => h,
            None => EventHandle::new(&self.device, EventKind::Sync)?,
        };
        // SAFETY: `raw` is a live stream of `h`'s device.
        unsafe { h.record_on(self.raw)? };
        self.in_flight.lock().push_back((h, memory));
        Ok(())
    }

    /// Releases the in-flight entries whose work has completed.
    pub(crate) fn reclaim(&self) {
        let mut done = Vec::new();
        {
            let mut q = self.in_flight.lock();
            while let Some((h, _)) = q.front() {
                if !h.query().unwrap_or(false) {
                    break;
                }
                if let Some(e) = q.pop_front() {
                    done.push(e);
                }
            }
        }
        let mut spare = self.spare_events.lock();
        for (h, memory) in done {
            drop(memory);
            // Reuse only events nothing else holds (a later record must not move a recording
            // someone is still watching).
            if spare.len() < MAX_SPARE_EVENTS && Arc::strong_count(&h) == 1 {
                spare.push(h);
            }
        }
    }

    /// Whether device `from` can address `to`'s memory (itself, or peer access is on).
    pub(super) fn reaches(&self, from: PhysicalDevice, to: PhysicalDevice) -> bool {
        from == to || self.shared.peer[from][to]
    }

    /// One copy on `stream` of device `on`, every end reachable from `on`.
    pub(super) fn direct_copy(
        &self,
        stream: sys::CUstream,
        on: PhysicalDevice,
        dst: (u64, Option<PhysicalDevice>),
        src: (u64, Option<PhysicalDevice>),
        bytes: usize,
    ) -> Result<()> {
        self.shared.devices[on].bind()?;
        match (dst.1, src.1) {
            (Some(t), Some(s)) if t != s => {
                let (tc, sc) = (self.shared.devices[t].ctx, self.shared.devices[s].ctx);
                // SAFETY: both ranges were bounds-checked by `resolve` and are kept alive by the
                // in-flight list; `on` reaches both devices; `stream` is live and of `on`.
                unsafe { sys::memcpy_peer_async(dst.0, tc, src.0, sc, bytes, stream) }
            }
            // SAFETY: as above (same device, or host memory, which every context reaches).
            _ => unsafe { sys::memcpy_async(dst.0, src.0, bytes, stream) },
        }
    }

    /// Runs `op` on the transfer stream of device `on`, ordered after this stream's work so far
    /// and before its later work.
    fn hop(&self, on: PhysicalDevice, op: impl FnOnce(sys::CUstream) -> Result<()>) -> Result<()> {
        let dev = &self.shared.devices[on];
        let t = dev.transfer_stream()?;
        let before = EventHandle::new(&self.device, EventKind::Sync)?;
        // SAFETY: `raw` is a live stream of this stream's device, like `before`.
        unsafe { before.record_on(self.raw)? };
        dev.bind()?;
        // SAFETY: both live; a stream may wait on an event of another context.
        unsafe { sys::stream_wait_event(t, before.raw)? };
        op(t)?;
        let after = EventHandle::new(dev, EventKind::Sync)?;
        // SAFETY: `t` is a live stream of `dev`, like `after`.
        unsafe { after.record_on(t)? };
        self.device.bind()?;
        // SAFETY: both live. Returning the events to their free lists right away is fine: a
        // wait captures the recording at the time of the call.
        unsafe { sys::stream_wait_event(self.raw, after.raw) }
    }

    /// Makes later work on stream `later` (of device `later_dev`) wait for the work enqueued
    /// on stream `earlier` (of device `earlier_dev`) so far.
    pub(super) fn order_after(
        &self,
        (earlier, earlier_dev): (sys::CUstream, PhysicalDevice),
        (later, later_dev): (sys::CUstream, PhysicalDevice),
    ) -> Result<()> {
        let event = EventHandle::new(&self.shared.devices[earlier_dev], EventKind::Sync)?;
        // SAFETY: `earlier` is a live stream of `earlier_dev`, like `event`.
        unsafe { event.record_on(earlier)? };
        self.shared.devices[later_dev].bind()?;
        // SAFETY: both live; a stream may wait on an event of another context. Returning the
        // event to its free list right away is fine: a wait captures the recording at the
        // time of the call.
        unsafe { sys::stream_wait_event(later, event.raw) }
    }

    /// Enqueues a copy, routing it as described in the module docs. Staging buffers it uses
    /// are pushed onto `keep`.
    fn route_copy(
        &self,
        dst: (u64, Option<PhysicalDevice>),
        src: (u64, Option<PhysicalDevice>),
        bytes: usize,
        keep: &mut Vec<Arc<dyn RawMemory>>,
    ) -> Result<()> {
        let x = self.device.index;
        if [dst.1, src.1].iter().flatten().all(|&d| self.reaches(x, d)) {
            return self.direct_copy(self.raw, x, dst, src, bytes);
        }
        match (src.1, dst.1) {
            (Some(s), Some(t)) if self.reaches(s, t) => {
                self.hop(s, |st| self.direct_copy(st, s, dst, src, bytes))
            }
            (Some(s), Some(t)) if self.reaches(t, s) => {
                self.hop(t, |st| self.direct_copy(st, t, dst, src, bytes))
            }
            (Some(s), Some(t)) => self.staged_copy(dst.0, (src.0, s), t, bytes, keep),
            (Some(d), None) | (None, Some(d)) => {
                self.hop(d, |st| self.direct_copy(st, d, dst, src, bytes))
            }
            (None, None) => self.direct_copy(self.raw, x, dst, src, bytes),
        }
    }
}

impl CudaStream {
    /// `event` as a CUDA event of this stream's device (the only kind it may record).
    pub(crate) fn own_event<'a>(&self, event: &'a dyn RawEvent) -> Result<&'a CudaEvent> {
        let e = CudaEvent::from_raw(event)?;
        if e.device() != self.device.index {
            return Err(Error::Unsupported {
                operation: "recording an event on a stream of another device",
                backend: "cuda",
            });
        }
        Ok(e)
    }

    /// Records `e` (an event of this stream's device, see [`CudaStream::own_event`]) after the
    /// operation just enqueued, and keeps `keep` alive until that recording completes.
    pub(crate) fn record_keeping_alive(
        &self,
        e: &CudaEvent,
        keep: Vec<Arc<dyn RawMemory>>,
    ) -> Result<()> {
        // SAFETY: `raw` is a live stream of the event's device (the caller checked it with
        // `own_event`).
        if let Err(err) = unsafe { e.record_on(self.raw) } {
            // The operation is enqueued: its memory must outlive it whatever happens.
            let _ = self.keep_alive(keep);
            return Err(err);
        }
        // The caller's recording doubles as the keep-alive event (one `cuEventRecord` per
        // operation instead of two). Holding its driver event here makes a later recording of
        // `e` move to a fresh driver event, so this entry keeps watching this operation.
        self.in_flight.lock().push_back((e.handle(), keep));
        Ok(())
    }

    /// Whether a kernel on this stream's device may dereference memory at `location`: device
    /// memory of this device or of a peer with access enabled, or mapped host memory.
    pub(crate) fn can_address(&self, location: MemoryLocation) -> bool {
        match location {
            MemoryLocation::Device(d) => self.reaches(self.device.index, d),
            MemoryLocation::MappedHost => true,
            MemoryLocation::PinnedHost => false,
        }
    }

    /// Checks and enqueues a copy; the memory to keep alive until it completes, or `None`
    /// for an empty copy (nothing enqueued).
    fn enqueue_checked_copy(
        &self,
        dst: &RawSlice,
        src: &RawSlice,
    ) -> Result<Option<Vec<Arc<dyn RawMemory>>>> {
        Error::check_same_length("copy", dst.len, src.len)?;
        let (d, s) = (resolve(dst)?, resolve(src)?);
        if dst.len == 0 {
            return Ok(None);
        }
        self.reclaim();
        let mut keep: Vec<Arc<dyn RawMemory>> = vec![dst.memory.clone(), src.memory.clone()];
        self.route_copy(d, s, dst.len, &mut keep)?;
        Ok(Some(keep))
    }
}

impl RawStream for CudaStream {
    fn device(&self) -> PhysicalDevice {
        self.device.index
    }

    fn priority(&self) -> StreamPriority {
        self.priority
    }

    fn copy(&self, dst: &RawSlice, src: &RawSlice) -> Result<()> {
        match self.enqueue_checked_copy(dst, src)? {
            Some(keep) => self.keep_alive(keep),
            None => Ok(()),
        }
    }

    fn fill_u32(&self, dst: &RawSlice, value: u32) -> Result<()> {
        if dst.len % 4 != 0 {
            return Err(Error::invalid(
                "fill length",
                dst.len,
                "fill_u32 needs a length in bytes that is a multiple of 4",
            ));
        }
        let (addr, dev) = resolve(dst)?;
        if dst.len == 0 {
            return Ok(());
        }
        self.reclaim();
        let words = dst.len / 4;
        match dev {
            Some(d) if self.reaches(self.device.index, d) => {
                self.bind()?;
                // SAFETY: bounds-checked range kept alive below; reachable from this stream.
                unsafe { sys::memset_d32_async(addr, value, words, self.raw)? };
            }
            Some(d) => self.hop(d, |st| {
                // SAFETY: as above, on the owning device's transfer stream.
                unsafe { sys::memset_d32_async(addr, value, words, st) }
            })?,
            None => {
                // Host memory: fill from the host, in stream order.
                let addr = addr as usize;
                self.host_fn(Box::new(move || {
                    // SAFETY: the range is inside a live pinned allocation (bounds-checked, kept
                    // alive until this callback has run) and 4-byte aligned (allocations are
                    // page-aligned, offsets of u32 data are multiples of 4; unaligned offsets
                    // are written bytewise).
                    unsafe {
                        let p = addr as *mut u8;
                        for i in 0..words {
                            std::ptr::write_unaligned(p.add(4 * i).cast::<u32>(), value);
                        }
                    }
                }))?;
            }
        }
        self.keep_alive(vec![dst.memory.clone()])
    }

    fn record(&self, event: &dyn RawEvent) -> Result<()> {
        let e = CudaEvent::from_raw(event)?;
        if e.device() != self.device.index {
            return Err(Error::Unsupported {
                operation: "recording an event on a stream of another device",
                backend: "cuda",
            });
        }
        // SAFETY: `raw` is a live stream of the event's device.
        unsafe { e.record_on(self.raw) }
    }

    fn copy_and_record(&self, dst: &RawSlice, src: &RawSlice, event: &dyn RawEvent) -> Result<()> {
        let e = self.own_event(event)?;
        let Some(keep) = self.enqueue_checked_copy(dst, src)? else {
            return self.record(event);
        };
        self.record_keeping_alive(e, keep)
    }

    fn wait_event(&self, event: &dyn RawEvent) -> Result<()> {
        let h = CudaEvent::from_raw(event)?.handle();
        self.bind()?;
        // SAFETY: both live; cross-device waits are allowed.
        unsafe { sys::stream_wait_event(self.raw, h.raw) }
    }

    fn host_fn(&self, callback: Box<dyn FnOnce() + Send>) -> Result<()> {
        self.bind()?;
        // SAFETY: `raw` is live and its context is current.
        unsafe { enqueue_host_fn(self.raw, callback) }
    }

    fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: `raw` is live.
        unsafe { sys::stream_synchronize(self.raw)? };
        // Every entry queued before the synchronisation has completed and is released; an
        // entry another thread queued meanwhile may not have (draining the whole list would
        // free its memory under a copy still running), so the entries go by their events.
        self.reclaim();
        Ok(())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for CudaStream {
    fn drop(&mut self) {
        self.reclaim();
        let rest: Vec<InFlight> = self.in_flight.get_mut().drain(..).collect();
        if let Some((last, _)) = rest.last() {
            // Entries complete in order: release them all when the last one has.
            let last = last.clone();
            self.device
                .watcher
                .watch(last, Box::new(move || drop(rest)));
        }
        let raw = self.raw as usize;
        let device = self.device.clone();
        let destroy = move || {
            if device.bind().is_ok() {
                // SAFETY: the stream is used by nothing else; enqueued work still completes.
                let _ = unsafe { sys::stream_destroy(raw as sys::CUstream) };
            }
        };
        if in_host_callback() {
            self.device.watcher.defer(Box::new(destroy));
        } else {
            destroy();
        }
    }
}
