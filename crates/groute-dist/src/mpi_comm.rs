//! [`MpiComm`]: the ranks of an `mpirun` job as a [`RankComm`] (feature `mpi`).

use std::collections::VecDeque;

use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::point_to_point::MatchedReceiveVec;
use mpi::request::{Request, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::{Count, Threading};

use crate::comm::{RankComm, Reduction, WaveCounts};
use crate::error::{DistError, Result};

/// The tag of the ring's messages on the solver's own communicator.
const RING_TAG: i32 = 17;

/// A buffer handed to MPI for a non-blocking operation: leaked while the operation runs, freed
/// once it completed.
struct Lent<T: ?Sized + 'static> {
    ptr: *mut T,
}

impl<T: ?Sized + 'static> Lent<T> {
    fn new(value: Box<T>) -> Self {
        Lent {
            ptr: Box::into_raw(value),
        }
    }

    /// The buffer for MPI: valid until [`Lent::free`].
    fn get(&self) -> &'static T {
        // SAFETY: `ptr` came from `Box::into_raw` and is freed only by `free`, which takes
        // `self`: the reference lives as long as the operation that holds it, which completes
        // before `free` is called (or the buffer is leaked).
        unsafe { &*self.ptr }
    }

    /// The buffer for MPI to write: valid until [`Lent::free`].
    fn get_mut(&mut self) -> &'static mut T {
        // SAFETY: as in `get`; the one mutable reference is handed to one operation.
        unsafe { &mut *self.ptr }
    }

    /// Frees the buffer; only once the operation that used it has completed.
    fn free(self) -> Box<T> {
        // SAFETY: `ptr` came from `Box::into_raw`, and this consumes the only owner.
        unsafe { Box::from_raw(self.ptr) }
    }
}

/// A send in flight: its request and the buffer lent to it.
type Send = (Request<'static, [u8], StaticScope>, Lent<[u8]>);

/// A wave in flight: its request and the two buffers lent to it.
struct Wave {
    request: Request<'static, [u64], StaticScope>,
    send: Lent<[u64]>,
    receive: Lent<[u64]>,
}

/// The ranks of an MPI job: rank `r` sends to `r + 1 mod size` with `MPI_Isend` and takes
/// from `r - 1` with `MPI_Improbe`/`MPI_Mrecv`; a wave is an `MPI_Iallreduce`; the other
/// collectives are MPI's blocking ones. All on a duplicate of `MPI_COMM_WORLD` (the
/// program's own messages never match the solver's).
///
/// MPI is called only from the thread that made the `MpiComm` (the progress loop runs on
/// it; the drivers never call MPI), so MPI is initialised at `MPI_THREAD_FUNNELED`.
pub struct MpiComm {
    comm: SimpleCommunicator,
    rank: usize,
    size: usize,
    sends: VecDeque<Send>,
    wave: Option<Wave>,
    /// Finalises MPI when dropped (last, after the communicator).
    _universe: Universe,
}

impl std::fmt::Debug for MpiComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpiComm")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("sends_in_flight", &self.sends.len())
            .finish()
    }
}

impl MpiComm {
    /// Initialises MPI (once per process) and joins the job's ranks.
    pub fn init() -> Result<MpiComm> {
        let (universe, level) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| DistError::Comm("MPI is initialised already in this process".into()))?;
        if level < Threading::Funneled {
            return Err(DistError::Comm(format!(
                "the MPI library grants threading level {level:?}; the drivers' threads need \
                 MPI_THREAD_FUNNELED (use an MPI built with thread support)"
            )));
        }
        let comm = universe.world().duplicate();
        let rank = usize::try_from(comm.rank()).unwrap_or(0);
        let size = usize::try_from(comm.size()).unwrap_or(1);
        Ok(MpiComm {
            comm,
            rank,
            size,
            sends: VecDeque::new(),
            wave: None,
            _universe: universe,
        })
    }

    /// Ends every rank of the job (`MPI_Abort`): for an error on one rank that the others
    /// cannot learn of (before or after a collective run).
    pub fn abort(&self, code: i32) -> ! {
        self.comm.abort(code)
    }

    fn next(&self) -> i32 {
        ((self.rank + 1) % self.size) as i32
    }

    fn previous(&self) -> i32 {
        ((self.rank + self.size - 1) % self.size) as i32
    }
}

impl Drop for MpiComm {
    fn drop(&mut self) {
        // Requests must not be dropped before they complete; after a failed run some may not
        // have: their buffers are leaked with them (the job is ending).
        for (request, buffer) in self.sends.drain(..) {
            match request.test() {
                Ok(_) => drop(buffer.free()),
                Err(request) => std::mem::forget(request),
            }
        }
        if let Some(wave) = self.wave.take() {
            match wave.request.test() {
                Ok(_) => {
                    drop(wave.send.free());
                    drop(wave.receive.free());
                }
                Err(request) => std::mem::forget(request),
            }
        }
    }
}

impl RankComm for MpiComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn start_send(&mut self, bytes: Vec<u8>) -> Result<()> {
        let buffer = Lent::new(bytes.into_boxed_slice());
        let request = self
            .comm
            .process_at_rank(self.next())
            .immediate_send_with_tag(StaticScope, buffer.get(), RING_TAG);
        self.sends.push_back((request, buffer));
        Ok(())
    }

    fn progress_sends(&mut self) -> Result<usize> {
        // Sends to one rank complete in order: test from the oldest.
        while let Some((request, buffer)) = self.sends.pop_front() {
            match request.test() {
                Ok(_) => drop(buffer.free()),
                Err(request) => {
                    self.sends.push_front((request, buffer));
                    break;
                }
            }
        }
        Ok(self.sends.len())
    }

    fn try_receive(&mut self) -> Result<Option<Vec<u8>>> {
        let previous = self.comm.process_at_rank(self.previous());
        Ok(previous
            .immediate_matched_probe_with_tag(RING_TAG)
            .map(|matched| matched.matched_receive_vec::<u8>().0))
    }

    fn start_wave(&mut self, counts: WaveCounts) -> Result<()> {
        if self.wave.is_some() {
            return Err(DistError::Comm("a wave is already in flight".into()));
        }
        let send = Lent::new(Box::<[u64]>::from(counts.to_words()));
        let mut receive = Lent::new(Box::<[u64]>::from([0u64; 3]));
        let request = self.comm.immediate_all_reduce_into(
            StaticScope,
            send.get(),
            receive.get_mut(),
            SystemOperation::sum(),
        );
        self.wave = Some(Wave {
            request,
            send,
            receive,
        });
        Ok(())
    }

    fn test_wave(&mut self) -> Result<Option<WaveCounts>> {
        let Some(wave) = self.wave.take() else {
            return Err(DistError::Comm("no wave in flight".into()));
        };
        match wave.request.test() {
            Ok(_) => {
                drop(wave.send.free());
                let sum = wave.receive.free();
                Ok(Some(WaveCounts::from_words([sum[0], sum[1], sum[2]])))
            }
            Err(request) => {
                self.wave = Some(Wave { request, ..wave });
                Ok(None)
            }
        }
    }

    fn all_reduce(&mut self, words: &[u64], op: Reduction) -> Result<Vec<u64>> {
        let mut out = vec![0u64; words.len()];
        let op = match op {
            Reduction::Sum => SystemOperation::sum(),
            Reduction::Max => SystemOperation::max(),
        };
        self.comm.all_reduce_into(words, &mut out[..], op);
        Ok(out)
    }

    fn gather_to_root(&mut self, bytes: &[u8]) -> Result<Option<Vec<Vec<u8>>>> {
        let root = self.comm.process_at_rank(0);
        let count = Count::try_from(bytes.len()).map_err(|_| {
            DistError::Comm(format!(
                "{} bytes to gather from one rank: MPI counts them in 32 bits (use more ranks)",
                bytes.len()
            ))
        })?;
        if self.rank != 0 {
            root.gather_into(&count);
            root.gather_varcount_into(bytes);
            return Ok(None);
        }
        let mut counts: Vec<Count> = vec![0; self.size];
        root.gather_into_root(&count, &mut counts[..]);
        let mut displs = Vec::with_capacity(self.size);
        let mut total: i64 = 0;
        for &c in &counts {
            displs.push(Count::try_from(total).map_err(|_| {
                DistError::Comm(format!(
                    "{total} bytes gathered on rank 0: MPI counts them in 32 bits"
                ))
            })?);
            total += i64::from(c);
        }
        // One byte more than gathered: MPI refuses a receive buffer of none.
        let mut all = vec![0u8; total as usize + 1];
        {
            let mut partition = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(bytes, &mut partition);
        }
        let mut parts = Vec::with_capacity(self.size);
        for (&c, &d) in counts.iter().zip(&displs) {
            parts.push(all[d as usize..(d + c) as usize].to_vec());
        }
        Ok(Some(parts))
    }
}
