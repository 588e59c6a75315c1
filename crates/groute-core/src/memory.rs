//! Typed buffers and memory pools.
//!
//! A [`Buffer<T>`] is a typed view of (part of) one backend allocation: device memory,
//! pinned host staging memory or mapped host memory. Cloning a buffer clones the view, not
//! the data: copies between buffers go through a [`crate::Stream`]. The allocation is freed,
//! or returned to its [`MemoryPool`], once the last view and the last in-flight operation
//! using it are gone.
//!
//! # Accounting
//!
//! Every device of a [`crate::Context`] counts the device memory its pool holds: the bytes in
//! use now and the most ever in use, read with [`crate::Device::memory_usage`] and
//! [`crate::Context::memory_usage`]. Bytes count from the backend allocation until the
//! backend frees them, so blocks the pool caches for reuse count as in use: they still occupy
//! the device. Every allocation of device memory through a context goes through its device's
//! pool ([`crate::Device::alloc`], [`crate::Device::upload`], [`MemoryPool::alloc`] on
//! [`crate::Device::memory_pool`], link and router receive buffers, peer-group mailboxes), large
//! blocks that bypass the cache included; only [`crate::backend::Backend::allocate`] called
//! directly, below the context, is not counted. Pinned and mapped host memory is not device
//! memory and is not counted.
//!
//! With a limit ([`crate::ContextBuilder::device_memory_limit`]), an allocation that would
//! take the device past it first frees the pool's cached blocks, then fails with
//! [`Error::DeviceMemoryLimit`] before the backend is asked. A backend out-of-memory (CUDA's
//! `CUDA_ERROR_OUT_OF_MEMORY`) also frees the cached blocks and retries once, then fails with
//! [`Error::DeviceOutOfMemory`] in the same shape.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use bytemuck::Pod;
use parking_lot::Mutex;

use crate::backend::{Backend, MemoryLocation, RawMemory, RawSlice};
use crate::context::DeviceId;
use crate::error::{Error, Result};

/// A typed view of `len` elements of one allocation.
pub struct Buffer<T> {
    memory: Arc<dyn RawMemory>,
    /// Offset of the first element, in elements.
    offset: usize,
    len: usize,
    _elem: PhantomData<fn() -> T>,
}

impl<T> Clone for Buffer<T> {
    fn clone(&self) -> Self {
        Buffer {
            memory: Arc::clone(&self.memory),
            offset: self.offset,
            len: self.len,
            _elem: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("type", &std::any::type_name::<T>())
            .field("location", &self.memory.location())
            .field("offset", &self.offset)
            .field("len", &self.len)
            .finish()
    }
}

impl<T> Buffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: Pod> Buffer<T> {
    /// Wraps a whole allocation (its size must be a multiple of `size_of::<T>()`).
    pub fn from_raw(memory: Arc<dyn RawMemory>) -> Result<Self> {
        let size = std::mem::size_of::<T>().max(1);
        let bytes = memory.len_bytes();
        if bytes % size != 0 {
            return Err(Error::invalid(
                "allocation size",
                bytes,
                format!("must be a multiple of the element size {size}"),
            ));
        }
        Ok(Buffer {
            memory,
            offset: 0,
            len: bytes / size,
            _elem: PhantomData,
        })
    }

    /// Where the memory lives.
    pub fn location(&self) -> MemoryLocation {
        self.memory.location()
    }

    /// A sub-view (`range` in elements, relative to this view).
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<Self> {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s + 1,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e + 1,
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len,
        };
        if start > end || end > self.len {
            return Err(Error::OutOfBounds {
                start,
                end,
                len: self.len,
            });
        }
        Ok(Buffer {
            memory: Arc::clone(&self.memory),
            offset: self.offset + start,
            len: end - start,
            _elem: PhantomData,
        })
    }

    /// Whether two views share an allocation.
    pub fn same_allocation(&self, other: &Buffer<T>) -> bool {
        Arc::ptr_eq(&self.memory, &other.memory)
    }

    /// The byte-level view handed to backends.
    pub fn raw(&self) -> RawSlice {
        let size = std::mem::size_of::<T>();
        RawSlice {
            memory: Arc::clone(&self.memory),
            offset: self.offset * size,
            len: self.len * size,
        }
    }

    /// Device address of the first element (CUDA device or mapped memory).
    pub fn device_ptr(&self) -> Option<u64> {
        self.raw().device_ptr()
    }

    /// Host address of the first element, for host-addressable memory.
    pub fn host_ptr(&self) -> Option<NonNull<T>> {
        self.raw().host_ptr().map(NonNull::cast)
    }

    /// Views the elements from the host.
    ///
    /// `None` when the memory is not host-addressable (real device memory).
    ///
    /// # Safety
    ///
    /// No device work, copy or other thread may write the range while the returned slice
    /// lives (wait for the events of every operation writing it first).
    pub unsafe fn as_host_slice(&self) -> Option<&[T]> {
        let p = self.host_ptr()?;
        // SAFETY: `p` points to `len` initialised elements inside a live allocation kept
        // alive by `self` (allocations are zeroed and `T: Pod` accepts any bytes); the caller
        // guarantees there is no concurrent writer.
        Some(unsafe { std::slice::from_raw_parts(p.as_ptr(), self.len) })
    }

    /// Views the elements mutably from the host.
    ///
    /// # Safety
    ///
    /// No device work, copy, other thread or other view may read or write the range while
    /// the returned slice lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn as_host_slice_mut(&self) -> Option<&mut [T]> {
        let p = self.host_ptr()?;
        // SAFETY: as for `as_host_slice`, plus exclusivity guaranteed by the caller.
        Some(unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), self.len) })
    }

    /// Copies the elements out from the host side (host-addressable memory only), after the
    /// caller has waited for every writer.
    ///
    /// # Safety
    ///
    /// As for [`Buffer::as_host_slice`].
    pub unsafe fn host_to_vec(&self) -> Option<Vec<T>> {
        // SAFETY: forwarded to the caller.
        unsafe { self.as_host_slice() }.map(<[T]>::to_vec)
    }
}

macro_rules! atomic_view {
    ($elem:ty, $atomic:ty, $name:ident) => {
        impl Buffer<$elem> {
            /// Views host-addressable memory as atomics, for host kernels that update it
            /// concurrently (`None` on real device memory).
            pub fn $name(&self) -> Option<&[$atomic]> {
                let p = self.host_ptr()?;
                // SAFETY: the atomic type has the size and alignment of the element type, the
                // range is inside a live allocation kept alive by `self`, and atomics may
                // alias each other; non-atomic writers are excluded by the stream protocol.
                Some(unsafe { std::slice::from_raw_parts(p.as_ptr() as *const $atomic, self.len) })
            }
        }
    };
}
atomic_view!(u32, AtomicU32, host_atomic_u32);
atomic_view!(u64, AtomicU64, host_atomic_u64);

/// Device memory use of one device of a context, in bytes (see the module docs for what
/// counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct MemoryUsage {
    /// The (virtual) device.
    pub device: DeviceId,
    /// Bytes held now: live buffers and the blocks the pool caches for reuse.
    pub current_bytes: u64,
    /// The most bytes held at once since the context was built or the peak was last reset.
    pub peak_bytes: u64,
    /// The device's limit, if the context has one.
    pub limit_bytes: Option<u64>,
    /// Of `current_bytes`, the bytes of graph structure (offsets, arcs, weights, maps) held
    /// now: buffers made by [`Device::upload_graph`](crate::Device::upload_graph).
    pub graph_bytes: u64,
    /// The most bytes of graph structure held at once (reset with the peak).
    pub peak_graph_bytes: u64,
}

/// Lock-free byte counters of one device, shared by its pool and every block it allocated.
#[derive(Debug)]
pub(crate) struct MemoryAccount {
    device: DeviceId,
    current: AtomicU64,
    peak: AtomicU64,
    limit: Option<u64>,
    /// Of `current`, the graph structure's bytes ([`Counted::Graph`]), and their peak.
    graph_current: AtomicU64,
    graph_peak: AtomicU64,
}

// Orderings: the counters guard no other memory, and every read-modify-write of one atomic is
// totally ordered on it whatever the ordering, so `Relaxed` is enough for the limit to hold:
// `current` never exceeds it because each increase is a compare-exchange against the value it
// checked.
impl MemoryAccount {
    pub(crate) fn new(device: DeviceId, limit: Option<u64>) -> Self {
        MemoryAccount {
            device,
            current: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            limit,
            graph_current: AtomicU64::new(0),
            graph_peak: AtomicU64::new(0),
        }
    }

    /// Adds `bytes`, or returns the bytes in use when that would pass the limit.
    fn try_reserve(&self, bytes: u64) -> std::result::Result<(), u64> {
        let mut current = self.current.load(Ordering::Relaxed);
        loop {
            let next = match current.checked_add(bytes) {
                Some(n) if self.limit.is_none_or(|limit| n <= limit) => n,
                _ => return Err(current),
            };
            match self.current.compare_exchange_weak(
                current,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    self.peak.fetch_max(next, Ordering::Relaxed);
                    return Ok(());
                }
                Err(seen) => current = seen,
            }
        }
    }

    fn release(&self, bytes: u64) {
        self.current.fetch_sub(bytes, Ordering::Relaxed);
    }

    fn current(&self) -> u64 {
        self.current.load(Ordering::Relaxed)
    }

    pub(crate) fn usage(&self) -> MemoryUsage {
        MemoryUsage {
            device: self.device,
            current_bytes: self.current(),
            peak_bytes: self.peak.load(Ordering::Relaxed),
            limit_bytes: self.limit,
            graph_bytes: self.graph_current.load(Ordering::Relaxed),
            peak_graph_bytes: self.graph_peak.load(Ordering::Relaxed),
        }
    }

    /// Sets the peaks to the bytes in use now.
    pub(crate) fn reset_peak(&self) {
        self.peak.store(self.current(), Ordering::Relaxed);
        // An allocation between the two lines raised `current` after it was read: keep it.
        self.peak.fetch_max(self.current(), Ordering::Relaxed);
        let graph = || self.graph_current.load(Ordering::Relaxed);
        self.graph_peak.store(graph(), Ordering::Relaxed);
        self.graph_peak.fetch_max(graph(), Ordering::Relaxed);
    }

    fn add_graph(&self, bytes: u64) {
        let now = self.graph_current.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.graph_peak.fetch_max(now, Ordering::Relaxed);
    }

    fn release_graph(&self, bytes: u64) {
        self.graph_current.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// What a [`CountedMemory`] block counts in its device's [`MemoryAccount`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Counted {
    /// A backend allocation: its bytes in `current` until the backend frees it.
    Allocation,
    /// Graph structure (a view of a block already counted as an allocation): its bytes in
    /// the graph bytes while the view lives.
    Graph,
}

/// A block counted in its device's [`MemoryAccount`] while it lives.
struct CountedMemory {
    inner: Arc<dyn RawMemory>,
    account: Arc<MemoryAccount>,
    counted: Counted,
}

impl CountedMemory {
    /// `inner`, counted as graph structure of `account`'s device while the result lives.
    fn graph(inner: Arc<dyn RawMemory>, account: &Arc<MemoryAccount>) -> Self {
        account.add_graph(inner.len_bytes() as u64);
        CountedMemory {
            inner,
            account: Arc::clone(account),
            counted: Counted::Graph,
        }
    }
}

impl fmt::Debug for CountedMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountedMemory")
            .field("device", &self.account.device)
            .field("counted", &self.counted)
            .field("inner", &self.inner)
            .finish()
    }
}

impl Drop for CountedMemory {
    fn drop(&mut self) {
        let bytes = self.inner.len_bytes() as u64;
        match self.counted {
            Counted::Allocation => self.account.release(bytes),
            Counted::Graph => self.account.release_graph(bytes),
        }
    }
}

impl RawMemory for CountedMemory {
    fn location(&self) -> MemoryLocation {
        self.inner.location()
    }
    fn len_bytes(&self) -> usize {
        self.inner.len_bytes()
    }
    fn host_ptr(&self) -> Option<NonNull<u8>> {
        self.inner.host_ptr()
    }
    fn device_ptr(&self) -> Option<u64> {
        self.inner.device_ptr()
    }
    fn as_any(&self) -> &dyn Any {
        self.inner.as_any()
    }
}

impl<T: Pod> Buffer<T> {
    /// This whole buffer, counted as graph structure of `account`'s device while it lives.
    pub(crate) fn into_graph(self, account: &Arc<MemoryAccount>) -> Result<Self> {
        Buffer::from_raw(Arc::new(CountedMemory::graph(self.memory, account)))
    }
}

/// A cached allocation handed out by a [`MemoryPool`]; returns itself on drop. The block
/// is the request's [`size_class`]; the allocation's length is the request.
struct PooledMemory {
    inner: Option<Arc<dyn RawMemory>>,
    len: usize,
    pool: Weak<PoolState>,
}

impl fmt::Debug for PooledMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PooledMemory")
            .field("inner", &self.inner)
            .field("len", &self.len)
            .finish()
    }
}

impl PooledMemory {
    fn inner(&self) -> &Arc<dyn RawMemory> {
        self.inner
            .as_ref()
            .expect("pooled memory holds its block until drop")
    }
}

impl Drop for PooledMemory {
    fn drop(&mut self) {
        if let (Some(mem), Some(pool)) = (self.inner.take(), self.pool.upgrade()) {
            pool.give_back(mem);
        }
    }
}

impl RawMemory for PooledMemory {
    fn location(&self) -> MemoryLocation {
        self.inner().location()
    }
    fn len_bytes(&self) -> usize {
        self.len
    }
    fn host_ptr(&self) -> Option<NonNull<u8>> {
        self.inner().host_ptr()
    }
    fn device_ptr(&self) -> Option<u64> {
        self.inner().device_ptr()
    }
    fn as_any(&self) -> &dyn Any {
        self.inner().as_any()
    }
}

/// The free blocks and their total size, under one lock so that the total always equals the
/// sum of the blocks (a pop and a trim racing must not count a block twice).
#[derive(Default)]
struct Cache {
    free: HashMap<usize, Vec<Arc<dyn RawMemory>>>,
    bytes: usize,
}

struct PoolState {
    cache: Mutex<Cache>,
    max_cached_bytes: usize,
}

impl PoolState {
    fn give_back(&self, mem: Arc<dyn RawMemory>) {
        let bytes = mem.len_bytes();
        let mut cache = self.cache.lock();
        if cache.bytes + bytes <= self.max_cached_bytes {
            cache.bytes += bytes;
            cache.free.entry(bytes).or_default().push(mem);
        }
        // Otherwise `mem` drops after the lock is released: the backend frees it.
    }

    fn take(&self, bytes: usize) -> Option<Arc<dyn RawMemory>> {
        let mut cache = self.cache.lock();
        let block = cache.free.get_mut(&bytes).and_then(Vec::pop)?;
        cache.bytes -= bytes;
        Some(block)
    }

    fn trim(&self) {
        let freed = std::mem::take(&mut *self.cache.lock());
        // The blocks free (and leave the account) here, outside the lock.
        drop(freed);
    }
}

/// The size of the block a pool allocates for a request of `bytes`: `bytes` rounded up to a
/// multiple of an eighth of its highest power of two (eight classes per doubling, so at most
/// 12.5% more), and at least 512 bytes (CUDA's own allocation granularity). Requests of
/// nearby sizes, such as per-send upload buffers, then reuse one another's cached blocks,
/// and the cache holds a few blocks per class instead of one per size ever asked for.
pub(crate) fn size_class(bytes: usize) -> usize {
    const SMALLEST: usize = 512;
    if bytes <= SMALLEST {
        return if bytes == 0 { 0 } else { SMALLEST };
    }
    let step = (1usize << (usize::BITS - 1 - bytes.leading_zeros())) / 8;
    bytes.div_ceil(step).checked_mul(step).unwrap_or(bytes)
}

/// Caches allocations of one location by size class ([`MemoryPool::block_bytes`]) so that buffers allocated and freed
/// repeatedly (link receive buffers, worklist segments, per-send uploads, per-run scratch)
/// skip the backend's allocator. Blocks above `max_block` bytes bypass the cache and are
/// allocated at their exact size.
///
/// A device's pool counts what it allocates in the device's [`MemoryUsage`] and enforces its
/// limit (see the module docs); a pool made with [`MemoryPool::new`] counts nothing.
#[derive(Clone)]
pub struct MemoryPool {
    backend: Arc<dyn Backend>,
    location: MemoryLocation,
    max_block: usize,
    state: Arc<PoolState>,
    account: Option<Arc<MemoryAccount>>,
}

impl fmt::Debug for MemoryPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryPool")
            .field("location", &self.location)
            .field("cached_bytes", &self.state.cache.lock().bytes)
            .finish()
    }
}

impl MemoryPool {
    /// A pool for `location` caching up to `max_cached_bytes`, blocks up to `max_block`.
    pub fn new(
        backend: Arc<dyn Backend>,
        location: MemoryLocation,
        max_block: usize,
        max_cached_bytes: usize,
    ) -> Self {
        MemoryPool {
            backend,
            location,
            max_block,
            state: Arc::new(PoolState {
                cache: Mutex::new(Cache::default()),
                max_cached_bytes,
            }),
            account: None,
        }
    }

    /// [`MemoryPool::new`] counting into `account` (a context's device pool).
    pub(crate) fn accounted(
        backend: Arc<dyn Backend>,
        location: MemoryLocation,
        max_block: usize,
        max_cached_bytes: usize,
        account: Arc<MemoryAccount>,
    ) -> Self {
        MemoryPool {
            account: Some(account),
            ..MemoryPool::new(backend, location, max_block, max_cached_bytes)
        }
    }

    /// The device memory use this pool counts into (`None` for a pool made with
    /// [`MemoryPool::new`]).
    pub fn usage(&self) -> Option<MemoryUsage> {
        self.account.as_ref().map(|a| a.usage())
    }

    /// The bytes this pool allocates, and counts, for a request of `bytes`: a cached block's
    /// size class (at most an eighth more than the request, at least 512 bytes), or exactly
    /// `bytes` for a request above the largest cached block.
    pub fn block_bytes(&self, bytes: usize) -> usize {
        if bytes > self.max_block {
            bytes
        } else {
            size_class(bytes)
        }
    }

    /// Bytes currently cached (free for reuse).
    pub fn cached_bytes(&self) -> usize {
        self.state.cache.lock().bytes
    }

    /// Frees every cached block.
    pub fn trim(&self) {
        self.state.trim();
    }

    /// Allocates `len` elements of `T` (contents unspecified: zero on first use, stale when
    /// recycled).
    pub fn alloc<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::invalid("buffer length", len, "the byte size overflows usize"))?;
        Buffer::from_raw(self.alloc_raw(bytes)?)
    }

    fn alloc_raw(&self, bytes: usize) -> Result<Arc<dyn RawMemory>> {
        if bytes > self.max_block {
            return self.allocate_counted(bytes);
        }
        let class = size_class(bytes);
        let inner = match self.state.take(class) {
            Some(m) => m,
            None => self.allocate_counted(class)?,
        };
        Ok(Arc::new(PooledMemory {
            inner: Some(inner),
            len: bytes,
            pool: Arc::downgrade(&self.state),
        }))
    }

    /// A new backend allocation, counted (and limited) when the pool has an account.
    fn allocate_counted(&self, bytes: usize) -> Result<Arc<dyn RawMemory>> {
        let Some(account) = &self.account else {
            return self.backend.allocate(self.location, bytes);
        };
        let requested = bytes as u64;
        if account.try_reserve(requested).is_err() {
            // Cached blocks count as in use: give them back and try again.
            self.trim();
            account
                .try_reserve(requested)
                .map_err(|in_use| Error::DeviceMemoryLimit {
                    device: account.device.0,
                    requested,
                    in_use,
                    // Without a limit only a count past `u64::MAX` fails.
                    limit: account.limit.unwrap_or(u64::MAX),
                })?;
        }
        let allocated = match self.backend.allocate(self.location, bytes) {
            Err(e) if e.is_out_of_memory() && self.cached_bytes() > 0 => {
                // The device is full: free what this pool caches and try once more.
                self.trim();
                self.backend.allocate(self.location, bytes)
            }
            other => other,
        };
        match allocated {
            Ok(inner) => Ok(Arc::new(CountedMemory {
                inner,
                account: Arc::clone(account),
                counted: Counted::Allocation,
            })),
            Err(e) => {
                account.release(requested);
                if !e.is_out_of_memory() {
                    return Err(e);
                }
                Err(Error::DeviceOutOfMemory {
                    device: account.device.0,
                    requested,
                    in_use: account.current(),
                    limit: account.limit,
                    source: Box::new(e),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::size_class;

    #[test]
    fn a_size_class_holds_its_request_with_at_most_an_eighth_more() {
        for bytes in (1..100_000).chain([(64 << 20) - 1, 64 << 20, (64 << 20) + 1]) {
            let class = size_class(bytes);
            assert!(class >= bytes, "{bytes} -> {class}");
            assert!(class <= (bytes + bytes / 8).max(512), "{bytes} -> {class}");
            assert!(
                size_class(bytes + 1) >= class,
                "classes grow with the request"
            );
            assert_eq!(size_class(class), class, "a class is its own class");
        }
        assert_eq!(size_class(0), 0);
        assert_eq!(size_class(usize::MAX), usize::MAX);
    }

    #[test]
    fn requests_of_nearby_sizes_share_a_few_classes() {
        let classes: std::collections::BTreeSet<_> =
            (1 << 20..2 << 20).step_by(997).map(size_class).collect();
        // 1 MiB to 2 MiB in steps of 1/8 MiB.
        assert_eq!(classes.len(), 9, "{classes:?}");
    }
}
