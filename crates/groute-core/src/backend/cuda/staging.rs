//! Pinned host staging buffers for copies between devices without peer access, recycled
//! through a small pool so the hot path does not call `cuMemHostAlloc`.

use std::any::Any;
use std::ptr::NonNull;
use std::sync::Arc;

use parking_lot::Mutex;

use super::device::DeviceInner;
use super::memory::CudaMemory;
use crate::backend::{MemoryLocation, RawMemory};
use crate::error::Result;

/// Buffers kept for reuse at most.
const MAX_POOLED: usize = 8;

/// Recycled pinned buffers of one backend.
#[derive(Default)]
pub(crate) struct StagingPool {
    free: Mutex<Vec<CudaMemory>>,
}

impl StagingPool {
    /// A pinned buffer of at least `bytes` bytes, returned to the pool when the last `Arc`
    /// drops (after the copies using it complete: streams keep it alive until then).
    pub(crate) fn take(
        self: &Arc<Self>,
        device: &Arc<DeviceInner>,
        bytes: usize,
    ) -> Result<Arc<StagingBuffer>> {
        let reused = {
            let mut free = self.free.lock();
            free.iter()
                .position(|m| m.len_bytes() >= bytes)
                .map(|i| free.swap_remove(i))
        };
        let memory = match reused {
            Some(m) => m,
            None => CudaMemory::host(device, bytes.next_power_of_two().max(1 << 16), false)?,
        };
        Ok(Arc::new(StagingBuffer {
            memory: Some(memory),
            pool: self.clone(),
        }))
    }
}

/// A pooled pinned buffer.
pub(crate) struct StagingBuffer {
    memory: Option<CudaMemory>,
    pool: Arc<StagingPool>,
}

impl std::fmt::Debug for StagingBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StagingBuffer").field(&self.memory).finish()
    }
}

impl StagingBuffer {
    /// The underlying allocation.
    pub(crate) fn memory(&self) -> &CudaMemory {
        // Invariant: `memory` is `Some` until drop.
        self.memory.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl RawMemory for StagingBuffer {
    fn location(&self) -> MemoryLocation {
        MemoryLocation::PinnedHost
    }
    fn len_bytes(&self) -> usize {
        self.memory().len_bytes()
    }
    fn host_ptr(&self) -> Option<NonNull<u8>> {
        self.memory().host_ptr()
    }
    fn device_ptr(&self) -> Option<u64> {
        None
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for StagingBuffer {
    fn drop(&mut self) {
        if let Some(m) = self.memory.take() {
            let mut free = self.pool.free.lock();
            if free.len() < MAX_POOLED {
                free.push(m);
            } else {
                drop(free);
                drop(m);
            }
        }
    }
}
