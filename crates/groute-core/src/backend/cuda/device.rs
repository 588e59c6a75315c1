//! One physical CUDA device: its primary context, memory pool, event free lists, internal
//! streams and its service thread.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::sys;
use super::watcher::{Watcher, WatcherHandle};
use crate::backend::{DeviceProperties, EventKind, PhysicalDevice};
use crate::error::Result;

/// Shared state of one device. Every CUDA object of the backend holds an `Arc` to the device it
/// belongs to, so the primary context outlives them all.
pub(crate) struct DeviceInner {
    /// Index inside the backend.
    pub(crate) index: PhysicalDevice,
    /// Driver handle.
    pub(crate) cu_device: sys::CUdevice,
    /// The retained primary context (the one context of this device).
    pub(crate) ctx: sys::CUcontext,
    /// Static properties.
    pub(crate) props: DeviceProperties,
    /// `(least, greatest)` stream priorities.
    pub(crate) priority_range: (i32, i32),
    /// The default memory pool (release threshold raised so freed memory stays cached).
    pub(crate) pool: sys::CUmemoryPool,
    /// Stream on which pool allocations and frees are ordered.
    pub(crate) alloc_stream: sys::CUstream,
    /// Stream used when work must run on this device on behalf of a stream of another device
    /// (copies involving memory the other device cannot reach).
    pub(crate) transfer_stream: OnceLock<sys::CUstream>,
    /// Recycled events with timing disabled.
    pub(crate) sync_events: Mutex<Vec<sys::CUevent>>,
    /// Recycled timing events.
    pub(crate) timing_events: Mutex<Vec<sys::CUevent>>,
    /// Loaded modules, keyed by the PTX's cache key.
    pub(crate) modules: Mutex<HashMap<[u8; 32], Arc<crate::cuda::module::ModuleInner>>>,
    /// The same modules keyed by the address and length of their `'static` source and name
    /// ([`crate::cuda::CudaModule::load`]'s fast path: no hash of the source per launch).
    pub(crate) loaded_sources:
        Mutex<HashMap<crate::cuda::module::SourceKey, Arc<crate::cuda::module::ModuleInner>>>,
    /// The device's service thread (event notifications, deferred releases).
    pub(crate) watcher: WatcherHandle,
}

// SAFETY: the raw handles are driver objects that the CUDA driver API allows to be used from
// any thread (the driver is thread-safe); every call makes the context current first.
unsafe impl Send for DeviceInner {}
// SAFETY: as above; mutable state sits behind mutexes.
unsafe impl Sync for DeviceInner {}

impl std::fmt::Debug for DeviceInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaDevice")
            .field("index", &self.index)
            .field("name", &self.props.name)
            .finish()
    }
}

impl DeviceInner {
    /// Opens device `ordinal` (the driver is initialised).
    pub(crate) fn open(ordinal: usize) -> Result<Arc<DeviceInner>> {
        let cu_device = sys::device_get(ordinal)?;
        let props = DeviceProperties {
            name: sys::device_name(cu_device)?,
            total_memory: sys::device_total_mem(cu_device)?,
            multiprocessors: sys::device_sm_count(cu_device)?,
            compute_capability: sys::device_compute_capability(cu_device)?,
            l2_cache_bytes: sys::device_l2_cache_bytes(cu_device)?,
            shared_memory_per_block_optin: sys::device_shared_memory_per_block_optin(cu_device)?,
        };
        if !sys::device_supports_pools(cu_device)? {
            return Err(crate::Error::CudaUnavailable {
                reason: format!(
                    "device {ordinal} ({}) does not support stream-ordered memory pools",
                    props.name
                ),
            });
        }
        let ctx = sys::primary_ctx_retain(cu_device)?;
        let setup = || -> Result<_> {
            // SAFETY: `ctx` was just retained.
            unsafe { sys::ctx_make_current(ctx)? };
            // SAFETY: the context is current.
            let priority_range = unsafe { sys::ctx_stream_priority_range()? };
            let pool = sys::device_default_mem_pool(cu_device)?;
            // SAFETY: `pool` is the device's live default pool.
            unsafe { sys::mem_pool_set_release_threshold(pool, u64::MAX)? };
            // SAFETY: the context is current.
            let alloc_stream = unsafe { sys::stream_create(priority_range.0)? };
            Ok((priority_range, pool, alloc_stream))
        };
        let (priority_range, pool, alloc_stream) = match setup() {
            Ok(v) => v,
            Err(e) => {
                // SAFETY: balances the retain above; nothing was created in it.
                let _ = unsafe { sys::primary_ctx_release(cu_device) };
                return Err(e);
            }
        };
        let watcher = Watcher::spawn(ordinal, ctx)?;
        Ok(Arc::new(DeviceInner {
            index: ordinal,
            cu_device,
            ctx,
            props,
            priority_range,
            pool,
            alloc_stream,
            transfer_stream: OnceLock::new(),
            sync_events: Mutex::new(Vec::new()),
            timing_events: Mutex::new(Vec::new()),
            modules: Mutex::new(HashMap::new()),
            loaded_sources: Mutex::new(HashMap::new()),
            watcher,
        }))
    }

    /// Makes this device's context current on the calling thread.
    pub(crate) fn bind(&self) -> Result<()> {
        // SAFETY: `ctx` stays retained for the life of `self`.
        unsafe { sys::ctx_make_current(self.ctx) }
    }

    /// The stream priority value for `high`.
    pub(crate) fn priority_value(&self, high: bool) -> i32 {
        if high {
            self.priority_range.1
        } else {
            self.priority_range.0
        }
    }

    /// The internal transfer stream (created on first use, highest priority).
    pub(crate) fn transfer_stream(&self) -> Result<sys::CUstream> {
        if let Some(s) = self.transfer_stream.get() {
            return Ok(*s);
        }
        self.bind()?;
        // SAFETY: the context is current.
        let s = unsafe { sys::stream_create(self.priority_range.1)? };
        if self.transfer_stream.set(s).is_err() {
            // Another thread won the race: keep its stream.
            // SAFETY: `s` was created above and never used.
            let _ = unsafe { sys::stream_destroy(s) };
        }
        Ok(*self.transfer_stream.get().unwrap_or(&s))
    }

    /// Takes an event of `kind` from the free list, or creates one.
    pub(crate) fn take_event(&self, kind: EventKind) -> Result<sys::CUevent> {
        let list = match kind {
            EventKind::Sync => &self.sync_events,
            EventKind::Timing => &self.timing_events,
        };
        if let Some(e) = list.lock().pop() {
            return Ok(e);
        }
        self.bind()?;
        // SAFETY: the context is current.
        unsafe { sys::event_create(kind == EventKind::Timing) }
    }

    /// Returns an event to the free list (no driver call, so safe inside host callbacks).
    pub(crate) fn return_event(&self, kind: EventKind, event: sys::CUevent) {
        match kind {
            EventKind::Sync => self.sync_events.lock().push(event),
            EventKind::Timing => self.timing_events.lock().push(event),
        }
    }
}

impl Drop for DeviceInner {
    fn drop(&mut self) {
        if self.bind().is_err() {
            return;
        }
        for m in self.modules.get_mut().drain() {
            // SAFETY: the context is current; launches need a stream of this device, and every
            // stream holds an `Arc` to it, so no function of the module can be used any more.
            let _ = unsafe { sys::module_unload(m.1.raw) };
        }
        for e in self
            .sync_events
            .get_mut()
            .drain(..)
            .chain(self.timing_events.get_mut().drain(..))
        {
            // SAFETY: free-listed events are owned by the list alone.
            let _ = unsafe { sys::event_destroy(e) };
        }
        // SAFETY: all allocations hold an `Arc` to this device, so none is outstanding; the
        // streams are used by nothing else.
        unsafe {
            let _ = sys::stream_synchronize(self.alloc_stream);
            let _ = sys::stream_destroy(self.alloc_stream);
            if let Some(s) = self.transfer_stream.get() {
                let _ = sys::stream_destroy(*s);
            }
            let _ = sys::primary_ctx_release(self.cu_device);
        }
    }
}
