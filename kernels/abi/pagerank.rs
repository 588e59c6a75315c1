//! The device-driven PageRank's ABI structs and constants (`include/abi_pagerank.h`): its state
//! block, stop codes and flags, the peers block and the structs it takes as parameters.

use super::layout::{abi_constants, abi_struct};
use super::ptr::{DevicePtr, KernelArg};
use super::runtime::GridBarrierWords;

abi_struct! {
    /// The state block, zeroed by the host: the grid barrier's words, then the run's counters.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct PageRankStateBlock in "abi_pagerank.h" {
        /// The grid barrier's words.
        pub barrier: GridBarrierWords,
        /// Rounds run.
        pub rounds: u32,
        /// Of which sweep rounds.
        pub sweeps: u32,
        /// Vertices pushed.
        pub pushed: u64,
        /// The first unconsumed worklist position.
        pub start: u32,
        /// Peer exchanges made.
        pub exchanges: u32,
        /// Items listed in peers' inboxes.
        pub sent: u64,
        /// Inbox items drained.
        pub received: u64,
        /// Why the kernel stopped early (`PRF_STOP_*`; 0: it did not).
        pub stop: u32,
        /// The failed exchange's `PeerStatus`.
        pub peer_status: u32,
        /// The size a peer's inbox needed (0: none overflowed).
        pub inbox_overflow: u32,
        /// The vertices the round's chained gather takes (counted during the round, read and
        /// zeroed by its last barrier: 0 after a run).
        pub chain_taken: u32,
        /// `sent` at the end of the last round.
        pub sent_seen: u64,
        /// Phase times, ns: sweep takes, mirror posts (with the wait for the peers' posts),
        /// hub phases, gathers, worklist pushes, exchanges, drains.
        pub times: [u64; 7],
        /// The last time stamp.
        pub last_stamp: u64,
        /// Share values posted to peers by sweeps.
        pub mirror_sent: u64,
    }
}

abi_struct! {
    /// Every device's incoming halo, inbox, tails and share array, and the partition: a
    /// small block of device memory on each device (indexed by device, up to
    /// `PEER_MAX_DEVICES` = 8).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct PageRankPeers in "abi_pagerank.h" {
        /// Owner `o`'s halo: 2 x its owned vertices f32, parity-major.
        pub halo: [DevicePtr<f32>; 8],
        /// Device `o`'s share array (one f32 per vertex of the graph).
        pub share: [DevicePtr<f32>; 8],
        /// Its second one, of the chained sweeps (null: none).
        pub share_next: [DevicePtr<f32>; 8],
        /// Owner `o`'s inbox: 2 x `capacity[o]` vertices.
        pub inbox: [DevicePtr<u32>; 8],
        /// Owner `o`'s tails: 2 u32, one per parity.
        pub tails: [DevicePtr<u32>; 8],
        /// Device `o` owns `[bounds[o], bounds[o + 1])`.
        pub bounds: [u32; 9],
        /// Inbox entries per parity.
        pub capacity: [u32; 8],
        /// Not used.
        pub unused: u32,
    }
}

abi_struct! {
    /// The pull sweep's topology and the mirrors a device posts to its peers; null pointers
    /// and zero counts where a part is absent.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct PageRankPull in "abi_pagerank.h" {
        /// In-arc offsets of the owned rows.
        pub in_offsets: DevicePtr<u64>,
        /// The same rows as 32-bit arc positions where every owned in-list is shorter than
        /// [`PRF_SHORT_LIST_ARCS`] and the positions fit (null elsewhere): the chained
        /// sweeps' short-list gather reads them.
        pub in_offsets32: DevicePtr<u32>,
        /// Their in-arc tails.
        pub in_sources: DevicePtr<u32>,
        /// Every vertex's share.
        pub share: DevicePtr<f32>,
        /// Where no device has pull hubs: the second share array of the chained sweeps, whose
        /// gathers take the residuals they leave above epsilon at once, into the other array
        /// (null elsewhere).
        pub share_next: DevicePtr<f32>,
        /// Pull hubs (in-degree at least `hub_degree`).
        pub hubs: DevicePtr<u32>,
        /// Their tiles.
        pub tiles: DevicePtr<u64>,
        /// Their sums.
        pub hub_sum: DevicePtr<f32>,
        /// The pull hubs' least in-degree.
        pub hub_degree: u64,
        /// For every peer `o`, the owned vertices with an out-arc to `o`'s vertices,
        /// ascending: `mirrors[mirror_bounds[o]..mirror_bounds[o + 1]]`.
        pub mirrors: DevicePtr<u32>,
        /// Where each peer's mirrors start (an empty range for the device itself).
        pub mirror_bounds: [u32; 9],
        /// Pull hubs.
        pub hub_count: u32,
        /// Their tiles.
        pub tile_count: u32,
        /// At least the in-degree of every owned vertex (saturated).
        pub max_in_degree: u32,
    }
}

// SAFETY: `#[repr(C)]`, laid out as `struct PageRankPull` of abi_pagerank.h (checked by
// tests/abi.rs), no padding.
unsafe impl KernelArg for PageRankPull {}

abi_struct! {
    /// The device-driven PageRank's scalar settings.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct PageRankSettings in "abi_pagerank.h" {
        /// The sweep divisor (`PageRankTuning::sweep_divisor`).
        pub sweep_divisor: u32,
        /// Items of one worklist round at most (at least 1).
        pub max_batch: u32,
        /// Hub slots of the control block.
        pub hub_capacity: u32,
        /// `__nanosleep` between two polls at a grid barrier.
        pub spin_ns: u32,
        /// The grid barrier's flag bits.
        pub barrier_flags: u32,
        /// `PRF_FLAG_*` bits.
        pub flags: u32,
    }
}

// SAFETY: `#[repr(C)]`, laid out as `struct PageRankSettings` of abi_pagerank.h (checked by
// tests/abi.rs): six u32.
unsafe impl KernelArg for PageRankSettings {}

abi_constants! {
    PAGERANK_CONSTANTS in "abi_pagerank.h" {
        /// [`PageRankStateBlock::stop`]: this device's worklist or a peer's inbox overflowed.
        pub const PRF_STOP_OVERFLOW = 1;
        /// [`PageRankStateBlock::stop`]: another device stopped the run.
        pub const PRF_STOP_PEER = 2;
        /// [`PageRankStateBlock::stop`]: the host's abort word.
        pub const PRF_STOP_ABORTED = 3;
        /// [`PageRankStateBlock::stop`]: a cross-device exchange failed
        /// ([`PageRankStateBlock::peer_status`] says how).
        pub const PRF_STOP_EXCHANGE = 4;
        /// [`PageRankSettings::flags`]: one system fence per thread and round, before the
        /// barrier that runs the exchange, instead of one after every peer add.
        pub const PRF_FLAG_FENCE_PER_ROUND = 1;
        /// [`PageRankSettings::flags`]: the sweeps' gather deals its vertices out over the
        /// blocks thread by thread (for an upload in degree order).
        pub const PRF_FLAG_GATHER_INTERLEAVE = 2;
        /// The chained sweeps' short-list gather runs where every owned in-list is shorter
        /// than this ([`PageRankPull::in_offsets32`]).
        pub const PRF_SHORT_LIST_ARCS = 32;
    }
}
