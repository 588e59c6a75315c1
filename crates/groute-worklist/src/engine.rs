//! The distributed worklist engine: one driver thread per device over the ring.

use std::sync::Arc;
use std::time::Duration;

use groute_core::{Context, Error};

use crate::driver::{SharedRun, run_workers, run_workers_shared};
use crate::error::WorklistError;
use crate::host_worker::HostWorker;
use crate::ring::RingTransport;
use crate::split::SplitOps;
use crate::traversal::{FusedMode, FusedTuning};

/// The local item type of a program.
pub type LocalOf<P> = <<P as DeviceProgram>::Ops as SplitOps>::Local;
/// The packed item type of a program.
pub type PackedOf<P> = <<P as DeviceProgram>::Ops as SplitOps>::Packed;

/// What the host engine ([`run`]) runs on one device: split operations and an expand kernel.
///
/// One instance per device; it owns that device's buffers (graph, value array). Algorithms do
/// not implement it: they implement [`WorklistAlgorithm`](crate::WorklistAlgorithm), whose
/// host executor ([`HostAlgorithm`](crate::algorithm::HostAlgorithm)) does. The engine's own
/// tests implement it directly, with workloads that are not graph algorithms.
pub trait DeviceProgram: Send + Sync + 'static {
    /// The split operations of this device.
    type Ops: SplitOps + Clone + 'static;

    /// This device's split operations.
    fn split_ops(&self) -> Self::Ops;

    /// One expand round over `items` (host backend: called inside a host kernel, may use
    /// rayon): returns every item produced, mine or not; the engine splits them.
    fn expand(&self, items: &[LocalOf<Self>]) -> Vec<LocalOf<Self>>;

    /// The local worklist capacity to use when the options leave it to the program.
    fn capacity_hint(&self) -> usize;

    /// The arcs to other devices' vertices that this program's rounds relaxed since it was
    /// last asked, leaving zero; `None` (the default): not counted.
    fn take_cut_arcs(&self) -> Option<u64> {
        None
    }

    /// How many items the device's *initial sweep* processes: a first round over work the
    /// program holds implicitly (PageRank's first pass over every owned vertex, run as a
    /// range) instead of as worklist items, so no worklist of every vertex is built. 0 (the
    /// default): no sweep.
    ///
    /// Termination: a device with a sweep adds one *token* item to the seeds; the sweep
    /// consumes the token and reports what it produced in the same single update as any
    /// other round, so the count cannot reach zero before every sweep has run.
    fn initial_sweep_len(&self) -> u64 {
        0
    }

    /// The initial sweep (called once, before any other round, when
    /// [`initial_sweep_len`](DeviceProgram::initial_sweep_len) is not 0; host backend: inside
    /// a host kernel): returns every item produced, like [`expand`](DeviceProgram::expand).
    fn expand_initial_sweep(&self) -> Vec<LocalOf<Self>> {
        Vec::new()
    }
}

/// Settings of a distributed worklist run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorklistOptions {
    /// Items each local worklist holds (`--wl-capacity`); `None`: the program's hint.
    pub wl_capacity: Option<usize>,
    /// Items one device may send around the ring per round (`--send-capacity`); `None`: the
    /// worklist capacity.
    pub send_capacity: Option<usize>,
    /// Items per ring packet at most (`--packet-size`); larger segments are split. Runs on
    /// graphs of fewer than 8 times as many vertices use smaller packets
    /// ([`WorklistOptions::for_graph`]), and a ring of one device, which carries nothing,
    /// packets of one item.
    pub packet_size: usize,
    /// Receive buffers of `packet_size` items per device on the ring (packets in flight).
    pub ring_buffers: usize,
    /// How CUDA min traversals use the fused kernel (`--fused` / `--no-fused`;
    /// [`FusedMode::Auto`]: one persistent kernel on one device, bounded fused rounds on
    /// several over a sparse graph). The host backend and host-kernel
    /// programs ignore it.
    pub fused: FusedMode,
    /// The fused persistent kernel's tuning (the examples' `--fused-*` flags): its launch
    /// shape, grid barrier and modes, for benchmarks and experiments. None of it changes a
    /// result.
    #[doc(hidden)]
    pub fused_tuning: FusedTuning,
    /// How fused runs on several devices are driven (`--fused-driver`): device-driven (one
    /// persistent kernel per device, `traversal/fused_peer.rs`) where the devices allow it,
    /// else host-driven bounded rounds ([`FusedDriver::Auto`](crate::traversal::FusedDriver)).
    /// [`FusedDriver::Device`](crate::traversal::FusedDriver) on one device runs the members'
    /// kernel in a group of one.
    pub fused_driver: crate::traversal::FusedDriver,
    /// Items popped from the local worklist per round (`--max-batch`).
    pub max_batch: usize,
    /// How long an idle driver waits for a packet before re-checking termination.
    pub idle_wait: Duration,
    /// Abort the run with [`WorklistError::TimedOut`] after this long (`None`: never). Without
    /// a limit a run still ends: items that circle the ring because the split keeps them
    /// nowhere end it with [`WorklistError::NoProgress`].
    pub time_limit: Option<Duration>,
    /// Soft priority (`--prio-delta`): the width of a priority band. Items whose priority
    /// ([`SplitOps::get_prio`]) is not below the current threshold are deferred to a
    /// low-priority list; when no device has other work left, the threshold advances by at
    /// least this much (see the crate docs). `Some(0)`: off. `None`: the algorithm's default
    /// (off for the engine itself and for BFS; SSSP picks one from the arc weights).
    pub prio_delta: Option<u32>,
}

impl WorklistOptions {
    /// Whether the host backend runs these options device-driven, as one persistent member
    /// per device (`members.rs`, the host form of the CUDA device-driven traversal): the fused
    /// mode [`On`](FusedMode::On) with any driver but
    /// [`Host`](crate::traversal::FusedDriver::Host), or the driver
    /// [`Device`](crate::traversal::FusedDriver::Device) with the fused mode not
    /// [`Off`](FusedMode::Off). Elsewhere the host backend runs host-driven rounds.
    pub fn device_driven_on_host(&self) -> bool {
        use crate::traversal::FusedDriver;
        match (self.fused, self.fused_driver) {
            (FusedMode::Off, _) | (_, FusedDriver::Host) => false,
            (FusedMode::On, _) => true,
            (FusedMode::Auto, driver) => driver == FusedDriver::Device,
        }
    }

    /// These options for a graph of `num_vertices` vertices: packets of at most an eighth of
    /// the vertices (rounded up to a power of two, at least 4,096 items), so that the ring's
    /// receive buffers, allocated on every device for the whole run, stay small beside a
    /// small graph's part.
    pub fn for_graph(&self, num_vertices: usize) -> WorklistOptions {
        let fit = (num_vertices.max(1).next_power_of_two() / 8).max(1 << 12);
        WorklistOptions {
            packet_size: self.packet_size.min(fit),
            ..self.clone()
        }
    }
}

impl Default for WorklistOptions {
    fn default() -> Self {
        WorklistOptions {
            wl_capacity: None,
            send_capacity: None,
            packet_size: 1 << 18,
            ring_buffers: 4,
            fused: FusedMode::Auto,
            fused_tuning: FusedTuning::default(),
            fused_driver: crate::traversal::FusedDriver::Auto,
            max_batch: 1 << 20,
            idle_wait: Duration::from_millis(2),
            time_limit: None,
            prio_delta: None,
        }
    }
}

/// Counters of one device's driver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceStats {
    /// Expand rounds run.
    pub rounds: u64,
    /// Items popped from the local worklist and expanded.
    pub items_processed: u64,
    /// Items the expand rounds produced (before the split).
    pub items_produced: u64,
    /// Items put on the ring (remote items produced here plus items passed on). Device-driven
    /// runs: the items stored into the next device's inbox.
    pub items_sent: u64,
    /// Segments (messages) sent; the transport may split each into packets. Device-driven runs
    /// (`traversal/fused_peer.rs`), which have no segments: the batches published into the
    /// next device's inbox (each advance of the inbox end the device released to it: the sends
    /// of a grid phase, or of a few single-block levels).
    pub segments_sent: u64,
    /// Items received from the ring predecessor.
    pub items_received: u64,
    /// Received items passed on to the successor (device-driven runs: not counted, 0).
    pub items_passed: u64,
    /// Received items dropped by `on_receive` (device-driven runs: not counted, 0).
    pub items_dropped: u64,
    /// Kept items deferred to the low-priority list by a split (soft priority).
    pub items_deferred: u64,
    /// Deferred items dropped at re-examination because a newer copy was queued.
    pub items_stale_dropped: u64,
    /// Soft-priority epochs this device re-examined its low list for.
    pub epochs: u64,
    /// Of `rounds`, the levels the fused kernel ran in its single-block mode (0 elsewhere).
    pub solo_rounds: u64,
    /// Of `solo_rounds`, the levels it ran on a cluster of blocks
    /// ([`FusedTuning::cluster`](crate::traversal::FusedTuning::cluster)).
    pub solo_cluster_rounds: u64,
    /// Updates of other devices' vertices that this device's rounds put on the ring, after
    /// combining (of `items_sent`, those not passed on). Device-driven runs on two devices:
    /// `items_sent`, since nothing is passed on there (each an improvement of this device's
    /// halo copy, the `Min` executors' combining); on more, not counted apart (0).
    pub remote_updates: u64,
    /// Arcs to other devices' vertices that this device's rounds relaxed (before
    /// combining); `None` where the executor does not count them (the CUDA kernels, device-driven
    /// runs included: a count on every relaxed arc would cost the expansion time).
    pub cut_arcs_traversed: Option<u64>,
}

/// Counters of a whole run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorklistStats {
    /// Per device.
    pub devices: Vec<DeviceStats>,
    /// Wall time of the run (drivers started to last driver done).
    pub elapsed: Duration,
    /// Items some driver saw after the run was declared over: always 0 unless the
    /// termination protocol is broken (tests assert it).
    pub late_items: u64,
    /// Soft-priority epochs: how often the threshold advanced (0 with priority off).
    pub epochs: u64,
    /// The run's time on the devices ([`groute_core::DeviceTimer`]: timing events on every
    /// device's stream from the drivers' start until every driver has finished, max over
    /// devices); `None` on the host backend.
    pub device_time: Option<Duration>,
    /// The run was device-driven (`traversal/fused_peer.rs`: one persistent launch of the
    /// members' kernel per device, [`FusedDriver`](crate::traversal::FusedDriver)), on one
    /// device in a group of one.
    pub device_driven: bool,
    /// Times the run started again after a device worklist or outgoing buffer sized by the
    /// solver overflowed and grew (CUDA min traversals; the statistics are the last
    /// attempt's).
    pub restarts: u32,
    /// The band of soft priority the run used (0: off): the options' `prio_delta`, or where
    /// they leave it open the algorithm's [`default_band`](crate::WorklistAlgorithm::default_band)
    /// (the min traversals' solver asks for it).
    pub prio_delta: u32,
}

impl WorklistStats {
    /// Largest number of rounds on any device.
    pub fn rounds(&self) -> u64 {
        self.devices.iter().map(|d| d.rounds).max().unwrap_or(0)
    }

    /// Largest number of single-block rounds of the fused kernel on any device.
    pub fn solo_rounds(&self) -> u64 {
        self.devices
            .iter()
            .map(|d| d.solo_rounds)
            .max()
            .unwrap_or(0)
    }

    /// Largest number of single-block rounds the fused kernel ran on a cluster, on any device.
    pub fn solo_cluster_rounds(&self) -> u64 {
        self.devices
            .iter()
            .map(|d| d.solo_cluster_rounds)
            .max()
            .unwrap_or(0)
    }

    /// Items processed on all devices.
    pub fn items_processed(&self) -> u64 {
        self.devices.iter().map(|d| d.items_processed).sum()
    }

    /// Items produced (appended to a local worklist) on all devices.
    pub fn items_produced(&self) -> u64 {
        self.devices.iter().map(|d| d.items_produced).sum()
    }

    /// Updates of remote vertices put on the ring by all devices, after combining.
    pub fn remote_updates(&self) -> u64 {
        self.devices.iter().map(|d| d.remote_updates).sum()
    }

    /// Whether the run counted its remote updates apart from the items it passed on: every
    /// run but a device-driven one on more than two devices, whose kernels count only the
    /// items sent (`traversal/fused_peer.rs`; on two devices nothing is passed on).
    pub fn counts_remote_updates(&self) -> bool {
        !self.device_driven || self.devices.len() <= 2
    }

    /// Arcs to remote vertices relaxed on all devices; `None` unless every device counted.
    pub fn cut_arcs_traversed(&self) -> Option<u64> {
        self.devices.iter().map(|d| d.cut_arcs_traversed).sum()
    }

    /// Segments (messages) put on the ring by all devices.
    pub fn segments_sent(&self) -> u64 {
        self.devices.iter().map(|d| d.segments_sent).sum()
    }

    /// Items put on the ring by all devices.
    pub fn items_sent(&self) -> u64 {
        self.devices.iter().map(|d| d.items_sent).sum()
    }

    /// Items taken off the ring by all devices.
    pub fn items_received(&self) -> u64 {
        self.devices.iter().map(|d| d.items_received).sum()
    }

    /// Items deferred to a low-priority list by a split, on all devices.
    pub fn items_deferred(&self) -> u64 {
        self.devices.iter().map(|d| d.items_deferred).sum()
    }
}

/// Runs a distributed worklist: `programs[d]` on device `d`, `seeds[d]` its initial items,
/// until the termination count reaches zero. Host backend: each program's host kernels run
/// on its device's executor streams (a [`DeviceWorker`](crate::DeviceWorker) implemented
/// once, in `host_worker.rs`); the control plane is [`run_workers`](crate::run_workers).
pub fn run<P: DeviceProgram>(
    context: &Context,
    programs: &[Arc<P>],
    seeds: Vec<Vec<LocalOf<P>>>,
    options: &WorklistOptions,
) -> Result<WorklistStats, WorklistError> {
    let workers = host_workers(context, programs, &seeds, options)?;
    run_workers(context, workers, options)
}

/// [`run`] as one process's share of a run spanning several
/// ([`run_workers_shared`](crate::run_workers_shared)): this process's devices over
/// `transport`, which links them to the other processes' devices on the ring.
pub fn run_shared<P: DeviceProgram, T: RingTransport<PackedOf<P>>>(
    context: &Context,
    programs: &[Arc<P>],
    seeds: Vec<Vec<LocalOf<P>>>,
    transport: &T,
    shared: SharedRun<'_>,
    options: &WorklistOptions,
) -> Result<WorklistStats, WorklistError> {
    let workers = host_workers(context, programs, &seeds, options)?;
    run_workers_shared(context, workers, transport, shared, options)
}

/// One host worker per device (host backend only).
fn host_workers<'a, P: DeviceProgram>(
    context: &'a Context,
    programs: &[Arc<P>],
    seeds: &[Vec<LocalOf<P>>],
    options: &WorklistOptions,
) -> Result<Vec<HostWorker<'a, P>>, WorklistError> {
    let n = context.num_devices();
    if programs.len() != n || seeds.len() != n {
        return Err(Error::invalid(
            "programs per device",
            programs.len(),
            format!("give one program and one seed list per device ({n} devices)"),
        )
        .into());
    }
    if context.devices().iter().any(|d| !d.stream().is_host()) {
        return Err(Error::Unsupported {
            operation: "host-kernel worklist programs (CUDA programs implement DeviceWorker)",
            backend: "cuda",
        }
        .into());
    }
    context
        .devices()
        .iter()
        .zip(programs)
        .zip(seeds)
        .map(|((device, program), seed)| {
            HostWorker::new(
                device,
                Arc::clone(program),
                seed,
                options.wl_capacity,
                options.send_capacity,
            )
        })
        .collect()
}
