//! The device-driven run ([`crate::Driver::Fused`]): one persistent cooperative kernel per
//! device (`kernels/pagerank/pagerank_fused.cu`) runs every round, over the same device storage as
//! the host-driven worker ([`CudaPageRankStorage`], without cut lists) plus, per device, its
//! mirrors (what its sweeps post into the peers' share arrays: [`Mirrors`]), the incoming halo
//! (2 x owned `f32`, one per round parity), the inbox (2 x the device's in-cut vertices: the
//! owned vertices with an in-arc from another device, so it cannot overflow), its two tails,
//! the state block, the peers block (`PageRankPeers`) through which it reaches its peers, its postbox
//! (the exchanges' `peer_post_allreduce_sum`) with the table of every member's, and the
//! kernel loaded into every device at construction (a member loading lazily at its launch,
//! after another member already waits for it, can wait behind other work of the process that
//! waits for that member, until the exchange times out). The host resets,
//! takes the process's run lock (`PeerGroup::begin_run`: no other device-driven run, and no
//! multi-GPU host-driven run, beside it), launches every member, waits (setting the group's
//! abort word past the time limit) and reads the state blocks back: rounds by kind, vertices
//! pushed, items sent and drained, mirror values posted, exchanges, the device time by phase
//! ([`crate::FusedPhaseTimes`]), and why a member stopped early.

use std::time::{Duration, Instant};

use groute_core::cuda::{GpuSharing, PEER_MAX_DEVICES, PEER_POSTBOX_WORDS, PeerGroup};
use groute_core::{Buffer, Context, Error, Event};
use groute_graph::{Csr, Partition};
use groute_kernels::abi::{
    PRF_FLAG_FENCE_PER_ROUND, PRF_FLAG_GATHER_INTERLEAVE, PRF_STOP_ABORTED, PRF_STOP_EXCHANGE,
    PRF_STOP_OVERFLOW, PRF_STOP_PEER, PageRankStateBlock, block_words,
};
use groute_worklist::{DeviceStats, WorklistError, WorklistOptions, WorklistStats};

use crate::cuda::device_driven_launch::{
    FusedKernel, FusedLaunch, FusedSettings, PeerInbox, STATE_WORDS, launch_fused, peers_block,
    state_block,
};
use crate::cuda::storage::{CudaPageRankStorage, PushSettings};
use crate::mirrors::{Mirrors, in_cut_counts};
use crate::profile::{DeviceProfile, FusedPhaseTimes};

/// One device's receiving side and state.
struct FusedDevice {
    halo: Buffer<u32>,
    /// Held for the peers' stores (never read by the host).
    _inbox: Buffer<u32>,
    tails: Buffer<u32>,
    capacity: u32,
    /// The mirrors, peer after peer (one slot allocated when there is none).
    mirrors: Buffer<u32>,
    /// Where each peer's mirrors start.
    mirror_bounds: [u32; PEER_MAX_DEVICES + 1],
    state: Buffer<u32>,
    peers: Buffer<u32>,
    /// Where the peers post their exchange values (zeroed before each run).
    postbox: Buffer<u64>,
    /// On this device, every member's postbox address (rank order).
    postboxes: Buffer<u64>,
    /// `pagerank_fused`, loaded at construction (never lazily between two members' launches).
    kernel: FusedKernel,
    /// Where no device has pull hubs: the chained sweeps' second share array (an `f32` per
    /// vertex; `FusedLaunch::share_next`).
    share_next: Option<Buffer<u32>>,
}

/// The device-driven runs' group and per-device buffers, kept across runs.
pub(crate) struct FusedRuns {
    group: PeerGroup,
    devices: Vec<FusedDevice>,
    settings: FusedSettings,
}

impl FusedRuns {
    /// The group of `context`'s devices and each device's mirrors, halo, inbox, tails, state
    /// and peers block; errors as [`PeerGroup::new_sharing`] (naming `--driver host`). Members
    /// sharing a GPU each launch on their share of its resident blocks. `csr` is renumbered
    /// so that device `d` owns `partition.range(d)`, as its storage uploaded it.
    pub(crate) fn new(
        context: &Context,
        csr: &Csr,
        partition: &Partition,
        storages: &[CudaPageRankStorage],
        push: PushSettings,
        options: &WorklistOptions,
    ) -> Result<Self, Error> {
        // Members on one GPU (virtual devices: tests, profiling) split it.
        let mut group = PeerGroup::new_sharing(context, GpuSharing::Split)?;
        if let Some(limit) = options.time_limit {
            group.set_timeout(limit);
        }
        let several = context.num_devices() > 1;
        let in_cut = if several {
            in_cut_counts(csr, partition)?
        } else {
            vec![0; 1]
        };
        // Where no device's gathers have hubs, the sweeps chain: each gather takes at once,
        // into a second share array on every device (kernels/pagerank/pagerank_fused.cu).
        let chains = storages.iter().all(|storage| {
            storage
                .pull_buffers()
                .is_some_and(|pull| pull.hubs.is_none())
        });
        let mut parts = Vec::with_capacity(context.num_devices());
        for (d, device) in context.devices().iter().enumerate() {
            let owned = partition.range(d).len();
            let capacity = in_cut[d].max(1);
            let halo = device.alloc::<u32>(2 * owned.max(1))?;
            let mirrors = if several {
                Mirrors::of(csr, partition, d)?
            } else {
                Mirrors {
                    vertices: Vec::new(),
                    bounds: [0; PEER_MAX_DEVICES + 1],
                }
            };
            let mirror_list = if mirrors.vertices.is_empty() {
                device.alloc::<u32>(1)?.slice(..0)?
            } else {
                device.upload_graph(&mirrors.vertices)?
            };
            let share = storages
                .get(d)
                .and_then(CudaPageRankStorage::pull_buffers)
                .ok_or_else(|| {
                    Error::invalid(
                        "driver (--driver)",
                        "fused",
                        "pull sweeps (--sweep pull), or --driver host",
                    )
                })?
                .share;
            let share_next = if chains {
                let next = device.alloc::<u32>(csr.num_vertices().max(1))?;
                device.stream().fill(&next, 0u32)?;
                Some(next)
            } else {
                None
            };
            parts.push((
                halo,
                device.alloc::<u32>(2 * capacity)?,
                device.alloc::<u32>(2)?,
                u32::try_from(capacity).unwrap_or(u32::MAX),
                device.alloc::<u32>(STATE_WORDS)?,
                (mirror_list, mirrors.bounds, share, share_next),
            ));
        }
        let inboxes: Vec<PeerInbox> = parts
            .iter()
            .map(
                |(halo, inbox, tails, capacity, _, (_, _, share, share_next))| PeerInbox {
                    halo: halo.raw(),
                    share: share.clone(),
                    share_next: share_next.as_ref().map(Buffer::raw),
                    inbox: inbox.raw(),
                    tails: tails.raw(),
                    capacity: *capacity,
                },
            )
            .collect();
        let block = peers_block(partition.bounds(), &inboxes)?;
        let postboxes = context
            .devices()
            .iter()
            .map(|device| device.alloc::<u64>(PEER_POSTBOX_WORDS))
            .collect::<Result<Vec<_>, _>>()?;
        let postbox_refs: Vec<&Buffer<u64>> = postboxes.iter().collect();
        let mut devices = Vec::with_capacity(parts.len());
        for (
            d,
            (
                (
                    (halo, inbox, tails, capacity, state, (mirrors, mirror_bounds, _, share_next)),
                    device,
                ),
                postbox,
            ),
        ) in parts
            .into_iter()
            .zip(context.devices())
            .zip(postboxes.iter())
            .enumerate()
        {
            devices.push(FusedDevice {
                share_next,
                halo,
                _inbox: inbox,
                tails,
                capacity,
                mirrors,
                mirror_bounds,
                state,
                peers: device.upload(block_words(&block))?,
                postbox: postbox.clone(),
                postboxes: group.peer_table(d, &postbox_refs)?,
                kernel: FusedKernel::load(
                    device.stream().raw().as_ref(),
                    push.fused_blocks_per_sm,
                    group.members_on_gpu(d),
                )?,
            });
            device.stream().synchronize()?;
        }
        let barrier = options.fused_tuning.barrier;
        let settings = FusedSettings {
            sweep_divisor: storages
                .first()
                .map_or(0, CudaPageRankStorage::sweep_divisor),
            max_batch: u32::try_from(options.max_batch.max(1)).unwrap_or(u32::MAX),
            hub_capacity: 0, // each device's own, at launch
            spin_ns: barrier.spin_ns,
            barrier_flags: u32::from(barrier.fenced) | (u32::from(barrier.tagged) << 1),
            flags: if push.fused_fence_per_round {
                PRF_FLAG_FENCE_PER_ROUND
            } else {
                0
            } | if push.interleave_gather {
                PRF_FLAG_GATHER_INTERLEAVE
            } else {
                0
            },
        };
        Ok(FusedRuns {
            group,
            devices,
            settings,
        })
    }

    /// One run on every device of `context` over `storages` (reset here); returns the
    /// engine-shaped counters and each device's profile.
    pub(crate) fn run(
        &self,
        context: &Context,
        storages: &[CudaPageRankStorage],
        options: &WorklistOptions,
    ) -> Result<(WorklistStats, Vec<DeviceProfile>), WorklistError> {
        // Held until every member completed (`wait` below): one device-driven run at a time.
        let _run = self.group.begin_run()?;
        let started = Instant::now();
        // Again while a member's start was cancelled (PeerGroup::run_started).
        let ((spans, timed_out), _) = self.group.run_started(
            || -> Result<(), WorklistError> {
                for ((storage, fused), device) in
                    storages.iter().zip(&self.devices).zip(context.devices())
                {
                    storage.reset(device)?;
                    let s = device.stream();
                    // A run that failed may have left mass in the halo.
                    s.fill(&fused.halo, 0u32)?;
                    s.fill(&fused.tails, 0u32)?;
                    s.fill(&fused.state, 0u32)?;
                    s.fill(&fused.postbox, 0u64)?;
                    s.synchronize()?;
                }
                Ok(())
            },
            || self.launch_and_wait(context, storages, options, started),
        )?;
        let elapsed = started.elapsed();
        let device_time = Event::longest_span(&spans)?;
        let mut stats = WorklistStats {
            elapsed,
            device_time: Some(device_time),
            ..WorklistStats::default()
        };
        let states = self
            .devices
            .iter()
            .zip(context.devices())
            .map(|(fused, device)| state_block(&device.download(&fused.state)?))
            .collect::<Result<Vec<_>, Error>>()?;
        let progress = self.progress(&states);
        let mut profiles = Vec::with_capacity(self.devices.len());
        let mut failure: Option<(u32, WorklistError)> = None;
        for (d, (((storage, fused), device), w)) in storages
            .iter()
            .zip(&self.devices)
            .zip(context.devices())
            .zip(&states)
            .enumerate()
        {
            let rounds = u64::from(w.rounds);
            let sweeps = u64::from(w.sweeps);
            stats.devices.push(DeviceStats {
                rounds,
                items_processed: w.pushed,
                items_sent: w.sent,
                items_received: w.received,
                ..DeviceStats::default()
            });
            profiles.push(DeviceProfile {
                rounds,
                sweep_rounds: sweeps,
                worklist_rounds: rounds - sweeps,
                items_received: w.received,
                exchanges: u64::from(w.exchanges),
                syncs: 1,
                finish_time: elapsed,
                phases: Some(phase_times(w)),
                fused_grid: Some(fused.kernel.grid()),
                mirror_values_sent: w.mirror_sent,
                ..DeviceProfile::default()
            });
            // The root cause first: an overflow, then a failed exchange, then an abort.
            let found = match w.stop {
                0 | PRF_STOP_PEER => None,
                PRF_STOP_OVERFLOW => Some((
                    0,
                    match storage.worklist_overflow(device)? {
                        Some(e) => e.into(),
                        None => Error::CapacityExceeded {
                            what: "fused PageRank inbox (one entry per in-cut vertex)".into(),
                            capacity: u64::from(fused.capacity),
                            needed: u64::from(w.inbox_overflow),
                            setting: "none: the inbox holds every in-cut vertex (a bug)",
                        }
                        .into(),
                    },
                )),
                PRF_STOP_EXCHANGE if !timed_out => {
                    let mut e = PeerGroup::failure(d, w.peer_status);
                    if let Error::PeerExchangeFailed { progress: p, .. } = &mut e {
                        p.clone_from(&progress);
                    }
                    Some((1, e.into()))
                }
                PRF_STOP_EXCHANGE | PRF_STOP_ABORTED => Some((2, time_limit_error(options))),
                other => Some((
                    1,
                    Error::invalid("fused PageRank stop word", other, "a PrfStop value (a bug)")
                        .into(),
                )),
            };
            if let Some((rank, e)) = found
                && failure.as_ref().is_none_or(|(r, _)| rank < *r)
            {
                failure = Some((rank, e));
            }
        }
        if let Some((_, e)) = failure {
            return Err(e);
        }
        if timed_out {
            return Err(time_limit_error(options));
        }
        Ok((stats, profiles))
    }

    /// Launches every member (each on its own stream, between two timing events) and waits
    /// for all of them; returns each member's events and whether the time limit stopped them.
    /// A failed launch sets the abort word so that the members already running leave.
    fn launch_and_wait(
        &self,
        context: &Context,
        storages: &[CudaPageRankStorage],
        options: &WorklistOptions,
        started: Instant,
    ) -> Result<(Vec<(Event, Event)>, bool), WorklistError> {
        let mut spans = Vec::with_capacity(self.devices.len());
        for (d, ((storage, fused), device)) in storages
            .iter()
            .zip(&self.devices)
            .zip(context.devices())
            .enumerate()
        {
            let launched = (|| -> Result<(Event, Event), Error> {
                let pull = storage.pull_buffers().ok_or_else(|| {
                    Error::invalid(
                        "driver (--driver)",
                        "fused",
                        "pull sweeps (--sweep pull), or --driver host",
                    )
                })?;
                let wl = storage.wl_buffers();
                let settings = FusedSettings {
                    hub_capacity: wl.hub_capacity,
                    ..self.settings
                };
                let launch = FusedLaunch {
                    pr: storage.pr_buffers(),
                    wl,
                    pull,
                    peers: fused.peers.raw(),
                    state: fused.state.raw(),
                    settings,
                    group: self.group.args(d)?,
                    postboxes: fused.postboxes.raw(),
                    mirrors: fused.mirrors.raw(),
                    mirror_bounds: fused.mirror_bounds,
                    share_next: fused.share_next.as_ref().map(Buffer::raw),
                };
                let stream = device.stream();
                let t0 = device.record_timing(stream)?;
                launch_fused(stream.raw().as_ref(), &fused.kernel, &launch)?;
                Ok((t0, device.record_timing(stream)?))
            })();
            match launched {
                Ok(span) => spans.push(span),
                Err(e) => {
                    let launched: Vec<&Event> = spans.iter().map(|(_, t1)| t1).collect();
                    self.group.abandon_launch(&launched)?;
                    return Err(e.into());
                }
            }
        }
        let ends: Vec<&Event> = spans.iter().map(|(_, t1)| t1).collect();
        let timed_out = self
            .group
            .wait_members(&ends, options.time_limit, started)?;
        Ok((spans, timed_out))
    }

    /// Where every member stood at its end, for an exchange failure's message: rounds,
    /// exchanges and grid-barrier arrivals (a member that never started shows none; one
    /// whose blocks disagree, arrivals that are not a multiple of its grid).
    fn progress(&self, states: &[PageRankStateBlock]) -> String {
        let members: Vec<String> = states
            .iter()
            .zip(&self.devices)
            .enumerate()
            .map(|(d, (w, fused))| {
                format!(
                    "device {d}: {} rounds, {} exchanges, {} block arrivals at grid barriers \
                     of {} blocks",
                    w.rounds,
                    w.exchanges,
                    w.barrier.count,
                    fused.kernel.grid()
                )
            })
            .collect();
        format!(" ({})", members.join("; "))
    }
}

/// The phase times of a state block read back.
fn phase_times(w: &PageRankStateBlock) -> FusedPhaseTimes {
    let [take, mirror, hubs, gather, worklist, exchange, drain] = w.times.map(Duration::from_nanos);
    FusedPhaseTimes {
        sweep_take: take,
        mirror,
        hubs,
        gather,
        worklist,
        exchange,
        drain,
    }
}

fn time_limit_error(options: &WorklistOptions) -> WorklistError {
    WorklistError::TimedOut {
        limit: options.time_limit.unwrap_or_default(),
        outstanding: 0,
    }
}
