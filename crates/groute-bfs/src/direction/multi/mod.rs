//! Direction-optimizing BFS on several devices: the level loop of `run_levels` (the same as
//! one device's) over [`steps::MemberSteps`], whose every step runs on all devices at once.
//!
//! Each device owns a contiguous range of the partitioned graph (`Partition::range`), holds
//! only the rows of its owned vertices of the CSR (and of the transpose of a directed graph;
//! `groute_worklist::DeviceCsr`), and a full-length level array that is globally consistent
//! up to the current level. Every kernel reads only owned rows: the push step expands the
//! device's own frontier, the pull step and the frontier's listing visit its owned range. A
//! level on every device:
//!
//! 1. **step** on its own part: push lists its frontier (its owned vertices at the level, from
//!    the levels, or from the frontier bitmap where the part keeps one) and expands it over
//!    all their out-arcs, discovering owned and remote vertices (appended once each); pull
//!    scans its owned unvisited vertices' in-neighbours against the level (on CUDA where the
//!    level array outgrows the L2: against a bitmap of the frontier, scanning lists of the
//!    owned vertices still to reach; `cuda_part.rs`);
//! 2. **bitmap** of the vertices it discovered, written by the step as it finds them (only
//!    where it is sent: with other devices, or by a process's leader): after a push step
//!    every word, set from the step's appends; after a pull step its owned words, one ballot
//!    per warp of the pull (copied from the frontier bitmap where the part keeps one);
//! 3. **all-gather** ([`exchange::DeviceLinks`]): the bitmap to every other device over a
//!    direct link, or past [`exchange::MAX_DIRECT_DEVICES`] devices through device 0, which
//!    sends every device's back (the module says why not a ring); every received bitmap gives
//!    its unvisited vertices level + 1;
//! 4. **frontier count**: its owned vertices at level + 1 are its next frontier; their
//!    number and degrees are summed into its counters as they are found (by a pull step, from
//!    a push step's appends, applying a received bitmap): counting takes no pass over the
//!    levels (on CUDA; the host backend's push finds its own in them).
//!
//! One host thread per device drives it ([`MultiDriver::PerDevice`]): each reads its device's
//! counters once per level (one synchronisation per device and level), and the threads sum
//! them in [`reduce::LevelReduce`] for [`SwitchRule`]. Levels come back from device 0 (every
//! device holds them all).
//!
//! Memory per device: its rows of the CSR (and transpose), the levels (4 bytes per vertex of
//! the graph), on CUDA a worklist of 2n slots (8 bytes per vertex), the bitmap (n / 32 words)
//! and two receive bitmaps per incoming link (N - 1 links; through device 0, one link on
//! every other device); where its pulls read frontier bitmaps (`cuda_part.rs`), two more
//! bitmaps, the owned vertices with in-arcs (4 bytes each) and the pull lists (as many, plus
//! one word per warp of the grid).
//!
//! A failing device aborts the reduction and shuts its outgoing links, so that no other
//! device waits for it; the next run then builds new links.
//!
//! **Across processes** (`MultiDirection::for_process`, the ranks of `crate::BfsRanks`): each
//! process's devices hold consecutive parts and run the level above among themselves; then
//! device 0 of every process, the *leader* (`steps::RankLeader`), holds its process's
//! discoveries as a bitmap (written by its step when it is alone in its process, else
//! marked from its levels after the process's exchange) and gathers those of every process
//! ([`RankCollectives::all_gather`]: NCCL on CUDA): after a push step whole bitmaps, after
//! a pull step a window of each process's own words (as many words from each: the most any
//! process owns); where every process runs one device, after a push whose frontier has few
//! out-arcs (a list under an eighth of the bitmap: `steps::list_capacity`), lists of the
//! discoveries instead, as many words from each as the out-arcs allow. The leader applies the
//! others' and forwards them to its process's other devices over the links (one more message
//! from device 0; through device 0, the only one, with its own process's discoveries), and
//! sums the level's counts over the processes for its process's threads ([`LevelReduce`]
//! led). Device 0 holds the gathered bitmaps besides (processes x n / 32 words).

mod cuda_part;
mod driver;
mod exchange;
mod host_part;
mod part;
mod rank_trace;
mod reduce;
mod steps;

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use groute_core::{Buffer, Context, DeviceTimer, Error};
use groute_graph::{Csr, Graph, Partition};
use groute_worklist::{RankCollectives, all_ready, process_ranges};

use self::cuda_part::CudaPart;
pub use self::driver::MultiDriver;
use self::exchange::{DeviceLinks, LinkCloser};
use self::host_part::HostPart;
use self::part::Part;
use self::rank_trace::LeaderTrace;
use self::reduce::LevelReduce;
use self::steps::{Across, Member, MemberSteps, RUN, RankLeader};
use super::{DirectionStats, SwitchRule, run_levels};
use crate::direction::pull_bits::pull_bitmaps_chosen;
use crate::direction::solver::DirectionRun;
use crate::{BfsError, BfsTuning};

/// Direction-optimizing BFS of one partitioned graph on every device of a context.
pub(crate) struct MultiDirection {
    context: Context,
    members: Vec<Member>,
    /// A failed run shut links: build new ones before the next.
    links_broken: bool,
    n: u32,
    in_arcs: u64,
    rule: SwitchRule,
    /// In a run spanning processes: this process's share.
    process: Option<ProcessShare>,
    /// Whether a run spanning processes traces device 0's phases per level (CUDA only).
    trace: bool,
}

/// One process's share of a run spanning several.
struct ProcessShare {
    /// The vertices each process's devices own, by process (this one's at its rank).
    owned: Vec<Range<u32>>,
    /// Every process's bitmap after a level's gather, on device 0.
    gathered: Buffer<u32>,
    /// The words this process gave to the gathers of the last run.
    gathered_words: AtomicU64,
}

impl MultiDirection {
    /// Uploads to every device `d` the rows of `graph` (renumbered so that device `d` owns
    /// `partition.range(d)`; of its transpose too when it is not symmetric) that it owns, and
    /// links the devices, for runs under `tuning` (its switch rule and pull bitmaps).
    pub(crate) fn new(
        context: &Context,
        (graph, partition): (&Graph, &Partition),
        tuning: &BfsTuning,
    ) -> Result<Self, BfsError> {
        let transpose = (!graph.symmetric).then(|| graph.csr.transpose());
        let pull = transpose.as_ref();
        let in_arcs = pull.unwrap_or(&graph.csr).num_edges();
        Self::of_parts(context, (&graph.csr, pull), partition, (0, in_arcs), tuning)
    }

    /// One process's share of a run spanning `processes`: its devices hold parts
    /// `first_part..` of `partition` (rows of `push`, and of `pull` when it is a distinct
    /// transpose; the others' rows are not read), and the whole graph has `in_arcs` arcs.
    pub(crate) fn for_process(
        context: &Context,
        (push, pull): (&Csr, Option<&Csr>),
        partition: &Partition,
        (first_part, processes): (usize, usize),
        in_arcs: u64,
        tuning: &BfsTuning,
    ) -> Result<Self, BfsError> {
        let csr = (push, pull);
        let mut multi = Self::of_parts(context, csr, partition, (first_part, in_arcs), tuning)?;
        let words = part::bitmap_len(multi.n) as usize;
        let gathered_len = words.checked_mul(processes).ok_or_else(|| {
            Error::invalid(
                "processes",
                processes,
                "fewer: their bitmaps overflow a buffer",
            )
        })?;
        multi.process = Some(ProcessShare {
            owned: process_ranges(partition, context.num_devices(), processes),
            gathered: context.devices()[0].alloc::<u32>(gathered_len)?,
            gathered_words: AtomicU64::new(0),
        });
        Ok(multi)
    }

    /// Uploads to every device `d` the rows of `push` (and of `pull` when it is a distinct
    /// transpose) that part `first_part + d` of `partition` owns, and links the devices; the
    /// whole graph has `in_arcs` arcs.
    fn of_parts(
        context: &Context,
        (push, pull): (&Csr, Option<&Csr>),
        partition: &Partition,
        (first_part, in_arcs): (usize, u64),
        tuning: &BfsTuning,
    ) -> Result<Self, BfsError> {
        let n = u32::try_from(push.num_vertices()).map_err(|_| {
            Error::invalid("graph", push.num_vertices(), "at most u32::MAX vertices")
        })?;
        let bitmaps = pull_bitmaps_chosen(tuning.pull_bitmap, context, u64::from(n));
        let links = DeviceLinks::all(context, push.num_vertices().div_ceil(32))?;
        let members = context
            .devices()
            .iter()
            .zip(links)
            .enumerate()
            .map(|(d, (device, links))| -> Result<Member, BfsError> {
                let owned = partition.range(first_part + d);
                let part: Box<dyn Part> = if device.stream().is_host() {
                    Box::new(HostPart::new(context, device, push, pull, owned.clone())?)
                } else {
                    let csr = (push, pull);
                    Box::new(CudaPart::new(context, device, csr, owned.clone(), bitmaps)?)
                };
                Ok(Member::new(part, links, owned))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(MultiDirection {
            context: context.clone(),
            members,
            links_broken: false,
            n,
            in_arcs,
            rule: tuning.switch_rule,
            process: None,
            trace: false,
        })
    }

    /// BFS from `source` (the partitioned graph's numbering, in range).
    pub(crate) fn run(
        &mut self,
        source: u32,
        time_limit: Option<Duration>,
    ) -> Result<DirectionRun, BfsError> {
        self.run_across(source, time_limit, None)
    }

    /// Whether the runs of a share of a run spanning processes trace device 0's phases per
    /// level (CUDA devices only; `DirectionRun::trace`).
    pub(crate) fn set_trace(&mut self, on: bool) {
        self.trace = on;
    }

    /// The bytes each process gives to a level's gather in a run spanning processes, after
    /// a pull step (`pulled`: a window of its own words) or a push step (its whole bitmap);
    /// 0 in a run of one process.
    pub(crate) fn gather_bytes(&self, pulled: bool) -> u64 {
        self.process.as_ref().map_or(0, |p| {
            let total = part::bitmap_len(self.n);
            u64::from(steps::gather_words(&p.owned, total, pulled)) * 4
        })
    }

    /// The bytes this process gave to the gathers between the processes in its last run (0
    /// in a run of one process): a bitmap or a window of one after each level, a list after a
    /// push with few out-arcs.
    pub(crate) fn last_gathered_bytes(&self) -> u64 {
        self.process
            .as_ref()
            .map_or(0, |p| 4 * p.gathered_words.load(Ordering::Relaxed))
    }

    /// BFS from `source`; a share of a run spanning processes (`for_process`) exchanges with
    /// the others over `collectives` (collective: every process runs from the same source).
    pub(crate) fn run_across(
        &mut self,
        source: u32,
        time_limit: Option<Duration>,
        collectives: Option<&mut dyn RankCollectives>,
    ) -> Result<DirectionRun, BfsError> {
        if self.process.is_some() != collectives.is_some() {
            return Err(Error::invalid(
                "collectives",
                if collectives.is_some() { "given" } else { "missing" },
                "a share of a run spanning processes takes them, a run of one process does not (a bug)",
            )
            .into());
        }
        // Each level's all-gather makes one device's stream wait for another's: no
        // device-driven run of this process may start beside it (PeerGroup::share_gpus).
        let _share = (self.context.backend_kind() == groute_core::BackendKind::Cuda)
            .then(groute_core::cuda::PeerGroup::share_gpus);
        if let Some(process) = &self.process {
            process.gathered_words.store(0, Ordering::Relaxed);
        }
        let relinked = if self.links_broken {
            let words = (self.n as usize).div_ceil(32);
            DeviceLinks::all(&self.context, words).map(|all| {
                for (m, links) in self.members.iter_mut().zip(all) {
                    m.links = links;
                }
                self.links_broken = false;
            })
        } else {
            Ok(())
        };
        let reset =
            relinked.and_then(|()| self.members.iter().try_for_each(|m| m.part.reset(source)));
        let reset = reset.and_then(|()| {
            self.members
                .iter()
                .try_for_each(|m| m.part.stream().synchronize())
        });
        // Across processes, every process has reset (or failed to) before any starts: this
        // sum also starts their clocks together, so that one that comes late to the first
        // level's exchange does not add its lateness to the others'.
        let mut collectives = collectives;
        let ready = match &mut collectives {
            Some(c) => all_ready(&mut **c, reset.is_err(), RUN),
            None => Ok(()),
        };
        reset?;
        ready?;
        let started = Instant::now();
        let timer = match DeviceTimer::start(&self.context) {
            Ok(timer) => timer,
            Err(e) => {
                // The others go on to the source level's sum: take part in it, failed.
                if let Some(c) = collectives.as_mut() {
                    steps::fail_level(&mut **c);
                }
                return Err(e.into());
            }
        };
        let traced = self.trace
            && self.process.is_some()
            && self.context.backend_kind() == groute_core::BackendKind::Cuda;
        let mut trace = traced.then(|| LeaderTrace::new(&self.context));
        let levels_across = collectives
            .as_mut()
            .map(|c| &mut **c as &mut dyn RankCollectives);
        let stats = self.levels_per_device(time_limit, levels_across, trace.as_mut());
        if stats.is_err() {
            self.links_broken = true;
        }
        // A failed level ends the run on every process (its sum says so).
        let stats = stats?;
        let finished = (|| -> Result<_, BfsError> {
            let device_time = timer.stop()?;
            let elapsed = started.elapsed();
            for m in &self.members {
                m.part.check_worklist()?;
            }
            let trace = trace.map(LeaderTrace::finish).transpose()?;
            Ok((device_time, elapsed, trace, self.members[0].part.levels()?))
        })();
        // Every process has its levels (or failed to read them back) before any returns.
        let ready = match collectives {
            Some(c) => all_ready(c, finished.is_err(), RUN),
            None => Ok(()),
        };
        let (device_time, elapsed, trace, levels) = finished?;
        ready?;
        Ok(DirectionRun {
            levels,
            stats,
            elapsed,
            device_time,
            driver: MultiDriver::PerDevice,
            trace,
        })
    }

    /// The level loop on one thread per device (device 0's on this thread), the counts summed
    /// across threads each level.
    fn levels_per_device(
        &mut self,
        time_limit: Option<Duration>,
        collectives: Option<&mut dyn RankCollectives>,
        trace: Option<&mut LeaderTrace>,
    ) -> Result<DirectionStats, BfsError> {
        let led = collectives.is_some();
        let share = DeviceShare {
            reduce: LevelReduce::new(self.members.len(), led),
            n: self.n,
            in_arcs: self.in_arcs,
            rule: self.rule,
            time_limit,
        };
        let Some((first, others)) = self.members.split_first_mut() else {
            return Err(Error::invalid("devices", 0, "at least one").into());
        };
        let results: Vec<Result<DirectionStats, BfsError>> = std::thread::scope(|scope| {
            let share = &share;
            let threads: Vec<_> = others
                .iter_mut()
                .map(|member| {
                    scope.spawn(move || {
                        let across = if led { Across::Follower } else { Across::Alone };
                        share.run(member, across)
                    })
                })
                .collect();
            let across = match (collectives, &self.process) {
                (Some(collectives), Some(process)) => Across::Leader(RankLeader {
                    collectives,
                    gathered: &process.gathered,
                    owned: &process.owned,
                    trace,
                    // The source's level sums the counts but gathers nothing.
                    gather_pending: false,
                    gather_words: 0,
                    list_cap: None,
                    gathered_words: &process.gathered_words,
                    sum_pending: true,
                }),
                _ => Across::Alone,
            };
            let mut results = vec![share.run(first, across)];
            results.extend(threads.into_iter().map(|t| {
                t.join().unwrap_or_else(|_| {
                    let e = Error::ThreadPanicked("a direction-optimizing BFS driver".into());
                    Err(e.into())
                })
            }));
            results
        });
        first_cause(results)
    }
}

/// What every thread of a per-device run shares.
struct DeviceShare {
    reduce: LevelReduce,
    n: u32,
    in_arcs: u64,
    rule: SwitchRule,
    time_limit: Option<Duration>,
}

impl DeviceShare {
    /// `member`'s share of the level loop. If it fails (or unwinds), the reduction is aborted
    /// and its outgoing links shut, so that no other thread waits for it.
    fn run<'a>(
        &'a self,
        member: &'a mut Member,
        across: Across<'a>,
    ) -> Result<DirectionStats, BfsError> {
        struct AbortUnlessDone<'a> {
            reduce: &'a LevelReduce,
            links: Option<LinkCloser>,
        }
        impl Drop for AbortUnlessDone<'_> {
            fn drop(&mut self) {
                if let Some(links) = &self.links {
                    self.reduce.abort();
                    links.shutdown();
                }
            }
        }
        let (n, reduce) = (self.n, &self.reduce);
        let mut guard = AbortUnlessDone {
            reduce,
            links: Some(member.links.closer()),
        };
        let result = MemberSteps::start(member, across, reduce, n, self.time_limit).and_then(
            |(mut steps, first)| {
                run_levels(&mut steps, first, u64::from(n), self.in_arcs, &self.rule)
                    .map_err(|e| steps.fail_across(e))
            },
        );
        if result.is_ok() {
            guard.links = None;
        }
        result
    }
}

/// The stats every thread agrees on, or the error that caused the others (a device's own
/// failure before the disconnections it caused on its peers).
fn first_cause(results: Vec<Result<DirectionStats, BfsError>>) -> Result<DirectionStats, BfsError> {
    let mut errors: Vec<BfsError> = Vec::new();
    let mut stats = None;
    for r in results {
        match r {
            Ok(s) => stats = stats.or(Some(s)),
            Err(e) => errors.push(e),
        }
    }
    let secondary = |e: &BfsError| {
        matches!(
            e,
            BfsError::Worklist(groute_worklist::WorklistError::Runtime(
                Error::Disconnected(_)
            ))
        )
    };
    match errors.iter().position(|e| !secondary(e)) {
        Some(i) => Err(errors.swap_remove(i)),
        None => match errors.pop() {
            Some(e) => Err(e),
            None => stats.ok_or_else(|| Error::invalid("devices", 0, "at least one").into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use groute_graph::{GenSpec, NoProgress, PartitionMethod, generate, partition_graph};

    /// A failed run (time limit) reports its cause, not the disconnections it caused, and
    /// the next run on the same solver builds new links and succeeds: with every pair of
    /// devices linked (3) and through device 0 (9).
    #[test]
    fn a_failed_run_leaves_the_solver_usable() {
        let spec: GenSpec = "kron:scale=9,ef=16,sym,seed=6".parse().unwrap();
        let g = generate(&spec, &NoProgress).unwrap();
        for devices in [3, 9] {
            let parted =
                partition_graph(g.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
            let expected = crate::bfs_reference(&parted.graph.csr, 5);
            let ctx = Context::host(devices).unwrap();
            let tuning = BfsTuning::default();
            let mut solver =
                MultiDirection::new(&ctx, (&parted.graph, &parted.partition), &tuning).unwrap();
            let e = solver.run(5, Some(Duration::ZERO)).err().unwrap();
            assert!(e.to_string().contains("time"), "{devices} devices: {e}");
            for _ in 0..2 {
                let run = solver.run(5, None).unwrap();
                assert_eq!(run.levels, expected, "{devices} devices");
            }
        }
    }
}
