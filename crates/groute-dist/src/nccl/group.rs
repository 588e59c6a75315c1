//! [`NcclGroup`]: one NCCL communicator of every rank's device 0, for the collectives of a
//! frontier executor spanning ranks ([`crate::CommCollectives`]).
//!
//! Made collectively like the plane's edges (`super`): rank 0 makes the bootstrap handle, one
//! all-reduce over the ranks' layer shares it with a failure mark, every rank joins on its
//! device 0, and a first gather of one word opens the connections so that a run's first
//! level does not pay for them. Freed when dropped (collective too: destroying a
//! communicator waits for its peers to destroy theirs).

use std::ffi::c_void;

use groute_core::backend::RawSlice;
use groute_core::{Context, Event, Stream, StreamPriority};

use super::library::{Nccl, RawComm, UNIQUE_ID_BYTES, UniqueId};
use super::{ID_WORDS, cuda, device_address};
use crate::comm::{RankComm, Reduction};
use crate::error::{DistError, Result};

/// A communicator of every rank's device 0.
pub(crate) struct NcclGroup {
    nccl: &'static Nccl,
    comm: RawComm,
    /// Ranks in the communicator.
    ranks: usize,
    /// Completion of the last gather enqueued (whether the communicator's work is done when
    /// it is freed).
    last: Option<Event>,
}

// SAFETY: the communicator is used by one thread at a time (`&mut self` for every call);
// NCCL allows a communicator to move between threads.
unsafe impl Send for NcclGroup {}

impl NcclGroup {
    /// Joins every rank's device 0 of `context` into one communicator (collective over
    /// `comm`).
    pub(crate) fn new<C: RankComm>(comm: &mut C, context: &Context) -> Result<Self> {
        let (rank, ranks) = (comm.rank(), comm.size());
        let local = (|| -> Result<_> {
            let nccl = Nccl::get()?;
            nccl.version()?;
            let stream = context.devices()[0].new_stream(StreamPriority::High)?;
            cuda(&stream)?.bind()?;
            let id = if rank == 0 {
                Some(nccl.unique_id()?)
            } else {
                None
            };
            Ok((nccl, stream, id))
        })();
        let mut words = vec![0u64; ID_WORDS + 1];
        match &local {
            Ok((_, _, Some(id))) => {
                for (w, chunk) in words.iter_mut().zip(id.internal.chunks_exact(8)) {
                    *w = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
                }
            }
            Ok(_) => {}
            Err(_) => words[ID_WORDS] = 1,
        }
        let shared = comm.all_reduce(&words, Reduction::Sum)?;
        let (nccl, stream, _) = match local {
            Err(e) => return Err(e),
            Ok(_) if shared[ID_WORDS] > 0 => {
                return Err(DistError::PeerFailed {
                    failed: shared[ID_WORDS],
                    ranks,
                    rank,
                });
            }
            Ok(parts) => parts,
        };
        let mut id = UniqueId {
            internal: [0; UNIQUE_ID_BYTES],
        };
        for (chunk, w) in id.internal.chunks_exact_mut(8).zip(&shared[..ID_WORDS]) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        cuda(&stream)?.bind()?;
        let raw = nccl.init_rank(id, ranks, rank)?;
        let mut group = NcclGroup {
            nccl,
            comm: raw,
            ranks,
            last: None,
        };
        let device = &context.devices()[0];
        let (mine, all) = (device.alloc::<u32>(1)?, device.alloc::<u32>(ranks)?);
        group.all_gather(&mine.raw(), &all.raw(), &stream)?;
        stream.synchronize()?;
        Ok(group)
    }

    /// Enqueues gathering every rank's `mine` into `all` (rank `r`'s at byte
    /// `r * mine.len`) on `stream`, a stream of device 0, keeping both alive until it passes.
    pub(crate) fn all_gather(
        &mut self,
        mine: &RawSlice,
        all: &RawSlice,
        stream: &Stream,
    ) -> Result<()> {
        if mine.len.checked_mul(self.ranks) != Some(all.len) {
            return Err(DistError::Comm(format!(
                "a gather of {} bytes from each of {} ranks into {} bytes (a bug)",
                mine.len, self.ranks, all.len
            )));
        }
        let (from, into) = (device_address(mine)?, device_address(all)?);
        let cuda_stream = cuda(stream)?;
        cuda_stream.bind()?;
        // SAFETY: `comm` is live and was made on device 0, whose stream this is (the caller's
        // contract); `from` is readable for `mine.len` bytes and `into` writable for every
        // rank's (checked above); both are kept alive until the stream passes the call.
        unsafe {
            self.nccl.all_gather(
                (from, into, mine.len),
                self.comm,
                cuda_stream.raw() as *mut c_void,
            )?;
            self.nccl.async_error(self.comm)?;
        }
        cuda_stream.keep_alive(vec![mine.memory.clone(), all.memory.clone()])?;
        self.last = Some(stream.record()?);
        Ok(())
    }
}

impl Drop for NcclGroup {
    fn drop(&mut self) {
        let done = self
            .last
            .as_ref()
            .is_none_or(|e| e.is_complete().unwrap_or(false));
        // SAFETY: `comm` is live and never used again.
        unsafe { self.nccl.free(self.comm, done) };
    }
}
