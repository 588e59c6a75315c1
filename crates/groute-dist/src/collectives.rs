//! [`CommCollectives`]: the collectives of a frontier executor spanning ranks
//! ([`RankCollectives`]) over the ranks' layer ([`RankComm`]): sums over its all-reduce, and
//! the gather of one buffer per rank over NCCL on CUDA devices (feature `nccl`: a
//! communicator of every rank's device 0) or through the layer's all-reduce on the host
//! backend.

use groute_core::{BackendKind, Buffer, Context, Stream};
use groute_worklist::{RankCollectives, WorklistError};

use crate::comm::{RankComm, Reduction};
use crate::error::{DistError, Result};

/// [`RankCollectives`] over a [`RankComm`], for the devices of one context. Made and dropped
/// collectively (every rank makes its own, in the same order relative to its other
/// collectives).
pub struct CommCollectives<'c, C: RankComm> {
    comm: &'c mut C,
    #[cfg(feature = "nccl")]
    group: Option<crate::nccl::NcclGroup>,
}

impl<'c, C: RankComm> CommCollectives<'c, C> {
    /// The collectives of `comm`'s ranks on `context`'s device 0 (collective). On CUDA
    /// devices this makes an NCCL communicator of every rank's device 0 (feature `nccl`;
    /// without it, an error naming the build that has it).
    pub fn new(comm: &'c mut C, context: &Context) -> Result<Self> {
        let cuda = context.backend_kind() == BackendKind::Cuda;
        #[cfg(feature = "nccl")]
        {
            let group = if cuda && comm.size() > 1 {
                Some(crate::nccl::NcclGroup::new(comm, context)?)
            } else {
                None
            };
            Ok(CommCollectives { comm, group })
        }
        #[cfg(not(feature = "nccl"))]
        {
            if cuda && comm.size() > 1 {
                return Err(DistError::Comm(
                    "collectives between ranks on CUDA devices need the NCCL plane: build with \
                     the `nccl` feature, or run on the host backend"
                        .into(),
                ));
            }
            Ok(CommCollectives { comm })
        }
    }

    /// Collectives that only sum host words, for what the ranks decide before a solver is
    /// made ([`RankCollectives::sum`]; no NCCL communicator is made, and a gather of device
    /// memory is refused).
    pub fn sums_only(comm: &'c mut C) -> Self {
        CommCollectives {
            comm,
            #[cfg(feature = "nccl")]
            group: None,
        }
    }

    /// The layer underneath (for the caller's own collectives between runs).
    pub fn comm(&mut self) -> &mut C {
        self.comm
    }

    /// The host backend's gather: `mine`'s words into `all` through the layer's all-reduce,
    /// after `stream` is idle.
    fn gather_on_host(
        &mut self,
        mine: &Buffer<u32>,
        all: &Buffer<u32>,
        stream: &Stream,
    ) -> Result<()> {
        let (rank, ranks) = (self.comm.rank(), self.comm.size());
        // This process's words; a failure of its own (its stream) still takes part in the
        // reduction, with zeros, so that the others are not left waiting in it.
        let words = stream
            .synchronize()
            .map_err(DistError::from)
            .and_then(|()| {
                // SAFETY: the stream, the only writer of the buffers, is idle.
                unsafe { mine.host_to_vec() }.ok_or_else(not_host)
            });
        let per_rank = mine.len().div_ceil(2);
        let mut slots = vec![0u64; per_rank * ranks];
        if let Ok(words) = &words {
            for (slot, pair) in slots[rank * per_rank..].iter_mut().zip(words.chunks(2)) {
                let high = pair.get(1).copied().unwrap_or(0);
                *slot = u64::from(pair[0]) | (u64::from(high) << 32);
            }
        }
        let summed = self.comm.all_reduce(&slots, Reduction::Sum)?;
        let words = words?;
        // SAFETY: as above; nothing else views `all` while this writes it.
        let out = unsafe { all.as_host_slice_mut() }.ok_or_else(not_host)?;
        for (r, gathered) in out.chunks_mut(words.len().max(1)).enumerate().take(ranks) {
            let slots = &summed[r * per_rank..(r + 1) * per_rank];
            for (i, w) in gathered.iter_mut().enumerate() {
                let slot = slots[i / 2];
                *w = if i % 2 == 0 {
                    slot as u32
                } else {
                    (slot >> 32) as u32
                };
            }
        }
        Ok(())
    }
}

/// The error of device memory given to collectives without a device plane (the host
/// backend's, or [`CommCollectives::sums_only`]).
fn not_host() -> DistError {
    DistError::Comm(
        "device memory given to collectives without a device plane: make them with \
         CommCollectives::new on the devices' context"
            .into(),
    )
}

/// A [`DistError`] as the worklist's error.
fn into_worklist(e: DistError) -> WorklistError {
    match e {
        DistError::Worklist(e) => e,
        other => WorklistError::Ranks(Box::new(other)),
    }
}

impl<C: RankComm> RankCollectives for CommCollectives<'_, C> {
    fn rank(&self) -> usize {
        self.comm.rank()
    }

    fn ranks(&self) -> usize {
        self.comm.size()
    }

    fn sum(&mut self, words: &[u64]) -> std::result::Result<Vec<u64>, WorklistError> {
        self.comm
            .all_reduce(words, Reduction::Sum)
            .map_err(into_worklist)
    }

    fn all_gather(
        &mut self,
        mine: &Buffer<u32>,
        all: &Buffer<u32>,
        stream: &Stream,
    ) -> std::result::Result<(), WorklistError> {
        let ranks = self.comm.size();
        if mine.len().checked_mul(ranks) != Some(all.len()) {
            return Err(groute_core::Error::LengthMismatch {
                operation: "the gather between ranks",
                dst: all.len(),
                src: mine.len().saturating_mul(ranks),
            }
            .into());
        }
        #[cfg(feature = "nccl")]
        if let Some(group) = &mut self.group {
            return group
                .all_gather(&mine.raw(), &all.raw(), stream)
                .map_err(into_worklist);
        }
        if ranks == 1 {
            return Ok(stream.copy(all, mine)?);
        }
        self.gather_on_host(mine, all, stream)
            .map_err(into_worklist)
    }
}
