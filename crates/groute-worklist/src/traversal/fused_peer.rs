//! Device-driven fused runs on several devices ([`FusedDriver::Device`], the default where
//! [`PeerGroup::auto_device_driven`] holds): one persistent launch of the fused kernel per
//! device for the whole run (`kernels/include/fused.cuh`, "Several devices"), the devices
//! storing their outgoing items straight into the next device's inbox over the peer link and
//! detecting termination among themselves. The host launches the members, waits for them and reads
//! their counters; it takes no part in the traversal.
//!
//! ## Protocol
//!
//! - **Ring.** Device `d` sends every improved vertex it does not own to device `d + 1`
//!   (mod N), into that device's inbox: a ring in its first outgoing buffer (which
//!   device-driven runs do not otherwise use) of the largest power of two of items that fits
//!   (the default `send_capacity` is one). The sender reserves positions on its own send
//!   counter and never writes more than the ring's capacity past the positions the receiver
//!   has read (which the receiver stores back into the sender's control word
//!   `CTRL_SEND_FREED`); a send that would is an overflow, which fails the run naming
//!   `send_capacity (--send-capacity)`. The action of each grid barrier counts the phase's
//!   sends for termination, and the next phase's publisher thread releases the new end into the
//!   receiver's control word `CTRL_INBOX_PUBLISHED` (a system-scope fence and release, off the
//!   barrier's path). The receiver's next grid phase applies SplitReceive to the published
//!   items: kept ones join its worklist, improved ones it does not own pass on to its own
//!   successor (the paper's ring router). The single-block mode (one block running levels
//!   alone) receives and sends without returning to the grid: it receives after each level's
//!   vote what was published when the previous level started, frees what it read, and counts
//!   and releases its sends every few levels. Where the single-block mode runs on a cluster
//!   ([`fused_tuning.cluster`](crate::traversal::FusedTuning::cluster), the `<algo>_fused_peer_cluster`
//!   build), the last warp of the cluster's block 0 does the same once per level in a loop of
//!   its own, expanding no item: it receives into the cluster's frontier while the other warps
//!   expand the level, and frees and releases between its arrival at the level's cluster
//!   barrier and its wait, releasing the sends counted a level before (the other warps may
//!   still be writing the level's own). The items the cluster's levels
//!   produce and expand without listing them are reported apart (`FUSED_UNLISTED`), as on one
//!   device.
//! - **Termination** is one counter in device 0's mailbox (`PEER_PENDING`): every member
//!   counts itself in (+1) as it starts, adds the items it publishes before publishing them,
//!   takes the items it receives out as it takes them, and counts itself out (-1) when it has
//!   nothing left (empty batch, empty low list, empty inbox, sends published); a member that
//!   receives while counted out counts itself back in with the same atomic. So the counter is
//!   the members with work plus the items published and not yet taken: it cannot reach 0 while
//!   any work exists (every item is in a member's worklist or low list, which keeps it counted
//!   in, or published and counted), and once 0 nothing can raise it again (only a member with
//!   work publishes, only a published item wakes a member). Counted-out members poll it and
//!   their inbox; at 0 each one ends its kernel. A member counts itself out for the first time
//!   only once the group's start gate (`peer_group.cuh`) says every member is running, hence
//!   counted in: the counter cannot pass through 0 before a late member started.
//! - **Soft priority** runs on each device on its own, exactly as on one device: the action of
//!   the grid barrier advances a device's threshold when its batch and inbox are empty and its
//!   low list is not; nothing needs the other devices' agreement, because a device counts
//!   itself out only with an empty low list.
//! - **Failures.** An overflow or the abort word stops a member and marks the mailbox failed,
//!   which every waiting member sees (so is the group's timeout on a wait). A start the gate
//!   cancelled (a member did not start in time) is run again by [`PeerGroup::run_started`].
//!   Errors name the setting to raise: `wl_capacity (--wl-capacity)` for a worklist or low list,
//!   `send_capacity (--send-capacity)` for an inbox.
//!
//! A run reports per device the levels and items it expanded, the items it appended to its
//! worklist (`items_produced`: kept expansions and kept received items), sent and received,
//! and what crossed to the next device ([`member_stats`], from the control words
//! `CTRL_SEND_END` and `CTRL_SEND_BATCHES`):
//!
//! - `items_sent`: every item it stored into the next device's inbox, its own and passed-on
//!   ones;
//! - `remote_updates`: on two members, every item sent: whatever a member receives is its
//!   own, so each item it sends is an update of the other member's vertex that it originated
//!   (an improvement of its halo copy, the combining of every `Min` executor). On more
//!   members the ring passes items on, and the kernel does not count those apart (a count on
//!   the receive path slows dense graphs' runs noticeably), so `remote_updates` is 0
//!   there and the examples report no traffic;
//! - `segments_sent`: the batches it published, the protocol's messages: each advance of the
//!   sends' end that it counted into the termination count and released into the next
//!   device's `CTRL_INBOX_PUBLISHED` (once per grid phase that sent, and once per
//!   `SOLO_RELEASE_LEVELS` or `CLUSTER_RELEASE_LEVELS` single-block levels that sent);
//! - `cut_arcs_traversed`: `None`, as for every CUDA kernel (counting them would put a count
//!   on every relaxed arc).
//!
//! `items_passed` and `items_dropped` are not counted apart.

use std::sync::Arc;
use std::time::{Duration, Instant};

use groute_core::backend::RawMemory;
use groute_core::cuda::{DevicePtr, GpuSharing, PeerArgs, PeerGroup};
use groute_core::{Device, Error, Event};

use super::cuda::{
    CTRL_INBOX_PUBLISHED, CTRL_SEND_BATCHES, CTRL_SEND_END, CTRL_SEND_FREED, CTRL_WL_END,
    CudaTraversalDevice,
};
use super::fused::{
    FUSED_PHASE_EXPAND, FUSED_PHASE_SOLO, FUSED_STOP_ABORTED, FUSED_STOP_PEER, FusedRole,
    FusedShape, StateBlock, start_words,
};
use super::fused_trace::FusedTrace;
use super::fused_tuning::{FusedDefaults, fused_kernel_flags};
use crate::engine::{DeviceStats, WorklistOptions};
use crate::error::WorklistError;
use crate::split::VertexValue;

/// How a fused run on several devices is driven ([`WorklistOptions::fused_driver`],
/// `--fused-driver`). Runs that do not fuse (one launch per level) ignore it. One device runs
/// the one-device kernel under `Auto` and `Host`, and under `Device` the members' kernel in a
/// group of one: it owns every vertex, so nothing crosses, but every member's path runs (start
/// gate, termination count, peer warp, inbox polls). That measures on one GPU what the
/// device-driven build costs against the one-device build, with profilers that cannot replay
/// the cooperative members of a larger group, and tests the members' code on one GPU. The
/// members run their single-block levels on one block or on a cluster. A device-driven run says so in
/// [`WorklistStats::device_driven`](crate::WorklistStats::device_driven).
///
/// Under `Device` and `Auto`, devices of the context that share a GPU (virtual devices: more
/// devices than GPUs) run as members sharing it ([`GpuSharing::Split`]): of k members on one GPU,
/// each one's default grid is a k-th of its multiprocessors, and at most a k-th of the blocks
/// (or of the cluster build's clusters) resident at once, less one; members sharing a GPU all
/// run the cluster build or none. That runs the members' whole protocol, items crossing
/// between members included, on fewer GPUs than members: no faster than one member (3 devices
/// on 2 GPUs give two members half a GPU each and one a whole GPU), but faster than
/// host-driven rounds on the same members
/// ([`FusedMode::fuses_device_driven`](super::FusedMode::fuses_device_driven)). CUDA
/// does not promise that the members run at once; a start that finds them not all running
/// (other work on the GPU, say) is retried until the group's timeout, then fails
/// (`groute_core::cuda::PeerGroup`, "Members sharing a GPU").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FusedDriver {
    /// Device-driven where the devices allow it ([`PeerGroup::auto_device_driven`]: distinct
    /// GPUs with peer access between every pair, or members sharing a GPU, each on its share),
    /// host-driven rounds elsewhere.
    #[default]
    Auto,
    /// Device-driven (`fused_peer.rs`): one persistent kernel per device for the whole run, the
    /// devices exchanging items and detecting termination among themselves; members may share
    /// a GPU (see above). An error where [`PeerGroup::check_sharing`] with
    /// [`GpuSharing::Split`] fails.
    Device,
    /// Host-driven bounded rounds (`fused_rounds.rs`): each round one launch of many levels,
    /// the host moving the items between rounds.
    Host,
}

impl FusedDriver {
    /// Whether a fused run on several devices of a context is device-driven, given what
    /// [`PeerGroup::check_sharing`] says of the context (`check`); an error when
    /// [`FusedDriver::Device`] asks for it and the devices cannot.
    pub(crate) fn device_driven(
        self,
        check: impl Fn(GpuSharing) -> Result<(), Error>,
    ) -> Result<bool, Error> {
        match self {
            FusedDriver::Host => Ok(false),
            // The rule of `PeerGroup::auto_device_driven`, through `check` (testable here).
            FusedDriver::Auto => Ok(check(GpuSharing::Split).is_ok()),
            FusedDriver::Device => match check(GpuSharing::Split) {
                Ok(()) => Ok(true),
                Err(why) => Err(Error::invalid(
                    "fused_driver (--fused-driver)",
                    "device",
                    format!(
                        "these devices cannot run device-driven ({why}): give --fused-driver \
                         host or auto"
                    ),
                )),
            },
        }
    }
}

/// What a member of a device-driven run adds to the fused kernel's arguments.
#[derive(Clone, Debug)]
pub(super) struct FusedMember {
    /// The group (mailbox, abort word, rank, size, timeout).
    pub(super) group: PeerArgs,
    /// This device's inbox (written by the previous device of the ring).
    pub(super) inbox: DevicePtr<VertexValue>,
    /// This device's inbox ring: items (a power of two, [`ring_capacity`]).
    pub(super) inbox_capacity: u32,
    /// The next device's inbox and its ring capacity.
    pub(super) send: DevicePtr<VertexValue>,
    pub(super) send_capacity: u32,
    /// The next device's `CTRL_INBOX_PUBLISHED` word.
    pub(super) send_published: DevicePtr<u32>,
    /// The previous device's `CTRL_SEND_FREED` word (where this device frees its inbox).
    pub(super) recv_freed: DevicePtr<u32>,
    /// Memory of other devices the launch must keep alive.
    pub(super) memory: Vec<Arc<dyn RawMemory>>,
}

/// What one device-driven run did.
pub(crate) struct PeerRunOutput {
    /// Per device.
    pub(crate) stats: Vec<DeviceStats>,
    /// Host time from the first launch until every member completed.
    pub(crate) elapsed: Duration,
    /// The longest member's time between timing events recorded around its launch.
    pub(crate) device_time: Duration,
}

/// What the host reads back from one member.
struct MemberReadBack {
    /// Its control words `[0, CTRL_READ_BACK)`.
    ctrl: Vec<u32>,
    state: StateBlock,
    device_time: Duration,
    /// The member ran the cluster build (its single-block levels ran on a cluster).
    cluster: bool,
}

/// The control words read back from a member after its run: every counter the report uses
/// (the overflow words, the ends, the traffic counters).
const CTRL_READ_BACK: usize = CTRL_SEND_BATCHES + 1;
const _: () = assert!(
    CTRL_WL_END < CTRL_READ_BACK
        && CTRL_SEND_END < CTRL_READ_BACK
        && CTRL_INBOX_PUBLISHED < CTRL_READ_BACK
);

/// Runs the traversal device-driven on every device of `group` (module docs): `devices[d]`
/// on `context_devices[d]`, values reset (`sources` at 0), `seeds[d]` in device `d`'s
/// worklist. Call with the group's run lock not held (it takes it).
pub(crate) fn run_device_driven(
    group: &PeerGroup,
    context_devices: &[Device],
    devices: &mut [&mut CudaTraversalDevice],
    sources: &[u32],
    seeds: &[Vec<u32>],
    options: &WorklistOptions,
    defaults: FusedDefaults,
) -> Result<PeerRunOutput, WorklistError> {
    let n = devices.len();
    let prio_delta = options.prio_delta.unwrap_or(0);
    let threshold = if prio_delta == 0 {
        u32::MAX
    } else {
        prio_delta
    };
    // Each member's shape; with members sharing its GPU (FusedDriver::Device), its grid is
    // its share of the GPU.
    let shape_of = |dev: &CudaTraversalDevice, d: usize, options: &WorklistOptions| {
        let cluster_graph = (dev.hubs.max_degree(), dev.graph_arcs);
        let share = group.members_on_gpu(d) as u32;
        dev.fused
            .shape(options, defaults, Some(share), Some(cluster_graph))
    };
    let mut shapes = Vec::with_capacity(n);
    let mut barriers = Vec::with_capacity(n);
    for (d, dev) in devices.iter_mut().enumerate() {
        shapes.push(shape_of(dev, d, options)?);
        barriers.push(fused_kernel_flags(options, dev.graph_arcs)?);
        if threshold != u32::MAX {
            dev.ensure_low_lists(&context_devices[d])?;
        }
    }
    // Members sharing a GPU run the same build, all with clusters or none: a member without
    // them (the one holding a graph's hubs, say) can take multiprocessors of every GPC and
    // leave too few free together in one for its peers' clusters (clusters of separate grids
    // were seen not to pack a GPU fully; `MemberShare::of_resident`).
    let mut no_clusters = options.clone();
    no_clusters.fused_tuning.cluster = Some(false);
    for d in 0..n {
        let gpu = context_devices[d].physical();
        let mixed = (0..n).any(|e| {
            context_devices[e].physical() == gpu && shapes[e].cluster != shapes[d].cluster
        });
        if mixed && shapes[d].cluster {
            shapes[d] = shape_of(devices[d], d, &no_clusters)?;
        }
    }
    let devices: &[&mut CudaTraversalDevice] = devices;
    let members = (0..n)
        .map(|d| member(group, devices, d))
        .collect::<Result<Vec<_>, Error>>()?;
    let _run = group.begin_run()?;
    let started = Instant::now();
    let trace = FusedTrace::start();
    for (d, shape) in shapes.iter().enumerate() {
        trace.mark_with(|| {
            let share = group.members_on_gpu(d);
            format!("member {d}: {shape:?}, 1/{share} of its GPU")
        });
    }
    let (read_back, attempts) = group.run_started(
        || -> Result<(), WorklistError> {
            // Every member reset and idle before any launch: a member stores into its
            // successor's inbox and control block from its first phase on.
            for (d, dev) in devices.iter().enumerate() {
                dev.reset_run(&context_devices[d], sources, &seeds[d])?;
                let k = seeds[d].len() as u32;
                let phase = if k <= shapes[d].solo_max {
                    FUSED_PHASE_SOLO
                } else {
                    FUSED_PHASE_EXPAND
                };
                // An empty worklist starts in EXPAND: its action finds nothing and idles.
                let phase = if k == 0 { FUSED_PHASE_EXPAND } else { phase };
                dev.prepare_state(&dev.fused.state, &start_words(phase, k, threshold))?;
            }
            Ok(())
        },
        || {
            launch_members(
                devices,
                context_devices,
                &shapes,
                &barriers,
                &members,
                group,
                options,
                prio_delta,
            )
        },
    )?;
    let (read_back, asked_to_stop) = read_back;
    let elapsed = started.elapsed();
    trace.mark_with(|| format!("members started at attempt {attempts}"));
    for (d, member) in read_back.iter().enumerate() {
        trace.mark_with(|| {
            format!(
                "member {d}: device time {:?}, {}",
                member.device_time,
                member.state.trace_summary()
            )
        });
    }
    report(
        devices,
        &members,
        &read_back,
        seeds,
        asked_to_stop,
        options,
        elapsed,
    )
}

/// Member `d`'s kernel arguments: its inbox, the next device's inbox and published word.
fn member(
    group: &PeerGroup,
    devices: &[&mut CudaTraversalDevice],
    d: usize,
) -> Result<FusedMember, Error> {
    let n = devices.len();
    let next = &devices[(d + 1) % n];
    let previous = &devices[(d + n - 1) % n];
    let inbox = devices[d].inbox()?;
    let next_inbox = next.inbox()?;
    let published = next
        .ctrl
        .slice(CTRL_INBOX_PUBLISHED..CTRL_INBOX_PUBLISHED + 1)?;
    let freed = previous.ctrl.slice(CTRL_SEND_FREED..CTRL_SEND_FREED + 1)?;
    let mut memory = group.memory();
    memory.push(next_inbox.raw().memory);
    memory.push(next.ctrl.raw().memory);
    memory.push(previous.ctrl.raw().memory);
    Ok(FusedMember {
        group: group.args(d)?,
        inbox: DevicePtr::from_slice(&inbox.raw())?,
        inbox_capacity: ring_capacity(inbox.len()),
        send: DevicePtr::from_slice(&next_inbox.raw())?,
        send_capacity: ring_capacity(next_inbox.len()),
        send_published: DevicePtr::from_slice(&published.raw())?,
        recv_freed: DevicePtr::from_slice(&freed.raw())?,
        memory,
    })
}

/// The ring capacity of an inbox buffer of `len` items: the largest power of two that fits
/// (at most 2^31).
pub(super) fn ring_capacity(len: usize) -> u32 {
    let len = len.clamp(1, 1 << 31) as u32;
    1 << (31 - len.leading_zeros())
}

/// Launches every member between two timing events each and waits for them all (asking them
/// to stop past the time limit); returns what the host reads back and whether it asked.
#[allow(clippy::too_many_arguments)]
fn launch_members(
    devices: &[&mut CudaTraversalDevice],
    context_devices: &[Device],
    shapes: &[FusedShape],
    barriers: &[(u32, u32)],
    members: &[FusedMember],
    group: &PeerGroup,
    options: &WorklistOptions,
    prio_delta: u32,
) -> Result<(Vec<MemberReadBack>, bool), WorklistError> {
    let started = Instant::now();
    let mut timings: Vec<(Event, Event)> = Vec::with_capacity(devices.len());
    for (d, dev) in devices.iter().enumerate() {
        let launched = (|| -> Result<(Event, Event), Error> {
            let t0 = context_devices[d].record_timing(&dev.stream)?;
            dev.launch_fused(
                shapes[d],
                barriers[d],
                prio_delta,
                shapes[d].solo_max,
                &FusedRole::Member(members[d].clone()),
            )?;
            let t1 = context_devices[d].record_timing(&dev.stream)?;
            Ok((t0, t1))
        })();
        match launched {
            Ok(t) => timings.push(t),
            Err(e) => {
                let done: Vec<&Event> = timings.iter().map(|(_, t1)| t1).collect();
                group.abandon_launch(&done)?;
                return Err(e.into());
            }
        }
    }
    let done: Vec<&Event> = timings.iter().map(|(_, t1)| t1).collect();
    let asked_to_stop = group.wait_members(&done, options.time_limit, started)?;
    let mut read_back = Vec::with_capacity(devices.len());
    for (d, dev) in devices.iter().enumerate() {
        let (t0, t1) = &timings[d];
        read_back.push(MemberReadBack {
            ctrl: context_devices[d].download(&dev.ctrl.slice(0..CTRL_READ_BACK)?)?,
            state: dev.fused.read_state(&context_devices[d])?,
            device_time: Event::elapsed(t0, t1)?,
            cluster: shapes[d].cluster,
        });
    }
    Ok((read_back, asked_to_stop))
}

/// The run's statistics, or the error a member reported (an overflow first, naming its
/// setting; then the time limit; then a peer failure).
fn report(
    devices: &[&mut CudaTraversalDevice],
    members: &[FusedMember],
    read_back: &[MemberReadBack],
    seeds: &[Vec<u32>],
    asked_to_stop: bool,
    options: &WorklistOptions,
    elapsed: Duration,
) -> Result<PeerRunOutput, WorklistError> {
    for ((dev, member), r) in devices.iter().zip(members).zip(read_back) {
        dev.overflow_error(
            &r.ctrl,
            "inbox of the next device (device-driven run)",
            member.send_capacity as usize,
        )?;
    }
    let stops: Vec<u32> = read_back.iter().map(|r| r.state.0.stop).collect();
    let mut stats = Vec::with_capacity(devices.len());
    let mut outstanding = 0i64;
    for (r, seeds) in read_back.iter().zip(seeds) {
        let member = member_stats(&r.ctrl, &r.state, seeds.len(), r.cluster, devices.len());
        outstanding += listed(&r.ctrl, &r.state) as i64 - member.items_processed as i64
            + member.items_sent as i64
            - member.items_received as i64;
        stats.push(member);
    }
    if asked_to_stop || stops.contains(&FUSED_STOP_ABORTED) {
        return Err(WorklistError::TimedOut {
            limit: options.time_limit.unwrap_or_default(),
            outstanding,
        });
    }
    if let Some((d, &stop)) = stops.iter().enumerate().find(|(_, s)| **s != 0) {
        let status = stop.wrapping_sub(FUSED_STOP_PEER);
        return Err(PeerGroup::failure(d, status).into());
    }
    Ok(PeerRunOutput {
        stats,
        elapsed,
        device_time: read_back
            .iter()
            .map(|r| r.device_time)
            .max()
            .unwrap_or_default(),
    })
}

/// The items a member listed: every item its worklist's end counts, and those the cluster
/// mode's levels produced and expanded without listing them (`FusedStateBlock::unlisted`).
fn listed(ctrl: &[u32], state: &StateBlock) -> u64 {
    u64::from(ctrl[CTRL_WL_END]).wrapping_add(state.0.unlisted)
}

/// A member's counters from what the host read back after its run (module docs): `ctrl`, its
/// control words `[0, CTRL_READ_BACK)`; `state`, its state block; `seeds`, the items it
/// started with; `cluster`, whether it ran the cluster build; `members`, the run's members.
fn member_stats(
    ctrl: &[u32],
    state: &StateBlock,
    seeds: usize,
    cluster: bool,
    members: usize,
) -> DeviceStats {
    let counted = state.stats();
    let sent = u64::from(ctrl[CTRL_SEND_END]);
    DeviceStats {
        items_produced: listed(ctrl, state).saturating_sub(seeds as u64),
        items_sent: sent,
        segments_sent: u64::from(ctrl[CTRL_SEND_BATCHES]),
        items_received: u64::from(state.0.in_end),
        remote_updates: if members == 2 { sent } else { 0 },
        cut_arcs_traversed: None,
        solo_cluster_rounds: if cluster { counted.solo_rounds } else { 0 },
        ..counted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::WorklistStats;
    use crate::traversal::fused::FUSED_WORDS;

    /// A member's read-back words: its control words with the worklist's end `listed`, `sent`
    /// items sent in `batches` batches, and a state block with `processed` items expanded,
    /// `received` taken from its inbox and `rounds` levels, of them `solo` single-block ones.
    struct Words {
        listed: u32,
        sent: u32,
        batches: u32,
        processed: u64,
        received: u32,
        rounds: u32,
        solo: u32,
    }

    impl Words {
        fn read_back(&self) -> (Vec<u32>, StateBlock) {
            let mut ctrl = vec![0u32; CTRL_READ_BACK];
            ctrl[CTRL_WL_END] = self.listed;
            ctrl[CTRL_SEND_END] = self.sent;
            ctrl[CTRL_SEND_BATCHES] = self.batches;
            ctrl[CTRL_INBOX_PUBLISHED] = self.received;
            let mut state = StateBlock::from_words(&[0u32; FUSED_WORDS]);
            state.0.processed = self.processed;
            state.0.in_end = self.received;
            state.0.rounds = self.rounds;
            state.0.solo_rounds = self.solo;
            (ctrl, state)
        }

        fn stats(&self, seeds: usize, cluster: bool, members: usize) -> DeviceStats {
            let (ctrl, state) = self.read_back();
            member_stats(&ctrl, &state, seeds, cluster, members)
        }
    }

    #[test]
    fn on_two_members_every_item_sent_is_a_remote_update() {
        // Device 0 seeded with 1 item sends 40 of its vertices' updates in 6 batches; device 1
        // sends 25 back in 4. Nothing is passed on: whatever one receives is its own.
        let members = [
            Words {
                listed: 31,
                sent: 40,
                batches: 6,
                processed: 31,
                received: 25,
                rounds: 9,
                solo: 5,
            },
            Words {
                listed: 20,
                sent: 25,
                batches: 4,
                processed: 20,
                received: 40,
                rounds: 7,
                solo: 0,
            },
        ];
        let run = WorklistStats {
            devices: vec![members[0].stats(1, true, 2), members[1].stats(0, false, 2)],
            device_driven: true,
            ..WorklistStats::default()
        };
        let d0 = &run.devices[0];
        assert_eq!((d0.items_sent, d0.remote_updates), (40, 40));
        assert_eq!((d0.segments_sent, d0.items_received), (6, 25));
        assert_eq!((d0.items_produced, d0.items_processed), (30, 31));
        assert_eq!(
            (d0.rounds, d0.solo_rounds, d0.solo_cluster_rounds),
            (9, 5, 5)
        );
        assert_eq!(d0.cut_arcs_traversed, None);
        assert_eq!(run.devices[1].solo_cluster_rounds, 0);
        assert_eq!(run.remote_updates(), run.items_sent());
        assert!(run.counts_remote_updates());
        assert_eq!(run.items_sent(), 65);
        assert_eq!(run.segments_sent(), 10);
        assert_eq!(run.items_sent(), run.items_received());
        assert_eq!(run.cut_arcs_traversed(), None);
    }

    #[test]
    fn on_a_ring_of_three_members_remote_updates_are_not_counted() {
        // Items passed on along the ring are among the sends, not counted apart.
        let w = Words {
            listed: 6,
            sent: 8,
            batches: 2,
            processed: 6,
            received: 10,
            rounds: 4,
            solo: 1,
        };
        let d = w.stats(0, false, 3);
        assert_eq!((d.items_sent, d.segments_sent, d.remote_updates), (8, 2, 0));
        assert_eq!(d.items_passed, 0);
        let run = WorklistStats {
            devices: vec![d; 3],
            device_driven: true,
            ..WorklistStats::default()
        };
        assert!(!run.counts_remote_updates());
    }

    #[test]
    fn an_inbox_ring_is_the_largest_power_of_two_that_fits() {
        assert_eq!(ring_capacity(0), 1);
        assert_eq!(ring_capacity(1), 1);
        assert_eq!(ring_capacity(2120), 2048);
        assert_eq!(ring_capacity(4096), 4096);
        assert_eq!(ring_capacity(usize::MAX), 1 << 31);
    }

    #[test]
    fn the_driver_is_device_where_the_gpus_allow_it_and_an_error_where_asked_but_not() {
        let unsupported = || {
            Err(Error::PeerGroupUnsupported {
                reason: "peer access".into(),
            })
        };
        let supported = |_: GpuSharing| Ok(());
        let never = |_: GpuSharing| unsupported();
        // Virtual devices on one GPU: members that split it, which Auto takes too.
        let shared_gpu = |sharing: GpuSharing| match sharing {
            GpuSharing::Split => Ok(()),
            GpuSharing::Distinct => unsupported(),
        };
        assert!(FusedDriver::Auto.device_driven(supported).unwrap());
        assert!(!FusedDriver::Auto.device_driven(never).unwrap());
        assert!(FusedDriver::Auto.device_driven(shared_gpu).unwrap());
        assert!(!FusedDriver::Host.device_driven(supported).unwrap());
        assert!(!FusedDriver::Host.device_driven(shared_gpu).unwrap());
        assert!(FusedDriver::Device.device_driven(supported).unwrap());
        assert!(FusedDriver::Device.device_driven(shared_gpu).unwrap());
        let err = FusedDriver::Device
            .device_driven(never)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--fused-driver") && err.contains("peer access"),
            "{err}"
        );
    }
}
