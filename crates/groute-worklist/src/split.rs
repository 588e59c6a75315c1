//! Split operations: how an application tells the worklist where each item goes.
//!
//! Every item a device produces, and every item it receives from its ring predecessor, goes
//! through a *split*: the application's [`SplitOps`] classify it with [`SplitFlags`]. An item
//! that is kept enters the device's local worklist; an item that is passed goes on around the
//! ring towards its owner; a duplicated item does both; a dropped item is retired (it is
//! counted as consumed by the termination protocol, see the crate docs).

use std::fmt;
use std::ops::BitOr;

use bytemuck::Pod;

/// What to do with one item: a set of bits, [`SplitFlags::KEEP`] and [`SplitFlags::PASS`].
///
/// ```
/// use groute_worklist::SplitFlags;
/// assert_eq!(SplitFlags::KEEP | SplitFlags::PASS, SplitFlags::DUPLICATE);
/// assert!(SplitFlags::DUPLICATE.keeps() && SplitFlags::DUPLICATE.passes());
/// assert!(!SplitFlags::DROP.keeps() && !SplitFlags::DROP.passes());
/// assert_eq!(SplitFlags::DUPLICATE.copies(), 2);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SplitFlags(u8);

impl SplitFlags {
    /// Retire the item: neither kept nor passed.
    pub const DROP: SplitFlags = SplitFlags(0);
    /// Push the (unpacked) item to this device's local worklist.
    pub const KEEP: SplitFlags = SplitFlags(1);
    /// Send the (packed) item on to the ring successor.
    pub const PASS: SplitFlags = SplitFlags(2);
    /// Both keep and pass.
    pub const DUPLICATE: SplitFlags = SplitFlags(3);

    /// The raw bits (mirrored by `kernels/include/split.cuh`).
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Flags from raw bits (unknown bits are ignored).
    pub const fn from_bits(bits: u8) -> SplitFlags {
        SplitFlags(bits & 3)
    }

    /// Whether the item goes to the local worklist.
    pub const fn keeps(self) -> bool {
        self.0 & 1 != 0
    }

    /// Whether the item goes on around the ring.
    pub const fn passes(self) -> bool {
        self.0 & 2 != 0
    }

    /// How many copies of the item survive the split (0, 1 or 2).
    pub const fn copies(self) -> u64 {
        (self.0 & 1) as u64 + ((self.0 >> 1) & 1) as u64
    }
}

impl BitOr for SplitFlags {
    type Output = SplitFlags;
    fn bitor(self, rhs: SplitFlags) -> SplitFlags {
        SplitFlags(self.0 | rhs.0)
    }
}

impl fmt::Debug for SplitFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            0 => "DROP",
            1 => "KEEP",
            2 => "PASS",
            _ => "DUPLICATE",
        })
    }
}

/// The application's side of the split, one instance per device (it typically holds that
/// device's ownership range and value array).
///
/// Local items (`Local`) are what the device's own kernels consume, typically a vertex id;
/// packed items (`Packed`) are what travels over the ring, typically a vertex and the value
/// that the producer computed for it, so that the owner can apply it.
///
/// The host kernels call these methods from many threads at once; CUDA kernels mirror them
/// with device functors (`kernels/include/split.cuh`).
pub trait SplitOps: Send + Sync {
    /// The item as the local worklist holds it.
    type Local: Pod + Send + Sync;
    /// The item as it travels over the ring.
    type Packed: Pod + Send + Sync;

    /// Packs a local item for sending.
    fn pack(&self, item: Self::Local) -> Self::Packed;
    /// Unpacks a received (or self-produced) item for the local worklist.
    fn unpack(&self, packed: Self::Packed) -> Self::Local;
    /// Classifies an item this device produced: keep it (it is mine), pass it (it belongs to
    /// another device), duplicate or drop it.
    fn on_send(&self, packed: &Self::Packed) -> SplitFlags;
    /// Classifies an item received from the ring predecessor. This is where an owner applies
    /// a remote update (and drops it if it does not improve what it knows) and where a
    /// non-owner filters a passing item against its halo copy.
    fn on_receive(&self, packed: &Self::Packed) -> SplitFlags;
    /// The item's priority (lower is more urgent); used by soft-priority scheduling.
    fn get_prio(&self, item: &Self::Local) -> u32;
    /// Whether a deferred item, whose priority was `deferred_prio` when it was deferred, is
    /// superseded: a newer copy of it has been queued since, so re-examination may drop it.
    /// Default: never (every deferred item is re-examined). Min traversals: the vertex's value
    /// improved, and every improvement of an owned vertex queues it.
    fn superseded(&self, item: &Self::Local, deferred_prio: u32) -> bool {
        let _ = (item, deferred_prio);
        false
    }
}

/// A vertex and a value computed for it: the packed item of label-correcting traversals
/// (BFS levels, SSSP distances), `struct groute::VertexValue` of `kernels/include/abi.h`.
pub use groute_kernels::abi::VertexValue;
