//! Streams, host callbacks and events.

use std::ffi::{c_uint, c_void};
use std::ptr;

use cudarc::driver::sys;

use super::{CUevent, CUstream, check};
use crate::error::Result;

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
