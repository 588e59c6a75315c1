//! [`DistSolver`]: any [`WorklistAlgorithm`] over the devices of every rank.

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::AtomicBool;

use std::collections::VecDeque;

use bytemuck::Pod;
use groute_core::{BackendKind, Context};
use groute_graph::{HeldRows, Partition};
use groute_worklist::algorithm::HostSolver;
use groute_worklist::traversal::MinTraversalSolver;
use groute_worklist::{
    Combine, PriorityCounter, RingTransport, ShareOutput, ShareSolver, ShareValue, SharedRun,
    WorklistAlgorithm, WorklistOptions, WorklistStats,
};

use crate::comm::{RankComm, Reduction};
use crate::error::{DistError, Result};
use crate::plane::Carrier;
use crate::progress::{Ending, Progress, drain_after_failure, fail_alone};
use crate::ring::RankRing;

/// The output of a [`DistSolver`] run on one rank.
#[derive(Clone, Debug)]
pub struct DistOutput<V> {
    /// On rank 0, every vertex's result in the partitioned numbering (as
    /// [`HostOutput::values`](groute_worklist::algorithm::HostOutput::values) of a
    /// one-process run); empty on the others.
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
    /// Segments (messages) put on the ring by every device.
    pub segments_sent: u64,
    /// Updates of other devices' vertices put on the ring, after combining, by every device.
    pub remote_updates: u64,
    /// Arcs to other devices' vertices relaxed on every device; `None` unless every device
    /// of every rank counted them (the host executor does, the CUDA kernels do not).
    pub cut_arcs_traversed: Option<u64>,
    /// The largest number of rounds of any device.
    pub max_rounds: u64,
    /// Termination waves (the same on every rank).
    pub waves: u64,
}

/// A [`WorklistAlgorithm`] over the devices of every rank of a run: the graph is split into
/// `ranks x devices` parts, rank `r`'s devices holding parts `r * devices..(r + 1) * devices`
/// and nothing else; the ranks form one ring, rank `r`'s last device sending to rank
/// `r + 1`'s first, and the run ends when a termination wave proves every rank idle with
/// nothing in flight (the crate docs).
///
/// On the host backend any algorithm runs ([`HostSolver`]), its items crossing between
/// ranks inside the [`RankComm`]'s messages. On CUDA devices the share runs on `D`, a
/// [`ShareSolver`]: by default [`MinTraversalSolver`] (BFS, SSSP, label propagation, a
/// program's own min-combined traversal with kernels; [`DistSolver::new`]), or an
/// algorithm's own CUDA executor ([`DistSolver::with_device_solver`]: PageRank's
/// `groute_pagerank::PageRankShare`). Their items cross over NCCL (feature `nccl`) with only
/// their count in the message; a worklist or outgoing buffer that overflows is grown on the
/// rank that overflowed and the run starts again on every rank.
///
/// Every rank makes its solver with the same graph, partition, algorithm, options and
/// backend, and calls [`DistSolver::run`] with the same sources (collective calls).
pub struct DistSolver<'c, A, C, D = MinTraversalSolver<A>>
where
    A: WorklistAlgorithm,
    C: RankComm,
    D: ShareSolver<Algorithm = A>,
{
    comm: &'c mut C,
    context: Context,
    share: Share<A, D>,
    ring_devices: usize,
}

/// This rank's share of the graph, by backend.
enum Share<A: WorklistAlgorithm, D: ShareSolver> {
    /// Host backend: any algorithm; items cross inside the messages (or, in this crate's
    /// tests, over a device plane of host memory).
    Host {
        solver: HostSolver<A>,
        carrier: Carrier<<HostSolver<A> as ShareSolver>::Packed>,
    },
    /// CUDA devices: the device executor; items cross over the carrier.
    Cuda {
        solver: D,
        carrier: Carrier<D::Packed>,
    },
}

/// A share that ran to the end of the run: its output, the items it sent to the next rank,
/// and the termination waves.
type Finished<V> = (ShareOutput<V>, u64, u64);

impl<A: WorklistAlgorithm, C: RankComm, D: ShareSolver<Algorithm = A>> std::fmt::Debug
    for DistSolver<'_, A, C, D>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistSolver")
            .field("rank", &self.comm.rank())
            .field("ranks", &self.comm.size())
            .field("ring_devices", &self.ring_devices)
            .finish()
    }
}

impl<'c, A: WorklistAlgorithm, C: RankComm> DistSolver<'c, A, C> {
    /// [`DistSolver::with_device_solver`] with the min traversals' executor on CUDA devices
    /// ([`MinTraversalSolver`]; any algorithm on the host backend).
    pub fn new<'g>(
        comm: &'c mut C,
        context: &Context,
        algorithm: A,
        rows: impl Into<HeldRows<'g>>,
        partition: &Partition,
        options: &WorklistOptions,
    ) -> Result<Self> {
        Self::with_device_solver(comm, context, algorithm, rows, partition, options)
    }
}

impl<'c, A: WorklistAlgorithm, C: RankComm, D: ShareSolver<Algorithm = A>> DistSolver<'c, A, C, D> {
    /// Uploads this rank's parts of the graph (renumbered so that part `p` owns
    /// `partition.range(p)`; `partition` has `comm.size() * context.num_devices()` parts)
    /// to `context`'s devices (on CUDA devices, `D`'s storage). `rows` is the graph as this
    /// rank holds it: a whole [`Csr`](groute_graph::Csr) (`&csr`), or [`HeldRows::some`] of
    /// it, which must hold at least this rank's parts' rows (a rank that loaded only those,
    /// [`GraphCache::load_rows`](groute_graph::GraphCache::load_rows)). On CUDA devices of
    /// several ranks, also makes the NCCL plane. Collective: every rank calls it, with as many
    /// devices of the same backend. An error that one rank meets inside NCCL's own bootstrap
    /// can leave the others waiting there: end the job on an error (`MpiComm::abort`), as
    /// the examples do. Dropping a solver on CUDA devices of several ranks is collective too
    /// (the ranks free their NCCL communicators together).
    pub fn with_device_solver<'g>(
        comm: &'c mut C,
        context: &Context,
        algorithm: A,
        rows: impl Into<HeldRows<'g>>,
        partition: &Partition,
        options: &WorklistOptions,
    ) -> Result<Self> {
        let rows = rows.into();
        let devices = context.num_devices() as u64;
        let n = rows.num_vertices() as u64;
        let bounds = fingerprint(partition.bounds());
        let cuda = context.backend_kind() == BackendKind::Cuda;
        let [devices_range, n_range, bounds_range, backend_range] =
            agree(comm, [devices, n, bounds, u64::from(cuda)])?;
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
        if backend_range.is_some() {
            return Err(DistError::Mismatch {
                what: "the backend",
                detail: format!(
                    "this rank, {}, runs on {}, another on {}",
                    comm.rank(),
                    if cuda {
                        "CUDA devices"
                    } else {
                        "the host backend"
                    },
                    if cuda {
                        "the host backend"
                    } else {
                        "CUDA devices"
                    },
                ),
                fix: "give every rank the same --backend (and GPUs to every rank for cuda)",
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
        let share = if cuda {
            D::for_parts(context, algorithm, &rows, partition, first_part, options).map(|solver| {
                Share::Cuda {
                    solver,
                    carrier: Carrier::Loopback(VecDeque::new()),
                }
            })
        } else {
            HostSolver::for_parts(context, algorithm, &rows, partition, first_part, options).map(
                |solver| Share::Host {
                    solver,
                    carrier: Carrier::Messages,
                },
            )
        };
        // One rank may fail here alone (its devices' memory): all learn it.
        let failed = comm.all_reduce(&[u64::from(share.is_err())], Reduction::Sum)?[0];
        let mut share = match share {
            Ok(_) if failed > 0 => {
                return Err(DistError::PeerFailed {
                    failed,
                    ranks: comm.size(),
                    rank: comm.rank(),
                });
            }
            other => other?,
        };
        if let Share::Cuda { carrier, .. } = &mut share
            && comm.size() > 1
        {
            *carrier = device_plane(comm, context)?;
        }
        Ok(DistSolver {
            comm,
            context: context.clone(),
            share,
            ring_devices,
        })
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    /// The vertices this rank's parts own.
    pub fn owned_vertices(&self) -> Range<u32> {
        match &self.share {
            Share::Host { solver, .. } => ShareSolver::owned_vertices(solver),
            Share::Cuda { solver, .. } => solver.owned_vertices(),
        }
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
        let mut restarts = 0;
        loop {
            let comm = &mut *self.comm;
            let run = Attempt {
                context: &self.context,
                ring_devices: self.ring_devices,
                options,
            };
            let outcome = match &mut self.share {
                Share::Host { solver, carrier } => run.share(comm, sources, solver, carrier),
                Share::Cuda { solver, carrier } => run.share(comm, sources, solver, carrier),
            }?;
            match outcome {
                Ok((mut share, between, waves)) => {
                    share.stats.restarts = restarts;
                    return self.gather(share, between, waves);
                }
                Err(failure) if self.grow_after(&failure, options)? => restarts += 1,
                Err(failure) => return Err(failure),
            }
        }
    }

    /// After a run that failed on every rank with `failure` (this rank's error, or
    /// [`DistError::PeerFailed`]): whether to run again (collective). A run that overflowed a
    /// CUDA worklist or outgoing buffer whose size the options leave to the solver runs
    /// again once the rank that overflowed has grown it, unless a rank failed otherwise.
    fn grow_after(&mut self, failure: &DistError, options: &WorklistOptions) -> Result<bool> {
        // An error while growing (the device's memory) is this rank's vote against running
        // again, returned after the vote: every rank takes part in it.
        let grown = match (&mut self.share, failure) {
            (Share::Cuda { solver, .. }, DistError::Worklist(e)) => solver.grow_after(e, options),
            _ => Ok(false),
        };
        let grew = matches!(grown, Ok(true));
        let fatal = !grew && !matches!(failure, DistError::PeerFailed { .. });
        let votes = self
            .comm
            .all_reduce(&[u64::from(grew), u64::from(fatal)], Reduction::Max)?;
        grown?;
        Ok(votes[0] > 0 && votes[1] == 0)
    }

    fn gather(
        &mut self,
        share: ShareOutput<A::Value>,
        between: u64,
        waves: u64,
    ) -> Result<DistOutput<A::Value>> {
        let stats = share.stats;
        let cut = stats.cut_arcs_traversed();
        let sums = self.comm.all_reduce(
            &[
                stats.items_processed(),
                stats.items_sent(),
                between,
                stats.segments_sent(),
                stats.remote_updates(),
                cut.unwrap_or(0),
            ],
            Reduction::Sum,
        )?;
        let maxima = self
            .comm
            .all_reduce(&[stats.rounds(), u64::from(cut.is_none())], Reduction::Max)?;
        let max_rounds = maxima[0];
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
                segments_sent: sums[3],
                remote_updates: sums[4],
                cut_arcs_traversed: (maxima[1] == 0).then_some(sums[5]),
                max_rounds,
                waves,
            },
        })
    }

    /// Each rank's `words`, concatenated in rank order, on rank 0 (empty elsewhere), in
    /// rounds of at most [`GATHER_ROUND_BYTES`] per rank (MPI counts bytes in 32 bits, the
    /// total of a round on rank 0 included).
    fn gather_words<W: Pod>(&mut self, words: &[W]) -> Result<Vec<W>> {
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

/// The carrier of a CUDA share on several ranks: the NCCL plane (collective).
#[cfg(feature = "nccl")]
fn device_plane<C: RankComm, P>(comm: &mut C, context: &Context) -> Result<Carrier<P>> {
    Ok(Carrier::Plane(Box::new(crate::nccl::NcclPlane::new(
        comm, context,
    )?)))
}

/// Without the `nccl` feature CUDA devices of several ranks have no data plane.
#[cfg(not(feature = "nccl"))]
fn device_plane<C: RankComm, P>(_comm: &mut C, _context: &Context) -> Result<Carrier<P>> {
    Err(groute_core::Error::Unsupported {
        operation: "a run over CUDA devices of several ranks without the NCCL data plane \
                    (build with the `nccl` feature, or run on the host backend)",
        backend: "cuda",
    }
    .into())
}

/// What one attempt at a run needs besides the communicator and the share.
struct Attempt<'a> {
    context: &'a Context,
    ring_devices: usize,
    options: &'a WorklistOptions,
}

impl Attempt<'_> {
    /// Runs this rank's share (`execute`, on a thread of its own, over the ring) beside the
    /// progress loop, until every rank is done or one failed. `Ok(Err)`: the run failed on
    /// every rank (this rank's error, or [`DistError::PeerFailed`]), which all learnt
    /// together and after which nothing of it is in flight; `Err`: this rank cannot go on.
    fn share<C: RankComm, S: ShareSolver>(
        &self,
        comm: &mut C,
        sources: &[u32],
        solver: &mut S,
        carrier: &mut Carrier<S::Packed>,
    ) -> Result<Result<Finished<ShareValue<S>>, DistError>> {
        let options = self.options;
        let owned = solver.owned_vertices();
        // Counts of zero make this rank idle; the progress loop ends the run (`finish`).
        let counter = PriorityCounter::held(self.context.num_devices(), options.prio_delta);
        let started = AtomicBool::new(false);
        let packet_size = options.packet_size.max(1);
        let stage_on = carrier.start_run(self.context.num_devices());
        let (ring, edges) = match RankRing::new(
            self.context,
            packet_size,
            options.ring_buffers.max(1),
            stage_on,
        ) {
            Ok(ring) => ring,
            Err(e) => {
                // The others are running: tell them, and leave nothing in flight.
                fail_alone(comm, carrier)?;
                return Ok(Err(e.into()));
            }
        };
        let shared = SharedRun {
            counter: &counter,
            ring_devices: self.ring_devices,
            started: &started,
        };
        let (share, progress) = std::thread::scope(|scope| {
            let ring = &ring;
            let counter = &counter;
            let drivers = scope.spawn(move || {
                // A panic (in an algorithm's own code, say) fails the rank like an error.
                let execute = || solver.run_shared(sources, options, ring, shared);
                let out = catch_unwind(AssertUnwindSafe(execute)).unwrap_or_else(|_| {
                    Err(groute_core::Error::ThreadPanicked("the drivers of a rank".into()).into())
                });
                if out.is_err() {
                    counter.abort();
                    ring.shutdown();
                }
                out
            });
            let mut progress = Progress {
                comm: &mut *comm,
                context: self.context,
                edges,
                carrier: &mut *carrier,
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
        let (rank, ranks) = (comm.rank(), comm.size());
        let peers_failed = |failed| DistError::PeerFailed {
            failed,
            ranks,
            rank,
        };
        Ok(match ending? {
            Ending::Terminated { waves } => {
                // Every rank ended on the same wave; one may still have failed after it (a
                // time limit, its devices' last work, an output of the wrong shape): all
                // learn it before the gather.
                let share = share.and_then(|out| shaped::<S>(out, owned));
                let failed = comm.all_reduce(&[u64::from(share.is_err())], Reduction::Sum)?[0];
                match share {
                    Ok(share) if failed == 0 => Ok((share, sent, waves)),
                    Ok(_) => Err(peers_failed(failed)),
                    Err(e) => Err(e.into()),
                }
            }
            Ending::Failed { failed, this_rank } => {
                drain_after_failure(comm, carrier, sent, received)?;
                match (this_rank, own_error, share) {
                    (true, Some(e), _) => Err(e),
                    (true, None, Err(e)) => Err(e.into()),
                    _ => Err(peers_failed(failed)),
                }
            }
        })
    }
}

/// `out` if it holds one value per vertex of `owned`, and under [`Combine::Sum`] one value
/// left per vertex, else the error naming what the [`ShareSolver`] returned.
fn shaped<S: ShareSolver>(
    out: ShareOutput<ShareValue<S>>,
    owned: Range<u32>,
) -> Result<ShareOutput<ShareValue<S>>, groute_worklist::WorklistError> {
    let n = (owned.end - owned.start) as usize;
    let left = match <S::Algorithm as WorklistAlgorithm>::COMBINE {
        Combine::Sum => n,
        Combine::Min => 0,
    };
    if out.vertices == owned && out.values.len() == n && out.left.len() == left {
        return Ok(out);
    }
    Err(groute_core::Error::invalid(
        "the output of ShareSolver::run_shared",
        format!(
            "{} values and {} left for vertices {:?}",
            out.values.len(),
            out.left.len(),
            out.vertices
        ),
        format!(
            "{n} values and {left} left, for this rank's vertices {owned:?} (a bug of the \
             executor)"
        ),
    )
    .into())
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

#[cfg(test)]
impl<A: WorklistAlgorithm, C: RankComm, D: ShareSolver<Algorithm = A>> DistSolver<'_, A, C, D> {
    /// This crate's tests: a host share's items cross over `plane` (host memory standing in
    /// for device memory), with only their count in the messages, as on CUDA devices.
    pub(crate) fn carry_over(&mut self, plane: Box<dyn crate::plane::DevicePlane>) {
        if let Share::Host { carrier, .. } = &mut self.share {
            *carrier = Carrier::Plane(plane);
        }
    }
}
