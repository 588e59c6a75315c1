//! The CUDA backend: NVIDIA GPUs through the CUDA driver API (cudarc, loaded at run time).
//!
//! | file | idea |
//! |---|---|
//! | `sys/` | the one fenced module with every raw driver and NVRTC call (by what it wraps) |
//! | `backend.rs` | [`CudaBackend`]: devices, peer-access matrix, allocation |
//! | `device.rs` | one device: primary context, memory pool, event free lists, internal streams |
//! | `stream.rs` | [`CudaStream`]: copies (direct, peer, hopped, host-staged), fills, keep-alive |
//! | `event.rs` | [`CudaEvent`]: recycled driver events, notifications |
//! | `watcher.rs` | the per-device service thread that fires notifications |
//! | `memory.rs` | [`CudaMemory`]: pool device memory, pinned and mapped host memory |
//! | `staged.rs` | host-staged copies between devices without peer access: chunked, pipelined, per-stream staging ring |
//! | `staging.rs` | pooled pinned buffers for host-staged copies |
//! | `callback.rs` | `cuLaunchHostFunc` callbacks and the no-driver-calls-inside guard |
//!
//! The crate builds with no CUDA installed; [`CudaBackend::new`] then returns
//! [`crate::Error::CudaUnavailable`] (never panics), and callers fall back to the host backend.
//! Kernels are compiled and launched through [`crate::cuda`].

mod backend;
mod callback;
mod device;
mod event;
mod memory;
mod staged;
mod staging;
mod stream;
pub(crate) mod sys;
mod watcher;

pub use backend::{CudaBackend, CudaOptions};
pub use event::CudaEvent;
pub use memory::CudaMemory;
pub use stream::CudaStream;

pub(crate) use callback::in_host_callback;
pub(crate) use device::DeviceInner;

/// True when the CUDA driver library can be loaded on this machine (it says nothing about
/// devices: [`CudaBackend::new`] checks those). Never panics.
pub fn driver_library_present() -> bool {
    sys::driver_library_present()
}
