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
//!   `fused_tuning.grid` blocks, at most [`groute_core::cuda::CudaFunction::max_resident_grid`]
//!   (device-driven members sharing a GPU: their share of both, `MemberShare`).
//! - **Phases.** The kernel runs phases separated by a grid barrier; the block that arrives
//!   last accounts for the phase and picks the next one into the state block, which every
//!   block reads after the barrier (so every decision is grid-uniform; blocks reading the
//!   live hub counter instead can disagree and hang, see `fused.cuh`). An *expand* phase
//!   expands the batch `[start, end)` over the whole grid with the nested load balancing of
//!   the non-fused expand, appending improved vertices behind `end`; the next batch is
//!   `[end, new end)`. Hubs listed by a level get a *hubs* phase (tiles over the grid). An
//!   empty batch with an empty low list ends the kernel: no item exists anywhere (one device
//!   holds every item, and an improved vertex is appended before the barrier that closes its
//!   phase), so the traversal is complete.
//! - **Single-block mode.** A batch of at most `fused_tuning.solo_max` items (by default one per
//!   thread of a block, [`FUSED_BLOCK`](super::FUSED_BLOCK) unless `fused_tuning.block` says
//!   otherwise) is a *solo* phase: block 0 alone runs level after level, separated by
//!   `__syncthreads()` instead of grid barriers, while the other blocks wait in the barrier;
//!   it returns to the grid when the next batch is larger, empty, met a hub (which it
//!   expands itself) or overflowed. It counts the control words in a shared-memory copy
//!   (appends by shared atomics, no L2 round trip at the end of a level) and writes them back
//!   before it arrives. With `fused_tuning.solo_shared` (the default; graphs of fewer than 2^32 arcs;
//!   the wide build only, blocks over 256 threads) every vertex block 0 appends also goes,
//!   with its adjacency range, to a shared-memory frontier (`kernels/include/
//!   solo_frontier.cuh`) at index (worklist position - batch end), the range loaded beside
//!   the atomicMin that improved it; the next level reads its items there and starts at the
//!   targets loads (two dependent round trips less: the worklist load, then the offsets). It
//!   holds two items per thread (a `fused_tuning.solo_max` of up to twice the block runs its second
//!   round from it too; larger levels read the rest from the worklist). The
//!   worklist still gets every item, so leaving the mode needs nothing. A level costs two
//!   `__syncthreads()`: one after every thread read its item (before any append), one after
//!   the appends, after which every thread reads the same control words and takes the same
//!   decision.
//!   Race-free because the waiting blocks touch nothing until released, and the barrier's
//!   fences order block 0's writes before the grid's next reads (and the grid's before block
//!   0's). Its levels count as rounds, its items as processed, exactly as grid levels do.
//!   With [`fused_tuning.cluster`](crate::traversal::FusedTuning::cluster) (by default, where the
//!   device has thread-block clusters and every list is under
//!   [`CLUSTER_MAX_DEGREE`](super::CLUSTER_MAX_DEGREE) arcs) the phase runs on the
//!   [`SOLO_CLUSTER`](super::SOLO_CLUSTER) blocks of cluster 0 of the `<algo>_fused_cluster`
//!   build instead, levels separated by the cluster's hardware barrier
//!   (`kernels/include/cluster_solo.cuh`): each warp appends to one block's shared-memory
//!   entries through distributed shared memory, the mode lists only the batch it leaves and
//!   counts the other items it produced as unlisted. The launch is
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
//!   fails the run with [`Error::CapacityExceeded`](groute_core::Error::CapacityExceeded) naming `wl_capacity (--wl-capacity)`;
//!   nothing is lost silently. With a time limit the host polls the kernel's completion; past
//!   the limit it sets the abort word (device-mapped pinned host memory,
//!   [`Context::alloc_mapped`](groute_core::Context::alloc_mapped)) that the kernel reads every 64 phases (and every 64 levels of
//!   a solo phase), waits for the kernel, and fails the run with [`WorklistError::TimedOut`](crate::WorklistError::TimedOut):
//!   whenever it asked, even if the kernel finished before its next poll (as the non-fused
//!   driver fails once it sees its deadline pass), and whenever the kernel reports that it
//!   stopped on the word. `outstanding` counts the items the kernel left (0 when it
//!   finished): seeds plus produced less processed, produced being the worklist's end plus
//!   the items the cluster mode produced without listing them (`FUSED_UNLISTED`). Nothing on the host blocks while the kernel runs: both builds are loaded when
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
//!   traffic. They are off by default: even the timer's few instructions move the one-device
//!   SSSP build's code enough to slow it. `-DGROUTE_CLUSTER_ENTRIES=N` sizes the cluster
//!   builds' frontier (N entries a block, two buffers of N / 2; `kernels/include/fused.cuh`).
//!
//! ## Several devices
//!
//! A run on several devices uses this kernel under [`FusedMode::On`] and [`FusedMode::Auto`]
//! in one of two ways ([`FusedDriver`](super::FusedDriver), `--fused-driver`), or the
//! non-fused worker (one launch per level: [`FusedMode::Off`], and host-driven runs of
//! [`FusedMode::Auto`] on dense graphs):
//!
//! - **Device-driven** (the default wherever `PeerGroup::check_sharing` allows members:
//!   distinct GPUs with peer access, or members sharing a GPU; at any density,
//!   [`FusedMode::fuses_device_driven`]; `fused_peer.rs`): one persistent launch per device
//!   for the whole run. Improved vertices of
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
//! does. The low lists hold half the worklist's capacity each; their overflow stops the
//! kernel and names `wl_capacity`, with twice the items the list needed.
//!
//! ## Layout
//!
//! This file holds the protocol and [`FusedMode`]; beside it, `fused/state.rs` the state
//! block's words as the host reads them, `fused/kernel.rs` the kernel's builds and a run's
//! launch shape, `fused/run.rs` one timed run on one device, and `fused/launch.rs` the typed
//! launch with its `SAFETY` argument.

mod kernel;
mod launch;
mod run;
mod state;

pub(crate) use kernel::FusedKernel;
pub(super) use kernel::{FusedBounds, FusedRole, FusedShape};
pub(super) use state::{
    FUSED_PHASE_EXPAND, FUSED_PHASE_SOLO, FUSED_STOP_ABORTED, FUSED_STOP_PEER, FUSED_WORDS,
    StateBlock, start_words,
};

/// Whether a CUDA min traversal runs as one fused persistent kernel (`--fused` /
/// `--no-fused`). The host backend ignores it. A fused round expands the whole worklist, so
/// `max_batch` does not apply to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FusedMode {
    /// Fused where the fused kernel supports the run: one device always; several devices
    /// device-driven where the [`FusedDriver`](super::FusedDriver) allows it
    /// ([`FusedMode::fuses_device_driven`]), else bounded fused rounds on sparse graphs and one
    /// launch per level on dense ones. The launch
    /// shape follows the graph's density
    /// ([`FUSED_SPARSE_MAX_AVERAGE_DEGREE`](super::FUSED_SPARSE_MAX_AVERAGE_DEGREE)): on one
    /// device, with dense graphs on a grid of every resident block, fused beats one launch per
    /// round on both kinds of graph, by a wide margin on high-diameter ones.
    #[default]
    Auto,
    /// Fused: one device runs the whole traversal as one persistent kernel; several devices
    /// run device-driven where the [`FusedDriver`](super::FusedDriver) allows it, else each
    /// round as a bounded fused launch of many levels between the host's exchanges
    /// (`fused_rounds.rs`), at any density.
    On,
    /// One launch per round.
    Off,
}

impl FusedMode {
    /// Whether a CUDA run on `devices` devices over a graph of `average_degree` arcs per
    /// vertex runs its rounds as bounded fused launches: `On` on several devices, and `Auto`
    /// on several devices over a sparse graph (at most
    /// [`FUSED_SPARSE_MAX_AVERAGE_DEGREE`](super::FUSED_SPARSE_MAX_AVERAGE_DEGREE) arcs per
    /// vertex).
    ///
    /// Sparse, high-diameter graphs run many small levels, which bounded launches spare a
    /// launch and a host round trip each, several times faster than one launch per level. A
    /// dense graph's few large levels gain nothing from it and run slower bounded, so dense
    /// graphs keep one launch per level.
    pub fn bounded_rounds(self, devices: usize, average_degree: f64) -> bool {
        devices > 1
            && match self {
                FusedMode::On => true,
                FusedMode::Auto => average_degree <= super::FUSED_SPARSE_MAX_AVERAGE_DEGREE,
                FusedMode::Off => false,
            }
    }

    /// Whether a CUDA run on `devices` (more than one) devices runs device-driven, one fused
    /// kernel per device, where its [`FusedDriver`](super::FusedDriver) allows: `On`, and
    /// `Auto` at any density: device-driven runs beat one launch per level on dense graphs and
    /// by far on high-diameter ones.
    pub fn fuses_device_driven(self, devices: usize) -> bool {
        devices > 1 && self != FusedMode::Off
    }

    /// Whether a CUDA run on `devices` devices is one fused kernel (soft priority runs in
    /// every mode): `Auto` and `On` fuse one device.
    pub(crate) fn fuses(self, devices: usize) -> bool {
        matches!(self, FusedMode::Auto | FusedMode::On) && devices == 1
    }
}
