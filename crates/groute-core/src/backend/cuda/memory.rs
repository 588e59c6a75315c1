//! CUDA allocations: device memory from the device's stream-ordered pool, and page-locked host
//! memory (pinned for staging, or mapped into every device for flags).

use std::any::Any;
use std::ptr::NonNull;
use std::sync::Arc;

use super::callback::in_host_callback;
use super::device::DeviceInner;
use super::sys;
use crate::backend::{MemoryLocation, RawMemory};
use crate::error::{Error, Result};

/// One CUDA allocation (the CUDA backend's [`RawMemory`]).
pub struct CudaMemory {
    /// Device memory: the owning device; host memory: the device whose context allocated it
    /// (the memory is portable, usable from every context).
    device: Arc<DeviceInner>,
    location: MemoryLocation,
    bytes: usize,
    /// Unified virtual address (device pointer, or the host pointer for host memory).
    uva: u64,
    /// Device address of mapped host memory.
    mapped_device: u64,
}

// SAFETY: the allocation is plain memory owned by this value; the driver allows it to be
// freed from any thread.
unsafe impl Send for CudaMemory {}
// SAFETY: the value is immutable after construction.
unsafe impl Sync for CudaMemory {}

impl std::fmt::Debug for CudaMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaMemory")
            .field("location", &self.location)
            .field("bytes", &self.bytes)
            .field("address", &format_args!("{:#x}", self.uva))
            .finish()
    }
}

fn oom_or(err: Error, bytes: usize, location: MemoryLocation) -> Error {
    if sys::is_out_of_memory(&err) {
        Error::OutOfMemory {
            bytes,
            location: format!("{location:?}"),
            source: Some(Box::new(err)),
        }
    } else {
        err
    }
}

impl CudaMemory {
    /// Allocates `bytes` of device memory on `device` (usable on every stream on return).
    pub(crate) fn device(device: &Arc<DeviceInner>, bytes: usize) -> Result<CudaMemory> {
        let location = MemoryLocation::Device(device.index);
        let mut uva = 0;
        if bytes > 0 {
            device.bind()?;
            // SAFETY: pool and stream belong to `device`; the synchronisation below makes the
            // memory usable from every stream before it is handed out.
            uva = unsafe {
                sys::mem_alloc_from_pool_async(bytes, device.pool, device.alloc_stream)
                    .map_err(|e| oom_or(e, bytes, location))?
            };
            // SAFETY: the allocation stream is live.
            unsafe { sys::stream_synchronize(device.alloc_stream)? };
        }
        Ok(CudaMemory {
            device: device.clone(),
            location,
            bytes,
            uva,
            mapped_device: 0,
        })
    }

    /// Allocates `bytes` of page-locked host memory through `device`'s context.
    pub(crate) fn host(
        device: &Arc<DeviceInner>,
        bytes: usize,
        mapped: bool,
    ) -> Result<CudaMemory> {
        let location = if mapped {
            MemoryLocation::MappedHost
        } else {
            MemoryLocation::PinnedHost
        };
        let (mut uva, mut mapped_device) = (0, 0);
        if bytes > 0 {
            device.bind()?;
            // SAFETY: the context is current.
            let p = unsafe {
                sys::mem_host_alloc(bytes, mapped).map_err(|e| oom_or(e, bytes, location))?
            };
            uva = p as u64;
            if mapped {
                // SAFETY: `p` is mapped host memory; the context is current.
                mapped_device = match unsafe { sys::mem_host_device_pointer(p) } {
                    Ok(d) => d,
                    Err(e) => {
                        // SAFETY: `p` was allocated above and is used by nothing.
                        let _ = unsafe { sys::mem_free_host(p) };
                        return Err(e);
                    }
                };
            }
        }
        Ok(CudaMemory {
            device: device.clone(),
            location,
            bytes,
            uva,
            mapped_device,
        })
    }

    /// Downcasts seam memory to CUDA memory.
    pub fn from_raw(memory: &dyn RawMemory) -> Result<&CudaMemory> {
        memory
            .as_any()
            .downcast_ref::<CudaMemory>()
            .or_else(|| {
                memory
                    .as_any()
                    .downcast_ref::<super::staging::StagingBuffer>()
                    .map(|s| s.memory())
            })
            .ok_or(Error::Unsupported {
                operation: "using memory of another backend",
                backend: "cuda",
            })
    }

    /// The unified virtual address of the first byte (valid in copies from every context).
    pub fn address(&self) -> u64 {
        self.uva
    }
}

impl RawMemory for CudaMemory {
    fn location(&self) -> MemoryLocation {
        self.location
    }

    fn len_bytes(&self) -> usize {
        self.bytes
    }

    fn host_ptr(&self) -> Option<NonNull<u8>> {
        match self.location {
            MemoryLocation::Device(_) => None,
            _ => NonNull::new(self.uva as *mut u8),
        }
    }

    fn device_ptr(&self) -> Option<u64> {
        match self.location {
            MemoryLocation::Device(_) => Some(self.uva),
            MemoryLocation::MappedHost => Some(self.mapped_device),
            MemoryLocation::PinnedHost => None,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for CudaMemory {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        let (device, location, uva) = (self.device.clone(), self.location, self.uva);
        let free = move || {
            if device.bind().is_err() {
                return;
            }
            match location {
                MemoryLocation::Device(_) => {
                    // SAFETY: the backend drops memory only once every operation handed it has
                    // completed (keep-alive lists), so no enqueued work uses it; ordering the free
                    // on the allocation stream lets the pool reuse it at once.
                    let _ = unsafe { sys::mem_free_async(uva, device.alloc_stream) };
                }
                _ => {
                    // SAFETY: as above; host memory is freed once, here.
                    let _ = unsafe { sys::mem_free_host(uva as *mut u8) };
                }
            }
        };
        if in_host_callback() {
            // No driver calls inside a CUDA host callback: free on the service thread.
            self.device.watcher.defer(Box::new(free));
        } else {
            free();
        }
    }
}
