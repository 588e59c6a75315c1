//! Devices, their primary contexts, peer access and memory pools.

use std::ffi::{CStr, c_char, c_int};
use std::mem::MaybeUninit;
use std::ptr;

use cudarc::driver::sys;

use super::{CUcontext, CUdevice, CUmemoryPool, check};
use crate::error::Result;

/// Number of CUDA devices (after [`init_driver`](super::init_driver)).
pub(crate) fn device_count() -> Result<usize> {
    let mut n: c_int = 0;
    // SAFETY: `n` is a valid out-pointer.
    check(unsafe { sys::cuDeviceGetCount(&mut n) }, "cuDeviceGetCount")?;
    Ok(n.max(0) as usize)
}

/// The device handle of ordinal `ordinal`.
pub(crate) fn device_get(ordinal: usize) -> Result<CUdevice> {
    let mut dev = MaybeUninit::uninit();
    check(
        // SAFETY: `dev` is a valid out-pointer; an invalid ordinal is reported as an error.
        unsafe { sys::cuDeviceGet(dev.as_mut_ptr(), ordinal as c_int) },
        "cuDeviceGet",
    )?;
    // SAFETY: initialised by the successful call above.
    Ok(unsafe { dev.assume_init() })
}

/// The device's marketing name.
pub(crate) fn device_name(dev: CUdevice) -> Result<String> {
    let mut buf = [0 as c_char; 256];
    check(
        // SAFETY: `buf` holds 256 bytes and the driver writes at most `len` bytes, NUL included.
        unsafe { sys::cuDeviceGetName(buf.as_mut_ptr(), buf.len() as c_int, dev) },
        "cuDeviceGetName",
    )?;
    // SAFETY: the driver NUL-terminates the name inside `buf`.
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

/// Total memory of the device in bytes.
pub(crate) fn device_total_mem(dev: CUdevice) -> Result<u64> {
    let mut bytes: usize = 0;
    check(
        // SAFETY: `bytes` is a valid out-pointer.
        unsafe { sys::cuDeviceTotalMem_v2(&mut bytes, dev) },
        "cuDeviceTotalMem",
    )?;
    Ok(bytes as u64)
}

/// One integer attribute of the device.
pub(crate) fn device_attribute(dev: CUdevice, attr: sys::CUdevice_attribute) -> Result<i32> {
    let mut v: c_int = 0;
    check(
        // SAFETY: `v` is a valid out-pointer.
        unsafe { sys::cuDeviceGetAttribute(&mut v, attr, dev) },
        "cuDeviceGetAttribute",
    )?;
    Ok(v)
}

/// Number of multiprocessors.
pub(crate) fn device_sm_count(dev: CUdevice) -> Result<u32> {
    device_attribute(
        dev,
        sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
    )
    .map(|v| v.max(0) as u32)
}

/// Bytes of the L2 cache.
pub(crate) fn device_l2_cache_bytes(dev: CUdevice) -> Result<u64> {
    device_attribute(
        dev,
        sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
    )
    .map(|v| v.max(0) as u64)
}

/// Bytes of shared memory a block may opt into.
pub(crate) fn device_shared_memory_per_block_optin(dev: CUdevice) -> Result<u32> {
    device_attribute(
        dev,
        sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
    )
    .map(|v| v.max(0) as u32)
}

/// Compute capability `(major, minor)`.
pub(crate) fn device_compute_capability(dev: CUdevice) -> Result<(u32, u32)> {
    let major = device_attribute(
        dev,
        sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
    )?;
    let minor = device_attribute(
        dev,
        sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
    )?;
    Ok((major.max(0) as u32, minor.max(0) as u32))
}

/// Whether the device supports stream-ordered memory pools.
pub(crate) fn device_supports_pools(dev: CUdevice) -> Result<bool> {
    device_attribute(
        dev,
        sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
    )
    .map(|v| v != 0)
}

/// Retains the device's primary context.
pub(crate) fn primary_ctx_retain(dev: CUdevice) -> Result<CUcontext> {
    let mut ctx = ptr::null_mut();
    check(
        // SAFETY: `ctx` is a valid out-pointer; `dev` came from `cuDeviceGet`.
        unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, dev) },
        "cuDevicePrimaryCtxRetain",
    )?;
    Ok(ctx)
}

/// Releases one retain of the device's primary context.
///
/// # Safety
/// Balanced with one successful [`primary_ctx_retain`]; no handle created in the context is used
/// afterwards unless another retain keeps it alive.
pub(crate) unsafe fn primary_ctx_release(dev: CUdevice) -> Result<()> {
    check(
        // SAFETY: the caller balances retains and releases.
        unsafe { sys::cuDevicePrimaryCtxRelease_v2(dev) },
        "cuDevicePrimaryCtxRelease",
    )
}

/// Makes `ctx` current on the calling thread if it is not already.
///
/// # Safety
/// `ctx` is a live context (a retained primary context).
pub(crate) unsafe fn ctx_make_current(ctx: CUcontext) -> Result<()> {
    let mut cur = ptr::null_mut();
    // SAFETY: `cur` is a valid out-pointer.
    check(unsafe { sys::cuCtxGetCurrent(&mut cur) }, "cuCtxGetCurrent")?;
    if cur != ctx {
        // SAFETY: `ctx` is live (caller's guarantee).
        check(unsafe { sys::cuCtxSetCurrent(ctx) }, "cuCtxSetCurrent")?;
    }
    Ok(())
}

/// `(least, greatest)` stream priorities of the current context (numerically, greatest <= least).
///
/// # Safety
/// A context is current on this thread.
pub(crate) unsafe fn ctx_stream_priority_range() -> Result<(i32, i32)> {
    let (mut least, mut greatest) = (0, 0);
    check(
        // SAFETY: valid out-pointers; a context is current.
        unsafe { sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest) },
        "cuCtxGetStreamPriorityRange",
    )?;
    Ok((least, greatest))
}

/// Whether `dev` can access `peer`'s memory directly.
pub(crate) fn device_can_access_peer(dev: CUdevice, peer: CUdevice) -> Result<bool> {
    let mut can: c_int = 0;
    check(
        // SAFETY: valid out-pointer; both handles came from `cuDeviceGet`.
        unsafe { sys::cuDeviceCanAccessPeer(&mut can, dev, peer) },
        "cuDeviceCanAccessPeer",
    )?;
    Ok(can != 0)
}

/// Enables access from the current context to `peer`'s memory (already enabled is success).
///
/// # Safety
/// A context is current on this thread and `peer` is a live context of another device.
pub(crate) unsafe fn ctx_enable_peer_access(peer: CUcontext) -> Result<()> {
    // SAFETY: caller's guarantee.
    let status = unsafe { sys::cuCtxEnablePeerAccess(peer, 0) };
    if status == sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
        return Ok(());
    }
    check(status, "cuCtxEnablePeerAccess")
}

// ------------------------------------------------------------------------------------------
// Memory pools
// ------------------------------------------------------------------------------------------

/// The device's default memory pool.
pub(crate) fn device_default_mem_pool(dev: CUdevice) -> Result<CUmemoryPool> {
    let mut pool = ptr::null_mut();
    check(
        // SAFETY: valid out-pointer; `dev` came from `cuDeviceGet`.
        unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, dev) },
        "cuDeviceGetDefaultMemPool",
    )?;
    Ok(pool)
}

/// Keeps up to `bytes` of freed memory cached in `pool` instead of returning it to the OS at
/// every synchronisation.
///
/// # Safety
/// `pool` is a live pool.
pub(crate) unsafe fn mem_pool_set_release_threshold(pool: CUmemoryPool, bytes: u64) -> Result<()> {
    let mut v: u64 = bytes;
    check(
        // SAFETY: the release-threshold attribute takes a pointer to a `cuuint64_t`.
        unsafe {
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut v as *mut u64).cast(),
            )
        },
        "cuMemPoolSetAttribute(RELEASE_THRESHOLD)",
    )
}

/// Grants device `accessor` read-write access to memory allocated from `pool`.
///
/// # Safety
/// `pool` is a live pool of another device.
pub(crate) unsafe fn mem_pool_grant_access(pool: CUmemoryPool, accessor: usize) -> Result<()> {
    let desc = sys::CUmemAccessDesc {
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: accessor as c_int,
        },
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    check(
        // SAFETY: one valid descriptor.
        unsafe { sys::cuMemPoolSetAccess(pool, &desc, 1) },
        "cuMemPoolSetAccess",
    )
}
