//! CUDA-or-skip helpers for tests of the raw CUDA backend (below [`Context`](crate::Context)):
//! a [`CudaBackend`] that is `None` with a printed reason when CUDA tests are not requested and
//! a failure when they are (`GROUTE_TEST_CUDA=1`, [`cuda_required`]), and pinned host
//! buffers of `u32` words written and read by the host.
//!
//! ```
//! use groute_core::testing::cuda_raw::{backend, pattern};
//!
//! assert_eq!(pattern(4, 7), pattern(4, 7));
//! let Some(b) = backend("doc example") else {
//!     return; // no CUDA here, and none requested
//! };
//! # let _ = b;
//! ```

use std::sync::Arc;

use super::cuda_required;
use crate::backend::cuda::{CudaBackend, CudaOptions};
use crate::backend::{Backend, MemoryLocation, RawMemory, RawSlice};

/// The CUDA backend made with `options`, or `None` (with `test` and the reason printed) when
/// it cannot be made and CUDA tests are not requested.
///
/// # Panics
///
/// When it cannot be made and `GROUTE_TEST_CUDA=1`.
pub fn backend_with(test: &str, options: CudaOptions) -> Option<CudaBackend> {
    match CudaBackend::with_options(options) {
        Ok(b) => Some(b),
        Err(e) if cuda_required() => {
            panic!("{test}: GROUTE_TEST_CUDA=1 but the CUDA backend failed: {e}")
        }
        Err(e) => {
            eprintln!("{test}: SKIPPED (set GROUTE_TEST_CUDA=1 on a GPU machine): {e}");
            None
        }
    }
}

/// [`backend_with`] the default options.
pub fn backend(test: &str) -> Option<CudaBackend> {
    backend_with(test, CudaOptions::default())
}

/// Pinned host memory of `words` u32 words.
///
/// # Panics
///
/// When the allocation fails.
pub fn pinned(b: &CudaBackend, words: usize) -> Arc<dyn RawMemory> {
    b.allocate(MemoryLocation::PinnedHost, words * 4)
        .expect("pinned allocation")
}

/// Writes `data` at the start of host-visible memory `m`. The caller has synchronised every
/// stream that uses `m` (no device work may touch it meanwhile).
///
/// # Panics
///
/// When `m` has no host address or is shorter than `data`.
pub fn write_host(m: &Arc<dyn RawMemory>, data: &[u32]) {
    let p = m.host_ptr().expect("host memory");
    assert!(m.len_bytes() >= data.len() * 4);
    // SAFETY: `p` points at a live host-visible allocation of at least `data.len()` u32s
    // (checked), page-aligned, and no device work uses it at this point (callers synchronise
    // first).
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p.as_ptr().cast::<u32>(), data.len()) };
}

/// The first `words` u32 words of host-visible memory `m`. The caller has synchronised the
/// stream that wrote it.
///
/// # Panics
///
/// When `m` has no host address or is shorter than `words` words.
pub fn read_host(m: &Arc<dyn RawMemory>, words: usize) -> Vec<u32> {
    let p = m.host_ptr().expect("host memory");
    assert!(m.len_bytes() >= words * 4);
    let mut out = vec![0u32; words];
    // SAFETY: as in `write_host`; the stream that wrote it was synchronised.
    unsafe { std::ptr::copy_nonoverlapping(p.as_ptr().cast::<u32>(), out.as_mut_ptr(), words) };
    out
}

/// `n` pseudo-random words (xorshift32) from `seed`, the same for the same arguments.
pub fn pattern(n: usize, seed: u32) -> Vec<u32> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        })
        .collect()
}

/// The whole of `m` as a slice.
pub fn whole(m: &Arc<dyn RawMemory>) -> RawSlice {
    RawSlice::whole(m.clone())
}
