//! Device and pinned host memory, copies and fills.

use std::ffi::c_void;
use std::ptr;

use cudarc::driver::sys;

use super::{CUcontext, CUdeviceptr, CUmemoryPool, CUstream, check};
use crate::error::Result;

/// Allocates `bytes` from `pool` in `s`'s order.
///
/// # Safety
/// `pool` and `s` are live and belong to the same device; the memory may be used by other
/// streams only after `s` has been synchronised (or waited on with an event).
pub(crate) unsafe fn mem_alloc_from_pool_async(
    bytes: usize,
    pool: CUmemoryPool,
    s: CUstream,
) -> Result<CUdeviceptr> {
    let mut p: CUdeviceptr = 0;
    check(
        // SAFETY: valid out-pointer; caller's guarantee for the handles.
        unsafe { sys::cuMemAllocFromPoolAsync(&mut p, bytes, pool, s) },
        "cuMemAllocFromPoolAsync",
    )?;
    Ok(p)
}

/// Frees pool memory in `s`'s order.
///
/// # Safety
/// `p` came from [`mem_alloc_from_pool_async`], is freed once, and no enqueued or future work
/// uses it after this point in `s`'s order (the backend's keep-alive lists guarantee this).
pub(crate) unsafe fn mem_free_async(p: CUdeviceptr, s: CUstream) -> Result<()> {
    // SAFETY: caller's guarantee.
    check(unsafe { sys::cuMemFreeAsync(p, s) }, "cuMemFreeAsync")
}

/// Allocates page-locked host memory (`mapped`: also mapped into every device's address space).
/// Portable (usable from every context), never write-combined, so host reads stay cached.
///
/// # Safety
/// A context is current on this thread.
pub(crate) unsafe fn mem_host_alloc(bytes: usize, mapped: bool) -> Result<*mut u8> {
    let mut flags = sys::CU_MEMHOSTALLOC_PORTABLE;
    if mapped {
        flags |= sys::CU_MEMHOSTALLOC_DEVICEMAP;
    }
    let mut p: *mut c_void = ptr::null_mut();
    check(
        // SAFETY: valid out-pointer; a context is current.
        unsafe { sys::cuMemHostAlloc(&mut p, bytes, flags) },
        "cuMemHostAlloc",
    )?;
    Ok(p.cast())
}

/// Frees memory from [`mem_host_alloc`].
///
/// # Safety
/// `p` came from [`mem_host_alloc`], is freed once, and nothing uses it any more.
pub(crate) unsafe fn mem_free_host(p: *mut u8) -> Result<()> {
    // SAFETY: caller's guarantee.
    check(unsafe { sys::cuMemFreeHost(p.cast()) }, "cuMemFreeHost")
}

/// The device address of mapped host memory.
///
/// # Safety
/// `p` came from [`mem_host_alloc`] with `mapped`; a context is current.
pub(crate) unsafe fn mem_host_device_pointer(p: *mut u8) -> Result<CUdeviceptr> {
    let mut d: CUdeviceptr = 0;
    check(
        // SAFETY: valid out-pointer; caller's guarantee.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut d, p.cast(), 0) },
        "cuMemHostGetDevicePointer",
    )?;
    Ok(d)
}

/// Copies `bytes` between two unified addresses in `s`'s order.
///
/// # Safety
/// Both ranges are valid for `bytes` bytes until the copy completes, reachable from `s`'s
/// device, and `s` is live.
pub(crate) unsafe fn memcpy_async(
    dst: CUdeviceptr,
    src: CUdeviceptr,
    bytes: usize,
    s: CUstream,
) -> Result<()> {
    check(
        // SAFETY: caller's guarantee.
        unsafe { sys::cuMemcpyAsync(dst, src, bytes, s) },
        "cuMemcpyAsync",
    )
}

/// Copies `bytes` from device memory of `src_ctx` to device memory of `dst_ctx`.
///
/// # Safety
/// As [`memcpy_async`]; the contexts own the respective ranges.
pub(crate) unsafe fn memcpy_peer_async(
    dst: CUdeviceptr,
    dst_ctx: CUcontext,
    src: CUdeviceptr,
    src_ctx: CUcontext,
    bytes: usize,
    s: CUstream,
) -> Result<()> {
    check(
        // SAFETY: caller's guarantee.
        unsafe { sys::cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, bytes, s) },
        "cuMemcpyPeerAsync",
    )
}

/// Fills `count` 32-bit words at `dst` with `value`.
///
/// # Safety
/// `dst` is valid for `4 * count` bytes until the fill completes; `s` is live.
pub(crate) unsafe fn memset_d32_async(
    dst: CUdeviceptr,
    value: u32,
    count: usize,
    s: CUstream,
) -> Result<()> {
    check(
        // SAFETY: caller's guarantee.
        unsafe { sys::cuMemsetD32Async(dst, value, count, s) },
        "cuMemsetD32Async",
    )
}

// ------------------------------------------------------------------------------------------
