//! The host backend: devices are executor threads, memory is separate heap blocks, streams
//! are ordered queues, events are completion flags and kernels are Rust closures (which
//! parallelise themselves with rayon).
//!
//! It runs every test on machines without GPUs and is the default when no GPU is present.
//! It keeps the asynchrony of the real thing: work on different streams completes out of
//! order, copies are real copies between separate allocations, and [`Jitter`] randomises
//! the schedule to shake out races in the control plane.
//!
//! Host waits on events (and so on streams) are watched: a wait fails with
//! [`Error::DeviceStalled`] once the stream that records the event (and the streams it waits
//! on) made no progress across two checks a stall timeout apart ([`DEFAULT_STALL_TIMEOUT`]),
//! and with [`Error::DeviceFailed`] once the
//! device failed (a kernel panicked). [`FaultPlan`] injects such faults for tests.

mod event;
mod executor;
mod faults;
mod jitter;
mod memory;

use std::any::Any;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;

pub use self::event::HostEvent;
use self::executor::{Executor, Op};
#[doc(hidden)]
pub use self::faults::{Fault, FaultPlan};
pub use self::jitter::Jitter;
pub use self::memory::HostMemory;
use super::{
    Backend, BackendKind, DeviceProperties, EventKind, MemoryLocation, PhysicalDevice, RawEvent,
    RawMemory, RawSlice, RawStream, StreamPriority, downcast,
};
use crate::error::{Error, Result};

/// How long a host wait lets the stream it waits on make no progress before it fails with
/// [`Error::DeviceStalled`], unless the context sets another
/// ([`crate::ContextBuilder::stall_timeout`]): long enough that no working device, however
/// loaded the machine, goes that long without finishing an operation it started.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The host backend (see the module docs).
#[derive(Debug)]
pub struct HostBackend {
    executors: Vec<Arc<Executor>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    jitter: Option<Jitter>,
    stall_timeout: Option<Duration>,
    /// The injected faults (`None` when there are none).
    faults: Option<Arc<FaultPlan>>,
}

impl HostBackend {
    /// A host backend with `devices` executor devices, optionally jittered, its waits
    /// watched with [`DEFAULT_STALL_TIMEOUT`].
    pub fn new(devices: usize, jitter: Option<Jitter>) -> Result<Self> {
        Self::with_faults(
            devices,
            jitter,
            Some(DEFAULT_STALL_TIMEOUT),
            FaultPlan::new(),
        )
    }

    /// [`HostBackend::new`] with a stall timeout (`None`: waits never time out) and injected
    /// faults.
    #[doc(hidden)]
    pub fn with_faults(
        devices: usize,
        jitter: Option<Jitter>,
        stall_timeout: Option<Duration>,
        faults: FaultPlan,
    ) -> Result<Self> {
        crate::context::check_device_count(devices)?;
        let faults = (!faults.is_empty()).then(|| Arc::new(faults));
        let mut backend = HostBackend {
            executors: Vec::new(),
            threads: Mutex::new(Vec::new()),
            jitter,
            stall_timeout,
            faults,
        };
        for d in 0..devices {
            let device_faults = backend
                .faults
                .as_ref()
                .map(|f| f.for_device(d))
                .unwrap_or_default();
            // On an error, dropping `backend` stops and joins the executors already started.
            let (exec, thread) = Executor::start(d, jitter, device_faults)?;
            backend.executors.push(exec);
            backend.threads.lock().push(thread);
        }
        Ok(backend)
    }

    /// The jitter settings, if any.
    pub fn jitter(&self) -> Option<Jitter> {
        self.jitter
    }

    /// The stall timeout of host waits (`None`: they never time out).
    pub fn stall_timeout(&self) -> Option<Duration> {
        self.stall_timeout
    }

    fn executor(&self, device: PhysicalDevice) -> Result<&Arc<Executor>> {
        self.executors.get(device).ok_or(Error::NoSuchDevice {
            device,
            count: self.executors.len(),
        })
    }
}

impl Drop for HostBackend {
    fn drop(&mut self) {
        for e in &self.executors {
            e.shutdown();
        }
        for t in self.threads.lock().drain(..) {
            let _ = t.join();
        }
    }
}

impl Backend for HostBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Host
    }

    fn physical_devices(&self) -> usize {
        self.executors.len()
    }

    fn properties(&self, device: PhysicalDevice) -> Result<DeviceProperties> {
        self.executor(device)?;
        Ok(DeviceProperties {
            name: format!("host executor {device}"),
            total_memory: 1 << 34,
            multiprocessors: rayon::current_num_threads() as u32,
            compute_capability: (0, 0),
            l2_cache_bytes: 0,
            shared_memory_per_block_optin: 0,
        })
    }

    fn can_access_peer(&self, from: PhysicalDevice, to: PhysicalDevice) -> bool {
        from < self.executors.len() && to < self.executors.len()
    }

    fn allocate(&self, location: MemoryLocation, bytes: usize) -> Result<Arc<dyn RawMemory>> {
        if let MemoryLocation::Device(d) = location {
            self.executor(d)?;
        }
        Ok(Arc::new(HostMemory::new(location, bytes)?))
    }

    fn create_stream(
        &self,
        device: PhysicalDevice,
        priority: StreamPriority,
    ) -> Result<Arc<dyn RawStream>> {
        let exec = Arc::clone(self.executor(device)?);
        let index = exec.add_stream(priority);
        let sync_event = HostEvent::new(device, self.stall_timeout);
        Ok(Arc::new(HostStream {
            exec,
            index,
            priority,
            sync_event,
            faults: self.faults.clone(),
        }))
    }

    fn create_event(&self, device: PhysicalDevice, _kind: EventKind) -> Result<Arc<dyn RawEvent>> {
        self.executor(device)?;
        Ok(HostEvent::new(device, self.stall_timeout))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A stream of the host backend: one ordered queue of an executor.
#[derive(Debug)]
pub struct HostStream {
    exec: Arc<Executor>,
    index: usize,
    priority: StreamPriority,
    sync_event: Arc<HostEvent>,
    faults: Option<Arc<FaultPlan>>,
}

impl HostStream {
    /// Enqueues a host kernel: `kernel` runs on the device's executor, in stream order, and
    /// may use rayon to parallelise itself. Buffers it uses must be captured by value (their
    /// handles keep the memory alive).
    pub fn launch(&self, kernel: impl FnOnce() + Send + 'static) {
        self.exec.enqueue(self.index, Op::Run(Box::new(kernel)));
    }
}

fn host_event(event: &dyn RawEvent) -> Result<Arc<HostEvent>> {
    // Events are always handed around as `Arc<dyn RawEvent>`; we need our own `Arc` to keep
    // the event alive inside queued operations, so we go through a registry-free trick:
    // `HostEvent` values are only ever created inside `Arc`s, and `as_any` gives the
    // reference whose address we re-wrap with a fresh strong count.
    let host: &HostEvent = downcast(
        event.as_any(),
        "waiting on an event of another backend",
        "host",
    )?;
    // SAFETY: every `HostEvent` lives inside an `Arc` (its only constructor returns one), so
    // `host` points into an `Arc` allocation; incrementing the strong count and rebuilding an
    // `Arc` from that pointer yields a second owning handle.
    unsafe {
        let ptr = host as *const HostEvent;
        Arc::increment_strong_count(ptr);
        Ok(Arc::from_raw(ptr))
    }
}

impl RawStream for HostStream {
    fn device(&self) -> PhysicalDevice {
        self.exec.device
    }

    fn priority(&self) -> StreamPriority {
        self.priority
    }

    fn copy(&self, dst: &RawSlice, src: &RawSlice) -> Result<()> {
        Error::check_same_length("copy", dst.len, src.len)?;
        let (dst, src) = (dst.clone(), src.clone());
        let (Some(_), Some(_)) = (dst.host_ptr(), src.host_ptr()) else {
            return Err(Error::Unsupported {
                operation: "copying memory of another backend",
                backend: "host",
            });
        };
        if let Some(faults) = &self.faults {
            if let (MemoryLocation::Device(from), MemoryLocation::Device(to)) =
                (src.memory.location(), dst.memory.location())
            {
                if faults.stalls_copy(from, to) {
                    self.exec.enqueue(self.index, Op::Stall);
                }
            }
        }
        self.exec.enqueue(
            self.index,
            Op::Run(Box::new(move || {
                let (Some(d), Some(s)) = (dst.host_ptr(), src.host_ptr()) else {
                    return;
                };
                // SAFETY: both ranges lie inside live allocations (the `RawSlice`s captured
                // here keep them alive and their bounds were checked at construction); the
                // stream/event protocol orders this copy against every other access, and
                // `copy` (memmove) tolerates overlap within one allocation.
                unsafe { std::ptr::copy(s.as_ptr(), d.as_ptr(), src.len) };
            })),
        );
        Ok(())
    }

    fn fill_u32(&self, dst: &RawSlice, value: u32) -> Result<()> {
        if dst.len % 4 != 0 {
            return Err(Error::invalid(
                "fill length",
                dst.len,
                "must be a multiple of 4 bytes",
            ));
        }
        let dst = dst.clone();
        if dst.host_ptr().is_none() {
            return Err(Error::Unsupported {
                operation: "filling memory of another backend",
                backend: "host",
            });
        }
        self.exec.enqueue(
            self.index,
            Op::Run(Box::new(move || {
                let Some(d) = dst.host_ptr() else { return };
                let words = dst.len / 4;
                // SAFETY: the slice lies inside a live allocation (kept alive by `dst`),
                // is 4-byte aligned (allocations are 256-byte aligned and typed slices
                // keep element alignment) and the stream protocol gives us exclusive access.
                let s = unsafe { std::slice::from_raw_parts_mut(d.as_ptr() as *mut u32, words) };
                s.fill(value);
            })),
        );
        Ok(())
    }

    fn record(&self, event: &dyn RawEvent) -> Result<()> {
        let ev = host_event(event)?;
        let generation = ev.begin_record(&self.exec, self.index);
        self.exec.enqueue(self.index, Op::Record(ev, generation));
        Ok(())
    }

    fn wait_event(&self, event: &dyn RawEvent) -> Result<()> {
        let ev = host_event(event)?;
        let generation = ev.current_generation();
        if generation > 0 {
            self.exec.enqueue(self.index, Op::Wait(ev, generation));
        }
        Ok(())
    }

    fn host_fn(&self, callback: Box<dyn FnOnce() + Send>) -> Result<()> {
        self.exec.enqueue(self.index, Op::Run(callback));
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        self.record(self.sync_event.as_ref())?;
        self.sync_event.synchronize()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
