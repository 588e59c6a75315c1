//! Host-backend memory: plain, separately allocated heap blocks.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::any::Any;
use std::ptr::NonNull;

use crate::backend::{MemoryLocation, RawMemory};
use crate::error::{Error, Result};

/// Alignment of every host-backend allocation (matches CUDA's 256-byte allocation granule).
const ALIGN: usize = 256;

/// A zero-initialised heap block standing in for device or pinned memory.
#[derive(Debug)]
pub struct HostMemory {
    ptr: NonNull<u8>,
    len: usize,
    location: MemoryLocation,
}

// SAFETY: `HostMemory` owns its block; all access goes through raw pointers whose
// synchronisation is the stream/event protocol of the runtime, exactly as for device memory.
unsafe impl Send for HostMemory {}
// SAFETY: as above; `&HostMemory` exposes only the address, never a reference to the bytes.
unsafe impl Sync for HostMemory {}

impl HostMemory {
    /// Allocates `len` zeroed bytes (at least one byte is reserved so the pointer is unique).
    pub fn new(location: MemoryLocation, len: usize) -> Result<Self> {
        let layout =
            Layout::from_size_align(len.max(1), ALIGN).map_err(|_| Error::OutOfMemory {
                bytes: len,
                location: format!("{location:?}"),
                source: None,
            })?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| Error::OutOfMemory {
            bytes: len,
            location: format!("{location:?}"),
            source: None,
        })?;
        Ok(HostMemory { ptr, len, location })
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len.max(1), ALIGN)
            .expect("layout was valid at allocation");
        // SAFETY: `ptr` came from `alloc_zeroed` with this same layout and is freed once.
        unsafe { dealloc(self.ptr.as_ptr(), layout) };
    }
}

impl RawMemory for HostMemory {
    fn location(&self) -> MemoryLocation {
        self.location
    }
    fn len_bytes(&self) -> usize {
        self.len
    }
    fn host_ptr(&self) -> Option<NonNull<u8>> {
        Some(self.ptr)
    }
    fn device_ptr(&self) -> Option<u64> {
        None
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
