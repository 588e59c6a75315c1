//! The distributed worklist engine: one driver thread per device over the ring.

use std::sync::Arc;
use std::time::Duration;

use groute_core::{Context, Error};

use crate::driver::run_workers;
use crate::error::WorklistError;
use crate::host_worker::HostWorker;
use crate::split::SplitOps;
use crate::traversal::{FusedBarrier, FusedMode};

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
    /// Blocks of the fused kernel (`--fused-grid`, at most every block that fits resident);
    /// `None`: one per multiprocessor on a sparse graph (at most
    /// [`FUSED_SPARSE_MAX_AVERAGE_DEGREE`](crate::traversal::FUSED_SPARSE_MAX_AVERAGE_DEGREE)
    /// arcs per vertex), every resident block on a denser one. Device-driven members sharing
    /// a GPU ([`FusedDriver::Device`](crate::traversal::FusedDriver::Device) on virtual
    /// devices) have their share: of k members, a k-th of the multiprocessors by default, and
    /// at most a k-th of the resident blocks (or clusters) less one.
    pub fused_grid: Option<u32>,
    /// The fused kernel's single-block mode (`--fused-solo-max`): a batch of at most this many
    /// items is expanded by one block alone, level after level without grid barriers, until
    /// the frontier outgrows it. `Some(0)`: off. `None`: on a sparse graph the fused kernel's
    /// threads per block ([`fused_block`](WorklistOptions::fused_block)): one item per thread,
    /// a single pass; off on a denser one.
    pub fused_solo_max: Option<u32>,
    /// Threads per block of the fused kernel (`--fused-block`): a multiple of 32 from 32 to
    /// 1,024. `None`: [`FUSED_SPARSE_BLOCK`](crate::traversal::FUSED_SPARSE_BLOCK) on a sparse
    /// graph, [`FUSED_BLOCK`](crate::traversal::FUSED_BLOCK) on a denser one. Blocks over 256
    /// threads run the kernel's register-capped build (`<algo>_fused_wide`).
    pub fused_block: Option<u32>,
    /// How the fused kernel's blocks wait at its grid barrier (`--fused-spin-ns`,
    /// `--fused-fenced-barrier`).
    pub fused_barrier: FusedBarrier,
    /// The fused kernel relaxes low-degree lists (under 32 arcs, a thread each) with atomicMin
    /// at once instead of first reading the head's value and trying only improvements
    /// (`--fused-direct-min`): one memory round trip less per level of a road-like graph, more
    /// atomics on dense frontiers. Same results either way.
    pub fused_direct_min: bool,
    /// The fused kernel's single-block mode keeps the next level's items, with their
    /// adjacency ranges, in a shared-memory frontier (`--fused-solo-shared`, on by default),
    /// so a level starts at the targets loads instead of reading the worklist and then the
    /// offsets: two dependent memory round trips less per level of a road-like graph. The
    /// producer loads an improved head's range beside its atomicMin. The frontier holds two
    /// items per thread of blocks over 256 threads (none in the narrow build), so a
    /// [`fused_solo_max`](WorklistOptions::fused_solo_max) of up to twice the block runs both
    /// rounds of a level from it. Off for graphs of 2^32 arcs or more (the frontier holds
    /// 32-bit arc positions). Same results either way.
    pub fused_solo_shared: bool,
    /// [`fused_direct_min`](WorklistOptions::fused_direct_min) for the single-block mode's
    /// levels only (`--fused-solo-direct-min`): the grid's levels keep the filtering load.
    pub fused_solo_direct_min: bool,
    /// The fused kernel's single-block mode runs SOLO-ASYNC (`--fused-solo-async`, off by
    /// default): block 0 works through a barrier-free FIFO queue in shared memory, each warp
    /// claiming and expanding items on its own, instead of levels separated by
    /// `__syncthreads` (kernels/include/solo_queue.cuh). Label-correcting: an item may be
    /// expanded more than once (counted in the processed items); same results. Used on one
    /// device (with or without soft priority), blocks over 256 threads (the wide build holds the ring)
    /// and graphs of fewer than 2^32 arcs; the single-block mode runs levels elsewhere. A
    /// phase counts as one round.
    pub fused_solo_async: bool,
    /// The fused kernel's single-block mode runs on a cluster of
    /// [`SOLO_CLUSTER`](crate::traversal::SOLO_CLUSTER) blocks (`--fused-cluster`): four
    /// multiprocessors run each level, separated by the cluster's hardware barrier, and
    /// batches of up to four blocks' threads stay out of the grid
    /// (kernels/include/cluster_solo.cuh). Used where the device has thread-block clusters
    /// (compute capability 9.0 or later), on one device or in the members of a device-driven
    /// run, with blocks over 256 threads, the shared frontier on, SOLO-ASYNC off, a grid of
    /// whole clusters, and graphs whose longest adjacency list has fewer than
    /// [`CLUSTER_MAX_DEGREE`](crate::traversal::CLUSTER_MAX_DEGREE) arcs (the mode expands
    /// every list on one thread); the single block runs elsewhere (and in bounded rounds).
    /// `None`: on, as measured on a road grid of 4.2M vertices (every level on the cluster):
    /// on one H200 BFS 14.5 ms against 21.8 on one block, SSSP 17.7 against 28.8; on 2 H200s
    /// device-driven BFS 17.0 against 25.2, SSSP 19.9 against 29.0. Same results either way.
    pub fused_cluster: Option<bool>,
    /// Levels of one bounded fused launch on several devices (`--fused-round-levels`, with
    /// `--fused`): the device returns to its host (to send, receive and count) after this
    /// many levels at most. `None`: [`FUSED_ROUND_LEVELS`](crate::traversal::FUSED_ROUND_LEVELS).
    pub fused_round_levels: Option<u32>,
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
            fused_grid: None,
            fused_round_levels: None,
            fused_driver: crate::traversal::FusedDriver::Auto,
            fused_solo_max: None,
            fused_block: None,
            fused_barrier: FusedBarrier::default(),
            fused_direct_min: false,
            fused_solo_shared: true,
            fused_solo_direct_min: false,
            fused_solo_async: false,
            fused_cluster: None,
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
    /// Items put on the ring (remote items produced here plus items passed on).
    pub items_sent: u64,
    /// Segments (messages) sent; the transport may split each into packets.
    pub segments_sent: u64,
    /// Items received from the ring predecessor.
    pub items_received: u64,
    /// Received items passed on to the successor.
    pub items_passed: u64,
    /// Received items dropped by `on_receive`.
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
    /// ([`WorklistOptions::fused_cluster`]).
    pub solo_cluster_rounds: u64,
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
    let workers = context
        .devices()
        .iter()
        .zip(programs)
        .zip(&seeds)
        .map(|((device, program), seed)| {
            HostWorker::new(
                device,
                Arc::clone(program),
                seed,
                options.wl_capacity,
                options.send_capacity,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    run_workers(context, workers, options)
}
