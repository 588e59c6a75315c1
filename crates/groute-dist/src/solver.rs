//! [`DistSolver`]: any [`WorklistAlgorithm`] over the devices of every rank.

use std::ops::Range;
use std::sync::atomic::AtomicBool;

use groute_core::Context;
use groute_graph::{Csr, Partition};
use groute_worklist::algorithm::{HostOutput, HostSolver};
use groute_worklist::{
    Combine, PriorityCounter, SharedRun, WorklistAlgorithm, WorklistOptions, WorklistStats,
};

use crate::comm::{RankComm, Reduction};
use crate::error::{DistError, Result};
use crate::progress::{Ending, Progress};
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
        let parts = partition.num_parts() as u64;
        // Equal on every rank exactly when size * sum(x^2) == sum(x)^2, for each x.
        let sums = comm.all_reduce(
            &[devices, devices * devices, n, n * n, parts, parts * parts],
            Reduction::Sum,
        )?;
        let size = comm.size() as u64;
        let differ = |s: u64, sq: u64| (size as u128) * (sq as u128) != (s as u128) * (s as u128);
        if differ(sums[0], sums[1]) {
            return Err(DistError::Mismatch {
                what: "the number of devices per rank",
                detail: format!("this rank, {}, has {devices}", comm.rank()),
                fix: "give every rank the same --devices",
            });
        }
        if differ(sums[2], sums[3]) || differ(sums[4], sums[5]) {
            return Err(DistError::Mismatch {
                what: "the graph or its partition",
                detail: format!(
                    "this rank, {}, has {n} vertices in {parts} parts",
                    comm.rank()
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
        let solver =
            HostSolver::for_parts(context, algorithm, csr, partition, first_part, options)?;
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
        // Counts of zero make this rank idle; the progress loop ends the run (`finish`).
        let counter = PriorityCounter::held(self.context.num_devices(), options.prio_delta);
        let started = AtomicBool::new(false);
        let packet_size = options.packet_size.max(1);
        let (ring, edges) = RankRing::new(&self.context, packet_size, options.ring_buffers.max(1))?;
        let shared = SharedRun {
            counter: &counter,
            ring_devices: self.ring_devices,
            started: &started,
        };
        let solver = &mut self.solver;
        let comm = &mut *self.comm;
        let context = &self.context;
        let (share, ending) = std::thread::scope(|scope| {
            let ring = &ring;
            let counter = &counter;
            let drivers = scope.spawn(move || {
                let out = solver.run_shared(sources, options, ring, shared);
                if out.is_err() {
                    counter.abort();
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
            };
            let ending = progress.run(ring);
            let between = progress.sent;
            let share = drivers.join().unwrap_or_else(|_| {
                Err(groute_core::Error::ThreadPanicked("the drivers of a rank".into()).into())
            });
            (share, ending.map(|e| (e, between)))
        });
        let (ending, between) = ending?;
        match (ending, share) {
            (Ending::Terminated { waves }, Ok(share)) => self.gather(share, between, waves),
            (
                Ending::Failed {
                    failed,
                    this_rank: false,
                },
                _,
            ) => Err(DistError::PeerFailed {
                failed,
                ranks: self.comm.size(),
                rank: self.comm.rank(),
            }),
            (_, Err(e)) => Err(e.into()),
            (Ending::Failed { .. }, Ok(_)) => Err(DistError::Comm(
                "this rank's drivers failed but returned no error".into(),
            )),
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

    /// Each rank's `words`, concatenated in rank order, on rank 0 (empty elsewhere).
    fn gather_words<W: bytemuck::Pod>(&mut self, words: &[W]) -> Result<Vec<W>> {
        let Some(parts) = self.comm.gather_to_root(bytemuck::cast_slice(words))? else {
            return Ok(Vec::new());
        };
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
