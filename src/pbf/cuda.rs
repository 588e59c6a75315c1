//! Typed launch wrapper for `kernels/pbf/pbf.cu` (predicate-based filter, warp-aggregated
//! append), the CUDA arm of the pipeline's per-chunk filter.

use std::sync::Arc;

use groute_core::backend::{RawMemory, RawSlice, RawStream};
use groute_core::cuda::{CudaModule, CudaStream, DevicePtr, LaunchConfig};
use groute_core::{Error, Result};
use groute_kernels::pbf::PBF;

use super::Predicate;

/// Threads per block of the filter.
pub const PBF_BLOCK: u32 = 256;

/// Enqueues the predicate-based filter on `stream` (a CUDA stream):
/// `output[0..*count] = [x in input if keep.keep(x)]`, in unspecified order.
///
/// - `input`: `u32` elements in device memory of the stream's device (`len` a multiple of 4,
///   at most `u32::MAX` elements).
/// - `output`: device memory with room for as many elements as `input`.
/// - `count`: device memory of at least 4 bytes; set to 0 first (in stream order), then to the
///   number kept. Read it back with a copy after the kernel (or pass it on to the next kernel).
///
/// All three stay alive until the kernel completes. Nothing is synchronised.
pub fn pbf_filter(
    stream: &dyn RawStream,
    input: &RawSlice,
    output: &RawSlice,
    count: &RawSlice,
    keep: Predicate,
) -> Result<()> {
    if keep.modulus == 0 || keep.residue >= keep.modulus {
        return Err(Error::invalid(
            "pbf predicate",
            format_args!("x % {} == {}", keep.modulus, keep.residue),
            "the modulus must be at least 1 and the residue below it",
        ));
    }
    if input.len % 4 != 0 {
        return Err(Error::invalid(
            "pbf input length",
            input.len,
            "a whole number of u32 elements",
        ));
    }
    let n = input.len / 4;
    let n32 = u32::try_from(n).map_err(|_| {
        Error::invalid(
            "pbf input length",
            n,
            "at most u32::MAX elements per launch",
        )
    })?;
    if output.len < input.len {
        return Err(Error::LengthMismatch {
            operation: "pbf_filter (output must hold every input element)",
            dst: output.len / 4,
            src: n,
        });
    }
    if count.len < 4 {
        return Err(Error::invalid(
            "pbf count length",
            count.len,
            "at least one u32 (4 bytes)",
        ));
    }
    let s = CudaStream::from_raw(stream)?;
    let count_word = RawSlice {
        memory: count.memory.clone(),
        offset: count.offset,
        len: 4,
    };
    s.fill_u32(&count_word, 0)?;
    let f = CudaModule::load(stream, &PBF)?.function("pbf_filter_mod")?;
    let resident = f.max_resident_grid(PBF_BLOCK, 0)?.max(1);
    let config = LaunchConfig::for_elements(n, PBF_BLOCK, Some(resident));
    let args = (
        DevicePtr::<u32>::from_slice(input)?,
        n32,
        DevicePtr::<u32>::from_slice(output)?,
        DevicePtr::<u32>::from_slice(&count_word)?,
        keep.modulus,
        keep.residue,
    );
    // SAFETY: pbf_filter_mod(const unsigned* input, unsigned n, unsigned* output,
    // unsigned* count, unsigned modulus, unsigned residue): the tuple matches it field by
    // field; `input` holds n u32s, `output` at least n (checked above), `count` one u32; all are
    // device-addressable (checked by `from_slice`) and kept alive below until the kernel
    // completes; modulus >= 1 (checked above), so the kernel's `%` is defined.
    unsafe { f.launch(stream, config, args)? };
    let keep_alive: Vec<Arc<dyn RawMemory>> = vec![
        input.memory.clone(),
        output.memory.clone(),
        count.memory.clone(),
    ];
    s.keep_alive(keep_alive)
}
