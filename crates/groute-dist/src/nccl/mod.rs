//! [`NcclPlane`]: the CUDA data plane between ranks over NCCL (feature `nccl`).
//!
//! Each edge of the rank ring (`r -> r + 1 mod R`) is a communicator of its own with two
//! members: the sending rank (member 0, on its last device) and the receiving one (member
//! 1, on its device 0). One direction per communicator means that a rank's sends and its
//! receives never wait on each other: a send waits only for the matching receive, which the
//! next rank's progress loop enqueues as soon as the send's message (its length, over MPI)
//! arrives, whatever that rank's own sends are doing. Sends and receives are enqueued on two
//! streams of their own, after the events that make their memory valid; nothing here blocks
//! the host once the plane is made.
//!
//! Making the plane is collective. The communicators are made, and their connections
//! opened with a one-byte exchange, edge by edge in the order `0, 1, ..., R - 1` on every
//! rank: each rank blocks on at most one edge at a time, and every rank reaches that edge's
//! partner step, so the bootstrap cannot deadlock (a rank's first blocking step is its
//! lowest edge, and edge 0's members both start there). They are freed in the same order when
//! the plane is dropped (dropping a solver that holds one is collective): freeing a
//! communicator waits for its peer to free it too (NCCL's proxy threads keep each other's
//! connections open until then), so freeing `to_next` first on every rank would make a cycle.

mod group;
mod library;

use std::collections::VecDeque;
use std::ffi::c_void;

use groute_core::backend::RawSlice;
use groute_core::cuda::CudaStream;
use groute_core::{Context, Event, Stream, StreamPriority};

use crate::comm::{RankComm, Reduction};
use crate::error::{DistError, Result};
use crate::plane::DevicePlane;
pub(crate) use group::NcclGroup;
pub use library::NCCL_LIBRARY_ENV;
use library::{Direction, Nccl, RawComm, UNIQUE_ID_BYTES, UniqueId};

/// Words of one bootstrap handle in the all-reduce that shares them.
const ID_WORDS: usize = UNIQUE_ID_BYTES / 8;

/// The device plane over NCCL: this rank's two ring-edge communicators and their streams.
pub(crate) struct NcclPlane {
    nccl: &'static Nccl,
    /// This rank and the ranks of the ring (the teardown's edge order).
    rank: usize,
    ranks: usize,
    /// Edge `rank -> rank + 1` (this rank is member 0).
    to_next: RawComm,
    /// Edge `rank - 1 -> rank` (this rank is member 1).
    from_previous: RawComm,
    /// On the last device: the sends.
    send_stream: Stream,
    /// On device 0: the receives.
    recv_stream: Stream,
    context: Context,
    /// Completion of each send and receive enqueued, oldest first.
    sends: VecDeque<Event>,
    receives: VecDeque<Event>,
}

// SAFETY: the communicators are used by one thread at a time (the plane is `&mut` for every
// call); NCCL allows a communicator to move between threads.
unsafe impl Send for NcclPlane {}

/// Member ranks within an edge communicator.
const SENDER: i32 = 0;
const RECEIVER: i32 = 1;

impl NcclPlane {
    /// Makes the plane of this rank (collective over `comm`, which has at least two ranks):
    /// loads NCCL, shares each edge's bootstrap handle (made by its sending rank), makes the
    /// communicators and opens their connections (the module docs).
    pub(crate) fn new<C: RankComm>(comm: &mut C, context: &Context) -> Result<Self> {
        let (rank, size) = (comm.rank(), comm.size());
        // This rank's local steps; their failure is shared with the handles (one all-reduce:
        // the last word counts the ranks that failed), so no rank is left in a collective.
        let local = (|| -> Result<_> {
            let nccl = Nccl::get()?;
            nccl.version()?;
            let last = context.num_devices() - 1;
            let send_stream = context.devices()[last].new_stream(StreamPriority::High)?;
            let recv_stream = context.devices()[0].new_stream(StreamPriority::High)?;
            cuda(&send_stream)?.bind()?;
            let own = nccl.unique_id()?;
            Ok((nccl, send_stream, recv_stream, own))
        })();
        let mut words = vec![0u64; size * ID_WORDS + 1];
        match &local {
            Ok((.., own)) => {
                for (w, chunk) in words[rank * ID_WORDS..(rank + 1) * ID_WORDS]
                    .iter_mut()
                    .zip(own.internal.chunks_exact(8))
                {
                    *w = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
                }
            }
            Err(_) => words[size * ID_WORDS] = 1,
        }
        let ids = comm.all_reduce(&words, Reduction::Sum)?;
        let failed = ids[size * ID_WORDS];
        let (nccl, send_stream, recv_stream, _) = match local {
            Err(e) => return Err(e),
            Ok(_) if failed > 0 => {
                return Err(DistError::PeerFailed {
                    failed,
                    ranks: size,
                    rank,
                });
            }
            Ok(parts) => parts,
        };
        let id_of = |edge: usize| {
            let mut id = UniqueId {
                internal: [0; UNIQUE_ID_BYTES],
            };
            for (chunk, w) in id
                .internal
                .chunks_exact_mut(8)
                .zip(&ids[edge * ID_WORDS..(edge + 1) * ID_WORDS])
            {
                chunk.copy_from_slice(&w.to_le_bytes());
            }
            id
        };
        let (mut to_next, mut from_previous) = (None, None);
        let made = (|| -> Result<()> {
            for edge in 0..size {
                if edge == rank {
                    cuda(&send_stream)?.bind()?;
                    to_next = Some(nccl.init_rank(id_of(edge), 2, SENDER as usize)?);
                }
                if (edge + 1) % size == rank {
                    cuda(&recv_stream)?.bind()?;
                    from_previous = Some(nccl.init_rank(id_of(edge), 2, RECEIVER as usize)?);
                }
            }
            Ok(())
        })();
        if let Err(e) = made {
            for comm in [to_next, from_previous].into_iter().flatten() {
                // SAFETY: made above, used by nothing else.
                unsafe { nccl.free(comm, false) };
            }
            return Err(e);
        }
        let (Some(to_next), Some(from_previous)) = (to_next, from_previous) else {
            return Err(DistError::Comm(
                "an NCCL plane needs at least two ranks (one rank closes its ring itself)".into(),
            ));
        };
        let mut plane = NcclPlane {
            nccl,
            rank,
            ranks: size,
            to_next,
            from_previous,
            send_stream,
            recv_stream,
            context: context.clone(),
            sends: VecDeque::new(),
            receives: VecDeque::new(),
        };
        plane.open_connections(rank, size)?;
        Ok(plane)
    }

    /// One byte over each edge, edge by edge (the module docs): NCCL opens a connection on
    /// its first use, blocking, so the first sends of a run do not.
    fn open_connections(&mut self, rank: usize, size: usize) -> Result<()> {
        let outgoing = self.context.devices()[self.context.num_devices() - 1].alloc::<u8>(1)?;
        let incoming = self.context.devices()[0].alloc::<u8>(1)?;
        for edge in 0..size {
            if edge == rank {
                self.send(&outgoing.raw(), &Event::ready())?;
                self.send_stream.synchronize()?;
            }
            if (edge + 1) % size == rank {
                self.receive(&incoming.raw())?;
                self.recv_stream.synchronize()?;
            }
        }
        self.unfinished_sends()?;
        self.sends.clear();
        self.receives.clear();
        Ok(())
    }

    /// Fails with the communicators' asynchronous errors, if any.
    fn check(&self) -> Result<()> {
        // SAFETY: both communicators live as long as `self`.
        unsafe {
            self.nccl.async_error(self.to_next)?;
            self.nccl.async_error(self.from_previous)
        }
    }
}

/// Drops the completed events at the front of `events` (oldest first).
fn retire_completed(events: &mut VecDeque<Event>) -> Result<()> {
    while events.front().map_or(Ok(false), |e| e.is_complete())? {
        events.pop_front();
    }
    Ok(())
}

/// `stream` as a CUDA stream (the plane runs on CUDA devices only).
fn cuda(stream: &Stream) -> Result<&CudaStream> {
    Ok(CudaStream::from_raw(&**stream.raw())?)
}

/// The device address of `slice`, or the error of host memory on the device plane.
fn device_address(slice: &RawSlice) -> Result<u64> {
    slice.device_ptr().ok_or_else(|| {
        DistError::Comm("host memory given to the NCCL device plane (CUDA buffers only)".into())
    })
}

impl NcclPlane {
    /// Enqueues `direction` of `slice` on `stream` over `comm` with member `peer`, keeping the
    /// slice's memory alive until the stream has passed it; the event after it.
    fn enqueue(
        &self,
        direction: Direction,
        slice: &RawSlice,
        (stream, comm, peer): (&Stream, RawComm, i32),
    ) -> Result<Event> {
        let ptr = device_address(slice)?;
        let cuda_stream = cuda(stream)?;
        cuda_stream.bind()?;
        // SAFETY: `comm` is one of this plane's live communicators, made on the device of
        // `stream` (the last device for sends, device 0 for receives, where the ring puts the
        // slices); `ptr` is valid for `slice.len` bytes, kept alive below until the stream has
        // passed the call.
        unsafe {
            self.nccl.point_to_point(
                direction,
                (ptr, slice.len),
                peer,
                comm,
                cuda_stream.raw() as *mut c_void,
            )?;
        }
        cuda_stream.keep_alive(vec![slice.memory.clone()])?;
        Ok(stream.record()?)
    }
}

impl DevicePlane for NcclPlane {
    fn send(&mut self, items: &RawSlice, ready: &Event) -> Result<()> {
        self.send_stream.wait(ready)?;
        let sent = self.enqueue(
            Direction::Send,
            items,
            (&self.send_stream, self.to_next, RECEIVER),
        )?;
        self.sends.push_back(sent);
        retire_completed(&mut self.sends)?;
        Ok(())
    }

    fn receive(&mut self, into: &RawSlice) -> Result<Event> {
        let landed = self.enqueue(
            Direction::Recv,
            into,
            (&self.recv_stream, self.from_previous, SENDER),
        )?;
        self.receives.push_back(landed.clone());
        retire_completed(&mut self.receives)?;
        Ok(landed)
    }

    fn discard(&mut self, bytes: usize) -> Result<()> {
        let scratch = self.context.devices()[0].alloc::<u8>(bytes)?;
        self.receive(&scratch.raw()).map(drop)
    }

    fn unfinished_sends(&mut self) -> Result<usize> {
        self.check()?;
        retire_completed(&mut self.sends)?;
        Ok(self.sends.len())
    }
}

impl Drop for NcclPlane {
    fn drop(&mut self) {
        let complete =
            |events: &VecDeque<Event>| events.iter().all(|e| e.is_complete().unwrap_or(false));
        let done = complete(&self.sends) && complete(&self.receives);
        // Edge by edge in the bootstrap's order (the module docs), each on its device.
        for edge in 0..self.ranks {
            if edge == self.rank {
                let _ = cuda(&self.send_stream).and_then(|s| Ok(s.bind()?));
                // SAFETY: `to_next` is live and never used again.
                unsafe { self.nccl.free(self.to_next, done) };
            }
            if (edge + 1) % self.ranks == self.rank {
                let _ = cuda(&self.recv_stream).and_then(|s| Ok(s.bind()?));
                // SAFETY: `from_previous` is live and never used again.
                unsafe { self.nccl.free(self.from_previous, done) };
            }
        }
    }
}
