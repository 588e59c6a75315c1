//! The device-driven direction-optimizing BFS's ABI structs and flags
//! (`include/abi_direction.h`): its state block and its parameter.

use super::layout::abi_struct;
use super::ptr::{DevicePtr, KernelArg};
use super::runtime::PeerGroup;

abi_struct! {
    /// The state block, 32 `u64` words zeroed by the host: the level counters of this device,
    /// the run's totals (what the host reads back) and the direction rule's position.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct DirectionStateBlock in "abi_direction.h" {
        /// The level counters (`DIRECTION_COUNTERS` of direction.cuh), zeroed by every decide.
        pub counters: [u64; 4],
        /// Level steps run.
        pub levels: u64,
        /// Of them, pull steps.
        pub pull_levels: u64,
        /// Vertices worked on.
        pub items: u64,
        /// Arcs read.
        pub arcs: u64,
        /// The `PeerStatus` of a failed exchange (0: none).
        pub status: u64,
        /// Exchanges made.
        pub exchanges: u64,
        /// The source's level was decided.
        pub started: u64,
        /// The last step pulled.
        pub pulling: u64,
        /// The previous frontier's vertices (global).
        pub previous: u64,
        /// In-arcs left on unvisited vertices (global).
        pub unvisited_in: u64,
        /// Vertices reached (global).
        pub reached: u64,
        /// The current frontier's vertices (global).
        pub frontier: u64,
        /// The current frontier's out-arcs (global).
        pub frontier_out: u64,
        /// The current frontier's level.
        pub level: u64,
        /// Not used.
        pub unused: [u64; 6],
        /// Sparse pushes: the list lengths sent, by rank.
        pub received: [u64; 8],
    }
}

abi_struct! {
    /// The parameter of `bfs_direction_fused_one` and `bfs_direction_fused_several` (and their
    /// `_bits` twins). The `gap` fields fill the alignment gaps (kept zero).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct DirectionParams in "abi_direction.h" {
        /// The level of every vertex.
        pub levels: DevicePtr<u32>,
        /// Out-arc offsets by global vertex id.
        pub push_offsets: DevicePtr<u64>,
        /// Out-arc heads by global arc id.
        pub push_targets: DevicePtr<u32>,
        /// In-arc offsets (the push CSR's on a symmetric graph).
        pub pull_offsets: DevicePtr<u64>,
        /// In-arc tails.
        pub pull_sources: DevicePtr<u32>,
        /// Vertices.
        pub n: u32,
        /// The first vertex this device owns.
        pub owned_begin: u32,
        /// The end of the vertices it owns.
        pub owned_end: u32,
        /// The run's source (several members: every one expands its out-arcs at level 0).
        pub source: u32,
        /// The worklist: `wl_mask + 1` vertex ids.
        pub wl_data: DevicePtr<u32>,
        /// The worklist's capacity less one.
        pub wl_mask: u32,
        /// Alignment gap.
        pub gap1: u32,
        /// The control block (the traversals' `TraversalCtrl`) and its hub slots.
        pub ctrl: DevicePtr<u32>,
        /// The grid barrier's block.
        pub barrier: DevicePtr<u32>,
        /// The state block ([`DirectionStateBlock`]).
        pub state: DevicePtr<u64>,
        /// Every member's inbox address.
        pub inboxes: DevicePtr<u64>,
        /// Arcs in all.
        pub in_arcs: u64,
        /// The direction rule's alpha (0: push only).
        pub alpha: u64,
        /// The direction rule's beta.
        pub beta: u64,
        /// The direction rule's gamma (0: no bound).
        pub gamma: u64,
        /// This member's group.
        pub group: PeerGroup,
        /// The level trace, or null.
        pub trace_words: DevicePtr<u64>,
        /// Every member's postbox address.
        pub postboxes: DevicePtr<u64>,
        /// The out-arc heads of the member that owns the source, by global arc id (several
        /// members; reachable from every member, as its inbox).
        pub source_targets: DevicePtr<u32>,
        /// Two bitmaps of `ceil(n / 32)` words, the frontier at the levels of each parity,
        /// which the pulls read instead of the level array; or null: they read the levels.
        pub front_bits: DevicePtr<u32>,
        /// With `front_bits`, the pull lists: the owned unreached vertices with in-arcs that
        /// a pull did not reach, which the next pull scans instead of every owned vertex, in
        /// a region per warp of the grid (their lengths first, a `u32` per warp; then
        /// `pull_list_words` less that); null: every pull scans every owned vertex.
        pub pull_lists: DevicePtr<u32>,
        /// The `u32` at `pull_lists` (the kernel uses no lists where they are too few for its
        /// grid).
        pub pull_list_words: u64,
        /// With `pull_lists`: the owned vertices with in-arcs, ascending, which the first
        /// pull of a run scans (a vertex without in-arcs is never pulled).
        pub pullable: DevicePtr<u32>,
        /// The vertices at `pullable`.
        pub pullable_count: u64,
    }
}

// SAFETY: `#[repr(C)]`, laid out as `struct DirectionParams` of abi_direction.h (checked by
// tests/abi.rs), no padding.
unsafe impl KernelArg for DirectionParams {}
