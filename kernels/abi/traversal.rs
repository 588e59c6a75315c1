//! The min traversals' ABI structs (`include/abi_traversal.h`): the control block, the fused
//! kernel's state block and its parameters.

use super::layout::{abi_constants, abi_struct};
use super::ptr::{DevicePtr, KernelArg};
use super::runtime::{GridBarrierWords, PeerGroup, VertexValue};

abi_struct! {
    /// A traversal's control block: 16 words, followed in the same buffer by the hub list's
    /// slots. An append past a capacity writes nothing and records the size it needed in the
    /// matching overflow word.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Default, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct TraversalCtrl in "abi_traversal.h" {
        /// The local worklist's end (monotone positions).
        pub wl_end: u32,
        /// The outgoing buffer's end (monotone).
        pub send_end: u32,
        /// The worklist capacity an append needed (0: none overflowed).
        pub wl_overflow: u32,
        /// The outgoing capacity an append needed.
        pub send_overflow: u32,
        /// Low word: hubs recorded; high word: their tiles.
        pub hub_counts: u64,
        /// Hub slots (set by the host).
        pub hub_capacity: u32,
        /// Device-driven runs: positions of this device's outgoing ring the next device read.
        pub send_freed: u32,
        /// Soft priority: the low list's append counter.
        pub low_end: u32,
        /// The low list capacity an append needed.
        pub low_overflow: u32,
        /// The smallest priority deferred since the host last reset it.
        pub low_min: u32,
        /// Device-driven runs: items the previous device published into this device's inbox.
        pub inbox_published: u32,
        /// Device-driven runs: batches of sends counted and published to the next device (each
        /// advance of the end released into its inbox: the run's messages).
        pub send_batches: u32,
        /// Not used.
        pub unused: [u32; 3],
    }
}

abi_struct! {
    /// The fused traversal's state block: the grid barrier's words, then the run's state (the
    /// phase, the batch, the counters), which the host sets before a launch and reads after.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct FusedStateBlock in "abi_traversal.h" {
        /// The grid barrier's words.
        pub barrier: GridBarrierWords,
        /// The phase to run next (`FusedPhase`).
        pub phase: u32,
        /// Why the kernel stopped early (`FusedStop`; 0: it did not).
        pub stop: u32,
        /// Expand levels run (grid and single-block).
        pub rounds: u32,
        /// The batch's start.
        pub start: u32,
        /// Items expanded.
        pub processed: u64,
        /// The batch's end.
        pub end: u32,
        /// Soft priority's threshold (`u32::MAX`: nothing deferred).
        pub threshold: u32,
        /// The low list being appended to (0 or 1).
        pub low_current: u32,
        /// Items of the other list that the re-examination reads.
        pub low_taken: u32,
        /// Items the last re-examination left in the current list.
        pub low_base: u32,
        /// Threshold advances.
        pub epochs: u32,
        /// Items whose expansion was deferred.
        pub deferred: u64,
        /// Superseded deferred items dropped.
        pub stale: u64,
        /// Of `rounds`, the levels run in single-block mode.
        pub solo_rounds: u32,
        /// Phases run (grid barriers passed).
        pub phases: u32,
        /// Items produced that the worklist's end does not count: the cluster mode's
        /// intermediate levels.
        pub unlisted: u64,
        /// Device-driven runs: the first inbox item the next phase receives.
        pub in_begin: u32,
        /// Device-driven runs: every inbox item taken so far.
        pub in_end: u32,
        /// Device-driven runs: items published to the next device.
        pub published: u32,
        /// Device-driven runs: this member passed the start gate.
        pub peer_go: u32,
        /// The batch the single-block mode left: start.
        pub solo_start: u32,
        /// And end.
        pub solo_end: u32,
        /// Levels of the last single-block phase.
        pub solo_levels: u32,
        /// The single-block mode saw the abort word set.
        pub solo_abort: u32,
        /// Items of the last single-block phase.
        pub solo_processed: u64,
        /// Items the single-block mode produced and expanded without listing them.
        pub solo_unlisted: u32,
        /// Zero: completes the four words the single-block mode stores from `solo_processed`.
        pub solo_pad: u32,
        /// Device-driven runs: the sends the single-block mode counted.
        pub solo_published: u32,
        /// Device-driven runs: the inbox items the single-block mode took.
        pub solo_taken: u32,
        /// Kernels built with `GROUTE_TRACE_CLUSTER`: the cluster mode's time, microseconds.
        pub solo_us: u32,
        /// Kernels built with `GROUTE_TRACE_LEVEL=N`: SM MHz << 20 | microseconds from the start
        /// of the first cluster phase that ran level N to its end.
        pub trace_level: u32,
    }
}

abi_struct! {
    /// The parameter of the fused traversal's entry points (`<algo>_fused` and its builds).
    /// The `gap` fields fill the alignment gaps (kept zero).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct FusedParams in "abi_traversal.h" {
        /// The value of every vertex (full length).
        pub values: DevicePtr<u32>,
        /// The owned rows' offsets, rebased to global vertex ids.
        pub offsets: DevicePtr<u64>,
        /// Their arcs' heads, rebased to global arc ids.
        pub targets: DevicePtr<u32>,
        /// Their weights, or null (unweighted).
        pub weights: DevicePtr<u32>,
        /// The worklist: `wl_mask + 1` vertex ids.
        pub wl_data: DevicePtr<u32>,
        /// The worklist's capacity less one (a power of two less one).
        pub wl_mask: u32,
        /// Alignment gap.
        pub gap0: u32,
        /// The control block ([`TraversalCtrl`]) and the hub slots after it.
        pub ctrl: DevicePtr<u32>,
        /// The state block ([`FusedStateBlock`]).
        pub fused: DevicePtr<u32>,
        /// The host's abort word.
        pub abort: DevicePtr<u32>,
        /// The first vertex this device owns.
        pub owned_begin: u32,
        /// The end of the vertices it owns.
        pub owned_end: u32,
        /// Soft priority's two low lists; null when it is off.
        pub low: [DevicePtr<VertexValue>; 2],
        /// Items of each low list.
        pub low_capacity: u32,
        /// Soft priority's band width.
        pub prio_delta: u32,
        /// Batches of at most this many items run in the single-block mode.
        pub solo_max: u32,
        /// The grid barrier's sleep between polls, nanoseconds.
        pub spin_ns: u32,
        /// The barrier's and the kernel's flag bits.
        pub barrier_flags: u32,
        /// Alignment gap.
        pub gap1: u32,
        /// Bounded runs: the outgoing buffer; device-driven runs: the next device's inbox.
        pub send_data: DevicePtr<VertexValue>,
        /// Items of `send_data` (a ring's: a power of two).
        pub send_capacity: u32,
        /// Bounded runs: the outgoing buffer's first position.
        pub send_base: u32,
        /// Bounded runs: levels of one launch (0: unbounded).
        pub level_budget: u32,
        /// Bounded runs: outgoing items that end a launch early.
        pub send_yield: u32,
        /// Device-driven runs' group ([`PeerGroup::ALONE`] otherwise).
        pub peer: PeerGroup,
        /// Device-driven runs: this device's inbox ring.
        pub inbox: DevicePtr<VertexValue>,
        /// Device-driven runs: the next device's [`TraversalCtrl::inbox_published`].
        pub send_published: DevicePtr<u32>,
        /// Items of the inbox ring (a power of two).
        pub inbox_capacity: u32,
        /// Alignment gap.
        pub gap2: u32,
        /// Device-driven runs: the previous device's [`TraversalCtrl::send_freed`].
        pub recv_freed: DevicePtr<u32>,
    }
}

// SAFETY: `#[repr(C)]`, laid out as `struct FusedParams` of abi_traversal.h (checked by
// tests/abi.rs), no padding: device pointers, a `PeerGroup` and `u32`s.
unsafe impl KernelArg for FusedParams {}

abi_constants! {
    TRAVERSAL_CONSTANTS in "abi_traversal.h" {
        /// [`FusedStateBlock::phase`]: no phase left, the run is over.
        pub const FUSED_PHASE_DONE = 0;
        /// [`FusedStateBlock::phase`]: one level of the whole grid.
        pub const FUSED_PHASE_EXPAND = 1;
        /// [`FusedStateBlock::phase`]: levels in the single-block (or cluster) mode.
        pub const FUSED_PHASE_SOLO = 2;
        /// [`FusedStateBlock::stop`]: the kernel ran to its end.
        pub const FUSED_STOP_NONE = 0;
        /// [`FusedStateBlock::stop`]: an append overflowed (the control block says which).
        pub const FUSED_STOP_OVERFLOW = 1;
        /// [`FusedStateBlock::stop`]: the kernel saw the abort word set.
        pub const FUSED_STOP_ABORTED = 2;
        /// [`FusedStateBlock::stop`] of a device-driven member: this plus the `PeerStatus` of a
        /// failed wait.
        pub const FUSED_STOP_PEER = 16;
        /// Kernel flag: low-degree lists relax with `atomicMin` at once, without the filtering
        /// load.
        pub const FUSED_DIRECT_MIN = 4;
        /// Kernel flag: the single-block mode keeps its next level in a shared-memory frontier.
        pub const FUSED_SOLO_SHARED = 8;
        /// Kernel flag: [`FUSED_DIRECT_MIN`] for the single-block mode's levels only.
        pub const FUSED_SOLO_DIRECT_MIN = 16;
    }
}
