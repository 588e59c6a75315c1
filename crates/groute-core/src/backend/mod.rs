//! The backend seam: the only things a backend provides.
//!
//! Everything above this module (links, routers, policies, worklist control, termination,
//! priority thresholds, solvers) is written once against these traits. A backend provides
//! device memory, host staging memory, streams, events, copies and a way to run work in
//! stream order; kernels are launched by the algorithm crates through the backend-specific
//! handles reachable with [`RawStream::as_any`] (a [`host::HostStream`] runs Rust closures, a
//! CUDA stream launches NVRTC-compiled kernels).
//!
//! The traits are byte-level and object-safe so that a [`crate::Context`] can hold any
//! backend behind an `Arc<dyn Backend>`; the typed layer ([`crate::Buffer`],
//! [`crate::Stream`], [`crate::Event`]) sits on top.
//!
//! # Contract every backend keeps
//!
//! - Operations enqueued on one stream run in enqueue order; operations on different streams
//!   may run in any order and overlap, except where ordered by [`RawStream::wait_event`].
//! - [`RawStream::wait_event`] orders against the recording of the event that was most
//!   recently *enqueued* at the time of the call (CUDA semantics); waiting on an event that
//!   was never recorded is a no-op.
//! - Memory handed to an enqueued operation (through a [`RawSlice`]) is kept alive by the
//!   backend until that operation has completed, so dropping every user handle to a buffer
//!   while a copy into it is in flight never frees memory under the copy.
//! - Nothing panics on a driver failure: every fallible call returns [`crate::Error`].

use std::any::Any;
use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::error::{Error, Result};

pub mod counting;
pub mod cuda;
pub mod host;

/// Which backend a [`crate::Context`] runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BackendKind {
    /// Executor threads on the CPU standing in for devices (always available).
    Host,
    /// NVIDIA GPUs through the CUDA driver API.
    Cuda,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Host => "host",
            BackendKind::Cuda => "cuda",
        })
    }
}

/// `handle` (a seam object's [`RawStream::as_any`] and the like) as `backend`'s own `T`, or
/// [`Error::Unsupported`] naming `operation` where it belongs to another backend.
pub(crate) fn downcast<'a, T: 'static>(
    handle: &'a dyn Any,
    operation: &'static str,
    backend: &'static str,
) -> Result<&'a T> {
    handle
        .downcast_ref::<T>()
        .ok_or(Error::Unsupported { operation, backend })
}

/// Index of a physical device inside one backend (`0..Backend::physical_devices()`).
pub type PhysicalDevice = usize;

/// Where a block of memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryLocation {
    /// Memory of one physical device.
    Device(PhysicalDevice),
    /// Page-locked host memory used to stage transfers; readable by the host, and by devices
    /// through copies only.
    PinnedHost,
    /// Page-locked host memory mapped into every device's address space (for flags a
    /// persistent kernel and the host both poll). Reads and writes from both sides are
    /// uncached, so keep it small.
    MappedHost,
}

/// Stream priority. Receive and split work runs on [`StreamPriority::High`] so that data
/// coming in from peers is not queued behind long compute kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum StreamPriority {
    /// The default priority.
    #[default]
    Normal,
    /// Scheduled ahead of normal-priority work where the backend supports it.
    High,
}

/// Whether an event records timing information (slower on CUDA; only for measurements).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum EventKind {
    /// Ordering and completion only (the fast kind used by links and pools).
    #[default]
    Sync,
    /// Also usable with [`RawEvent::elapsed_ms_since`].
    Timing,
}

/// Static properties of one physical device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceProperties {
    /// Human-readable name (`"NVIDIA H200"`, `"host executor 0"`).
    pub name: String,
    /// Total device memory in bytes (for the host backend: a soft budget).
    pub total_memory: u64,
    /// Number of multiprocessors (for the host backend: rayon threads available).
    pub multiprocessors: u32,
    /// Compute capability `(major, minor)`; `(0, 0)` for the host backend.
    pub compute_capability: (u32, u32),
    /// Bytes of the device's last-level (L2) cache; 0 for the host backend.
    pub l2_cache_bytes: u64,
    /// Bytes of shared memory a block may use once its kernel opts in
    /// ([`crate::cuda::CudaFunction::set_max_dynamic_shared_memory`]); 0 for the host backend.
    pub shared_memory_per_block_optin: u32,
}

/// A contiguous byte range of one allocation, as handed to copies.
///
/// Holding a `RawSlice` keeps the allocation alive.
#[derive(Clone)]
pub struct RawSlice {
    /// The allocation.
    pub memory: Arc<dyn RawMemory>,
    /// Offset in bytes from the allocation's start.
    pub offset: usize,
    /// Length in bytes.
    pub len: usize,
}

impl RawSlice {
    /// The whole of `memory`.
    pub fn whole(memory: Arc<dyn RawMemory>) -> Self {
        let len = memory.len_bytes();
        RawSlice {
            memory,
            offset: 0,
            len,
        }
    }

    /// Host address of the first byte, when the memory is host-addressable.
    pub fn host_ptr(&self) -> Option<NonNull<u8>> {
        self.memory.host_ptr().map(|p| {
            // SAFETY: `offset <= len_bytes` is an invariant of every constructor in this
            // crate (checked by `crate::memory`), so the result stays inside the allocation.
            unsafe { p.add(self.offset) }
        })
    }

    /// Device address of the first byte, when the memory is device-addressable.
    pub fn device_ptr(&self) -> Option<u64> {
        self.memory.device_ptr().map(|p| p + self.offset as u64)
    }
}

impl fmt::Debug for RawSlice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawSlice")
            .field("location", &self.memory.location())
            .field("offset", &self.offset)
            .field("len", &self.len)
            .finish()
    }
}

/// One allocation made by a backend. Freed when the last `Arc` to it drops.
pub trait RawMemory: Send + Sync + fmt::Debug {
    /// Where the memory lives.
    fn location(&self) -> MemoryLocation;
    /// Size in bytes.
    fn len_bytes(&self) -> usize;
    /// Host address, when the host may dereference this memory (host-backend device memory,
    /// pinned and mapped host memory). `None` for real device memory.
    fn host_ptr(&self) -> Option<NonNull<u8>>;
    /// Device address, when kernels may dereference this memory (CUDA device memory and
    /// mapped host memory). `None` on the host backend.
    fn device_ptr(&self) -> Option<u64>;
    /// For backend-specific downcasts.
    fn as_any(&self) -> &dyn Any;
}

/// One backend event: a marker recorded into a stream that completes when every operation
/// enqueued before it on that stream has completed. Events are reused by
/// [`crate::EventPool`]; each [`RawStream::record`] starts a new recording.
pub trait RawEvent: Send + Sync + fmt::Debug {
    /// The physical device whose streams may record this event.
    fn device(&self) -> PhysicalDevice;
    /// True once the most recent recording has completed (or if it was never recorded).
    fn query(&self) -> Result<bool>;
    /// Blocks the calling host thread until the most recent recording has completed.
    fn synchronize(&self) -> Result<()>;
    /// Calls `callback` once the most recent recording (as of this call) has completed; at
    /// once, on this thread, if it already has. The callback must not block.
    fn notify(&self, callback: Box<dyn FnOnce() + Send>) -> Result<()>;
    /// Milliseconds between the completion of `start` and of `self` (both [`EventKind::Timing`]
    /// events, both completed).
    fn elapsed_ms_since(&self, start: &dyn RawEvent) -> Result<f32>;
    /// For backend-specific downcasts.
    fn as_any(&self) -> &dyn Any;
}

/// An ordered queue of device work.
pub trait RawStream: Send + Sync + fmt::Debug {
    /// The physical device this stream belongs to.
    fn device(&self) -> PhysicalDevice;
    /// The stream's priority.
    fn priority(&self) -> StreamPriority;
    /// Enqueues a copy of `src.len` bytes from `src` to `dst` (`dst.len == src.len`), between
    /// any two locations the backend can reach (peer, host<->device, device-local, host-staged
    /// when peers have no direct access). The backend keeps both allocations alive until the
    /// copy completes.
    fn copy(&self, dst: &RawSlice, src: &RawSlice) -> Result<()>;
    /// Enqueues a fill of `dst` with the 32-bit pattern `value` (`dst.len` a multiple of 4).
    fn fill_u32(&self, dst: &RawSlice, value: u32) -> Result<()>;
    /// Records `event` on this stream (a new recording; earlier waiters are unaffected).
    fn record(&self, event: &dyn RawEvent) -> Result<()>;
    /// Enqueues a copy as [`RawStream::copy`] does and records `event` right after it. A
    /// backend whose copies record an event of their own (to know when the memory may be
    /// released) overrides this to use `event` for that, saving one recording per copy (a
    /// link records one event per packet).
    fn copy_and_record(&self, dst: &RawSlice, src: &RawSlice, event: &dyn RawEvent) -> Result<()> {
        self.copy(dst, src)?;
        self.record(event)
    }
    /// Makes later work on this stream wait for the most recent recording of `event`, without
    /// blocking the host.
    fn wait_event(&self, event: &dyn RawEvent) -> Result<()>;
    /// Enqueues a host callback that runs in stream order. The callback must not call back
    /// into the backend's blocking operations (CUDA forbids driver calls inside it).
    fn host_fn(&self, callback: Box<dyn FnOnce() + Send>) -> Result<()>;
    /// Blocks the calling host thread until all work enqueued so far has completed.
    fn synchronize(&self) -> Result<()>;
    /// For backend-specific downcasts (kernel launch).
    fn as_any(&self) -> &dyn Any;
}

/// A backend: a set of physical devices with memory, streams and events.
pub trait Backend: Send + Sync + fmt::Debug {
    /// Which backend this is.
    fn kind(&self) -> BackendKind;
    /// Number of physical devices.
    fn physical_devices(&self) -> usize;
    /// Properties of one physical device.
    fn properties(&self, device: PhysicalDevice) -> Result<DeviceProperties>;
    /// Whether `from` can read and write `to`'s memory directly (peer access enabled).
    fn can_access_peer(&self, from: PhysicalDevice, to: PhysicalDevice) -> bool;
    /// Allocates `bytes` bytes at `location` (contents unspecified).
    fn allocate(&self, location: MemoryLocation, bytes: usize) -> Result<Arc<dyn RawMemory>>;
    /// Creates a stream on `device`.
    fn create_stream(
        &self,
        device: PhysicalDevice,
        priority: StreamPriority,
    ) -> Result<Arc<dyn RawStream>>;
    /// Creates an event on `device`.
    fn create_event(&self, device: PhysicalDevice, kind: EventKind) -> Result<Arc<dyn RawEvent>>;
    /// For backend-specific downcasts.
    fn as_any(&self) -> &dyn Any;
}

/// The process's CUDA backend over every visible GPU, or why there is none.
///
/// The first context that asks opens it; every later context of the process shares it, as
/// they share the GPUs' primary contexts it retains. A module a kernel needs is then loaded
/// (and its PTX compiled to the GPU's code) once per process rather than once per context:
/// a program that builds a context per run (`groute::Runner`, the test suites) does not pay
/// for it again each run. A failure to open is not kept: the next context tries again.
///
/// Never panics: a missing driver library or a machine without GPUs is an
/// [`crate::Error::CudaUnavailable`].
pub(crate) fn create_cuda_backend() -> Result<Arc<dyn Backend>> {
    static SHARED: parking_lot::Mutex<Option<Arc<dyn Backend>>> = parking_lot::Mutex::new(None);
    let mut shared = SHARED.lock();
    if let Some(backend) = shared.as_ref() {
        return Ok(Arc::clone(backend));
    }
    let backend: Arc<dyn Backend> = Arc::new(cuda::CudaBackend::new()?);
    *shared = Some(Arc::clone(&backend));
    Ok(backend)
}
