//! The runtime's ABI structs (`include/abi.h`): the packed item, the peer group parameter and
//! the grid barrier's words.

use super::layout::{abi_constants, abi_struct};
use super::ptr::{DevicePtr, KernelArg};

abi_struct! {
    /// A vertex and a value computed for it: the packed item of the label-correcting
    /// traversals (BFS levels, SSSP distances). 8 bytes, vertex first.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct VertexValue in "abi.h" {
        /// The vertex (in the partitioned numbering).
        pub vertex: u32,
        /// The value proposed for it.
        pub value: u32,
    }
}

abi_struct! {
    /// A device's view of its peer group (`include/peer_group.cuh`), the kernel parameter of
    /// device-driven runs: a group of size 1 with null pointers for a device alone.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
    pub struct PeerGroup in "abi.h" {
        /// The mailbox (device 0's memory).
        pub mailbox: DevicePtr<u64>,
        /// The host's abort word (mapped host memory).
        pub abort: DevicePtr<u32>,
        /// This member (its device index).
        pub rank: u32,
        /// Members of the group.
        pub size: u32,
        /// The longest wait at one exchange, in nanoseconds.
        pub timeout_ns: u64,
    }
}

impl PeerGroup {
    /// The group of a device running alone: size 1, null pointers the kernel never touches.
    pub const ALONE: PeerGroup = PeerGroup {
        mailbox: DevicePtr::null(),
        abort: DevicePtr::null(),
        rank: 0,
        size: 1,
        timeout_ns: 0,
    };
}

// SAFETY: `#[repr(C)]`, laid out as `struct PeerGroup` of abi.h (checked by tests/abi.rs), no
// padding.
unsafe impl KernelArg for PeerGroup {}

abi_struct! {
    /// The grid barrier's words (`include/grid_barrier.cuh`), zeroed by the host before a
    /// launch: the start of the fused traversal's and PageRank's state blocks, and the
    /// direction-optimizing BFS's barrier block.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct GridBarrierWords in "abi.h" {
        /// Arrivals so far, never reset.
        pub count: u32,
        /// The rest of the count's 128-byte line.
        pub count_line: [u32; 31],
        /// The barrier's generation, bumped to release.
        pub generation: u32,
        /// The rest of the generation's 32 bytes.
        pub generation_line: [u32; 7],
        /// The release record: `generation << 32 | value` per value.
        pub record: [u64; 9],
        /// The rest of the record's line.
        pub record_line: [u32; 6],
    }
}

abi_constants! {
    RUNTIME_CONSTANTS in "abi.h" {
        /// Grid barrier flag: memory ordering by `__threadfence()` around relaxed atomics and
        /// volatile polling instead of single acquire/release operations.
        pub const FUSED_BARRIER_FENCED = 1;
        /// Grid barrier flag: waiting blocks poll the release record itself (every value tagged
        /// with its generation) instead of the generation word and then the record.
        pub const FUSED_BARRIER_TAGGED = 2;
    }
}
