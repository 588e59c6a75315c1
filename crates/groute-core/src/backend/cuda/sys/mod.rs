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

use std::panic::{AssertUnwindSafe, catch_unwind};

use cudarc::driver::result::DriverError;
use cudarc::driver::sys;

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

mod device;
mod launch;
mod library;
mod memory;
mod nvrtc;
mod stream;

pub(crate) use device::*;
pub(crate) use launch::*;
pub(crate) use library::*;
pub(crate) use memory::*;
pub(crate) use nvrtc::*;
pub(crate) use stream::*;
