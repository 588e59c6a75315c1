//! The runtime context: devices, their streams, event pools and memory pools.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use bytemuck::Pod;

use std::time::Duration;

use crate::backend::host::{DEFAULT_STALL_TIMEOUT, FaultPlan, HostBackend, Jitter};
use crate::backend::{
    Backend, BackendKind, DeviceProperties, EventKind, MemoryLocation, PhysicalDevice,
    StreamPriority,
};
use crate::error::{Error, Result};
use crate::event::EventPool;
use crate::memory::{Buffer, MemoryAccount, MemoryPool, MemoryUsage};
use crate::stream::Stream;
use crate::topology::Topology;

/// Index of a (virtual) device in a [`Context`]: `0..context.num_devices()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceId(pub usize);

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Which backend to build a context on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BackendChoice {
    /// CUDA when a GPU is usable, else the host backend (with a note saying why).
    #[default]
    Auto,
    /// The host backend.
    Host,
    /// The CUDA backend; an error if it is unavailable.
    Cuda,
}

impl FromStr for BackendChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(BackendChoice::Auto),
            "host" | "cpu" => Ok(BackendChoice::Host),
            "cuda" | "gpu" => Ok(BackendChoice::Cuda),
            _ => Err(Error::invalid(
                "--backend",
                s,
                "expected auto, host or cuda",
            )),
        }
    }
}

impl fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendChoice::Auto => "auto",
            BackendChoice::Host => "host",
            BackendChoice::Cuda => "cuda",
        })
    }
}

/// The most devices a context holds (virtual devices included). Each is a thread of the
/// runtime, and a run adds as many router pumps and drivers: thousands of threads exhaust a
/// process's threads or address space, and past a few hundred on a small host the threads'
/// scheduling, not the work, sets the pace.
pub const MAX_DEVICES: usize = 256;

/// [`Error::NoDevices`] or [`Error::TooManyDevices`] unless `devices` is 1 to [`MAX_DEVICES`].
pub(crate) fn check_device_count(devices: usize) -> Result<()> {
    match devices {
        0 => Err(Error::NoDevices),
        d if d > MAX_DEVICES => Err(Error::TooManyDevices {
            devices,
            max: MAX_DEVICES,
        }),
        _ => Ok(()),
    }
}

/// Whether an array of `bytes` that a kernel reads at random outgrows an L2 cache of
/// `l2_cache_bytes` (0, the host backend's: never), so that most of its reads miss the L2:
/// what an algorithm weighs against [`Context::smallest_l2_cache_bytes`].
pub fn outgrows_l2(bytes: u64, l2_cache_bytes: u64) -> bool {
    l2_cache_bytes > 0 && bytes > l2_cache_bytes
}

/// Builds a [`Context`].
#[derive(Clone, Debug)]
pub struct ContextBuilder {
    devices: usize,
    backend: BackendChoice,
    jitter: Option<Jitter>,
    physical_limit: Option<usize>,
    first_physical: usize,
    device_memory_limit: Option<u64>,
    stall_timeout: Option<Duration>,
    faults: FaultPlan,
}

impl Default for ContextBuilder {
    fn default() -> Self {
        ContextBuilder {
            devices: 1,
            backend: BackendChoice::Auto,
            jitter: None,
            physical_limit: None,
            first_physical: 0,
            device_memory_limit: None,
            stall_timeout: Some(DEFAULT_STALL_TIMEOUT),
            faults: FaultPlan::new(),
        }
    }
}

impl ContextBuilder {
    /// Number of (virtual) devices, 1 to [`MAX_DEVICES`]; they map round-robin onto the
    /// physical devices.
    pub fn devices(mut self, n: usize) -> Self {
        self.devices = n;
        self
    }

    /// Backend choice.
    pub fn backend(mut self, backend: BackendChoice) -> Self {
        self.backend = backend;
        self
    }

    /// Host-backend jitter (ignored by other backends).
    pub fn jitter(mut self, jitter: Option<Jitter>) -> Self {
        self.jitter = jitter;
        self
    }

    /// How long a wait may see no progress before it fails (default [`DEFAULT_STALL_TIMEOUT`],
    /// 60 s; `None`: wait forever).
    ///
    /// - Host backend: a host wait (an event, a stream's synchronisation, a host kernel's
    ///   result) whose stream neither finishes an operation nor runs one for this long fails
    ///   with [`Error::DeviceStalled`] naming the device.
    /// - CUDA backend: the default timeout of a [`crate::cuda::PeerGroup`] on this context,
    ///   how long a device-driven member waits for its peers at one exchange (or for them to
    ///   start) before the run fails with [`Error::PeerExchangeFailed`].
    pub fn stall_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.stall_timeout = timeout;
        self
    }

    /// Host backend: faults to inject (tests of failure handling; ignored by other backends).
    #[doc(hidden)]
    pub fn faults(mut self, faults: FaultPlan) -> Self {
        self.faults = faults;
        self
    }

    /// Uses at most `n` physical devices (GPUs on CUDA, executors on the host backend), so
    /// that several virtual devices share one.
    pub fn physical_devices(mut self, n: usize) -> Self {
        self.physical_limit = Some(n);
        self
    }

    /// Maps virtual device `v` to physical device `(first + v) mod count` instead of `v mod
    /// count`: each of several processes on one node (the ranks of an MPI job, say) starts
    /// at a GPU of its own (`first = local rank x devices per rank`), and processes that
    /// outnumber the GPUs share them round-robin.
    pub fn first_physical_device(mut self, first: usize) -> Self {
        self.first_physical = first;
        self
    }

    /// Caps the device memory each (virtual) device may hold at `bytes` (parse a user's
    /// `512M` or `8G` with [`crate::parse_byte_size`]).
    ///
    /// An allocation that would pass the cap fails with [`Error::DeviceMemoryLimit`] before
    /// the backend is asked (after the device's pool has freed the blocks it caches). The cap
    /// applies to each virtual device on its own, so virtual devices sharing one GPU stand in
    /// for as many smaller GPUs: a run that fits under `--devices 4 --device-memory-limit 2G`
    /// on one GPU fits on four GPUs of 2 GiB. See [`Device::memory_usage`] for what counts.
    pub fn device_memory_limit(mut self, bytes: u64) -> Self {
        self.device_memory_limit = Some(bytes);
        self
    }

    /// Creates the context.
    pub fn build(self) -> Result<Context> {
        check_device_count(self.devices)?;
        if self.device_memory_limit == Some(0) {
            return Err(Error::invalid(
                "device memory limit",
                0,
                "a zero limit refuses every allocation; give a size such as 512M or 8G",
            ));
        }
        if self.stall_timeout == Some(Duration::ZERO) {
            return Err(Error::invalid(
                "stall timeout",
                "0s",
                "a zero timeout fails every wait; give a positive duration (or None to wait forever)",
            ));
        }
        if self.physical_limit == Some(0) {
            return Err(Error::invalid(
                "physical devices",
                0,
                "use at least one physical device",
            ));
        }
        let host = |note: Option<String>| -> Result<(Arc<dyn Backend>, Option<String>)> {
            let n = self
                .physical_limit
                .unwrap_or(self.devices)
                .min(self.devices);
            let backend =
                HostBackend::with_faults(n, self.jitter, self.stall_timeout, self.faults.clone())?;
            Ok((Arc::new(backend), note))
        };
        let (backend, fallback_note) = match self.backend {
            BackendChoice::Host => host(None)?,
            BackendChoice::Cuda => (crate::backend::create_cuda_backend()?, None),
            BackendChoice::Auto => match crate::backend::create_cuda_backend() {
                Ok(b) => (b, None),
                Err(e) => host(Some(format!("using the host backend: {e}")))?,
            },
        };
        Context::build_on(
            backend,
            self.devices,
            (self.physical_limit, self.first_physical),
            fallback_note,
            (self.device_memory_limit, self.stall_timeout),
        )
    }
}

/// One (virtual) device of a context, with its streams and pools.
pub struct Device {
    id: DeviceId,
    physical: PhysicalDevice,
    properties: DeviceProperties,
    backend: Arc<dyn Backend>,
    stream: Stream,
    high_priority: Stream,
    events: EventPool,
    timing_events: EventPool,
    memory: MemoryPool,
    /// Bytes `memory` holds on the device, and the device's limit.
    account: Arc<MemoryAccount>,
    /// The context's pinned host pool (staging chunks of uploads and downloads).
    host_memory: MemoryPool,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("id", &self.id)
            .field("physical", &self.physical)
            .field("name", &self.properties.name)
            .finish()
    }
}

impl Device {
    /// The device's index in its context.
    pub fn id(&self) -> DeviceId {
        self.id
    }

    /// The physical device it runs on.
    pub fn physical(&self) -> PhysicalDevice {
        self.physical
    }

    /// Properties of the physical device.
    pub fn properties(&self) -> &DeviceProperties {
        &self.properties
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// The normal-priority stream.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The high-priority stream (receive and split work).
    pub fn high_priority_stream(&self) -> &Stream {
        &self.high_priority
    }

    /// A new stream of its own (links create one each for their copies).
    pub fn new_stream(&self, priority: StreamPriority) -> Result<Stream> {
        let raw = self.backend.create_stream(self.physical, priority)?;
        Ok(Stream::new(raw, self.id, self.events.clone()))
    }

    /// The event pool.
    pub fn event_pool(&self) -> &EventPool {
        &self.events
    }

    /// Records a timing event on `stream` (for measurements with
    /// [`crate::Event::elapsed_ms`]).
    pub fn record_timing(&self, stream: &Stream) -> Result<crate::Event> {
        self.timing_events.record(stream.raw().as_ref())
    }

    /// The memory pool.
    pub fn memory_pool(&self) -> &MemoryPool {
        &self.memory
    }

    /// Device memory this device holds now and at most, and its limit.
    ///
    /// Every allocation of device memory through the context counts, from the backend
    /// allocation until the backend frees it; blocks the memory pool caches for reuse count
    /// as in use, since they still occupy the device. Each virtual device counts its own
    /// allocations, even when several share one physical device.
    pub fn memory_usage(&self) -> MemoryUsage {
        self.account.usage()
    }

    /// Whether allocating `bytes` now would stay under the device's memory limit (always,
    /// without a limit): for optional buffers, which a caller can do without (an extra send
    /// buffer to keep more copies in flight), so that a limit slows a run down instead of
    /// failing it. Blocks the pool caches count as in use here (an allocation would free them
    /// first), so the answer errs on the side of `false`.
    pub fn fits_under_limit(&self, bytes: usize) -> bool {
        let usage = self.account.usage();
        usage.limit_bytes.is_none_or(|limit| {
            usage
                .current_bytes
                .saturating_add(self.memory.block_bytes(bytes) as u64)
                <= limit
        })
    }

    /// Starts a new peak: [`MemoryUsage::peak_bytes`] becomes the bytes in use now.
    pub fn reset_peak(&self) {
        self.account.reset_peak();
    }

    /// Allocates `len` elements on the device (contents unspecified).
    ///
    /// Fails with [`Error::DeviceMemoryLimit`] past the context's limit and with
    /// [`Error::DeviceOutOfMemory`] when the device itself is full.
    pub fn alloc<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        self.memory.alloc(len)
    }

    /// Allocates a buffer and uploads `data` into it on the device's stream, and returns once
    /// the copy is complete (set-up work: the buffer is ready for any stream).
    ///
    /// The copy goes through at most two pinned chunks of the context's host pool, pipelined
    /// (see [`STAGING_CHUNK_BYTES`](crate::STAGING_CHUNK_BYTES)); they go back to the pool,
    /// which frees a block only when it already caches 1 GiB: freeing pinned host memory
    /// waits for every kernel then running on the device (a persistent kernel whose host is
    /// polling it, for one, would stall the host for its whole run).
    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>> {
        let dst = self.alloc::<T>(data.len())?;
        crate::transfer::upload_from(&self.stream, &self.host_memory, data, &dst)?;
        Ok(dst)
    }

    /// [`Device::alloc`] of graph structure: the buffer's bytes count in
    /// [`MemoryUsage::graph_bytes`] while it lives (see [`Device::upload_graph`]).
    pub fn alloc_graph<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        self.alloc(len)?.into_graph(&self.account)
    }

    /// [`Device::upload`] of graph structure (offsets, arcs, weights, maps): the buffer's
    /// bytes count in [`MemoryUsage::graph_bytes`] while it lives, and in
    /// [`MemoryUsage::peak_graph_bytes`].
    pub fn upload_graph<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>> {
        self.upload(data)?.into_graph(&self.account)
    }

    /// Copies `src` (any buffer this device's stream can reach) to a new `Vec`, waiting for
    /// the work already enqueued on the device's stream.
    ///
    /// The data comes through at most two recycled pinned chunks, pipelined, and large
    /// chunks are copied out on rayon's threads (see
    /// [`STAGING_CHUNK_BYTES`](crate::STAGING_CHUNK_BYTES)).
    pub fn download<T: Pod>(&self, src: &Buffer<T>) -> Result<Vec<T>> {
        let mut out = bytemuck::zeroed_vec(src.len());
        self.download_into(src, &mut out)?;
        Ok(out)
    }

    /// [`Device::download`] into `dst`, which must hold exactly `src.len()` elements (else
    /// [`Error::LengthMismatch`]).
    pub fn download_into<T: Pod>(&self, src: &Buffer<T>, dst: &mut [T]) -> Result<()> {
        crate::transfer::download_into(&self.stream, &self.host_memory, src, dst)
    }
}

/// Pinned host memory holding a copy of `data`.
pub(crate) fn host_staging<T: Pod>(backend: &Arc<dyn Backend>, data: &[T]) -> Result<Buffer<T>> {
    let mem = backend.allocate(MemoryLocation::PinnedHost, std::mem::size_of_val(data))?;
    let buf = Buffer::<T>::from_raw(mem)?;
    if data.is_empty() {
        // Nothing to write (a zero-byte pinned allocation may have no host address).
        return Ok(buf);
    }
    // SAFETY: the buffer was just allocated and no one else has a view of it.
    let dst = unsafe { buf.as_host_slice_mut() }.ok_or(Error::Unsupported {
        operation: "writing pinned host memory",
        backend: "this",
    })?;
    dst.copy_from_slice(data);
    Ok(buf)
}

struct ContextInner {
    backend: Arc<dyn Backend>,
    devices: Vec<Device>,
    fallback_note: Option<String>,
    host_memory: MemoryPool,
    stall_timeout: Option<Duration>,
}

/// The runtime: a backend and the (virtual) devices built on it. Cheap to clone.
#[derive(Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("backend", &self.backend_kind())
            .field("devices", &self.inner.devices)
            .finish()
    }
}

impl Context {
    /// A builder (defaults: 1 device, [`BackendChoice::Auto`], no jitter).
    pub fn builder() -> ContextBuilder {
        ContextBuilder::default()
    }

    /// `n` devices on the best backend present.
    pub fn with_devices(n: usize) -> Result<Self> {
        Self::builder().devices(n).build()
    }

    /// `n` devices on the host backend.
    pub fn host(n: usize) -> Result<Self> {
        Self::builder()
            .devices(n)
            .backend(BackendChoice::Host)
            .build()
    }

    /// A context over an existing backend (no device memory limit, the default stall
    /// timeout).
    pub fn from_backend(
        backend: Arc<dyn Backend>,
        devices: usize,
        physical_limit: Option<usize>,
        fallback_note: Option<String>,
    ) -> Result<Self> {
        Self::build_on(
            backend,
            devices,
            (physical_limit, 0),
            fallback_note,
            (None, Some(DEFAULT_STALL_TIMEOUT)),
        )
    }

    fn build_on(
        backend: Arc<dyn Backend>,
        devices: usize,
        (physical_limit, first_physical): (Option<usize>, usize),
        fallback_note: Option<String>,
        (device_memory_limit, stall_timeout): (Option<u64>, Option<Duration>),
    ) -> Result<Self> {
        check_device_count(devices)?;
        let physical = backend
            .physical_devices()
            .min(physical_limit.unwrap_or(usize::MAX));
        if physical == 0 {
            return Err(Error::CudaUnavailable {
                reason: "the backend reports no devices".into(),
            });
        }
        let host_memory = MemoryPool::new(
            Arc::clone(&backend),
            MemoryLocation::PinnedHost,
            64 << 20,
            1 << 30,
        );
        let mut list = Vec::with_capacity(devices);
        for v in 0..devices {
            let p = (first_physical % physical + v) % physical;
            let properties = backend.properties(p)?;
            let events = EventPool::new(Arc::clone(&backend), p, EventKind::Sync, 16)?;
            let timing_events = EventPool::new(Arc::clone(&backend), p, EventKind::Timing, 0)?;
            let id = DeviceId(v);
            let stream = Stream::new(
                backend.create_stream(p, StreamPriority::Normal)?,
                id,
                events.clone(),
            );
            let high_priority = Stream::new(
                backend.create_stream(p, StreamPriority::High)?,
                id,
                events.clone(),
            );
            let account = Arc::new(MemoryAccount::new(id, device_memory_limit));
            let memory = MemoryPool::accounted(
                Arc::clone(&backend),
                MemoryLocation::Device(p),
                64 << 20,
                (properties.total_memory / 8) as usize,
                Arc::clone(&account),
            );
            list.push(Device {
                id,
                physical: p,
                properties,
                backend: Arc::clone(&backend),
                stream,
                high_priority,
                events,
                timing_events,
                memory,
                account,
                host_memory: host_memory.clone(),
            });
        }
        Ok(Context {
            inner: Arc::new(ContextInner {
                backend,
                devices: list,
                fallback_note,
                host_memory,
                stall_timeout,
            }),
        })
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.inner.backend
    }

    /// Which backend this is.
    pub fn backend_kind(&self) -> BackendKind {
        self.inner.backend.kind()
    }

    /// Why [`BackendChoice::Auto`] fell back to the host backend, if it did.
    pub fn fallback_note(&self) -> Option<&str> {
        self.inner.fallback_note.as_deref()
    }

    /// How long a wait may see no progress before it fails
    /// ([`ContextBuilder::stall_timeout`]; `None`: forever).
    pub fn stall_timeout(&self) -> Option<Duration> {
        self.inner.stall_timeout
    }

    /// Number of (virtual) devices.
    pub fn num_devices(&self) -> usize {
        self.inner.devices.len()
    }

    /// All devices.
    pub fn devices(&self) -> &[Device] {
        &self.inner.devices
    }

    /// The smallest L2 cache of the devices, in bytes (0 on the host backend, which reports
    /// none): what an algorithm weighs its randomly read arrays against ([`outgrows_l2`]).
    pub fn smallest_l2_cache_bytes(&self) -> u64 {
        self.devices()
            .iter()
            .map(|d| d.properties().l2_cache_bytes)
            .min()
            .unwrap_or(0)
    }

    /// One device.
    pub fn device(&self, id: DeviceId) -> Result<&Device> {
        self.inner.devices.get(id.0).ok_or(Error::NoSuchDevice {
            device: id.0,
            count: self.inner.devices.len(),
        })
    }

    /// [`Device::memory_usage`] of every device, in device order.
    pub fn memory_usage(&self) -> Vec<MemoryUsage> {
        self.inner
            .devices
            .iter()
            .map(Device::memory_usage)
            .collect()
    }

    /// [`Device::reset_peak`] on every device.
    pub fn reset_peak(&self) {
        self.inner.devices.iter().for_each(Device::reset_peak);
    }

    /// The per-device memory limit in bytes, if the context has one.
    pub fn device_memory_limit(&self) -> Option<u64> {
        self.inner
            .devices
            .first()
            .and_then(|d| d.account.usage().limit_bytes)
    }

    /// Allocates pinned host memory (the host endpoint's buffers).
    pub fn alloc_host<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        self.inner.host_memory.alloc(len)
    }

    /// Allocates page-locked host memory (contents unspecified) mapped into every device's address space
    /// ([`MemoryLocation::MappedHost`]): a kernel reaches it through [`Buffer::device_ptr`]
    /// while the host reads and writes it through [`Buffer::host_atomic_u32`] (flags and
    /// counters a persistent kernel and the host both poll). Not pooled: allocate it once and
    /// keep it small.
    pub fn alloc_mapped<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::invalid("buffer length", len, "the byte size overflows usize"))?;
        Buffer::from_raw(
            self.inner
                .backend
                .allocate(MemoryLocation::MappedHost, bytes)?,
        )
    }

    /// Pinned host memory holding a copy of `data`.
    pub fn host_buffer_from<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>> {
        host_staging(&self.inner.backend, data)
    }

    /// Devices and which pairs have direct (peer) access.
    pub fn topology(&self) -> Result<Topology> {
        Topology::of(self)
    }
}
