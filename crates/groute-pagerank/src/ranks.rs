//! [`PageRankRanks`]: PageRank of one process's share of a run spanning processes (the ranks
//! of an MPI job), in synchronous pull sweeps whose shares the processes gather each round;
//! in one process ([`groute_worklist::OneProcess`]), the executor of [`crate::Driver::Sweeps`].
//!
//! ```text
//!  every device:   take   residual > floor -> rank, share[v] = alpha rho / outdeg(v)
//!                  its owned shares -> every other device of the process
//!  device 0:       pack its process's boundary's shares -> all-gather ->
//!                  unpack the others' boundaries' shares -> the process's other devices
//!  every device:   gather residual[v] += sum of share[u] over the in-arcs u -> v
//!                  (a round that takes few vertices: mark a bitmap of those whose share
//!                  is above 0, read only their shares)
//!  every process:  sum of the vertices that crossed epsilon; stop at 0
//! ```
//!
//! A process alone pushes a round that it expects to take few arcs instead of gathering it
//! (`ranks/sweeps.rs`, "Push rounds"; [`PageRankTuning::sweep_push_divisor`]): no share is
//! copied; each device pushes the shares of the vertices it took along their out-arcs, and
//! copies its slots of every peer's vertices to that peer, which absorbs them.
//!
//! The gather reads the share of every in-arc's tail, at random. Where a share per vertex
//! outgrows the L2, most of those reads are a DRAM sector each, and in a round that takes
//! few vertices most of them read a 0. The vertices that crossed epsilon in a round are
//! exactly those the next round takes, so the host knows, before it enqueues a gather, how
//! many vertices the round took over every process; at most
//! [`PageRankTuning::sparse_gather_below`] of them, every device first marks a bitmap of the
//! shares above 0 (one bit per vertex, which stays in the L2) and the gather (and the hubs'
//! tiles) reads only the shares whose bit is set. The sums are the same: only shares of 0
//! are skipped.
//!
//! A round is one pull sweep of the crate docs ("Pull sweeps"), over the whole graph at
//! once: the floor is 0 in the first round and epsilon after, so a round takes exactly the
//! vertices whose residual exceeds epsilon. Between the take and the gather the shares are
//! mass in flight, and every arc's share reaches its head's owner in the same round (each
//! process gathers over all the in-arcs of its vertices, the other processes' shares
//! included): the invariant `r* = r + M res` holds after every round. The run ends when no
//! vertex of any process crossed epsilon in the last gather, that is, when no residual
//! exceeds epsilon anywhere, so both error bounds of the crate docs hold unchanged
//! ([`PageRankRanksStats::residual_left`] gives the a-posteriori one). The devices may
//! instead gather and take their vertices range by range within a round, the ranges of a
//! step side by side on every device of every process, each step's shares exchanged before
//! the next step (`ranks/sweep_ranges.rs`, `ranks/step_boundaries.rs`), ending on a round
//! that takes nothing, or, once a round takes few arcs (alone) or vertices (across
//! processes), leaving the ranges for whole-graph rounds after a pass that delivers the
//! shares in flight, with the same bounds. Alone, the host may enqueue a ranged round before
//! it reads the last one's counts, where the rounds before say it will be ranged too
//! (`ranks/run_ahead.rs`), so that the devices do not idle on the read-back.
//!
//! Nothing but shares crosses between processes, and only those of each process's
//! *boundary*: its vertices with an arc to another process's vertex, listed once at
//! [`PageRankRanks::new`] (and exchanged then, so that each process knows where the
//! others' shares go). A vertex with no such arc is in no other process's in-arcs: its share
//! is never read there. A round moves `4 b` bytes per process (`b` the largest boundary: a
//! road network's block partition has a few thousand boundary vertices of millions) in one
//! all-gather (NCCL on CUDA; on the host backend an all-reduce of every process's part)
//! that every process's device 0 enqueues on its stream (a round by vertex ranges: one
//! all-gather per step, of the boundary vertices in the step's ranges). Across
//! processes no arc is pushed, so no atomic touches a remote vertex and no message is sent
//! per cut arc. The gather reads the in-arcs: the CSR's
//! own rows on a symmetric graph, the transpose's where a process holds the whole of a
//! directed graph; a process holding only its rows of a directed graph is refused, with the
//! fix named.
//!
//! Where the degree order applies (crate docs, "Degree order"), every process uploads its
//! rows renumbered by it (`ranks/order.rs`) and every run maps the ranks back to the input
//! order.
//!
//! Everything here is collective: every process makes its solver and runs it in the same
//! order. The checks of the graph and the partition, and the uploads, are agreed on before
//! any run, so that a process that cannot take part fails every process's
//! [`PageRankRanks::new`]. In a run, a process that fails to enqueue a pass or to read its
//! counts back tells the others in the round's sum, and every process returns the error at
//! the same step. An error inside a collective itself (NCCL, MPI), or a fault of a CUDA
//! device (its stream stops, so its part of the next NCCL gather never runs and the others
//! wait in theirs), can leave the others waiting, so a job ends on it (the example aborts
//! the MPI job).

mod boundary;
mod gather_ranks;
mod host;
mod order;
mod rounds;
mod run_ahead;
mod stats;
mod step_boundaries;
mod sweep_ranges;
mod sweeps;

pub use rounds::SweepRoundTimes;
pub use stats::{PageRankRanksResult, PageRankRanksStats};

use std::ops::Range;
use std::time::{Duration, Instant};

use groute_core::{Buffer, Context, DeviceTimer, Error};
use groute_graph::{HeldRows, InArcs, Partition};
use groute_worklist::{
    DeviceParts, RankCollectives, all_ready, partition_shape, peers_failed, process_ranges,
    sum_with_shape,
};

use crate::cuda::boundary_launch::WordIndex;
use crate::{PageRank, PageRankError, PageRankOptions, PageRankTuning};
use boundary::boundary_of;
use order::{RankOrder, RenamedRows, agree_degree_order};
use run_ahead::RunAhead;
use step_boundaries::StepBoundaries;
use sweep_ranges::SweepRanges;
use sweeps::{DeviceSweeps, SweepCounts, add_gather_tiles};

/// The run, as errors name it.
const RUN: &str = "the PageRank across processes";

/// What a process holding only its rows of a directed graph is told.
const IN_ARCS_FIX: &str = "PageRank across processes gathers over the in-arcs of each \
                           process's vertices: give a symmetric graph, or let every process \
                           load the whole graph";

/// PageRank of one process's share of a run spanning processes: its rows and in-arcs
/// uploaded once, each [`PageRankRanks::run`] computing every vertex's rank.
pub struct PageRankRanks {
    context: Context,
    devices: Vec<DeviceSweeps>,
    /// On device 0: this process's boundary shares (its first `boundary_len` words), or its
    /// ranks at the end (padded to the longest process's range).
    mine: Buffer<u32>,
    /// On device 0: every process's `mine`, in process order.
    all: Buffer<u32>,
    /// The first [`PageRankRanks::boundary_len`] words of `mine`: a round's part in the gather.
    mine_shares: Buffer<u32>,
    /// The first `boundary_len` words of every process's part of `all`: a round's gather.
    all_shares: Buffer<u32>,
    /// On device 0: this process's boundary (where its shares are packed from).
    own_boundary: WordIndex,
    /// On device 0: every process's boundary, in process order (this process's empty: its
    /// shares are in place).
    boundaries: Vec<WordIndex>,
    /// The largest boundary of any process (at least 1): the words each process gives to a
    /// round's gather.
    boundary_len: usize,
    /// Every process's boundary vertices, in process order.
    boundary_counts: Vec<u64>,
    /// Every process's owned vertices, in process order.
    owned: Vec<Range<u32>>,
    /// The degree order the devices hold the graph in (`None`: the input order).
    order: Option<RankOrder>,
    /// [`PageRankRanks::gather_interleaved`].
    interleave_gather: bool,
    rank: usize,
    epsilon: f32,
    /// A round's gather reads only the shares of the vertices taken (the devices' bitmaps)
    /// where it takes at most this many vertices
    /// ([`PageRankTuning::sparse_gather_below`](crate::PageRankTuning::sparse_gather_below);
    /// 0: never).
    sparse_below: u64,
    /// A round pushes where it is expected to take at most this many out-arcs
    /// ([`PageRankTuning::sweep_push_below`]; 0: never, as across processes).
    push_below: u64,
    /// Across processes (none alone), a run by vertex ranges leaves them once a round takes
    /// at most this many vertices: the smallest `sparse_below` of every process, so that
    /// every process leaves on the same round ([`PageRankRanks::leaves_ranges`]).
    leave_sparse_below: u64,
    /// [`PageRankRanks::set_time_limit`].
    time_limit: Option<Duration>,
    /// Rounds by vertex ranges across processes: every step's boundary of every process.
    step_boundaries: Option<StepBoundaries>,
    /// Rounds by vertex ranges are enqueued ahead of their counts (`ranks/run_ahead.rs`;
    /// alone, where [`PageRankTuning::sweep_run_ahead`] asks).
    run_ahead: bool,
}

impl std::fmt::Debug for PageRankRanks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageRankRanks")
            .field("devices", &self.devices.len())
            .field("owned", &self.owned)
            .field("rank", &self.rank)
            .finish_non_exhaustive()
    }
}

impl PageRankRanks {
    /// Uploads this process's rows and their in-arcs (collective), renumbered by degree
    /// where [`PageRankTuning::degree_order_for`]'s rule picks it for the whole graph
    /// ([`PageRankRanks::with_tuning`] with the default tuning).
    pub fn new(
        context: &Context,
        held: (&HeldRows<'_>, &Partition),
        algorithm: PageRank,
        collectives: &mut dyn RankCollectives,
    ) -> Result<Self, PageRankError> {
        let tuning = PageRankTuning::default();
        Self::with_tuning(context, held, algorithm, &tuning, collectives)
    }

    /// Uploads this process's rows and their in-arcs (collective). Process `r`'s devices
    /// hold parts `r * devices..` of `partition`; `rows` must hold their rows. `algorithm`'s
    /// alpha and epsilon are checked as [`PageRankOptions::validate`] checks them, and must
    /// be every process's. Of `tuning`, five settings apply:
    /// [`PageRankTuning::degree_order`], every process's: where it holds, each process
    /// renumbers its parts' vertices in order of decreasing degree (from its own rows; the
    /// new ids are gathered once), and [`PageRankRanks::run`] still returns the ranks in the
    /// input order (where Auto picked the order and some process cannot hold the renumbered
    /// rows, every process keeps the input order);
    /// [`PageRankTuning::sparse_gather_divisor`] and [`PageRankTuning::gather_interleave`],
    /// this process's (across processes a run by vertex ranges leaves them by the smallest
    /// sparse-gather bound of every process); [`PageRankTuning::sweep_ranges`], every
    /// process's (across processes only where asked); and, in a process alone,
    /// [`PageRankTuning::sweep_push_divisor`].
    pub fn with_tuning(
        context: &Context,
        (rows, partition): (&HeldRows<'_>, &Partition),
        algorithm: PageRank,
        tuning: &PageRankTuning,
        collectives: &mut dyn RankCollectives,
    ) -> Result<Self, PageRankError> {
        let degree_order = tuning.degree_order;
        let (rank, ranks) = (collectives.rank(), collectives.ranks());
        let devices = context.num_devices();
        let n = rows.num_vertices();
        let PageRank { alpha, epsilon } = algorithm;
        let settings = PageRankOptions {
            alpha,
            epsilon,
            ..PageRankOptions::default()
        };
        let local = settings.validate().and_then(|()| {
            if n == 0 {
                return Err(PageRankError::EmptyGraph);
            }
            // The in-arcs of a whole graph are found after the order (its transpose).
            let fix = (!rows.is_whole()).then_some(IN_ARCS_FIX);
            DeviceParts::check_process(context, (rows, partition), (rank, ranks), fix)?;
            Ok(())
        });
        let settings_shape = [
            ("alpha (f32 bits)", u64::from(alpha.to_bits())),
            ("epsilon (f32 bits)", u64::from(epsilon.to_bits())),
            (
                "degree order (0 auto, 1 off, 2 on)",
                degree_order.map_or(0, |on| 1 + u64::from(on)),
            ),
            (
                "vertex ranges asked (0 auto or whole-graph rounds)",
                tuning.sweep_ranges.filter(|&k| k > 1).map_or(0, u64::from),
            ),
        ];
        let shape = [&partition_shape(devices, n, partition)[..], &settings_shape].concat();
        let agreed = sum_with_shape(collectives, local.is_err(), &[], &shape, RUN);
        local?;
        let (_, same_shape) = agreed?;
        let ready = all_ready(collectives, same_shape.is_err(), RUN);
        same_shape?;
        ready?;
        let owned = process_ranges(partition, devices, ranks);
        let parts = rank * devices..(rank + 1) * devices;
        let order = agree_degree_order(
            context,
            (rows, partition),
            (&owned, parts),
            degree_order,
            collectives,
        )?;
        let (order, renamed) = order.unzip();
        let renamed_rows = renamed.as_ref().map(RenamedRows::rows).transpose()?;
        let rows = renamed_rows.as_ref().unwrap_or(rows);
        let transpose = match rows.in_arcs() {
            InArcs::OwnRows => None,
            InArcs::Transpose(t) => Some(t),
            // Refused above, on every process.
            InArcs::Unavailable => {
                return Err(Error::invalid("graph", "directed, rows held", IN_ARCS_FIX).into());
            }
        };
        // Alone, a process owns every vertex: no arc leaves it (no pass over the arcs).
        let own = if ranks > 1 {
            boundary_of(rows.csr(), &owned[rank])
        } else {
            Ok(Vec::new())
        };
        // The host backend's gather reads every share: no bitmap there.
        let sparse_below = match context.backend_kind() {
            groute_core::BackendKind::Cuda => {
                tuning.sparse_gather_below(n as u64, context.smallest_l2_cache_bytes())
            }
            _ => 0,
        };
        // Each process's boundary size and sparse-gather bound in its own words: every
        // process learns every one's.
        let mut counts = vec![0u64; 2 * ranks];
        counts[rank] = own.as_ref().map_or(0, |b| b.len() as u64);
        counts[ranks + rank] = sparse_below;
        let agreed = sum_with_shape(collectives, own.is_err(), &counts, &[], RUN);
        let own = own?;
        let (mut counts, _) = agreed?;
        // Across processes every process leaves the ranges on the same round: by the
        // smallest bound. Alone, only a push ends them (`ranks/sweep_ranges.rs`).
        let smallest_sparse_below = counts.split_off(ranks).into_iter().min().unwrap_or(0);
        let leave_sparse_below = if ranks > 1 { smallest_sparse_below } else { 0 };
        let boundary_len = counts.iter().copied().max().unwrap_or(0).max(1) as usize;
        let interleave_gather = match context.backend_kind() {
            groute_core::BackendKind::Cuda => tuning.gather_interleave_for(
                order.is_some(),
                n as u64,
                context.smallest_l2_cache_bytes(),
            ),
            _ => false,
        };
        let in_arcs = transpose.as_ref().unwrap_or(rows.csr());
        let shape = (ranks, order.is_some());
        let sweep_ranges = SweepRanges::for_run(tuning, context, shape, in_arcs);
        let push_below = if ranks == 1 {
            tuning.sweep_push_below(rows.csr().num_edges())
        } else {
            0
        };
        let uploaded = (|| -> Result<_, Error> {
            let mut sweeps = Vec::with_capacity(devices);
            for (d, device) in context.devices().iter().enumerate() {
                sweeps.push(DeviceSweeps::upload(
                    device,
                    (rows.csr(), transpose.as_ref()),
                    partition.range(rank * devices + d),
                    (alpha, epsilon),
                    (sparse_below > 0, interleave_gather),
                    sweep_ranges.as_ref(),
                )?);
            }
            // With other processes, `mine` also carries this process's ranks to the final
            // gather; alone, the ranks are read from each device.
            let longest = if ranks > 1 {
                owned.iter().map(|r| r.len()).max().unwrap_or(0)
            } else {
                0
            }
            .max(boundary_len);
            let device = &context.devices()[0];
            let mine = device.alloc::<u32>(longest)?;
            device.stream().fill(&mine, 0u32)?;
            let all = device.alloc::<u32>(
                longest
                    .checked_mul(ranks)
                    .ok_or_else(|| Error::invalid("processes", ranks, "fewer"))?,
            )?;
            let own_boundary = WordIndex::upload(device, &own, n)?;
            // The boundary's ids, to be gathered below.
            device.stream().copy(
                &mine.slice(..own.len())?,
                &own_boundary.entries().slice(..own.len())?,
            )?;
            add_gather_tiles(&mut sweeps, context, in_arcs, tuning)?;
            device.stream().synchronize()?;
            let shares = (
                mine.slice(..boundary_len)?,
                all.slice(..boundary_len * ranks)?,
            );
            Ok((sweeps, mine, all, own_boundary, shares))
        })();
        let ready = all_ready(collectives, uploaded.is_err(), RUN);
        let (sweeps, mine, all, own_boundary, (mine_shares, all_shares)) = uploaded?;
        ready?;
        // Every process's boundary, gathered once: where the others' shares go.
        let device = &context.devices()[0];
        let gathered = collectives
            .all_gather(&mine_shares, &all_shares, device.stream())
            .map_err(PageRankError::from)
            .and_then(|()| {
                let ids = device.download(&all_shares)?;
                let mut boundaries = Vec::with_capacity(ranks);
                for (r, &count) in counts.iter().enumerate() {
                    let at = r * boundary_len;
                    let theirs = if r == rank {
                        &[][..]
                    } else {
                        &ids[at..at + count as usize]
                    };
                    boundaries.push(WordIndex::upload(device, theirs, n)?);
                }
                Ok(boundaries)
            });
        let ready = all_ready(collectives, gathered.is_err(), RUN);
        let boundaries = gathered?;
        ready?;
        let step_boundaries = if ranks > 1 && sweeps[0].sweep_ranges() > 0 {
            let shape = (rank, ranks, n);
            Some(StepBoundaries::new(
                context,
                &sweeps,
                &own,
                shape,
                collectives,
            )?)
        } else {
            None
        };
        Ok(PageRankRanks {
            context: context.clone(),
            devices: sweeps,
            mine,
            all,
            mine_shares,
            all_shares,
            own_boundary,
            boundaries,
            boundary_len,
            boundary_counts: counts,
            owned,
            order,
            interleave_gather,
            rank,
            epsilon,
            sparse_below,
            push_below,
            leave_sparse_below,
            time_limit: None,
            run_ahead: tuning.sweep_run_ahead
                && push_below > 0
                && sweep_ranges.is_some()
                && step_boundaries.is_none(),
            step_boundaries,
        })
    }

    /// Computes every vertex's rank (collective): the ranks on every process, the
    /// statistics (times of this process, from the moment every process has started the
    /// run).
    pub fn run(
        &mut self,
        collectives: &mut dyn RankCollectives,
    ) -> Result<PageRankRanksResult, PageRankError> {
        let ranks = self.owned.len();
        // A round makes one device's stream wait for another's (the gather on device 0, the
        // copies between the process's devices): no device-driven run of this process may
        // start beside it.
        let _share = (self.context.backend_kind() == groute_core::BackendKind::Cuda)
            .then(groute_core::cuda::PeerGroup::share_gpus);
        // The processes start together (a sum of one word), so that one that comes late to
        // the first gather does not add its lateness to the others' clocks.
        collectives.sum(&[0])?;
        let started = Instant::now();
        let mut timer = None;
        let mut failure = match self.begin() {
            Ok(t) => {
                timer = Some(t);
                None
            }
            Err(e) => Some(e),
        };
        let (mut rounds, mut pushes, mut sparse_rounds, mut push_rounds) = (0u64, 0, 0, 0);
        let (mut ranged_rounds, mut left_ranges) = (0u64, false);
        let mut pushes_per_device = vec![0u64; self.devices.len()];
        let mut last = SweepCounts::default();
        // Whether this round pushes (decided when its take was enqueued) and each device's
        // vertices above epsilon, which the take takes.
        let mut push = false;
        let mut taking_per_device = vec![0u64; self.devices.len()];
        // The last round's counts of each device (a ranged round's, for the pass that
        // leaves the ranges).
        let mut last_per_device = vec![SweepCounts::default(); self.devices.len()];
        // Rounds by vertex ranges (`ranks/sweep_ranges.rs`) end on one that took nothing,
        // or leave the ranges for whole-graph rounds.
        let mut ranged = self.devices[0].sweep_ranges() > 0;
        let mut round_times = SweepRoundTimes::default();
        // The round before `last` (its sums), and the ranged rounds enqueued ahead.
        let mut earlier = SweepCounts::default();
        let mut ahead = None;
        if self.run_ahead && failure.is_none() {
            match RunAhead::new(self) {
                Ok(a) => ahead = Some(a),
                Err(e) => failure = Some(e.into()),
            }
        }
        loop {
            // Past the time limit, this process fails the run here (every process stops on
            // this round, as on any failure).
            if let Some(limit) = self.time_limit.filter(|&t| started.elapsed() > t) {
                failure.get_or_insert(
                    groute_worklist::WorklistError::TimedOut {
                        limit,
                        outstanding: 0,
                    }
                    .into(),
                );
            }
            // The last round's counts (none before the first), and whether this process
            // failed since the last sum: every process stops on the same round. The next
            // round's take is already enqueued where other processes may still go on (a
            // round by ranges takes in the round); after the last round it takes nothing
            // (no residual is above epsilon).
            let words = [
                last.crossed,
                last.taken,
                last.taken_arcs,
                u64::from(failure.is_some()),
            ];
            let sums = collectives.sum(&words)?;
            if let Some(e) = failure.take() {
                return Err(e);
            }
            if sums[3] > 0 {
                return Err(peers_failed(RUN, sums[3], collectives).into());
            }
            pushes += sums[1];
            // A ranged round enqueued ahead is the next round whatever the sums say.
            let settled = rounds > 0 && !ahead.as_ref().is_some_and(RunAhead::pending);
            if settled && sums[usize::from(ranged)] == 0 {
                break;
            }
            // Every process leaves the ranges on the same round (the sums decide).
            let leave = ranged && settled && self.leaves_ranges(sums[1], sums[2]);
            ranged &= !leave;
            left_ranges |= leave;
            // The vertices the round's take (already enqueued, but for ranged rounds and the
            // pass that leaves the ranges) moves, over every process: every vertex in the
            // first round, then those that crossed epsilon in the last.
            let taking = if rounds == 0 {
                self.devices[0].share().len() as u64
            } else {
                sums[0]
            };
            let sparse =
                !ranged && !leave && !push && self.sparse_below > 0 && taking <= self.sparse_below;
            rounds += 1;
            sparse_rounds += u64::from(sparse);
            push_rounds += u64::from(push);
            ranged_rounds += u64::from(ranged);
            let stream = self.context.devices()[0].stream();
            let (mine, all) = (&self.mine_shares, &self.all_shares);
            let round_started = Instant::now();
            let round = if ranged {
                let floor = if rounds == 1 { 0.0 } else { self.epsilon };
                match ahead.as_mut() {
                    Some(ahead) => self.ranged_round_ahead(floor, (&earlier, &last), ahead),
                    None => self.ranged_round(floor, collectives),
                }
            } else if leave {
                self.leave_ranges()
            } else if push {
                // Only alone (`push_below` is 0 across processes): no gather between them.
                self.push_and_absorb(&taking_per_device)
            } else {
                collectives
                    .all_gather(mine, all, stream)
                    .map_err(PageRankError::from)
                    .and_then(|()| self.spread_and_gather(sparse))
            };
            let step = round.and_then(|counts| {
                // Alone, this process's counts are the sums: after the last round there is
                // nothing to take.
                let last = ranks == 1 && counts.iter().all(|c| c.crossed == 0);
                // Ranged rounds take in the round, and never push.
                let ranged_round = leave.then_some(&last_per_device[..]);
                let push_next = !ranged && self.push_due(&counts, ranged_round);
                if !last && !ranged {
                    self.take_and_stage(self.epsilon, !push_next)?;
                }
                Ok((counts, push_next))
            });
            round_times.add((push, sparse), round_started.elapsed());
            match step {
                Ok((counts, push_next)) => {
                    push = push_next;
                    earlier = std::mem::take(&mut last);
                    for (d, c) in counts.iter().enumerate() {
                        pushes_per_device[d] += c.taken;
                        taking_per_device[d] = c.crossed;
                        last.taken += c.taken;
                        last.taken_arcs += c.taken_arcs;
                        last.crossed += c.crossed;
                    }
                    last_per_device = counts;
                }
                Err(e) => failure = Some(e),
            }
        }
        let finished = (|| -> Result<_, PageRankError> {
            let device_time = match timer {
                Some(t) => t.stop()?,
                None => None,
            };
            let elapsed = started.elapsed();
            let (mut residual_left, mut max_residual_left) = (0.0, 0f32);
            for (device, sweeps) in self.context.devices().iter().zip(&self.devices) {
                let (sum, max) = sweeps.residual_left(device)?;
                residual_left += sum;
                max_residual_left = max_residual_left.max(max);
            }
            if ranks > 1 {
                self.stage_ranks()?;
            }
            Ok((device_time, elapsed, residual_left, max_residual_left))
        })();
        let ready = all_ready(collectives, finished.is_err(), RUN);
        let (device_time, elapsed, residual_left, max_residual_left) = finished?;
        ready?;
        let gathered = self.gather_ranks(collectives);
        // Every process's residual left in its own word (as f64 bits: the others add 0),
        // and a last word counting the processes that failed.
        let mut words = vec![0u64; ranks + 1];
        words[self.rank] = residual_left.to_bits();
        words[ranks] = u64::from(gathered.is_err());
        let sums = collectives.sum(&words)?;
        let values = gathered?;
        if sums[ranks] > 0 {
            return Err(peers_failed(RUN, sums[ranks], collectives).into());
        }
        let n = self.devices[0].share().len() as u64;
        // The whole-graph rounds (the pass that leaves the ranges copies nothing).
        let copying = rounds - ranged_rounds - u64::from(left_ranges);
        let receivers = self.devices.len().saturating_sub(1) as u64;
        Ok(PageRankRanksResult {
            ranks: values,
            stats: PageRankRanksStats {
                elapsed,
                device_time,
                rounds,
                pushes,
                residual_left: sums[..ranks].iter().map(|&b| f64::from_bits(b)).sum(),
                bytes_between_ranks: (ranks * ranks.saturating_sub(1) * 4) as u64
                    * (copying * self.boundary_len as u64
                        + ranged_rounds * self.step_boundaries.as_ref().map_or(0, |b| b.words())),
                boundary_per_process: self.boundary_counts.clone(),
                bytes_between_devices: (copying + ranged_rounds) * receivers * n * 4,
                pushes_per_device,
                max_residual_left,
                sparse_gather_rounds: sparse_rounds,
                push_rounds,
                ranged_rounds,
                ranged_rounds_ahead: ahead.as_ref().map_or(0, RunAhead::rounds_ahead),
                round_times,
            },
        })
    }

    /// Whether the devices hold the graph in degree order
    /// ([`PageRankTuning::degree_order`]); the ranks come back in the input order either
    /// way.
    pub fn degree_ordered(&self) -> bool {
        self.order.is_some()
    }

    /// Bounds every later [`PageRankRanks::run`] of this process (`None`, the default: no
    /// bound). Each process reads its clock once a round, before the round's sum, and a
    /// process past its limit fails the run there with
    /// [`groute_worklist::WorklistError::TimedOut`] (the other processes stop on the same
    /// round, naming it), so a run stops within a round of its limit and no process waits
    /// on one that stopped. The solver's next run starts afresh.
    pub fn set_time_limit(&mut self, limit: Option<Duration>) {
        self.time_limit = limit;
    }

    /// Whether the gathers deal their vertices out over the blocks
    /// ([`PageRankTuning::gather_interleave_for`]; CUDA only).
    pub fn gather_interleaved(&self) -> bool {
        self.interleave_gather
    }

    /// Enqueues the reset of every device, starts the run's timer and enqueues the first
    /// round's take (floor 0: every vertex) and staging (nothing for rounds by ranges,
    /// which take in the round).
    fn begin(&self) -> Result<DeviceTimer, PageRankError> {
        for (device, sweeps) in self.context.devices().iter().zip(&self.devices) {
            sweeps.reset(device)?;
        }
        let timer = DeviceTimer::start(&self.context)?;
        if self.devices[0].sweep_ranges() == 0 {
            self.take_and_stage(0.0, true)?;
        }
        Ok(timer)
    }
}
