//! Host callbacks in stream order (`cuLaunchHostFunc`), and the flag that tells the backend's
//! destructors they run inside one (where CUDA forbids driver calls).

use std::cell::Cell;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::sys;
use crate::error::Result;

thread_local! {
    static IN_HOST_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// True on a driver thread while it runs a host callback of this backend.
pub(crate) fn in_host_callback() -> bool {
    IN_HOST_CALLBACK.with(|c| c.get())
}

type Callback = Box<dyn FnOnce() + Send>;

/// The `extern "C"` entry the driver calls.
///
/// # Safety
/// `data` is a `Box<Callback>` leaked by [`enqueue_host_fn`], passed here exactly once.
unsafe extern "C" fn trampoline(data: *mut c_void) {
    // SAFETY: see the function's contract.
    let cb: Box<Callback> = unsafe { Box::from_raw(data.cast()) };
    IN_HOST_CALLBACK.with(|c| c.set(true));
    // Unwinding into the driver is undefined behaviour: stop panics here.
    let _ = catch_unwind(AssertUnwindSafe(move || (*cb)()));
    IN_HOST_CALLBACK.with(|c| c.set(false));
}

/// Enqueues `cb` on `stream`.
///
/// # Safety
/// `stream` is live and its device's context is current.
pub(crate) unsafe fn enqueue_host_fn(stream: sys::CUstream, cb: Callback) -> Result<()> {
    let data = Box::into_raw(Box::new(cb));
    // SAFETY: `trampoline` reclaims `data` exactly once, when the driver calls it.
    let r = unsafe { sys::launch_host_func(stream, trampoline, data.cast()) };
    if r.is_err() {
        // SAFETY: the driver did not take `data`: reclaim it so the callback is dropped.
        drop(unsafe { Box::from_raw(data) });
    }
    r
}
