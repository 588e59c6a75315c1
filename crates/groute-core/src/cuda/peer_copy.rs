//! Typed launch wrapper for `kernels/runtime/peer_copy.cu`: copies made by the SMs instead of the copy
//! engines (links' [`crate::CopyMethod::Kernel`]).

use std::sync::Arc;

use super::launch::{DevicePtr, LaunchConfig};
use super::module::{CudaFunction, CudaModule};
use crate::backend::cuda::CudaStream;
use crate::backend::{MemoryLocation, RawEvent, RawMemory, RawSlice, RawStream};
use crate::error::{Error, Result};
use groute_kernels::runtime::PEER_COPY;

/// Threads per block of the copy kernel.
pub const PEER_COPY_BLOCK: u32 = 512;

/// Bytes one thread moves per round of the kernel (4 vectors of 16 bytes).
const BYTES_PER_THREAD_ROUND: usize = 64;

/// Whether [`peer_copy`] can copy `src` into `dst` on `stream`: a CUDA stream, both slices in
/// device memory, both devices addressable from the stream's device (itself, or a peer with
/// access enabled). Host memory and device pairs without peer access are left to the copy
/// engines.
pub fn kernel_copy_applies(stream: &dyn RawStream, dst: &RawSlice, src: &RawSlice) -> bool {
    let Ok(s) = CudaStream::from_raw(stream) else {
        return false;
    };
    [dst, src].iter().all(|slice| {
        let location = slice.memory.location();
        matches!(location, MemoryLocation::Device(_)) && s.can_address(location)
    })
}

/// Compiles (once per process) and loads (once per device) the copy kernel for `stream`'s
/// device, and makes the driver load its code now (an occupancy query), so that the first
/// copy does not load it while other kernels run. Links with the kernel method call this when
/// they are built.
pub fn load_peer_copy(stream: &dyn RawStream) -> Result<CudaFunction> {
    let f = CudaModule::load(stream, &PEER_COPY)?.function("peer_copy")?;
    f.max_active_blocks_per_multiprocessor(PEER_COPY_BLOCK, 0)?;
    Ok(f)
}

/// Enqueues a kernel copy of `src` into `dst` on `stream` with at most `blocks` blocks of
/// [`PEER_COPY_BLOCK`] threads (fewer when the copy is too short to give each thread a full
/// round); both allocations stay alive until it completes. Any lengths and offsets: 16-byte
/// vectors where `dst` and `src` are equally aligned modulo 16, narrower words otherwise.
///
/// Errors: [`Error::LengthMismatch`], [`Error::OutOfBounds`], [`Error::InvalidSetting`] for
/// `blocks == 0`, [`Error::Unsupported`] when [`kernel_copy_applies`] does not hold.
pub fn peer_copy(
    stream: &dyn RawStream,
    dst: &RawSlice,
    src: &RawSlice,
    blocks: u32,
) -> Result<()> {
    if let Some(keep) = launch_checked(stream, dst, src, blocks)? {
        CudaStream::from_raw(stream)?.keep_alive(keep)?;
    }
    Ok(())
}

/// [`peer_copy`], then records `event` (of `stream`'s device) right after it; that recording
/// also keeps the memory alive (one event record per copy, as DMA copies of a link).
pub(crate) fn peer_copy_and_record(
    stream: &dyn RawStream,
    dst: &RawSlice,
    src: &RawSlice,
    blocks: u32,
    event: &dyn RawEvent,
) -> Result<()> {
    let s = CudaStream::from_raw(stream)?;
    let e = s.own_event(event)?;
    match launch_checked(stream, dst, src, blocks)? {
        Some(keep) => s.record_keeping_alive(e, keep),
        None => stream.record(event),
    }
}

/// Checks the arguments and launches the kernel; the memory to keep alive until it completes,
/// or `None` for an empty copy (nothing launched).
fn launch_checked(
    stream: &dyn RawStream,
    dst: &RawSlice,
    src: &RawSlice,
    blocks: u32,
) -> Result<Option<Vec<Arc<dyn RawMemory>>>> {
    Error::check_same_length("peer_copy", dst.len, src.len)?;
    for slice in [dst, src] {
        let end = slice.offset.saturating_add(slice.len);
        if end > slice.memory.len_bytes() {
            return Err(Error::OutOfBounds {
                start: slice.offset,
                end,
                len: slice.memory.len_bytes(),
            });
        }
    }
    let same_allocation = std::ptr::addr_eq(Arc::as_ptr(&dst.memory), Arc::as_ptr(&src.memory));
    if same_allocation && dst.offset < src.offset + src.len && src.offset < dst.offset + dst.len {
        return Err(Error::invalid(
            "peer_copy ranges",
            format_args!(
                "dst {}..{}, src {}..{}",
                dst.offset,
                dst.offset + dst.len,
                src.offset,
                src.offset + src.len
            ),
            "the source and destination of a copy must not overlap",
        ));
    }
    if blocks == 0 {
        return Err(Error::invalid(
            "copy_method blocks",
            0,
            "a kernel copy uses at least one block",
        ));
    }
    if !kernel_copy_applies(stream, dst, src) {
        return Err(Error::Unsupported {
            operation: "a kernel copy outside device memory the stream's device can address",
            backend: "cuda",
        });
    }
    if dst.len == 0 {
        return Ok(None);
    }
    let s = CudaStream::from_raw(stream)?;
    s.reclaim();
    let f = load_peer_copy_cached(stream)?;
    let per_block = PEER_COPY_BLOCK as usize * BYTES_PER_THREAD_ROUND;
    let needed = dst.len.div_ceil(per_block).min(u32::MAX as usize) as u32;
    let config = LaunchConfig::linear(blocks.min(needed).max(1), PEER_COPY_BLOCK);
    let args = (
        DevicePtr::<u8>::from_slice(dst)?,
        DevicePtr::<u8>::from_slice(src)?,
        dst.len as u64,
    );
    // SAFETY: peer_copy(unsigned char* dst, const unsigned char* src, unsigned long long
    // bytes): the tuple matches it field by field. Both ranges lie inside their allocations
    // and do not overlap (checked above), both are device memory the stream's device can
    // address (checked by `kernel_copy_applies`), and the caller keeps them alive until the
    // kernel completes (the returned list).
    unsafe { f.launch(stream, config, args)? };
    Ok(Some(vec![dst.memory.clone(), src.memory.clone()]))
}

/// The kernel of `stream`'s device (the module lookups are cached per device).
fn load_peer_copy_cached(stream: &dyn RawStream) -> Result<CudaFunction> {
    CudaModule::load(stream, &PEER_COPY)?.function("peer_copy")
}
