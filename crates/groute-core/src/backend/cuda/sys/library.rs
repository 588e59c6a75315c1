//! Loading the CUDA driver and NVRTC libraries, and checking the driver's entry points.

use std::ffi::c_void;
use std::panic::catch_unwind;
use std::sync::OnceLock;

use cudarc::driver::sys;
use cudarc::nvrtc::sys as nvrtc_sys;

use super::{catch_driver_panic, check};
use crate::error::{Error, Result};

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
