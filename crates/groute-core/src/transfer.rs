//! Copies between pageable host memory and device buffers, through recycled pinned chunks.
//!
//! [`Device::upload`](crate::Device::upload), [`Device::download`](crate::Device::download)
//! and [`Device::download_into`](crate::Device::download_into) move data between the caller's
//! slices and vectors and a device. Page-locking a fresh buffer per copy costs more than the
//! copy (allocating and freeing pinned memory of a solver's result takes longer than moving
//! it, and as long as the graph traversal that computed it). So a copy goes through at most
//! two pinned chunks, each
//! the copy's size rounded up to a power of two from 64 KiB to [`STAGING_CHUNK_BYTES`] (so
//! that the pool keeps a few sizes), taken from the context's pinned host pool (allocated
//! once, then recycled), and pipelined: while the copy engine moves chunk `i`, the host
//! moves chunk `i - 1` between its pinned chunk and the caller's memory, on rayon's threads
//! when it is large (so that a fresh vector's pages are first touched by many threads at
//! once).
//!
//! The pool is the context's (it also holds the links' host buffers); it keeps at most 1 GiB
//! of freed blocks, and a block returned past that is freed, which waits for the kernels
//! running on the device.

use std::ops::Range;

use bytemuck::Pod;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::event::Event;
use crate::memory::{Buffer, MemoryPool};
use crate::stream::Stream;

/// The largest pinned chunk a copy stages through (two of them are in use at once).
pub const STAGING_CHUNK_BYTES: usize = 8 << 20;

/// Host copies at least this long are split across rayon's threads.
const PARALLEL_COPY_BYTES: usize = 1 << 20;

/// The piece of a parallel host copy one task takes.
const PARALLEL_PIECE_BYTES: usize = 256 << 10;

/// Copies `src` to `dst`, on rayon's threads when it is large: for results and packets of
/// megabytes going into fresh host memory, whose first touch of each page (a page fault)
/// costs more than the copy.
///
/// # Panics
///
/// If the lengths differ, as [`slice::copy_from_slice`] does.
pub fn copy_in_parallel<T: Pod>(dst: &mut [T], src: &[T]) {
    copy_host(bytemuck::cast_slice_mut(dst), bytemuck::cast_slice(src));
}

/// Copies `src` to `dst`, on rayon's threads when it is large; panics if the lengths differ.
fn copy_host(dst: &mut [u8], src: &[u8]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "copy_in_parallel: destination and source lengths differ"
    );
    if src.len() < PARALLEL_COPY_BYTES {
        dst.copy_from_slice(src);
    } else {
        dst.par_chunks_mut(PARALLEL_PIECE_BYTES)
            .zip(src.par_chunks(PARALLEL_PIECE_BYTES))
            .for_each(|(d, s)| d.copy_from_slice(s));
    }
}

/// The smallest staging chunk: small copies round up to a power of two from here, so that
/// the pool (which caches by size class) keeps a few sizes, not one per copy length.
const MIN_CHUNK_BYTES: usize = 64 << 10;

/// Elements of `T` per staging chunk for a copy of `len` elements: the copy's bytes rounded
/// up to a power of two from [`MIN_CHUNK_BYTES`] to [`STAGING_CHUNK_BYTES`] (at least 1).
fn chunk_len<T>(len: usize) -> usize {
    let size = std::mem::size_of::<T>().max(1);
    let bytes = len
        .saturating_mul(size)
        .checked_next_power_of_two()
        .unwrap_or(usize::MAX)
        .clamp(MIN_CHUNK_BYTES, STAGING_CHUNK_BYTES);
    (bytes / size).max(1)
}

/// The pinned chunks of one copy of `len` elements: one when a single chunk holds it all.
fn staging_chunks<T: Pod>(pool: &MemoryPool, len: usize) -> Result<Vec<Buffer<T>>> {
    let chunk = chunk_len::<T>(len);
    let count = if len > chunk { 2 } else { 1 };
    (0..count).map(|_| pool.alloc::<T>(chunk)).collect()
}

/// The error of a staging chunk the host cannot address (a backend whose pinned host memory
/// has no host address).
fn not_host_addressable() -> Error {
    Error::Unsupported {
        operation: "reading or writing pinned host memory",
        backend: "this",
    }
}

/// Runs `pipeline` over the pinned chunks of a copy of `len` elements (none when `len` is
/// 0), then synchronises `stream`: idle already after a success; after an error a copy into
/// or out of a chunk may still run, and it must end before the chunks go back to the pool.
/// Either way this releases the stream's hold on the chunks, so that they go back now, not
/// at the stream's next operation.
fn through_chunks<T: Pod>(
    stream: &Stream,
    pool: &MemoryPool,
    len: usize,
    pipeline: impl FnOnce(&[Buffer<T>]) -> Result<()>,
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let chunks = staging_chunks::<T>(pool, len)?;
    let copied = pipeline(&chunks);
    let idle = stream.synchronize();
    copied.and(idle)
}

/// The pieces of a copy of `len` elements through `chunks`, in order: which chunk carries
/// each and the elements it covers (the chunks taking turns).
fn pieces<T: Pod>(
    len: usize,
    chunks: &[Buffer<T>],
) -> impl Iterator<Item = (usize, Range<usize>)> + '_ {
    let step = chunks[0].len();
    (0..len)
        .step_by(step)
        .enumerate()
        .map(move |(i, start)| (i % chunks.len(), start..(start + step).min(len)))
}

/// Copies `src` (any buffer `stream` can reach) into `dst` (`src.len()` elements), after the
/// work already enqueued on `stream`; returns once every element is in `dst`.
pub(crate) fn download_into<T: Pod>(
    stream: &Stream,
    pool: &MemoryPool,
    src: &Buffer<T>,
    dst: &mut [T],
) -> Result<()> {
    Error::check_same_length("Device::download_into", dst.len(), src.len())?;
    through_chunks(stream, pool, src.len(), |chunks| {
        // Moves a piece out of its chunk once the copy into it (`done`) has completed.
        let move_out = |done: Event, (which, range): (usize, Range<usize>), dst: &mut [T]| {
            done.wait()?;
            let staged = chunks[which].slice(0..range.len())?;
            // SAFETY: the only write to `staged` (the copy recorded by `done`) has completed,
            // and no other copy into this chunk is enqueued until this piece is out.
            let staged = unsafe { staged.as_host_slice() }.ok_or_else(not_host_addressable)?;
            copy_in_parallel(&mut dst[range], staged);
            Ok::<_, Error>(())
        };
        // The piece copied last and not yet moved out, with its copy's event.
        let mut pending = None;
        for (which, range) in pieces(src.len(), chunks) {
            // This chunk's previous piece was moved out in the last iteration.
            let staged = chunks[which].slice(0..range.len())?;
            let done = stream.copy_and_record(&staged, &src.slice(range.clone())?)?;
            if let Some((done, piece)) = pending.replace((done, (which, range))) {
                move_out(done, piece, dst)?;
            }
        }
        match pending {
            Some((done, piece)) => move_out(done, piece, dst),
            None => Ok(()),
        }
    })
}

/// Copies `data` into `dst` (`data.len()` elements) on `stream` and returns once the copy is
/// complete.
pub(crate) fn upload_from<T: Pod>(
    stream: &Stream,
    pool: &MemoryPool,
    data: &[T],
    dst: &Buffer<T>,
) -> Result<()> {
    Error::check_same_length("Device::upload", dst.len(), data.len())?;
    through_chunks(stream, pool, data.len(), |chunks| {
        // The copy out of each chunk last enqueued (the chunk is written again only after it).
        let mut in_flight: Vec<Option<Event>> = vec![None; chunks.len()];
        for (which, range) in pieces(data.len(), chunks) {
            if let Some(done) = in_flight[which].take() {
                done.wait()?;
            }
            let staged = chunks[which].slice(0..range.len())?;
            // SAFETY: the last copy reading this chunk has completed (waited for above) and no
            // other view of it exists.
            let host = unsafe { staged.as_host_slice_mut() }.ok_or_else(not_host_addressable)?;
            copy_in_parallel(host, &data[range.clone()]);
            in_flight[which] = Some(stream.copy_and_record(&dst.slice(range)?, &staged)?);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, DeviceId};

    fn pattern(len: usize) -> Vec<u32> {
        (0..len as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect()
    }

    #[test]
    fn round_trips_of_every_chunk_count_are_exact() {
        let ctx = Context::host(1).unwrap();
        let device = ctx.device(DeviceId(0)).unwrap();
        let chunk = chunk_len::<u32>(usize::MAX);
        for len in [
            0,
            1,
            17,
            chunk - 1,
            chunk,
            chunk + 1,
            2 * chunk,
            3 * chunk + 5,
        ] {
            let data = pattern(len);
            let buffer = device.upload(&data).unwrap();
            assert_eq!(device.download(&buffer).unwrap(), data, "{len} elements");
            let mut into = vec![7u32; len];
            device.download_into(&buffer, &mut into).unwrap();
            assert_eq!(into, data, "{len} elements, into a slice");
            if len > 2 {
                let mut middle = vec![7u32; len];
                let part = buffer.slice(1..len - 1).unwrap();
                device
                    .download_into(&part, &mut middle[1..len - 1])
                    .unwrap();
                assert_eq!(&middle[1..len - 1], &data[1..len - 1], "{len}: a sub-range");
                assert_eq!([middle[0], middle[len - 1]], [7, 7], "{len}: outside it");
            }
        }
    }

    #[test]
    fn a_length_mismatch_is_an_error_naming_both_lengths() {
        let ctx = Context::host(1).unwrap();
        let device = ctx.device(DeviceId(0)).unwrap();
        let buffer = device.upload(&pattern(10)).unwrap();
        let err = device.download_into(&buffer, &mut [0u32; 9]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("10") && text.contains('9'), "{text}");
    }

    #[test]
    #[should_panic(expected = "lengths differ")]
    fn a_large_parallel_copy_of_unequal_lengths_panics() {
        let src = vec![1u8; 2 * PARALLEL_COPY_BYTES];
        let mut dst = vec![0u8; 2 * PARALLEL_COPY_BYTES + 1];
        copy_in_parallel(&mut dst, &src);
    }

    #[test]
    fn parallel_host_copies_are_exact_at_piece_boundaries() {
        for len in [
            PARALLEL_COPY_BYTES - 1,
            PARALLEL_COPY_BYTES,
            PARALLEL_COPY_BYTES + PARALLEL_PIECE_BYTES + 3,
        ] {
            let src: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
            let mut dst = vec![0u8; len];
            copy_host(&mut dst, &src);
            assert!(dst == src, "{len} bytes");
            let words: Vec<u32> = (0..len as u32 / 4).map(|i| i ^ 0x5a5a).collect();
            let mut into = vec![0u32; words.len()];
            copy_in_parallel(&mut into, &words);
            assert!(into == words, "{} words", words.len());
        }
    }
}
