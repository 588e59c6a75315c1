//! The one fenced module with every raw CUDA driver and NVRTC call.
//!
//! Everything else in the CUDA backend goes through these wrappers. Each wrapper that takes a
//! raw handle is an `unsafe fn` whose `# Safety` section says what the caller guarantees
//! (handles alive, pointers valid for the byte count, the right context current); wrappers that
//! take only plain values are safe. Errors keep the driver's code as their source
//! ([`Error::Driver`]) and the name of the call that failed.
//!
//! Loading: cudarc is built with `dynamic-loading`, and its first call into a library that
//! cannot be loaded panics. [`driver_library_present`] and [`nvrtc_library_present`] check for
//! the libraries first (and [`catch_driver_panic`] is a second line of defence), so a machine
//! without CUDA gets an [`Error::CudaUnavailable`] value, never a panic.

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::OnceLock;

use cudarc::driver::result::DriverError;
use cudarc::driver::sys;
use cudarc::nvrtc::sys as nvrtc_sys;

use crate::error::{Error, Result};

pub(crate) use sys::{CUcontext, CUdevice, CUdeviceptr, CUevent, CUfunction, CUmodule, CUstream};
/// A memory pool handle.
pub(crate) type CUmemoryPool = sys::CUmemoryPool;

/// Turns a driver status into a [`Result`], naming the call.
fn check(status: sys::CUresult, call: &'static str) -> Result<()> {
    status.result().map_err(|e| Error::driver(call, e))
}

/// True when `status` is the driver's out-of-memory code.
pub(crate) fn is_out_of_memory(err: &Error) -> bool {
    match err {
        Error::Driver { source, .. } => source
            .downcast_ref::<DriverError>()
            .is_some_and(|e| e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY),
        _ => false,
    }
}

/// Runs `f`, turning a panic inside cudarc (a missing library or symbol) into
/// [`Error::CudaUnavailable`].
pub(crate) fn catch_driver_panic<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(Error::CudaUnavailable {
                reason: format!("{what}: {msg}"),
            })
        }
    }
}

// ------------------------------------------------------------------------------------------
// Libraries
// ------------------------------------------------------------------------------------------

/// Directories where a CUDA toolkit or the pinned PyPI NVRTC may keep `libnvrtc.so.13`, for
/// when the dynamic loader's search path does not include them.
fn nvrtc_search_dirs() -> Vec<std::path::PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os("GROUTE_NVRTC_LIB_DIR") {
        dirs.push(d.into());
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var) {
            let home = std::path::PathBuf::from(home);
            dirs.push(home.join("lib64"));
            dirs.push(home.join("lib"));
        }
    }
    dirs.push("/usr/local/cuda/lib64".into());
    dirs.push("/usr/local/cuda-13.0/lib64".into());
    dirs.push("/usr/local/cuda/targets/x86_64-linux/lib".into());
    dirs
}

/// True when the CUDA driver library (`libcuda.so.1`) can be loaded. Never panics.
pub(crate) fn driver_library_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        // SAFETY: `is_culib_present` only tries `dlopen` on the library's well-known names and
        // closes what it opened; loading libcuda runs no user-visible initialisers.
        catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false)
    })
}

/// True when NVRTC (`libnvrtc.so.13`) can be loaded. If the loader's default search path does
/// not find it, the toolkit directories (`GROUTE_NVRTC_LIB_DIR`, `CUDA_HOME/lib64`,
/// `/usr/local/cuda/lib64`) are tried and a library found there is kept loaded, so that
/// cudarc's later `dlopen("libnvrtc.so.13")` resolves to it by its soname. Never panics.
pub(crate) fn nvrtc_library_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        // SAFETY: as for the driver: a `dlopen` probe of NVRTC's names, closed again.
        if catch_unwind(|| unsafe { nvrtc_sys::is_culib_present() }).unwrap_or(false) {
            return true;
        }
        for dir in nvrtc_search_dirs() {
            let path = dir.join("libnvrtc.so.13");
            if !path.exists() {
                continue;
            }
            // NVRTC loads its builtins library by soname at compile time: keep it resident too.
            let builtins = dir.join("libnvrtc-builtins.so.13.0");
            if builtins.exists() {
                // SAFETY: as below, for NVRTC's own builtins library.
                if let Ok(lib) = unsafe { libloading::Library::new(&builtins) } {
                    std::mem::forget(lib);
                }
            }
            // SAFETY: loading NVRTC runs only its own initialisers; the handle is leaked on
            // purpose so the library stays resident for cudarc's soname lookup.
            if let Ok(lib) = unsafe { libloading::Library::new(&path) } {
                std::mem::forget(lib);
                // SAFETY: as above.
                if catch_unwind(|| unsafe { nvrtc_sys::is_culib_present() }).unwrap_or(false) {
                    return true;
                }
            }
        }
        false
    })
}

/// Driver entry points the backend uses; checked once at start so that a driver too old to
/// have one of them is reported as [`Error::CudaUnavailable`] rather than a panic later.
const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceTotalMem_v2",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxGetCurrent",
    "cuCtxGetStreamPriorityRange",
    "cuDeviceCanAccessPeer",
    "cuCtxEnablePeerAccess",
    "cuDeviceGetDefaultMemPool",
    "cuMemPoolSetAttribute",
    "cuMemPoolSetAccess",
    "cuStreamCreateWithPriority",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamWaitEvent",
    "cuLaunchHostFunc",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventQuery",
    "cuEventSynchronize",
    "cuEventElapsedTime_v2",
    "cuEventDestroy_v2",
    "cuMemAllocFromPoolAsync",
    "cuMemFreeAsync",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuMemHostGetDevicePointer_v2",
    "cuMemcpyAsync",
    "cuMemcpyPeerAsync",
    "cuMemsetD32Async",
    "cuModuleLoadData",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuLaunchKernel",
    "cuLaunchCooperativeKernel",
    "cuLaunchKernelEx",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    "cuOccupancyMaxActiveClusters",
];

/// Loads the driver, checks its entry points and runs `cuInit`. Never panics.
pub(crate) fn init_driver() -> Result<()> {
    if !driver_library_present() {
        return Err(Error::CudaUnavailable {
            reason: "the CUDA driver library (libcuda.so.1) was not found; no NVIDIA driver is \
                     installed on this machine"
                .into(),
        });
    }
    catch_driver_panic("loading the CUDA driver", || {
        // SAFETY: the library is present (checked above); `culib` loads it once and keeps it.
        let lib = unsafe { sys::culib() };
        let missing: Vec<&str> = DRIVER_SYMBOLS
            .iter()
            .copied()
            // SAFETY: looking a symbol up does not call it; the pointer type is never used.
            .filter(|name| unsafe { lib.get::<*const c_void>(name.as_bytes()) }.is_err())
            .collect();
        if !missing.is_empty() {
            return Err(Error::CudaUnavailable {
                reason: format!(
                    "the CUDA driver is too old: it lacks {}; install driver 580 or later",
                    missing.join(", ")
                ),
            });
        }
        // SAFETY: `cuInit(0)` has no pointer arguments and may be called any number of times.
        check(unsafe { sys::cuInit(0) }, "cuInit")
    })
}

// ------------------------------------------------------------------------------------------
// Devices and contexts
// ------------------------------------------------------------------------------------------

/// Number of CUDA devices (after [`init_driver`]).
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

// ------------------------------------------------------------------------------------------
// Streams
// ------------------------------------------------------------------------------------------

/// Creates a non-blocking stream with `priority` in the current context.
///
/// # Safety
/// A context is current on this thread.
pub(crate) unsafe fn stream_create(priority: i32) -> Result<CUstream> {
    let mut s = ptr::null_mut();
    check(
        // SAFETY: valid out-pointer; a context is current.
        unsafe {
            sys::cuStreamCreateWithPriority(
                &mut s,
                sys::CUstream_flags::CU_STREAM_NON_BLOCKING as c_uint,
                priority,
            )
        },
        "cuStreamCreateWithPriority",
    )?;
    Ok(s)
}

/// Destroys a stream (work already enqueued still completes).
///
/// # Safety
/// `s` is a live stream not used again.
pub(crate) unsafe fn stream_destroy(s: CUstream) -> Result<()> {
    // SAFETY: caller's guarantee.
    check(unsafe { sys::cuStreamDestroy_v2(s) }, "cuStreamDestroy")
}

/// Blocks until all work on `s` has completed.
///
/// # Safety
/// `s` is a live stream.
pub(crate) unsafe fn stream_synchronize(s: CUstream) -> Result<()> {
    // SAFETY: caller's guarantee.
    check(
        unsafe { sys::cuStreamSynchronize(s) },
        "cuStreamSynchronize",
    )
}

/// Makes later work on `s` wait for the most recent recording of `e`.
///
/// # Safety
/// `s` and `e` are live.
pub(crate) unsafe fn stream_wait_event(s: CUstream, e: CUevent) -> Result<()> {
    // SAFETY: caller's guarantee.
    check(
        unsafe { sys::cuStreamWaitEvent(s, e, 0) },
        "cuStreamWaitEvent",
    )
}

/// Enqueues `f(data)` on `s`.
///
/// # Safety
/// `s` is live; `f` may be called with `data` on a driver thread once, and must make no CUDA
/// calls; `data` stays valid until then (and is not reclaimed by `f`'s caller if this fails).
pub(crate) unsafe fn launch_host_func(
    s: CUstream,
    f: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
) -> Result<()> {
    check(
        // SAFETY: caller's guarantee.
        unsafe { sys::cuLaunchHostFunc(s, Some(f), data) },
        "cuLaunchHostFunc",
    )
}

// ------------------------------------------------------------------------------------------
// Events
// ------------------------------------------------------------------------------------------

/// Creates an event in the current context (`timing` false: `CU_EVENT_DISABLE_TIMING`).
///
/// # Safety
/// A context is current on this thread.
pub(crate) unsafe fn event_create(timing: bool) -> Result<CUevent> {
    let flags = if timing {
        sys::CUevent_flags::CU_EVENT_DEFAULT
    } else {
        sys::CUevent_flags::CU_EVENT_DISABLE_TIMING
    };
    let mut e = ptr::null_mut();
    check(
        // SAFETY: valid out-pointer; a context is current.
        unsafe { sys::cuEventCreate(&mut e, flags as c_uint) },
        "cuEventCreate",
    )?;
    Ok(e)
}

/// Records `e` on `s`.
///
/// # Safety
/// `e` and `s` are live and belong to the same context.
pub(crate) unsafe fn event_record(e: CUevent, s: CUstream) -> Result<()> {
    // SAFETY: caller's guarantee.
    check(unsafe { sys::cuEventRecord(e, s) }, "cuEventRecord")
}

/// True once the most recent recording of `e` has completed.
///
/// # Safety
/// `e` is live.
pub(crate) unsafe fn event_query(e: CUevent) -> Result<bool> {
    // SAFETY: caller's guarantee.
    let status = unsafe { sys::cuEventQuery(e) };
    if status == sys::CUresult::CUDA_ERROR_NOT_READY {
        return Ok(false);
    }
    check(status, "cuEventQuery").map(|()| true)
}

/// Blocks until the most recent recording of `e` has completed.
///
/// # Safety
/// `e` is live.
pub(crate) unsafe fn event_synchronize(e: CUevent) -> Result<()> {
    // SAFETY: caller's guarantee.
    check(unsafe { sys::cuEventSynchronize(e) }, "cuEventSynchronize")
}

/// Milliseconds between two completed timing events.
///
/// # Safety
/// Both events are live.
pub(crate) unsafe fn event_elapsed_ms(start: CUevent, end: CUevent) -> Result<f32> {
    let mut ms = 0f32;
    check(
        // SAFETY: valid out-pointer; caller's guarantee for the handles.
        unsafe { sys::cuEventElapsedTime_v2(&mut ms, start, end) },
        "cuEventElapsedTime",
    )?;
    Ok(ms)
}

/// Destroys an event (a pending recording still completes; waiters already enqueued keep it).
///
/// # Safety
/// `e` is live and not used again.
pub(crate) unsafe fn event_destroy(e: CUevent) -> Result<()> {
    // SAFETY: caller's guarantee.
    check(unsafe { sys::cuEventDestroy_v2(e) }, "cuEventDestroy")
}

// ------------------------------------------------------------------------------------------
// Memory
// ------------------------------------------------------------------------------------------

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
// Modules and launches
// ------------------------------------------------------------------------------------------

/// Loads a PTX image into the current context (the driver JIT-compiles it for the device).
///
/// # Safety
/// A context is current on this thread.
pub(crate) unsafe fn module_load_ptx(ptx: &CStr) -> Result<CUmodule> {
    let mut m = ptr::null_mut();
    check(
        // SAFETY: `ptx` is NUL-terminated PTX text; valid out-pointer.
        unsafe { sys::cuModuleLoadData(&mut m, ptx.as_ptr().cast()) },
        "cuModuleLoadData",
    )?;
    Ok(m)
}

/// Unloads a module.
///
/// # Safety
/// `m` is live, its context is current, and none of its functions is used again.
pub(crate) unsafe fn module_unload(m: CUmodule) -> Result<()> {
    // SAFETY: caller's guarantee.
    check(unsafe { sys::cuModuleUnload(m) }, "cuModuleUnload")
}

/// Looks a kernel up by its (`extern "C"`) name.
///
/// # Safety
/// `m` is live.
pub(crate) unsafe fn module_get_function(m: CUmodule, name: &str) -> Result<CUfunction> {
    let cname = CString::new(name).map_err(|_| {
        Error::invalid(
            "kernel name",
            name,
            "a kernel name must not contain NUL bytes",
        )
    })?;
    let mut f = ptr::null_mut();
    check(
        // SAFETY: valid out-pointer and NUL-terminated name; caller's guarantee for `m`.
        unsafe { sys::cuModuleGetFunction(&mut f, m, cname.as_ptr()) },
        "cuModuleGetFunction",
    )?;
    Ok(f)
}

/// Grid and block shape of one launch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawLaunch {
    pub(crate) grid: (u32, u32, u32),
    pub(crate) block: (u32, u32, u32),
    pub(crate) shared_mem_bytes: u32,
}

/// Launches `f` on `s`.
///
/// # Safety
/// `params` holds one pointer per kernel parameter, each pointing at a value of exactly the
/// parameter's type and layout; device pointers among them are valid for every access the
/// kernel makes until it completes; `f` and `s` are live and belong to the same context.
pub(crate) unsafe fn launch_kernel(
    f: CUfunction,
    cfg: RawLaunch,
    s: CUstream,
    params: &mut [*mut c_void],
) -> Result<()> {
    check(
        // SAFETY: caller's guarantee.
        unsafe {
            sys::cuLaunchKernel(
                f,
                cfg.grid.0,
                cfg.grid.1,
                cfg.grid.2,
                cfg.block.0,
                cfg.block.1,
                cfg.block.2,
                cfg.shared_mem_bytes,
                s,
                params.as_mut_ptr(),
                ptr::null_mut(),
            )
        },
        "cuLaunchKernel",
    )
}

/// Launches `f` cooperatively (all blocks co-resident, grid-wide sync allowed).
///
/// # Safety
/// As [`launch_kernel`]; the grid must fit on the device at once (see
/// [`occupancy_max_active_blocks`]).
pub(crate) unsafe fn launch_cooperative_kernel(
    f: CUfunction,
    cfg: RawLaunch,
    s: CUstream,
    params: &mut [*mut c_void],
) -> Result<()> {
    check(
        // SAFETY: caller's guarantee.
        unsafe {
            sys::cuLaunchCooperativeKernel(
                f,
                cfg.grid.0,
                cfg.grid.1,
                cfg.grid.2,
                cfg.block.0,
                cfg.block.1,
                cfg.block.2,
                cfg.shared_mem_bytes,
                s,
                params.as_mut_ptr(),
            )
        },
        "cuLaunchCooperativeKernel",
    )
}

/// The launch configuration of `cuLaunchKernelEx` for `cfg` on `s` with `attrs`.
fn launch_config(
    cfg: RawLaunch,
    s: CUstream,
    attrs: &mut [sys::CUlaunchAttribute],
) -> sys::CUlaunchConfig {
    sys::CUlaunchConfig {
        gridDimX: cfg.grid.0,
        gridDimY: cfg.grid.1,
        gridDimZ: cfg.grid.2,
        blockDimX: cfg.block.0,
        blockDimY: cfg.block.1,
        blockDimZ: cfg.block.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: s,
        attrs: attrs.as_mut_ptr(),
        numAttrs: attrs.len() as c_uint,
    }
}

/// The cooperative attribute of `cuLaunchKernelEx`.
fn cooperative_attribute() -> sys::CUlaunchAttribute {
    // SAFETY: a plain C struct of integers and a union of plain data: all zeroes is valid.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr.value.cooperative = 1;
    attr
}

/// Launches `f`, a kernel compiled with cluster dimensions (`__cluster_dims__`), cooperatively
/// (`cuLaunchKernelEx` with the cooperative attribute): every cluster is formed as compiled,
/// and every block is resident at once.
///
/// # Safety
/// As [`launch_kernel`]; the grid is a multiple of the compiled cluster size and holds at
/// most the clusters that fit on the device at once (see
/// [`occupancy_max_active_clusters`]).
pub(crate) unsafe fn launch_cooperative_clusters(
    f: CUfunction,
    cfg: RawLaunch,
    s: CUstream,
    params: &mut [*mut c_void],
) -> Result<()> {
    let mut attrs = [cooperative_attribute()];
    let config = launch_config(cfg, s, &mut attrs);
    check(
        // SAFETY: `config` and its attribute outlive the call; caller's guarantee for the rest.
        unsafe { sys::cuLaunchKernelEx(&config, f, params.as_mut_ptr(), ptr::null_mut()) },
        "cuLaunchKernelEx",
    )
}

/// Clusters of `f` (a kernel compiled with clusters of `cluster` blocks) with blocks of
/// `block_size` threads that fit on the device at once.
///
/// # Safety
/// `f` is live and its context is current.
pub(crate) unsafe fn occupancy_max_active_clusters(
    f: CUfunction,
    cluster: u32,
    block_size: u32,
    dynamic_smem: u32,
) -> Result<u32> {
    let mut attrs = [cooperative_attribute()];
    let cfg = RawLaunch {
        grid: (cluster, 1, 1),
        block: (block_size, 1, 1),
        shared_mem_bytes: dynamic_smem,
    };
    let config = launch_config(cfg, ptr::null_mut(), &mut attrs);
    let mut n: c_int = 0;
    check(
        // SAFETY: valid out-pointer and configuration; caller's guarantee for `f`.
        unsafe { sys::cuOccupancyMaxActiveClusters(&mut n, f, &config) },
        "cuOccupancyMaxActiveClusters",
    )?;
    Ok(n.max(0) as u32)
}

/// Blocks of `block_size` threads of `f` that fit on one multiprocessor at once.
///
/// # Safety
/// `f` is live and its context is current.
pub(crate) unsafe fn occupancy_max_active_blocks(
    f: CUfunction,
    block_size: u32,
    dynamic_smem: usize,
) -> Result<u32> {
    let mut n: c_int = 0;
    check(
        // SAFETY: valid out-pointer; caller's guarantee.
        unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut n,
                f,
                block_size as c_int,
                dynamic_smem,
            )
        },
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    )?;
    Ok(n.max(0) as u32)
}

/// Loads `f` into its context now (`cuFuncLoad`, CUDA 12.4+), where the driver has the entry
/// point; else does nothing (the function loads at its first use). Under lazy module loading
/// (the default since CUDA 12.2) a function's first launch may wait for its context to go
/// idle; loading it ahead keeps that wait away from launches that must not block (the members
/// of a device-driven run, whose first member already waits for the others).
///
/// # Safety
/// `f` is a function of a live module; its context is current.
pub(crate) unsafe fn func_load(f: CUfunction) -> Result<()> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    let present = *PRESENT.get_or_init(|| {
        // SAFETY: the driver library was loaded at init; looking a symbol up calls nothing.
        catch_unwind(|| unsafe { sys::culib().get::<*const c_void>(b"cuFuncLoad").is_ok() })
            .unwrap_or(false)
    });
    if !present {
        return Ok(());
    }
    // SAFETY: caller's guarantee; the entry point exists (checked above).
    check(unsafe { sys::cuFuncLoad(f) }, "cuFuncLoad")
}

// ------------------------------------------------------------------------------------------
// NVRTC
// ------------------------------------------------------------------------------------------

/// Why an NVRTC compilation produced no PTX.
#[derive(Debug)]
pub(crate) enum NvrtcFailure {
    /// The library could not be loaded or lacks a symbol.
    Unavailable(String),
    /// An NVRTC call failed outside compilation proper.
    Call(&'static str, cudarc::nvrtc::result::NvrtcError),
    /// The source did not compile; NVRTC's log.
    Compile(String),
}

fn nvrtc_check(
    status: nvrtc_sys::nvrtcResult,
    call: &'static str,
) -> std::result::Result<(), NvrtcFailure> {
    status.result().map_err(|e| NvrtcFailure::Call(call, e))
}

/// NVRTC's version `(major, minor)`.
pub(crate) fn nvrtc_version() -> std::result::Result<(i32, i32), NvrtcFailure> {
    if !nvrtc_library_present() {
        return Err(NvrtcFailure::Unavailable(
            "libnvrtc.so.13 was not found (set LD_LIBRARY_PATH, CUDA_HOME or \
             GROUTE_NVRTC_LIB_DIR; `.ci/nvrtc.sh` installs the pinned CUDA 13.0 NVRTC)"
                .into(),
        ));
    }
    let r = catch_unwind(|| {
        let (mut major, mut minor) = (0, 0);
        nvrtc_check(
            // SAFETY: valid out-pointers; the library is present.
            unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) },
            "nvrtcVersion",
        )
        .map(|()| (major, minor))
    });
    r.unwrap_or_else(|_| Err(NvrtcFailure::Unavailable("NVRTC lacks nvrtcVersion".into())))
}

/// Owns an `nvrtcProgram` and destroys it on drop.
struct Program(nvrtc_sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by `nvrtcCreateProgram` and is destroyed once.
        let _ = unsafe { nvrtc_sys::nvrtcDestroyProgram(&mut self.0) };
    }
}

/// Reads a log or PTX buffer of `size` bytes through `get` and returns it as text.
fn nvrtc_text(size: usize, get: impl FnOnce(*mut c_char) -> nvrtc_sys::nvrtcResult) -> String {
    let mut buf = vec![0u8; size.max(1)];
    if get(buf.as_mut_ptr().cast()).result().is_err() {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Compiles CUDA C++ `source` (called `name` in diagnostics) to PTX with NVRTC. `headers` are
/// `(include name, contents)` pairs NVRTC resolves `#include "name"` against without touching
/// the file system. Never panics.
pub(crate) fn nvrtc_compile(
    name: &str,
    source: &str,
    headers: &[(&str, &str)],
    options: &[String],
) -> std::result::Result<String, NvrtcFailure> {
    nvrtc_version()?;
    let cstr = |s: &str| {
        CString::new(s).map_err(|_| NvrtcFailure::Compile(format!("{name}: embedded NUL byte")))
    };
    let src = cstr(source)?;
    let cname = cstr(name)?;
    let header_src = headers
        .iter()
        .map(|(_, s)| cstr(s))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let header_names = headers
        .iter()
        .map(|(n, _)| cstr(n))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let copts = options
        .iter()
        .map(|o| cstr(o))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let src_ptrs: Vec<*const c_char> = header_src.iter().map(|c| c.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = header_names.iter().map(|c| c.as_ptr()).collect();
    let opt_ptrs: Vec<*const c_char> = copts.iter().map(|c| c.as_ptr()).collect();

    let run = || -> std::result::Result<String, NvrtcFailure> {
        let mut prog: nvrtc_sys::nvrtcProgram = ptr::null_mut();
        nvrtc_check(
            // SAFETY: every pointer refers to a NUL-terminated string that outlives the program;
            // the two header arrays have `headers.len()` entries each.
            unsafe {
                nvrtc_sys::nvrtcCreateProgram(
                    &mut prog,
                    src.as_ptr(),
                    cname.as_ptr(),
                    headers.len() as c_int,
                    src_ptrs.as_ptr(),
                    name_ptrs.as_ptr(),
                )
            },
            "nvrtcCreateProgram",
        )?;
        let prog = Program(prog);
        // SAFETY: `prog` is live; `opt_ptrs` holds `len` NUL-terminated options.
        let status = unsafe {
            nvrtc_sys::nvrtcCompileProgram(prog.0, opt_ptrs.len() as c_int, opt_ptrs.as_ptr())
        };
        let mut log_size = 0usize;
        // SAFETY: `prog` is live; valid out-pointer.
        let _ = unsafe { nvrtc_sys::nvrtcGetProgramLogSize(prog.0, &mut log_size) };
        // SAFETY: the buffer holds `log_size` bytes, as NVRTC asked for.
        let log = nvrtc_text(log_size, |p| unsafe {
            nvrtc_sys::nvrtcGetProgramLog(prog.0, p)
        });
        if status != nvrtc_sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(NvrtcFailure::Compile(if log.trim().is_empty() {
                format!("{status:?}")
            } else {
                log
            }));
        }
        let mut ptx_size = 0usize;
        nvrtc_check(
            // SAFETY: `prog` is live and compiled; valid out-pointer.
            unsafe { nvrtc_sys::nvrtcGetPTXSize(prog.0, &mut ptx_size) },
            "nvrtcGetPTXSize",
        )?;
        // SAFETY: the buffer holds `ptx_size` bytes, as NVRTC asked for.
        let ptx = nvrtc_text(ptx_size, |p| unsafe { nvrtc_sys::nvrtcGetPTX(prog.0, p) });
        Ok(ptx)
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|_| {
        Err(NvrtcFailure::Unavailable(
            "NVRTC lacks a required symbol".into(),
        ))
    })
}
