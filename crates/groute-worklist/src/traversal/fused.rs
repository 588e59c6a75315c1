//! The fused persistent kernel of the CUDA min traversals: on one device the whole round loop
//! runs in one cooperative launch of `<algo>_fused` (`kernels/include/fused.cuh`), rounds
//! separated by a grid-wide barrier instead of a launch and a control-block read-back (the
//! non-fused worker costs one launch, one 32-byte copy and one stream synchronisation per
//! round, which dominates on graphs of thousands of shallow rounds: road networks).
//!
//! ## Protocol
//!
//! - **Start.** The run is reset exactly as for the non-fused worker (values, control block,
//!   seeds at worklist positions `[0, k)`), the state block is zeroed with its batch end at `k`,
//!   its first phase (solo, expand, or done when `k = 0`) and threshold set, the abort word
//!   cleared; then one cooperative launch of the graph's default shape (`fused_tuning.rs`:
//!   one block per multiprocessor on sparse graphs, every resident block on dense ones) or
//!   `fused_grid` blocks, at most [`groute_core::cuda::CudaFunction::max_resident_grid`]
//!   (device-driven members sharing a GPU: their share of both, `MemberShare`).
//! - **Phases.** The kernel runs phases separated by a grid barrier; the block that arrives
//!   last accounts for the phase and picks the next one into the state block, which every
//!   block reads after the barrier (so every decision is grid-uniform; the first version read
//!   the live hub counter instead and hung on kron21, see `fused.cuh`). An *expand* phase
//!   expands the batch `[start, end)` over the whole grid with the nested load balancing of
//!   the non-fused expand, appending improved vertices behind `end`; the next batch is
//!   `[end, new end)`. Hubs listed by a level get a *hubs* phase (tiles over the grid). An
//!   empty batch with an empty low list ends the kernel: no item exists anywhere (one device
//!   holds every item, and an improved vertex is appended before the barrier that closes its
//!   phase), so the traversal is complete.
//! - **Single-block mode.** A batch of at most `fused_solo_max` items (by default one per
//!   thread of a block, [`FUSED_BLOCK`](super::FUSED_BLOCK) unless `fused_block` says
//!   otherwise) is a *solo* phase: block 0 alone runs level after level, separated by
//!   `__syncthreads()` instead of grid barriers, while the other blocks wait in the barrier;
//!   it returns to the grid when the next batch is larger, empty, met a hub (which it
//!   expands itself) or overflowed. It counts the control words in a shared-memory copy
//!   (appends by shared atomics, no L2 round trip at the end of a level) and writes them back
//!   before it arrives. With `fused_solo_shared` (the default; graphs of fewer than 2^32 arcs;
//!   the wide build only, blocks over 256 threads) every vertex block 0 appends also goes,
//!   with its adjacency range, to a shared-memory frontier (`kernels/include/
//!   solo_frontier.cuh`) at index (worklist position - batch end), the range loaded beside
//!   the atomicMin that improved it; the next level reads its items there and starts at the
//!   targets loads (two dependent round trips less: the worklist load, then the offsets). It
//!   holds two items per thread (a `fused_solo_max` of up to twice the block runs its second
//!   round from it too; larger levels read the rest from the worklist). The
//!   worklist still gets every item, so leaving the mode needs nothing. A level costs two
//!   `__syncthreads()`: one after every thread read its item (before any append), one after
//!   the appends, after which every thread reads the same control words and takes the same
//!   decision.
//!   Race-free because the waiting blocks touch nothing until released, and the barrier's
//!   fences order block 0's writes before the grid's next reads (and the grid's before block
//!   0's). Its levels count as rounds, its items as processed, exactly as grid levels do.
//!   With `fused_solo_async` (one device, the wide build, graphs of fewer than 2^32 arcs)
//!   block 0 runs *SOLO-ASYNC* instead of levels (`kernels/include/solo_queue.cuh`): a
//!   barrier-free FIFO queue in shared memory (the frontier's arrays as a ring of 2,048
//!   entries), each warp claiming up to 32 items at the head and appending improved heads at
//!   the tail on its own, label-correcting, until no item is queued or in flight; it leaves
//!   early (more than `fused_solo_max` items queued, the ring full, a hub, an abort) with
//!   every unexpanded item written to the worklist after the batch, so the hand-over is
//!   SOLO's. A phase counts as one round; its items (repeats included) as processed, the
//!   items it appended to its ring as produced (the kernel counts them apart: the worklist
//!   never holds them).
//!   With [`fused_cluster`](crate::WorklistOptions::fused_cluster) (by default, where the
//!   device has thread-block clusters and every list is under
//!   [`CLUSTER_MAX_DEGREE`](super::CLUSTER_MAX_DEGREE) arcs) the phase runs on the
//!   [`SOLO_CLUSTER`](super::SOLO_CLUSTER) blocks of cluster 0 of the `<algo>_fused_cluster`
//!   build instead, levels separated by the cluster's hardware barrier
//!   (`kernels/include/cluster_solo.cuh`): each warp appends to one block's shared-memory
//!   entries through distributed shared memory, the mode lists only the batch it leaves and
//!   counts the other items it produced as unlisted, as SOLO-ASYNC does. The launch is
//!   cooperative with clusters (`cuLaunchKernelEx`), its grid whole clusters
//!   ([`CudaFunction::max_active_clusters`](groute_core::cuda::CudaFunction::max_active_clusters)).
//! - **The barrier.** One arrival per block on a counter that is never reset (blocks count
//!   barriers locally, so arriving reads nothing); the last block's action reads the state
//!   line and the control words in one batched round trip, decides, publishes the next
//!   phase as a release record tagged with the barrier's generation, and writes the state
//!   line back only after the release; the others poll the generation word and then read the
//!   record, or poll the tagged record itself ([`FusedBarrier`](super::FusedBarrier): with or
//!   without `__nanosleep`, PTX acquire/release operations or fences).
//!   `examples/fused_barrier.rs` times the barrier alone ([`time_fused_barrier`](super::time_fused_barrier)).
//! - **Safety of the barrier.** The launch is cooperative: the driver refuses a grid whose
//!   blocks cannot all be resident, so every block a barrier waits for is running.
//! - **One kernel per device at a time.** A launch holds every block it can make resident
//!   (with 1,024-thread blocks, every multiprocessor's registers), so two fused runs on one
//!   device (two solvers driven from two threads) run one after the other, never side by side,
//!   and a time limit counts the wait for the other.
//! - **Errors.** A worklist or low-list overflow stops the kernel at the next barrier and
//!   fails the run with [`Error::CapacityExceeded`] naming `wl_capacity (--wl-capacity)`;
//!   nothing is lost silently. With a time limit the host polls the kernel's completion; past
//!   the limit it sets the abort word (device-mapped pinned host memory,
//!   [`Context::alloc_mapped`]) that the kernel reads every 64 phases (and every 64 levels of
//!   a solo phase), waits for the kernel, and fails the run with [`WorklistError::TimedOut`]:
//!   whenever it asked, even if the kernel finished before its next poll (as the non-fused
//!   driver fails once it sees its deadline pass), and whenever the kernel reports that it
//!   stopped on the word. `outstanding` counts the items the kernel left (0 when it
//!   finished): seeds plus produced less processed, produced being the worklist's end plus
//!   the items SOLO-ASYNC produced in its ring without listing them (`FUSED_UNLISTED`). Nothing on the host blocks while the kernel runs: both builds are loaded when
//!   the solver is built (the driver's lazy loading would load them on first use, which may
//!   wait for running kernels), and no pinned host memory is left to free behind the launch
//!   (freeing it waits for the device: `Device::upload` frees its staging before returning,
//!   and the run's own stream is synchronised before the launch). `GROUTE_TRACE_FUSED=1`
//!   prints the host's steps of every run with their times (stderr; `fused_trace.rs`) and,
//!   after it, its phases and levels (for a device-driven run, per member).
//!   `GROUTE_NVRTC_OPTIONS` adds NVRTC options to every kernel's compilation
//!   (`groute_core::cuda::compile_options`), for experiments on the kernels' compile-time
//!   settings without rebuilding. Two of them add diagnostics to that trace:
//!   `-DGROUTE_TRACE_CLUSTER` the cluster mode's time per level (its phases add their
//!   global-timer time to a state word, `FUSED_SOLO_US`), `-DGROUTE_TRACE_LEVEL=N` when the
//!   first cluster phase reached its level `N` and at which SM clock. They measure, for
//!   instance, what a device-driven member's level costs against one GPU's before any peer
//!   traffic. They are off by default: even the timer's few instructions moved the one-device
//!   SSSP build's code enough to cost 2%.
//!
//! ## Several devices
//!
//! A run on several devices uses the non-fused worker (one launch per level: [`FusedMode::Off`],
//! and [`FusedMode::Auto`] on dense graphs) or, with [`FusedMode::On`] and with
//! [`FusedMode::Auto`] on sparse graphs, this kernel in one of two ways
//! ([`FusedDriver`](super::FusedDriver), `--fused-driver`):
//!
//! - **Device-driven** (the default where every pair of GPUs has peer access,
//!   `fused_peer.rs`): one persistent launch per device for the whole run. Improved vertices of
//!   other devices go straight into the next device's inbox ring (SplitSend), published at the
//!   end of each phase; the next grid phase of the receiver applies SplitReceive to them; the
//!   devices count termination in one counter of device 0's memory and run soft priority's
//!   epochs each on its own. The host only launches and waits.
//! - **Host-driven bounded rounds** (`fused_rounds.rs`): the worker above with every round a
//!   *bounded* launch of this kernel: levels back to back over the device's worklist, improved
//!   vertices of other devices appended to the outgoing buffer, until a level budget, a
//!   half-full outgoing buffer or an empty worklist returns it to the host, which sends,
//!   receives, counts for termination and runs soft priority's epochs as after any round.
//!
//! ## Soft priority
//!
//! With `prio_delta` on, the fused kernel runs the epochs of
//! [`PriorityCounter`](crate::PriorityCounter) on the device: a kept item whose value is at or above the threshold
//! goes to the current low list (`LowList` of `traversal.cuh`, whose append also takes the
//! smallest deferred value) instead of the worklist. When a phase ends with an empty batch and
//! a non-empty low list, the action advances the threshold by the counter's rule (at least one
//! band, and to the end of the band of the smallest deferred value), takes the list, and a
//! *re-examine* phase (`traversal_reexamine`, grid-wide) moves its live items now below the
//! threshold to the worklist, defers the others to the other list and drops superseded ones
//! (a vertex whose value dropped since it was deferred: its improved copy was queued then).
//! The run reports `epochs`, `items_deferred` and `items_stale_dropped` as the non-fused path
//! does. The low lists have the worklist's capacity; their overflow stops the kernel and names
//! `wl_capacity`.

use std::time::{Duration, Instant};

use groute_core::cuda::{CudaFunction, CudaModule, DevicePtr, LaunchConfig, PeerArgs};
use groute_core::{Buffer, Context, Device, Error, Event};

use super::cuda::CudaTraversalDevice;
use super::fused_async::AsyncKernel;
use super::fused_peer::FusedMember;
use super::fused_trace::FusedTrace;
use super::fused_tuning::{
    FUSED_NARROW_MAX_BLOCK, FusedDefaults, FusedGrid, MemberShare, SOLO_CLUSTER, cluster_grid,
    cooperative_grid, fused_block as fused_block_size, fused_kernel_flags, uses_cluster,
};
use crate::engine::{DeviceStats, WorklistOptions};
use crate::error::WorklistError;
use crate::split::VertexValue;

/// Whether a CUDA min traversal runs as one fused persistent kernel (`--fused` /
/// `--no-fused`). The host backend ignores it. A fused round expands the whole worklist, so
/// `max_batch` does not apply to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FusedMode {
    /// Fused where the fused kernel supports the run: one device always; several devices in
    /// bounded fused rounds on sparse graphs, one launch per level on dense ones. The launch
    /// shape follows the graph's density
    /// ([`FUSED_SPARSE_MAX_AVERAGE_DEGREE`](super::FUSED_SPARSE_MAX_AVERAGE_DEGREE)): on one
    /// H200 fused won on both kinds of graph once dense graphs got a grid of every resident
    /// block (kron21 SSSP 8.2 ms against 11.2 one launch per round, BFS push 2.35 against
    /// 2.58; road 2048 BFS 25.7 against 80.5, SSSP 28.7 against 89.5).
    #[default]
    Auto,
    /// Fused: one device runs the whole traversal as one persistent kernel; several devices
    /// run each round as a bounded fused launch of many levels between the host's exchanges
    /// (`fused_rounds.rs`).
    On,
    /// One launch per round.
    Off,
    /// Fused without barriers (`--fused-async`): one persistent kernel whose warps take
    /// vertices from the worklist as soon as they are appended, with no levels or rounds
    /// (`fused_async.rs`). One device; soft priority off (`prio_delta` 0 or unset).
    Async,
}

impl FusedMode {
    /// Whether a CUDA run on `devices` devices over a graph of `average_degree` arcs per
    /// vertex runs its rounds as bounded fused launches: `On` on several devices, and `Auto`
    /// on several devices over a sparse graph (at most
    /// [`FUSED_SPARSE_MAX_AVERAGE_DEGREE`](super::FUSED_SPARSE_MAX_AVERAGE_DEGREE) arcs per
    /// vertex).
    ///
    /// Measured on 2 x H200 (block partition, `--repeat 5`, median device ms): road grid of
    /// 4.2M vertices, BFS 30.0 bounded (64 levels per launch; 16: 37.4, 256: 29.1, 1,024:
    /// 31.1) against 110 one launch per level, SSSP (weights 1000..1500) 62.3 against 132;
    /// kron21 SSSP 14.7 against 12.9, so dense graphs keep one launch per level.
    pub fn bounded_rounds(self, devices: usize, average_degree: f64) -> bool {
        devices > 1
            && match self {
                FusedMode::On => true,
                FusedMode::Auto => average_degree <= super::FUSED_SPARSE_MAX_AVERAGE_DEGREE,
                FusedMode::Off | FusedMode::Async => false,
            }
    }

    /// Whether a CUDA run on `devices` devices is one fused kernel (soft priority runs in
    /// every mode): `Auto`, `On` and `Async` fuse one device; `Async` refuses several.
    pub(crate) fn fuses(self, devices: usize) -> Result<bool, Error> {
        match (self, devices) {
            (FusedMode::Off, _) => Ok(false),
            (FusedMode::Auto | FusedMode::On, 1) => Ok(true),
            (FusedMode::Async, 1) => Ok(true),
            (FusedMode::Auto | FusedMode::On, _) => Ok(false),
            (FusedMode::Async, n) => Err(Error::invalid(
                "fused (--fused-async)",
                format!("asynchronous, with {n} devices"),
                "the asynchronous fused kernel runs on one device: leave out --fused-async for \
                 several devices, or run on --devices 1",
            )),
        }
    }
}

/// Words of the fused state block (`groute::FUSED_*` of fused.cuh) the host writes or reads.
pub(super) const FUSED_WORDS: usize = 100;
pub(super) const FUSED_PHASE: usize = 64;
pub(super) const FUSED_STOP: usize = 65;
pub(super) const FUSED_ROUNDS: usize = 66;
pub(super) const FUSED_START: usize = 67;
pub(super) const FUSED_PROCESSED: usize = 68;
pub(super) const FUSED_END: usize = 70;
pub(super) const FUSED_THRESHOLD: usize = 71;
pub(super) const FUSED_LOW_CURRENT: usize = 72;
const FUSED_EPOCHS: usize = 75;
const FUSED_DEFERRED: usize = 76;
const FUSED_STALE: usize = 78;
const FUSED_SOLO_ROUNDS: usize = 80;
/// `groute::FUSED_PHASES`: phases run (grid barriers passed).
const FUSED_PHASES: usize = 81;
/// `groute::FUSED_UNLISTED`: items produced that the worklist's end does not count (64-bit,
/// two's complement: SOLO-ASYNC's ring items less its entry items written to the worklist
/// again).
pub(super) const FUSED_UNLISTED: usize = 82;
/// `groute::FUSED_IN_END`: a device-driven member's items taken from its inbox.
pub(super) const FUSED_IN_END: usize = 85;
/// `groute::FUSED_SOLO_US`: in kernels compiled with `-DGROUTE_TRACE_CLUSTER`, the time of the
/// run's cluster-mode phases (global-timer µs); 0 otherwise.
const FUSED_SOLO_US: usize = 98;
/// `groute::FUSED_TRACE_LEVEL`: in kernels compiled with `-DGROUTE_TRACE_LEVEL=N`, the SM clock
/// (MHz, high 12 bits) and the microseconds (low 20 bits) from the start of the first cluster
/// phase that ran level `N` to its end; 0 otherwise.
const FUSED_TRACE_LEVEL: usize = 99;
/// The first word the host reads back (the barrier words before it are the kernel's own).
const FUSED_READ_FROM: usize = FUSED_PHASE;
/// `groute::FusedPhase`: the first phase of a run.
const FUSED_PHASE_DONE: u32 = 0;
pub(super) const FUSED_PHASE_EXPAND: u32 = 1;
pub(super) const FUSED_PHASE_SOLO: u32 = 2;
/// `groute::FUSED_STOP_ABORTED`.
pub(super) const FUSED_STOP_ABORTED: u32 = 2;
/// `groute::FUSED_STOP_PEER`: a device-driven member stopped on a failed wait, its
/// `PeerStatus` added.
pub(super) const FUSED_STOP_PEER: u32 = 16;
/// Words of the control block the host reads (`groute::CTRL_*`).
const CTRL_WL_END: usize = 0;
/// Control words read back after a run: up to the low list's overflow word
/// (`groute::CTRL_LOW_OVERFLOW`).
const CTRL_READ_WORDS: usize = 10;
/// How often the host checks a time-limited fused run.
const POLL_INTERVAL: Duration = Duration::from_micros(50);

/// The state block's words `[FUSED_PHASE, FUSED_WORDS)` as read back after a run
/// ([`FusedKernel::read_state`]).
pub(super) struct StateWords(Vec<u32>);

impl StateWords {
    /// State word `w` (`groute::FUSED_*`).
    pub(super) fn word(&self, w: usize) -> u32 {
        self.0[w - FUSED_READ_FROM]
    }

    /// For the fused trace: the phases and levels run, of them the single-block levels, and in
    /// kernels built for it (`GROUTE_TRACE_CLUSTER`, `GROUTE_TRACE_LEVEL`) the cluster mode's
    /// time per level and when it reached the traced level.
    pub(super) fn trace_summary(&self) -> String {
        let phases = self.word(FUSED_PHASES);
        let rounds = self.word(FUSED_ROUNDS);
        let levels = self.word(FUSED_SOLO_ROUNDS);
        let mut summary = format!("phases {phases}, levels {rounds}, single-block levels {levels}");
        let us = self.word(FUSED_SOLO_US);
        if us != 0 && levels != 0 {
            let per_level = u64::from(us) * 1000 / u64::from(levels);
            summary.push_str(&format!(", cluster mode {us} us ({per_level} ns a level)"));
        }
        let traced = self.word(FUSED_TRACE_LEVEL);
        if traced != 0 {
            summary.push_str(&format!(
                "; traced level reached after {} us at {} MHz",
                traced & 0xF_FFFF,
                traced >> 20
            ));
        }
        summary
    }

    /// The 64-bit state word at `w`, `w + 1`.
    pub(super) fn wide(&self, w: usize) -> u64 {
        u64::from(self.word(w)) | (u64::from(self.word(w + 1)) << 32)
    }

    /// The counters every fused run reports from its state block (rounds, items expanded,
    /// soft priority's); the caller adds what it counts elsewhere (produced, sent, received).
    pub(super) fn stats(&self) -> DeviceStats {
        DeviceStats {
            rounds: u64::from(self.word(FUSED_ROUNDS)),
            items_processed: self.wide(FUSED_PROCESSED),
            items_deferred: self.wide(FUSED_DEFERRED),
            items_stale_dropped: self.wide(FUSED_STALE),
            epochs: u64::from(self.word(FUSED_EPOCHS)),
            solo_rounds: u64::from(self.word(FUSED_SOLO_ROUNDS)),
            ..DeviceStats::default()
        }
    }
}

/// Whether a fused run fails with [`WorklistError::TimedOut`]: the host asked the kernel to
/// stop (it saw the time limit pass while the kernel ran), or the kernel reports that it
/// stopped on the abort word (`stop_word`, the state block's `FUSED_STOP`).
///
/// Either alone suffices. The host's side: the run exceeded its limit whether or not the
/// kernel polled the word before it finished (a kernel can complete between the host's store
/// and its next poll, up to `FUSED_ABORT_POLL` levels later), and the non-fused driver fails
/// the same way as soon as it sees its deadline pass with work outstanding. The kernel's
/// side: a kernel that stopped early left items unprocessed, so its values must never be
/// returned as a result.
pub(super) fn timed_out(asked_to_stop: bool, stop_word: u32) -> bool {
    asked_to_stop || stop_word == FUSED_STOP_ABORTED
}

/// One device's fused kernel and its state, kept across runs.
pub(crate) struct FusedKernel {
    /// `<algo>_fused`: blocks of at most [`FUSED_NARROW_MAX_BLOCK`] threads.
    narrow: CudaFunction,
    /// `<algo>_fused_wide`: the same kernel for blocks of up to 1,024 threads.
    wide: CudaFunction,
    /// `<algo>_fused_peer` and `<algo>_fused_peer_wide`: the builds for the members of a
    /// device-driven run (`fused_peer.rs`; the others compile those paths out).
    peer_narrow: CudaFunction,
    peer_wide: CudaFunction,
    /// `<algo>_fused_cluster`: the wide build launched in clusters of [`SOLO_CLUSTER`] blocks,
    /// its single-block mode on cluster 0 (`kernels/include/cluster_solo.cuh`); `None` where
    /// the device has no thread-block clusters (compute capability below 9.0: the module has
    /// no such entry).
    cluster: Option<CudaFunction>,
    /// `<algo>_fused_peer_cluster`: the same for the members of a device-driven run.
    peer_cluster: Option<CudaFunction>,
    /// Multiprocessors of the device: the default grid of sparse graphs (one block per
    /// multiprocessor, [`FusedDefaults`]). Measured on one H200 (road 2048 BFS, 256-thread
    /// blocks, before the single-block mode): 132 blocks (one per SM) 36.2 ms, 264: 36.9 ms,
    /// 528: 40.4 ms, every resident block: 51.4 ms; the barrier costs more with more blocks,
    /// and per-level work on such graphs is small.
    multiprocessors: u32,
    /// `FUSED_WORDS` u32 of device memory: barrier words and the kernel's snapshots.
    pub(super) state: Buffer<u32>,
    /// `FUSED_WORDS` u32 of pinned host memory: a bounded launch's state block, written here
    /// and copied in before the launch, copied back after it.
    pub(super) state_host: Buffer<u32>,
    /// One u32 of device-mapped pinned host memory: nonzero asks the kernel to stop (shared
    /// with the asynchronous kernel).
    pub(super) abort: Buffer<u32>,
    /// The asynchronous kernel (`fused_async.rs`); `None` when the traversal's module has no
    /// `<fused>_async` entry points (`GROUTE_ASYNC_TRAVERSAL_KERNEL`).
    pub(super) asynchronous: Option<AsyncKernel>,
}

/// The launch shape of one fused run.
#[derive(Clone, Copy, Debug)]
pub(super) struct FusedShape {
    grid: u32,
    block: u32,
    /// The single-block mode's bound (0: off).
    pub(super) solo_max: u32,
    /// The cluster build runs it (`uses_cluster`): its single-block mode on cluster 0.
    pub(super) cluster: bool,
}

/// How one launch of the fused kernel takes part in its run.
#[derive(Clone, Debug)]
pub(super) enum FusedRole {
    /// The whole run on one device.
    Alone,
    /// One batch of levels of a host-driven run on several devices (`fused_rounds.rs`).
    Bounded(FusedBounds),
    /// One member of a device-driven run on several devices (`fused_peer.rs`).
    Member(FusedMember),
}

/// What a bounded launch (one batch of levels of a run on several devices, `fused_rounds.rs`)
/// adds to the kernel's arguments: the outgoing buffer and when to return.
#[derive(Clone, Copy, Debug)]
pub(super) struct FusedBounds {
    /// The current outgoing buffer, its capacity and the position of its first item.
    pub(super) send: DevicePtr<VertexValue>,
    pub(super) send_capacity: u32,
    pub(super) send_base: u32,
    /// Levels after which the kernel returns (at least 1).
    pub(super) level_budget: u32,
    /// Outgoing items at which the kernel returns early.
    pub(super) send_yield: u32,
}

impl FusedKernel {
    /// Looks `name` and `name_wide` up in `module` (loaded for `device`) and allocates the
    /// state.
    pub(crate) fn new(
        context: &Context,
        device: &Device,
        module: &CudaModule,
        name: &str,
    ) -> Result<Self, Error> {
        let narrow = module.function(name)?;
        let wide = module.function(&format!("{name}_wide"))?;
        let peer_narrow = module.function(&format!("{name}_peer"))?;
        let peer_wide = module.function(&format!("{name}_peer_wide"))?;
        let cluster = module.function(&format!("{name}_cluster")).ok();
        let peer_cluster = module.function(&format!("{name}_peer_cluster")).ok();
        // Load every build now: under the driver's lazy loading (the default since CUDA 12.2)
        // a function is loaded on its first use, which may wait for the device's running
        // kernels; an occupancy query is such a use, here and never while a run is timed.
        for f in [&narrow, &wide, &peer_narrow, &peer_wide]
            .into_iter()
            .chain(cluster.as_ref())
            .chain(peer_cluster.as_ref())
        {
            f.max_active_blocks_per_multiprocessor(32, 0)?;
        }
        let multiprocessors = device.properties().multiprocessors.max(1);
        let kernel = FusedKernel {
            narrow,
            wide,
            peer_narrow,
            peer_wide,
            cluster,
            peer_cluster,
            multiprocessors,
            state: device.alloc::<u32>(FUSED_WORDS)?,
            state_host: context.alloc_host::<u32>(FUSED_WORDS)?,
            abort: context.alloc_mapped::<u32>(1)?,
            asynchronous: AsyncKernel::new(device, module, name, multiprocessors).ok(),
        };
        // Mapped host memory comes uninitialised: the kernels poll this word.
        kernel.set_abort(0)?;
        Ok(kernel)
    }

    /// The cluster build for a member of a device-driven run (`peer`) or a run on one device,
    /// where the module has it.
    fn cluster_build(&self, peer: bool) -> Option<&CudaFunction> {
        if peer {
            self.peer_cluster.as_ref()
        } else {
            self.cluster.as_ref()
        }
    }

    /// The build of the kernel for blocks of `block` threads, for a member of a device-driven
    /// run (`peer`) or not; the cluster build (`cluster`) where the module has it.
    fn function(&self, block: u32, peer: bool, cluster: bool) -> &CudaFunction {
        if let (true, Some(f)) = (cluster, self.cluster_build(peer)) {
            return f;
        }
        match (block <= FUSED_NARROW_MAX_BLOCK, peer) {
            (true, false) => &self.narrow,
            (false, false) => &self.wide,
            (true, true) => &self.peer_narrow,
            (false, true) => &self.peer_wide,
        }
    }

    /// The shape of a run: `options`' block, grid and single-block bound where set, else
    /// `defaults` (the grid at least 1, at most every resident block of the build a launch
    /// uses: a member of a device-driven run's or the other). `member`: `Some(k)` for a member
    /// of a device-driven run, `k` members sharing its GPU (1: the GPU is its own), whose
    /// grid is its share of the GPU (`MemberShare`). `cluster_graph`: the graph's longest list
    /// and its arcs, for the single-block mode on a cluster (`uses_cluster`; `None`: never, as
    /// for bounded launches).
    pub(super) fn shape(
        &self,
        options: &WorklistOptions,
        defaults: FusedDefaults,
        member: Option<u32>,
        cluster_graph: Option<(u64, usize)>,
    ) -> Result<FusedShape, Error> {
        let peer = member.is_some();
        let share = MemberShare::new(member.unwrap_or(1));
        let block = fused_block_size(options.fused_block, defaults.block)?;
        let solo_on = options
            .fused_solo_max
            .unwrap_or(if defaults.solo { 1 } else { 0 })
            != 0;
        let cluster = match cluster_graph {
            Some((max_degree, arcs)) => uses_cluster(
                options,
                self.cluster_build(peer).is_some(),
                block,
                solo_on,
                fused_kernel_flags(options, arcs)?,
                max_degree,
            ),
            None => false,
        };
        let default_grid = |max: u32| match defaults.grid {
            FusedGrid::PerMultiprocessor => share.of_multiprocessors(self.multiprocessors).min(max),
            FusedGrid::Resident => max,
        };
        // The cluster build where its clusters fit the grid asked for (a grid that is not whole
        // clusters, or larger than the resident clusters, runs the build without them).
        let cluster_grid = match (cluster, self.cluster_build(peer)) {
            (true, Some(f)) => {
                cluster_grid(f, block, options.fused_grid, default_grid(u32::MAX), share)?
            }
            _ => None,
        };
        let cluster = cluster_grid.is_some();
        let grid = match cluster_grid {
            Some(grid) => grid,
            None => cooperative_grid(
                self.function(block, peer, false),
                block,
                options.fused_grid,
                default_grid,
                share,
            )?,
        };
        // The cluster's frontiers hold one item per thread of each of its blocks.
        let solo_threads = if cluster { SOLO_CLUSTER * block } else { block };
        let solo_max =
            options
                .fused_solo_max
                .unwrap_or(if defaults.solo { solo_threads } else { 0 });
        Ok(FusedShape {
            grid,
            block,
            solo_max,
            cluster,
        })
    }

    /// The state block after a run (`device` holds it; synchronous).
    pub(super) fn read_state(&self, device: &Device) -> Result<StateWords, Error> {
        Ok(StateWords(device.download(
            &self.state.slice(FUSED_READ_FROM..FUSED_WORDS)?,
        )?))
    }

    pub(super) fn set_abort(&self, value: u32) -> Result<(), Error> {
        let word =
            self.abort
                .host_atomic_u32()
                .and_then(|w| w.first())
                .ok_or(Error::Unsupported {
                    operation: "writing the fused kernel's abort word from the host",
                    backend: "cuda",
                })?;
        word.store(value, std::sync::atomic::Ordering::SeqCst);
        // The word is cacheable host memory (never write-combined: `mem_host_alloc`), which the
        // GPU's system-scope reads snoop; the full fence makes the store globally visible before
        // anything the caller does next (blocking on the kernel), so no later poll misses it.
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

/// The clocks of one persistent launch ([`CudaTraversalDevice::timed_run`]).
pub(super) struct TimedRun {
    /// Host time from the launch until the kernel completed.
    pub(super) elapsed: Duration,
    /// The kernel's time between timing events recorded around the launch.
    pub(super) device_time: Duration,
    /// Whether the host asked the kernel to stop (it saw the time limit pass).
    pub(super) asked_to_stop: bool,
}

/// What one fused run did.
pub(crate) struct FusedRun {
    /// The device's counters.
    pub(crate) stats: DeviceStats,
    /// Host time from the launch until the kernel completed.
    pub(crate) elapsed: Duration,
    /// The kernel's time between CUDA timing events recorded around the launch.
    pub(crate) device_time: Duration,
}

impl CudaTraversalDevice {
    /// Runs the traversal as one fused persistent kernel: values reset (`sources` at 0),
    /// `seeds` in the worklist, then one cooperative launch until no item is left. `defaults`:
    /// the graph's launch shape where `options` leave it open.
    pub(crate) fn run_fused(
        &mut self,
        device: &Device,
        sources: &[u32],
        seeds: &[u32],
        options: &WorklistOptions,
        defaults: FusedDefaults,
    ) -> Result<FusedRun, WorklistError> {
        let trace = FusedTrace::start();
        // The non-fused worker's reset: values, control block, seeds (synchronised).
        drop(self.worker(device, sources, seeds)?);
        trace.mark("reset done");
        let seeds = seeds.len() as u32;
        let shape = self.fused.shape(
            options,
            defaults,
            None,
            Some((self.hubs.max_degree(), self.targets.len())),
        )?;
        let barrier = fused_kernel_flags(options, self.targets.len())?;
        let solo_max = shape.solo_max;
        // Soft priority as PriorityCounter sets it: the first threshold is the band width.
        let prio_delta = options.prio_delta.unwrap_or(0);
        let threshold = if prio_delta == 0 {
            u32::MAX
        } else {
            prio_delta
        };
        if threshold != u32::MAX {
            self.ensure_low_lists(device)?;
        }
        let phase = match seeds {
            0 => FUSED_PHASE_DONE,
            k if k <= solo_max => FUSED_PHASE_SOLO,
            _ => FUSED_PHASE_EXPAND,
        };
        let words = [
            (FUSED_PHASE, phase),
            (FUSED_END, seeds),
            (FUSED_THRESHOLD, threshold),
        ];
        let TimedRun {
            elapsed,
            device_time,
            asked_to_stop,
        } = self.timed_run(
            device,
            &self.fused.state,
            &words,
            options.time_limit,
            &trace,
            || self.launch_fused(shape, barrier, prio_delta, solo_max, &FusedRole::Alone),
        )?;

        let ctrl = device.download(&self.ctrl.slice(0..CTRL_READ_WORDS)?)?;
        let state = self.fused.read_state(device)?;
        // One device owns every vertex: the fused kernel never sends (a send overflow would be
        // a broken invariant, reported rather than ignored).
        self.overflow_error(&ctrl, "device ring send buffer (fused kernel)", 0)?;
        let processed = state.wide(FUSED_PROCESSED);
        // Every item the kernel appended reaches the worklist but SOLO-ASYNC's ring items,
        // which the kernel counts apart (`solo_queue.cuh`, Counting; issue #6: without them a
        // stopped SOLO-ASYNC run reported nothing outstanding).
        let produced = u64::from(ctrl[CTRL_WL_END].wrapping_sub(seeds))
            .wrapping_add(state.wide(FUSED_UNLISTED));
        trace.mark_with(|| {
            format!(
                "read back: stop word {}, processed {processed} of {}; {}",
                state.word(FUSED_STOP),
                u64::from(seeds) + produced,
                state.trace_summary()
            )
        });
        if timed_out(asked_to_stop, state.word(FUSED_STOP)) {
            return Err(WorklistError::TimedOut {
                limit: options.time_limit.unwrap_or_default(),
                outstanding: (u64::from(seeds) + produced).saturating_sub(processed) as i64,
            });
        }
        let stats = state.stats();
        Ok(FusedRun {
            stats: DeviceStats {
                items_produced: produced,
                solo_cluster_rounds: if shape.cluster { stats.solo_rounds } else { 0 },
                ..stats
            },
            elapsed,
            device_time,
        })
    }

    /// One timed run of a persistent kernel: `state` zeroed but for `words` (index, value),
    /// the abort word cleared, the stream synchronised (so that it holds no pinned memory
    /// whose release would wait for the kernel: freeing pinned host memory waits for the
    /// device, and `Device::upload` frees its staging before it returns); then `launch`
    /// between two timing events, and the wait (asking the kernel to stop past
    /// `time_limit`).
    pub(super) fn timed_run(
        &self,
        device: &Device,
        state: &Buffer<u32>,
        words: &[(usize, u32)],
        time_limit: Option<Duration>,
        trace: &FusedTrace,
        launch: impl FnOnce() -> Result<(), Error>,
    ) -> Result<TimedRun, Error> {
        let s = &self.stream;
        self.prepare_state(state, words)?;
        trace.mark("state set, stream idle");
        let started = Instant::now();
        let t0 = device.record_timing(s)?;
        trace.mark("t0 recorded; launching");
        launch()?;
        trace.mark("launched");
        let t1 = device.record_timing(s)?;
        trace.mark("t1 recorded; waiting");
        let asked_to_stop = self.wait_fused(&t1, time_limit, started, trace)?;
        let elapsed = started.elapsed();
        trace.mark(&format!("kernel done (asked to stop: {asked_to_stop})"));
        let device_time = Event::elapsed(&t0, &t1)?;
        Ok(TimedRun {
            elapsed,
            device_time,
            asked_to_stop,
        })
    }

    /// Zeroes `state` but for `words` (index, value) and clears the abort word; returns with
    /// the stream synchronised.
    pub(super) fn prepare_state(
        &self,
        state: &Buffer<u32>,
        words: &[(usize, u32)],
    ) -> Result<(), Error> {
        let s = &self.stream;
        s.fill(state, 0u32)?;
        for &(word, value) in words {
            s.fill(&state.slice(word..word + 1)?, value)?;
        }
        self.fused.set_abort(0)?;
        s.synchronize()
    }

    /// Waits for the kernel (recorded `done`); past `time_limit`, asks it to stop (it then
    /// returns within `FUSED_ABORT_POLL` levels or phases) and waits for it to do so. Returns
    /// whether it asked: the host saw the limit pass while the kernel was still running.
    pub(super) fn wait_fused(
        &self,
        done: &Event,
        time_limit: Option<Duration>,
        started: Instant,
        trace: &FusedTrace,
    ) -> Result<bool, Error> {
        let Some(limit) = time_limit else {
            done.wait()?;
            return Ok(false);
        };
        let mut poll = 0u32;
        loop {
            let complete = done.is_complete()?;
            trace.poll(poll, complete);
            if complete {
                break;
            }
            poll = poll.saturating_add(1);
            if started.elapsed() > limit {
                self.fused.set_abort(1)?;
                trace.mark("abort word set; waiting for the kernel");
                done.wait()?;
                return Ok(true);
            }
            std::thread::sleep(POLL_INTERVAL);
        }
        Ok(false)
    }

    /// Enqueues `<algo>_fused` (or its wide build) cooperatively in `shape`, with the
    /// barrier's `(spin_ns, barrier_flags)`.
    pub(super) fn launch_fused(
        &self,
        shape: FusedShape,
        (spin_ns, barrier_flags): (u32, u32),
        prio_delta: u32,
        solo_max: u32,
        role: &FusedRole,
    ) -> Result<(), Error> {
        let [low0, low1] = self.low_lists()?;
        let (values, offsets, targets, weights) = self.graph_args()?;
        let alone = FusedBounds {
            send: DevicePtr::null(),
            send_capacity: 0,
            send_base: 0,
            level_budget: 0,
            send_yield: 0,
        };
        let (bounds, member) = match role {
            FusedRole::Alone => (alone, None),
            FusedRole::Bounded(bounds) => (*bounds, None),
            FusedRole::Member(member) => (
                FusedBounds {
                    send: member.send,
                    send_capacity: member.send_capacity,
                    ..alone
                },
                Some(member),
            ),
        };
        // A member polls the group's abort word (the host's time limit for every member).
        let abort = match member {
            Some(m) => m.group.abort,
            None => DevicePtr::<u32>::from_slice(&self.fused.abort.raw())?,
        };
        let (peer, inbox, send_published, inbox_capacity, recv_freed) = match member {
            Some(m) => (
                m.group,
                m.inbox,
                m.send_published,
                m.inbox_capacity,
                m.recv_freed,
            ),
            None => (
                PeerArgs {
                    mailbox: DevicePtr::null(),
                    abort: DevicePtr::null(),
                    rank: 0,
                    size: 1,
                    timeout_ns: 0,
                },
                DevicePtr::null(),
                DevicePtr::null(),
                0,
                DevicePtr::null(),
            ),
        };
        let args = (
            values,
            offsets,
            targets,
            weights,
            DevicePtr::<u32>::from_slice(&self.wl.raw())?,
            (self.wl.len() - 1) as u32,
            DevicePtr::<u32>::from_slice(&self.ctrl.raw())?,
            DevicePtr::<u32>::from_slice(&self.fused.state.raw())?,
            abort,
            self.owned.start,
            self.owned.end,
            low0,
            low1,
            self.wl.len() as u32,
            prio_delta,
            solo_max,
            spin_ns,
            barrier_flags,
            bounds.send,
            bounds.send_capacity,
            bounds.send_base,
            bounds.level_budget,
            bounds.send_yield,
            peer,
            inbox,
            send_published,
            inbox_capacity,
            recv_freed,
        );
        // SAFETY: <algo>_fused(unsigned* values, const unsigned long long* offsets,
        // const unsigned* targets, const unsigned* weights, unsigned* wl_data, unsigned wl_mask,
        // unsigned* ctrl, unsigned* fused, const unsigned* abort, unsigned owned_begin,
        // unsigned owned_end, VertexValue* low0, VertexValue* low1, unsigned low_capacity,
        // unsigned prio_delta, unsigned solo_max, unsigned spin_ns, unsigned barrier_flags,
        // VertexValue* send_data, unsigned send_capacity, unsigned send_base,
        // unsigned level_budget, unsigned send_yield, PeerGroup peer, const VertexValue* inbox,
        // unsigned* send_published, unsigned inbox_capacity, unsigned* recv_freed)
        // (GROUTE_FUSED_TRAVERSAL_ENTRY in fused.cuh, both builds):
        // the tuple matches it field by field (`barrier_flags` from `fused_kernel_flags`:
        // FUSED_SOLO_SHARED only when every offset fits 32 bits, the single-block frontier
        // reading the offsets' low words at CSR targets and targets + 1, in bounds of the
        // num_vertices + 1 entries). The low lists are null (soft priority off: the
        // threshold is u32::MAX and nothing is deferred) or both allocated with the worklist's
        // length, which is low_capacity (the kernel bounds-checks every append). CSR, values, weights, worklist and control block as in
        // `launch_expand` (the same buffers; the worklist holds the seeds at [0, k) and
        // ctrl[CTRL_WL_END] = k, the hub capacity is set); `fused` holds FUSED_WORDS u32 zeroed
        // except the first phase, FUSED_END = k and the threshold; `abort` is one u32 of mapped host memory, a device
        // address of this context. The owned range is the whole graph (one device), so the
        // kernel never appends to its (empty) send buffer, unless the launch is bounded (several
        // devices): then it appends to the current outgoing buffer, `send_capacity` items from
        // position `send_base`, bounds-checking every append. A member of a device-driven run
        // (`FusedRole::Member`, `fused_peer.rs`) sends into the next device's inbox, a ring of
        // `send_capacity` items (a power of two, at most that buffer's length; positions taken
        // modulo the capacity, never more than the capacity past what the receiver freed; peer
        // access enabled by `PeerGroup::check`), reads its own inbox ring of `inbox_capacity`
        // items (likewise) only below the end the sender published, stores its ends into the
        // next device's `send_published` and the previous device's `recv_freed` (one u32 of
        // their control blocks each) and counts in the group's mailbox (`PeerGroup::args`);
        // alone or bounded, the group has size 1 and null pointers, which the kernel never
        // touches.
        // The block is a multiple of 32 of at
        // most 1,024 threads, run by the build whose launch bounds admit it, and the grid is at
        // most the resident maximum of that build at that block (`FusedKernel::shape`); the
        // launch is cooperative, so every block is resident and the grid barrier cannot
        // deadlock. Memory is kept alive below.
        unsafe {
            let function = self
                .fused
                .function(shape.block, member.is_some(), shape.cluster);
            let stream = self.stream.raw();
            let config = LaunchConfig::linear(shape.grid, shape.block);
            if shape.cluster {
                function.launch_cooperative_clusters(stream.as_ref(), config, args)?
            } else {
                function.launch_cooperative(stream.as_ref(), config, args)?
            }
        };
        self.keep_alive(&[])?;
        let mut memory = vec![self.fused.state.raw().memory, self.fused.abort.raw().memory];
        if let Some(m) = member {
            memory.extend(m.memory.iter().cloned());
        }
        self.cuda_stream()?.keep_alive(memory)
    }
}

#[cfg(test)]
mod tests {
    use super::{FUSED_STOP_ABORTED, timed_out};

    /// `groute::FUSED_STOP_NONE` and `FUSED_STOP_OVERFLOW` (fused.cuh).
    const FUSED_STOP_NONE: u32 = 0;
    const FUSED_STOP_OVERFLOW: u32 = 1;

    #[test]
    fn a_run_the_host_asked_to_stop_times_out_even_if_the_kernel_finished_first() {
        assert!(timed_out(true, FUSED_STOP_NONE));
        assert!(timed_out(true, FUSED_STOP_ABORTED));
    }

    #[test]
    fn a_kernel_that_stopped_on_the_abort_word_never_yields_a_result() {
        assert!(timed_out(false, FUSED_STOP_ABORTED));
    }

    #[test]
    fn a_run_within_its_limit_succeeds() {
        assert!(!timed_out(false, FUSED_STOP_NONE));
        // An overflow is reported from the control words, not as a time-out.
        assert!(!timed_out(false, FUSED_STOP_OVERFLOW));
    }
}
