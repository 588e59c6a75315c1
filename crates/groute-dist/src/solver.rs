//! [`DistSolver`]: any [`WorklistAlgorithm`] over the devices of every rank.

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::AtomicBool;

use groute_core::Context;
use groute_graph::{Csr, Partition};
use groute_worklist::algorithm::{HostAlgorithm, HostOutput, HostSolver};
use groute_worklist::{
    Combine, PackedOf, PriorityCounter, RingTransport, SharedRun, WorklistAlgorithm,
    WorklistOptions, WorklistStats,
};

use crate::comm::{RankComm, Reduction};
use crate::error::{DistError, Result};
use crate::progress::{Ending, Progress, drain_after_failure, fail_alone};
use crate::ring::RankRing;

/// The output of a [`DistSolver`] run on one rank.
#[derive(Clone, Debug)]
pub struct DistOutput<V> {
    /// On rank 0, every vertex's result in the partitioned numbering (as
    /// [`HostOutput::values`] of a one-process run); empty on the others.
    pub values: Vec<V>,
    /// On rank 0 under [`Combine::Sum`](groute_worklist::Combine::Sum), the value left on
    /// each vertex; empty otherwise.
    pub left: Vec<V>,
    /// This rank's engine counters.
    pub stats: WorklistStats,
    /// Sums over every rank of this run's counters ([`RunTotals`]).
    pub totals: RunTotals,
}

/// Counters of a run summed over its ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunTotals {
    /// Items processed on every device of every rank.
    pub items_processed: u64,
    /// Items put on the ring by every device (within a rank and between ranks).
    pub items_sent: u64,
    /// Items that crossed from one rank to the next.
    pub items_between_ranks: u64,
    /// The largest number of rounds of any device.
    pub max_rounds: u64,
    /// Termination waves (the same on every rank).
    pub waves: u64,
}

/// A [`WorklistAlgorithm`] over the devices of every rank of a run: the graph is split into
/// `ranks x devices` parts, rank `r`'s devices holding parts `r * devices..(r + 1) * devices`
/// (its [`HostSolver::for_parts`]); the ranks form one ring, rank `r`'s last device sending
/// to rank `r + 1`'s first, and the run ends when a termination wave proves every rank idle
/// with nothing in flight (the crate docs). Host backend.
///
/// Every rank makes its solver with the same graph, partition, algorithm and options, and
/// calls [`DistSolver::run`] with the same sources (collective calls).
pub struct DistSolver<'c, A: WorklistAlgorithm, C: RankComm> {
    comm: &'c mut C,
    context: Context,
    solver: HostSolver<A>,
    ring_devices: usize,
}

impl<A: WorklistAlgorithm, C: RankComm> std::fmt::Debug for DistSolver<'_, A, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistSolver")
            .field("rank", &self.comm.rank())
            .field("ranks", &self.comm.size())
            .field("ring_devices", &self.ring_devices)
            .finish()
    }
}

impl<'c, A: WorklistAlgorithm, C: RankComm> DistSolver<'c, A, C> {
    /// Uploads this rank's parts of `csr` (the whole graph, renumbered so that part `p` owns
    /// `partition.range(p)`; `partition` has `comm.size() * context.num_devices()` parts)
    /// to `context`'s devices. Collective: every rank calls it, with as many devices.
    pub fn new(
        comm: &'c mut C,
        context: &Context,
        algorithm: A,
        csr: &Csr,
        partition: &Partition,
        options: &WorklistOptions,
    ) -> Result<Self> {
        let devices = context.num_devices() as u64;
        let n = csr.num_vertices() as u64;
        let bounds = fingerprint(partition.bounds());
        let [devices_range, n_range, bounds_range] = agree(comm, [devices, n, bounds])?;
        if let Some((low, high)) = devices_range {
            return Err(DistError::Mismatch {
                what: "the number of devices per rank",
                detail: format!(
                    "between {low} and {high} (this rank, {}, has {devices})",
                    comm.rank()
                ),
                fix: "give every rank the same --devices",
            });
        }
        if n_range.is_some() || bounds_range.is_some() {
            return Err(DistError::Mismatch {
                what: "the graph or its partition",
                detail: format!(
                    "this rank, {}, has {n} vertices in {} parts (vertex counts {})",
                    comm.rank(),
                    partition.num_parts(),
                    n_range.map_or("agree".to_owned(), |(l, h)| format!("from {l} to {h}")),
                ),
                fix: "load the same graph on every rank and partition it the same way",
            });
        }
        let ring_devices = comm.size() * context.num_devices();
        if partition.num_parts() != ring_devices {
            return Err(groute_core::Error::invalid(
                "partition",
                format!("{} parts", partition.num_parts()),
                format!(
                    "partition into {ring_devices} parts: {} ranks x {} devices",
                    comm.size(),
                    context.num_devices()
                ),
            )
            .into());
        }
        let first_part = comm.rank() * context.num_devices();
        let solver = HostSolver::for_parts(context, algorithm, csr, partition, first_part, options);
        // One rank may fail here alone (its devices' memory): all learn it.
        let failed = comm.all_reduce(&[u64::from(solver.is_err())], Reduction::Sum)?[0];
        let solver = match solver {
            Ok(_) if failed > 0 => {
                return Err(DistError::PeerFailed {
                    failed,
                    ranks: comm.size(),
                    rank: comm.rank(),
                });
            }
            other => other?,
        };
        Ok(DistSolver {
            comm,
            context: context.clone(),
            solver,
            ring_devices,
        })
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    /// The vertices this rank's parts own.
    pub fn owned_vertices(&self) -> Range<u32> {
        self.solver.owned_vertices()
    }

    /// Runs the algorithm from `sources` (partitioned ids, the same on every rank) and
    /// gathers the results to rank 0. Collective. Soft priority (`options.prio_delta`)
    /// advances within each rank, on its own threshold.
    pub fn run(
        &mut self,
        sources: &[u32],
        options: &WorklistOptions,
    ) -> Result<DistOutput<A::Value>> {
        let mut sorted = sources.to_vec();
        sorted.sort_unstable();
        let [count, list] = agree(&mut *self.comm, [sorted.len() as u64, fingerprint(&sorted)])?;
        if count.is_some() || list.is_some() {
            return Err(DistError::Mismatch {
                what: "the sources",
                detail: format!(
                    "this rank, {}, has {} sources",
                    self.comm.rank(),
                    sorted.len()
                ),
                fix: "give every rank the same sources",
            });
        }
        // Counts of zero make this rank idle; the progress loop ends the run (`finish`).
        let counter = PriorityCounter::held(self.context.num_devices(), options.prio_delta);
        let started = AtomicBool::new(false);
        let packet_size = options.packet_size.max(1);
        let item_bytes = std::mem::size_of::<PackedOf<HostAlgorithm<A>>>();
        let (ring, edges) =
            match RankRing::new(&self.context, packet_size, options.ring_buffers.max(1)) {
                Ok(ring) => ring,
                Err(e) => {
                    // The others are running: tell them, and leave nothing in flight.
                    fail_alone(&mut *self.comm, item_bytes)?;
                    return Err(e.into());
                }
            };
        let shared = SharedRun {
            counter: &counter,
            ring_devices: self.ring_devices,
            started: &started,
        };
        let solver = &mut self.solver;
        let comm = &mut *self.comm;
        let context = &self.context;
        let (share, progress) = std::thread::scope(|scope| {
            let ring = &ring;
            let counter = &counter;
            let drivers = scope.spawn(move || {
                // A panic (in an algorithm's own code, say) fails the rank like an error.
                let out = catch_unwind(AssertUnwindSafe(|| {
                    solver.run_shared(sources, options, ring, shared)
                }))
                .unwrap_or_else(|_| {
                    Err(groute_core::Error::ThreadPanicked("the drivers of a rank".into()).into())
                });
                if out.is_err() {
                    counter.abort();
                    ring.shutdown();
                }
                out
            });
            let mut progress = Progress {
                comm,
                context,
                edges,
                counter,
                started: &started,
                sent: 0,
                received: 0,
                error: None,
            };
            let ending =
                catch_unwind(AssertUnwindSafe(|| progress.run(ring))).unwrap_or_else(|_| {
                    counter.abort();
                    ring.shutdown();
                    Err(DistError::Comm(
                        "the progress loop of this rank panicked".into(),
                    ))
                });
            let share = drivers.join().unwrap_or_else(|_| {
                Err(groute_core::Error::ThreadPanicked("the drivers of a rank".into()).into())
            });
            (
                share,
                (ending, progress.sent, progress.received, progress.error),
            )
        });
        let (ending, sent, received, own_error) = progress;
        let (rank, ranks) = (self.comm.rank(), self.comm.size());
        match ending? {
            Ending::Terminated { waves } => {
                // Every rank ended on the same wave; one may still have failed after it (a
                // time limit, its devices' last work): all learn it before the gather.
                let failed = self
                    .comm
                    .all_reduce(&[u64::from(share.is_err())], Reduction::Sum)?[0];
                match share {
                    Ok(share) if failed == 0 => self.gather(share, sent, waves),
                    Ok(_) => Err(DistError::PeerFailed {
                        failed,
                        ranks,
                        rank,
                    }),
                    Err(e) => Err(e.into()),
                }
            }
            Ending::Failed { failed, this_rank } => {
                drain_after_failure(&mut *self.comm, sent, received, item_bytes)?;
                match (this_rank, own_error, share) {
                    (true, Some(e), _) => Err(e),
                    (true, None, Err(e)) => Err(e.into()),
                    _ => Err(DistError::PeerFailed {
                        failed,
                        ranks,
                        rank,
                    }),
                }
            }
        }
    }

    fn gather(
        &mut self,
        share: HostOutput<A::Value>,
        between: u64,
        waves: u64,
    ) -> Result<DistOutput<A::Value>> {
        let stats = share.stats;
        let sums = self.comm.all_reduce(
            &[stats.items_processed(), stats.items_sent(), between],
            Reduction::Sum,
        )?;
        let max_rounds = self.comm.all_reduce(&[stats.rounds()], Reduction::Max)?[0];
        let values = self.gather_words(&share.values)?;
        let left = match A::COMBINE {
            Combine::Sum => self.gather_words(&share.left)?,
            Combine::Min => Vec::new(),
        };
        Ok(DistOutput {
            values,
            left,
            stats,
            totals: RunTotals {
                items_processed: sums[0],
                items_sent: sums[1],
                items_between_ranks: sums[2],
                max_rounds,
                waves,
            },
        })
    }

    /// Each rank's `words`, concatenated in rank order, on rank 0 (empty elsewhere), in
    /// rounds of at most [`GATHER_ROUND_BYTES`] per rank (MPI counts bytes in 32 bits, the
    /// total of a round on rank 0 included).
    fn gather_words<W: bytemuck::Pod>(&mut self, words: &[W]) -> Result<Vec<W>> {
        let bytes: &[u8] = bytemuck::cast_slice(words);
        let round = GATHER_ROUND_BYTES / self.comm.size().max(1);
        let longest = self
            .comm
            .all_reduce(&[bytes.len() as u64], Reduction::Max)?[0] as usize;
        let rounds = longest.div_ceil(round.max(1)).max(1);
        let mut parts: Vec<Vec<u8>> = vec![Vec::new(); self.comm.size()];
        for r in 0..rounds {
            let chunk = bytes
                .get(r * round..bytes.len().min((r + 1) * round))
                .unwrap_or(&[]);
            if let Some(got) = self.comm.gather_to_root(chunk)? {
                for (part, piece) in parts.iter_mut().zip(got) {
                    part.extend_from_slice(&piece);
                }
            }
        }
        if self.comm.rank() != 0 {
            return Ok(Vec::new());
        }
        let mut all = Vec::new();
        for bytes in parts {
            if bytes.len() % std::mem::size_of::<W>() != 0 {
                return Err(DistError::Comm(format!(
                    "a gathered part of {} bytes is not a whole number of words",
                    bytes.len()
                )));
            }
            all.extend(bytemuck::pod_collect_to_vec::<u8, W>(&bytes));
        }
        Ok(all)
    }
}

/// The most bytes one gather round brings to rank 0 from all ranks together (1 GiB: well
/// inside MPI's 32-bit counts).
pub const GATHER_ROUND_BYTES: usize = 1 << 30;

/// For each word, `None` if every rank gave the same, else the smallest and largest given
/// (collective: one all-reduce of the words and their complements under max).
fn agree<C: RankComm, const N: usize>(
    comm: &mut C,
    words: [u64; N],
) -> Result<[Option<(u64, u64)>; N]> {
    let mut both = Vec::with_capacity(2 * N);
    both.extend(words);
    both.extend(words.iter().map(|w| u64::MAX - w));
    let max = comm.all_reduce(&both, Reduction::Max)?;
    Ok(std::array::from_fn(|i| {
        let (high, low) = (max[i], u64::MAX - max[N + i]);
        (low != high).then_some((low, high))
    }))
}

/// A 64-bit FNV-1a fingerprint of `words` (equal lists agree; unequal ones almost surely not).
fn fingerprint(words: &[u32]) -> u64 {
    words.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, w| {
        w.to_le_bytes()
            .iter()
            .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
    })
}
