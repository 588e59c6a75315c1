//! The error type of the runtime.

use std::fmt;

use crate::byte_size::ByteSize;
use crate::endpoint::Endpoint;

/// Result alias used throughout groute-core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the runtime.
///
/// Variants name the setting or call to change where there is one; driver errors keep the
/// driver's code and message as their source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A context was asked for zero devices.
    #[error("a context needs at least one device (got --devices 0); pass 1 or more")]
    NoDevices,
    /// A context was asked for more devices than [`MAX_DEVICES`](crate::MAX_DEVICES).
    #[error(
        "a context holds at most {max} devices (got --devices {devices}): each device is a thread \
         of the runtime, and as many again run its routers and drivers; pass {max} or fewer"
    )]
    TooManyDevices {
        /// Devices asked for.
        devices: usize,
        /// The most a context holds.
        max: usize,
    },
    /// The CUDA backend was requested but cannot be used here.
    #[error(
        "CUDA backend unavailable: {reason}; use the host backend (--backend host) on machines without an NVIDIA GPU"
    )]
    CudaUnavailable {
        /// Why: library missing, no device, driver too old, ...
        reason: String,
    },
    /// A CUDA driver call failed.
    #[error("CUDA driver call {call} failed: {source}")]
    Driver {
        /// The driver function that failed.
        call: &'static str,
        /// The driver's error (code and description).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// A kernel failed to compile with NVRTC.
    #[error("NVRTC could not compile {kernel} for {arch}:\n{log}")]
    KernelCompile {
        /// The kernel source file.
        kernel: String,
        /// The target architecture (`compute_90`).
        arch: String,
        /// NVRTC's compile log.
        log: String,
    },
    /// An allocation failed.
    #[error(
        "out of memory allocating {bytes} bytes on {location}; lower the problem size or the buffer settings"
    )]
    OutOfMemory {
        /// Requested size.
        bytes: usize,
        /// Where.
        location: String,
        /// The driver's error, when a driver reported it (CUDA's `CUDA_ERROR_OUT_OF_MEMORY`).
        #[source]
        source: Option<Box<Error>>,
    },
    /// An allocation would take a device past the context's memory limit
    /// ([`crate::ContextBuilder::device_memory_limit`]); nothing was allocated. Blocks the
    /// device's pool cached for reuse were freed first.
    #[error(
        "device {device} cannot allocate {requested_size}: {in_use_size} is in use and its memory \
         limit is {limit_size}; raise the limit (--device-memory-limit, \
         ContextBuilder::device_memory_limit) or spread the input over more devices",
        requested_size = ByteSize(*.requested),
        in_use_size = ByteSize(*.in_use),
        limit_size = ByteSize(*.limit)
    )]
    DeviceMemoryLimit {
        /// The (virtual) device of the context.
        device: usize,
        /// Bytes the allocation needs: the request's block (`MemoryPool::block_bytes`, at
        /// most an eighth over the bytes asked for).
        requested: u64,
        /// Bytes the device held when asked (live buffers and the pool's cached blocks).
        in_use: u64,
        /// The device's limit in bytes.
        limit: u64,
    },
    /// The device itself has no memory left for an allocation (CUDA's
    /// `CUDA_ERROR_OUT_OF_MEMORY`, or the host allocator failing on the host backend), after
    /// the device's pool freed the blocks it cached for reuse.
    #[error(
        "device {device} is out of memory allocating {requested_size}: it holds \
         {in_use_size}{limit_note}; spread the input over more devices, free buffers \
         the run no longer needs, or run fewer contexts on the GPU",
        requested_size = ByteSize(*.requested),
        in_use_size = ByteSize(*.in_use),
        limit_note = limit_note(.limit)
    )]
    DeviceOutOfMemory {
        /// The (virtual) device of the context.
        device: usize,
        /// Bytes the allocation needs: the request's block (`MemoryPool::block_bytes`, at
        /// most an eighth over the bytes asked for).
        requested: u64,
        /// Bytes this (virtual) device held when asked (live buffers and the pool's cached
        /// blocks; other virtual devices on the same GPU, other contexts and other processes
        /// are not counted).
        in_use: u64,
        /// The device's limit in bytes, if one was set.
        limit: Option<u64>,
        /// The backend's error ([`Error::OutOfMemory`]).
        #[source]
        source: Box<Error>,
    },
    /// A byte size (`--device-memory-limit 512M`) that does not parse.
    #[error(
        "invalid size {input:?}: {reason}; write a whole number of bytes or a number with a \
         unit K, M, G or T (powers of 1024; KiB, MiB, GiB, TiB also accepted), e.g. 512M, \
         1.5G, 8GiB"
    )]
    InvalidByteSize {
        /// The text as given.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A device index outside the context.
    #[error("device {device} does not exist: the context has {count} devices")]
    NoSuchDevice {
        /// The index asked for.
        device: usize,
        /// Devices in the context.
        count: usize,
    },
    /// A link from an endpoint to itself.
    #[error("a link from {0} to itself is not allowed; connect two different endpoints")]
    SelfLoop(Endpoint),
    /// A second link between the same pair of endpoints on one router.
    #[error(
        "a link from {src} to {dst} already exists on this router; reuse it instead of adding a duplicate"
    )]
    DuplicateLink {
        /// Source endpoint.
        src: Endpoint,
        /// Destination endpoint.
        dst: Endpoint,
    },
    /// An invalid configuration value.
    #[error("invalid setting {setting} = {value}: {reason}")]
    InvalidSetting {
        /// The setting's name (as the user spells it: `packet_size`, `--chunk`, ...).
        setting: &'static str,
        /// The offending value.
        value: String,
        /// What a valid value looks like.
        reason: String,
    },
    /// Two buffers or slices of different lengths in a copy.
    #[error("length mismatch in {operation}: destination holds {dst} elements, source {src}")]
    LengthMismatch {
        /// What was being done.
        operation: &'static str,
        /// Destination length.
        dst: usize,
        /// Source length.
        src: usize,
    },
    /// A range outside a buffer.
    #[error("range {start}..{end} is outside a buffer of {len} elements")]
    OutOfBounds {
        /// Range start.
        start: usize,
        /// Range end.
        end: usize,
        /// Buffer length.
        len: usize,
    },
    /// A host buffer was accessed while device work still uses it.
    #[error(
        "host buffer is still in use by an in-flight copy or segment; wait for its event (or drop the segments) first"
    )]
    BufferInUse,
    /// An operation the backend does not provide.
    #[error("{operation} is not supported on the {backend} backend")]
    Unsupported {
        /// What was attempted.
        operation: &'static str,
        /// Backend name.
        backend: &'static str,
    },
    /// Sending on a link or router input that was shut down.
    #[error("send after shutdown on {0}")]
    SendAfterShutdown(String),
    /// The other side of a link or router is gone.
    #[error("{0} was disconnected: its peer was dropped")]
    Disconnected(String),
    /// A worker thread of the runtime panicked (a bug in a kernel closure or in groute).
    #[error("a runtime thread panicked: {0}")]
    ThreadPanicked(String),
    /// A device failed: a kernel (or a host function) on it panicked, or it depends on work of
    /// a device that did. Its queued work was discarded and every later wait on it fails.
    #[error(
        "device {device} failed: {reason}; the run's results are discarded (fix the failing \
         kernel; a panic message above names it)"
    )]
    DeviceFailed {
        /// The (physical) device that failed.
        device: usize,
        /// What happened.
        reason: String,
    },
    /// The host waited for work of a device that made no progress for the stall timeout: the
    /// device, or a link copying to or from it, hangs.
    #[error(
        "device {device} made no progress for {timeout:?} on work the host waits for: the \
         device or a link to it hangs; if its work legitimately takes longer, raise the stall \
         timeout (ContextBuilder::stall_timeout, Runner::stall_timeout)"
    )]
    DeviceStalled {
        /// The (physical) device whose stream stopped making progress.
        device: usize,
        /// The stall timeout that passed.
        timeout: std::time::Duration,
    },
    /// A runtime thread (a link's pump) could not be started.
    #[error("could not start the runtime thread {name}: {source}")]
    Spawn {
        /// The thread's name.
        name: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A capacity (worklist, buffer) would be exceeded; nothing was dropped.
    #[error("{what} would overflow: capacity {capacity}, needed {needed}; raise {setting}")]
    CapacityExceeded {
        /// What overflowed.
        what: String,
        /// Its capacity.
        capacity: u64,
        /// What was needed.
        needed: u64,
        /// The setting to raise.
        setting: &'static str,
    },
    /// A device-driven multi-device run ([`crate::cuda::PeerGroup`]) cannot run on this context.
    #[error(
        "device-driven multi-device runs need {reason}; use the host-driven mode instead (the algorithm's driver option)"
    )]
    PeerGroupUnsupported {
        /// What is missing (peer access, distinct GPUs, the CUDA backend).
        reason: String,
    },
    /// A device of a device-driven run left a cross-device exchange without completing it.
    #[error(
        "device {device} left a cross-device exchange: {reason}{progress}; the run's results \
         are discarded"
    )]
    PeerExchangeFailed {
        /// The device that reported it.
        device: usize,
        /// Why: the host asked it to stop, another device failed, or a peer did not arrive
        /// within the group's timeout.
        reason: &'static str,
        /// Where each member stood when it stopped, as the algorithm read it back (e.g. " (device
        /// 0: 12 rounds, ...)"), or empty.
        progress: String,
    },
}

/// ` (limit 8 GiB)` for an out-of-memory message, or nothing without a limit.
fn limit_note(limit: &Option<u64>) -> String {
    limit.map_or_else(String::new, |l| format!(" (limit {})", ByteSize(l)))
}

impl Error {
    /// `Ok` when `dst` and `src` (lengths, in any unit) are equal, else
    /// [`Error::LengthMismatch`] naming `operation` and both.
    pub fn check_same_length(operation: &'static str, dst: usize, src: usize) -> Result<()> {
        if dst == src {
            Ok(())
        } else {
            Err(Error::LengthMismatch {
                operation,
                dst,
                src,
            })
        }
    }

    /// True for an allocation that failed for lack of memory: [`Error::OutOfMemory`],
    /// [`Error::DeviceOutOfMemory`] or [`Error::DeviceMemoryLimit`].
    pub fn is_out_of_memory(&self) -> bool {
        matches!(
            self,
            Error::OutOfMemory { .. }
                | Error::DeviceOutOfMemory { .. }
                | Error::DeviceMemoryLimit { .. }
        )
    }

    /// True for a device that failed or stalled ([`Error::DeviceFailed`],
    /// [`Error::DeviceStalled`]): the root cause of a run that ended on it.
    pub fn is_device_fault(&self) -> bool {
        matches!(
            self,
            Error::DeviceFailed { .. } | Error::DeviceStalled { .. }
        )
    }

    /// The device a [`Error::DeviceFailed`] or [`Error::DeviceStalled`] names.
    pub fn faulty_device(&self) -> Option<usize> {
        match self {
            Error::DeviceFailed { device, .. } | Error::DeviceStalled { device, .. } => {
                Some(*device)
            }
            _ => None,
        }
    }

    /// Wraps a driver error.
    pub fn driver<E>(call: &'static str, source: E) -> Self
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        Error::Driver {
            call,
            source: Box::new(source),
        }
    }

    /// An [`Error::CapacityExceeded`]: `what`, holding `capacity` items, needed `needed`;
    /// `setting` raises it.
    pub fn capacity_exceeded(
        what: impl Into<String>,
        capacity: usize,
        needed: usize,
        setting: &'static str,
    ) -> Self {
        Error::CapacityExceeded {
            what: what.into(),
            capacity: capacity as u64,
            needed: needed as u64,
            setting,
        }
    }

    /// An [`Error::InvalidSetting`].
    pub fn invalid(
        setting: &'static str,
        value: impl fmt::Display,
        reason: impl Into<String>,
    ) -> Self {
        Error::InvalidSetting {
            setting,
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}
