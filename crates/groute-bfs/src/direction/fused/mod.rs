//! Direction-optimizing BFS driven by the devices ([`MultiDriver::Fused`](super::MultiDriver)):
//! one persistent cooperative kernel per device runs every level of a run
//! (`kernels/include/direction_fused.cuh`, whose header describes a level), the devices storing
//! their discoveries straight into each other's inboxes and meeting in the all-reduce of a
//! [`PeerGroup`] once or twice a level, where every device gets the same global counts and applies
//! [`SwitchRule`] to them on the device. The host resets the members, launches every one of
//! them, waits, and reads the counts and levels back once.
//!
//! Requirements ([`PeerGroup::check_sharing`] with [`GpuSharing::Split`]): the CUDA backend,
//! peer access between every pair of distinct GPUs; one device is a group of one (its
//! exchanges are skipped). Devices sharing a GPU (virtual devices) run as members sharing it,
//! each on its share of the resident blocks (`groute_core::cuda::member_share`), for tests
//! and profiling.
//!
//! Failures: a member whose launch fails sets the group's abort word so the others leave; past
//! the run's time limit the host sets it too (the run then fails with the time-out); an
//! exchange that fails (abort, a peer's failure, the group's timeout) stops its kernel and the
//! run fails with [`groute_core::Error::PeerExchangeFailed`]. The storage stays usable.
//!
//! The kernel has two builds: `bfs_direction_fused_one` for one device, with the peer steps
//! compiled out, and `bfs_direction_fused_several`; each has a `_bits` twin whose pulls read
//! frontier bitmaps and pull lists. The one-device builds and the several-device builds are
//! programs of their own (`kernels/bfs/bfs_direction_fused.cu`,
//! `bfs_direction_fused_several.cu`): a run compiles those of its member count. A pull step
//! builds the next frontier and stores its finds into the peers' inboxes itself; frontier
//! passes reserve worklist slots once per block; exchanges are posted into every peer's
//! memory; on several devices, every device expands the source's out-arcs at level 0 itself,
//! reading them from the owner's rows over the peer link (no discovery crosses a link, no
//! device waits for a hub source), later push levels with few out-arcs store lists of their
//! appends into the peers' inboxes as they append and build the next frontier from them, the
//! others mark their discoveries in a bitmap, then send lists of their appends where they
//! found few and the bitmap's words where they found many; a pull or sparse push level makes
//! one exchange, a dense push level two or three (see the kernel's header).
//! The run-time choices are a per-phase trace of every level on every device (`trace.rs`,
//! [`DirectionTrace`], [`BfsTuning::trace`]) and whether the pulls read frontier bitmaps
//! and pull lists instead of levels ([`BfsTuning::pull_bitmap`]; by default where the level
//! array outgrows the L2: `pull_bits.rs`).
//!
//! Memory per device: the storage of a one-device run (the rows of its owned vertices of the
//! CSR and of the transpose of a directed graph, levels, a worklist of 2n slots), on several
//! devices the whole offset arrays (8 bytes per vertex each; `member.rs` says why), an inbox
//! of 2 * n / 32 words per other device (two halves, alternating by level) and a discovery
//! bitmap of n / 32 words, a few hundred bytes of barrier and state, and a trace buffer of
//! 6 KiB; where the pulls read frontier bitmaps, two bitmaps of
//! n / 32 words and 8 bytes per owned vertex with in-arcs (their list, and the pull lists'
//! regions per warp of the grid; `kernels/include/direction_fused_pull.cuh`).

mod member;
mod trace;

use std::time::{Duration, Instant};

use groute_core::cuda::{GpuSharing, PeerGroup};
use groute_core::{Context, Device, Error, Event};
use groute_graph::{Graph, Partition};
use groute_worklist::WorklistError;

use self::member::{FusedMember, SourceRow};
pub use self::trace::{DeviceTrace, DirectionTrace, PhaseTimes, StepKind, StepTrace};
use super::pull_bits::pull_bitmaps_chosen;
use super::solver::DirectionRun;
use super::{DirectionStats, SwitchRule};
use crate::{BfsError, BfsTuning};

/// Device-driven direction-optimizing BFS of one partitioned graph on every device of a
/// context.
pub(crate) struct FusedDirection {
    context: Context,
    group: PeerGroup,
    members: Vec<FusedMember>,
    in_arcs: u64,
    rule: SwitchRule,
    /// Whether runs stamp every phase ([`DirectionTrace`]).
    trace: bool,
}

impl FusedDirection {
    /// Uploads to every device `d` the rows of `graph` it owns, `partition.range(d)` (of the
    /// transpose too when the graph is not symmetric), for runs under `tuning` (its switch
    /// rule, trace and pull bitmaps); errors as [`PeerGroup::new_sharing`] when the context
    /// cannot run device-driven kernels.
    pub(crate) fn new(
        context: &Context,
        graph: &Graph,
        partition: &Partition,
        tuning: &BfsTuning,
    ) -> Result<Self, BfsError> {
        let (rule, trace) = (tuning.switch_rule, tuning.trace);
        let vertices = graph.num_vertices() as u64;
        let bitmaps = pull_bitmaps_chosen(tuning.pull_bitmap, context, vertices);
        let group = PeerGroup::new_sharing(context, GpuSharing::Split)?;
        let transpose = (!graph.symmetric).then(|| graph.csr.transpose());
        let devices = context.num_devices();
        let mut members = context
            .devices()
            .iter()
            .enumerate()
            .map(|(d, device)| {
                let csr = (&graph.csr, transpose.as_ref());
                FusedMember::new(
                    context,
                    device,
                    csr,
                    (partition.range(d), devices, group.members_on_gpu(d)),
                    bitmaps,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let inboxes: Vec<_> = members.iter().map(|m| m.inbox().clone()).collect();
        let inbox_refs: Vec<_> = inboxes.iter().collect();
        let postboxes: Vec<_> = members.iter().map(|m| m.postbox().clone()).collect();
        let postbox_refs: Vec<_> = postboxes.iter().collect();
        for (d, m) in members.iter_mut().enumerate() {
            m.set_peer_tables(
                group.peer_table(d, &inbox_refs)?,
                group.peer_table(d, &postbox_refs)?,
            );
        }
        let in_arcs = transpose.as_ref().unwrap_or(&graph.csr).num_edges();
        Ok(FusedDirection {
            context: context.clone(),
            group,
            members,
            in_arcs,
            rule,
            trace,
        })
    }

    /// BFS from `source` (the partitioned graph's numbering, in range).
    pub(crate) fn run(
        &mut self,
        source: u32,
        time_limit: Option<Duration>,
    ) -> Result<DirectionRun, BfsError> {
        // Held until every member completed (`wait` below): one device-driven run at a time.
        let _run = self.group.begin_run()?;
        let started = Instant::now();
        // Again while a member's start was cancelled (PeerGroup::run_started).
        let ((spans, asked_to_stop), _) = self.group.run_started(
            || -> Result<(), BfsError> {
                for m in &self.members {
                    m.reset(source, self.trace)?;
                }
                for m in &self.members {
                    m.dir.stream.synchronize()?;
                }
                Ok(())
            },
            || -> Result<_, BfsError> {
                let spans = self.launch_all(source)?;
                let done: Vec<&Event> = spans.iter().map(|(_, end)| end).collect();
                let asked_to_stop = self.group.wait_members(&done, time_limit, started)?;
                Ok((spans, asked_to_stop))
            },
        )?;
        let device_time = Event::longest_span(&spans)?;
        let elapsed = started.elapsed();
        let devices = self.context.devices();
        let states = self.read_each(FusedMember::read_state)?;
        if asked_to_stop {
            return Err(WorklistError::TimedOut {
                limit: time_limit.unwrap_or_default(),
                outstanding: 0,
            }
            .into());
        }
        if let Some((d, state)) = states.iter().enumerate().find(|(_, s)| s.status != 0) {
            return Err(PeerGroup::failure(d, state.status as u32).into());
        }
        for m in &self.members {
            m.check_worklist()?;
        }
        let trace = if self.trace {
            Some(trace::decode(&self.read_each(FusedMember::read_trace)?))
        } else {
            None
        };
        let state = &states[0];
        Ok(DirectionRun {
            levels: self.members[0].levels(&devices[0])?,
            stats: DirectionStats {
                levels: state.levels,
                pull_levels: state.pull_levels,
                items: state.items,
                arcs_examined: state.arcs,
            },
            elapsed,
            device_time: Some(device_time),
            driver: super::MultiDriver::Fused,
            trace,
        })
    }

    /// Reads a block of every member (`read` waits for its stream), in rank order.
    fn read_each<T>(
        &self,
        read: impl Fn(&FusedMember, &Device) -> Result<T, Error>,
    ) -> Result<Vec<T>, Error> {
        let devices = self.context.devices();
        self.members
            .iter()
            .zip(devices)
            .map(|(m, device)| read(m, device))
            .collect()
    }

    /// Launches every member on its own stream for a run from `source` (each reads the
    /// source's row from the member that owns it) and returns each member's span: a timing
    /// event recorded before any launch and one after its kernel (its launch, any wait for
    /// a later member's, and its kernel, as the other device-driven solvers time theirs).
    /// The launches go back to back, the end events and keep-alives after them: a member
    /// waits for the last one's start at its first exchange, so nothing else goes between
    /// two launches. A failed launch sets the abort word so that the members already running
    /// leave.
    fn launch_all(&self, source: u32) -> Result<Vec<(Event, Event)>, BfsError> {
        let devices = self.context.devices();
        let owner = self
            .members
            .iter()
            .find(|m| m.owns(source))
            .ok_or_else(|| {
                Error::invalid("BFS source", source, "a vertex of the partitioned graph")
            })?;
        let source = SourceRow {
            vertex: source,
            targets: owner.push_targets()?,
        };
        let starts = self
            .members
            .iter()
            .zip(devices)
            .map(|(m, device)| device.record_timing(&m.dir.stream))
            .collect::<Result<Vec<_>, _>>()?;
        let mut failure = None;
        let mut launched = 0;
        for (rank, m) in self.members.iter().enumerate() {
            let run = (self.in_arcs, source);
            if let Err(e) = m.launch(&self.group, rank, run, (&self.rule, self.trace)) {
                failure = Some(e);
                break;
            }
            launched += 1;
        }
        let mut spans: Vec<(Event, Event)> = Vec::with_capacity(launched);
        let members = self.members.iter().zip(devices).zip(starts).take(launched);
        for (rank, ((m, device), start)) in members.enumerate() {
            let end = device
                .record_timing(&m.dir.stream)
                .and_then(|end| m.keep_alive(&self.group, rank).map(|()| end));
            match end {
                Ok(end) => spans.push((start, end)),
                Err(e) => {
                    failure = failure.or(Some(e));
                    break;
                }
            }
        }
        if let Some(e) = failure {
            let done: Vec<&Event> = spans.iter().map(|(_, end)| end).collect();
            self.group.abandon_launch(&done)?;
            return Err(e.into());
        }
        Ok(spans)
    }
}
