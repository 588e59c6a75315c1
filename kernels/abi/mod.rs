//! The data the host and the kernels share, on the Rust side: `#[repr(C)]` twins of the structs
//! of `include/abi.h` (and its family headers, `abi_<family>.h`), the typed device pointer they
//! hold ([`DevicePtr`]) and the marker of what may be passed to a kernel ([`KernelArg`]).
//!
//! Constants both sides use (phases, stop codes, flag bits) are declared here and checked
//! against the C enumerators of the same names ([`CONSTANTS`]).
//!
//! Each struct records its layout ([`AbiLayout`]: size, alignment, every field's offset and
//! size), and `tests/abi.rs` compiles the C headers with the host's C compiler against those
//! layouts: a field added, moved or resized on one side only fails that test. The CUDA
//! headers derive their word numbers from the same structs (`GROUTE_WORD`), and the host
//! addresses a block of words by field too ([`abi_word!`](crate::abi_word)), so no offset is
//! written twice.
//!
//! ```
//! use groute_kernels::abi::{FusedStateBlock, LAYOUTS};
//! assert_eq!(groute_kernels::abi_word!(FusedStateBlock, phase), 64);
//! assert!(LAYOUTS.iter().any(|l| l.name == "FusedStateBlock" && l.size == 400));
//! ```

mod cc;
mod direction;
mod layout;
mod pagerank;
mod ptr;
mod runtime;
mod traversal;

pub use cc::CcLink;
pub use direction::{DirectionParams, DirectionStateBlock};
pub use layout::{AbiConstant, AbiField, AbiLayout};
pub use pagerank::{
    PAGERANK_CONSTANTS, PRF_FLAG_FENCE_PER_ROUND, PRF_FLAG_GATHER_INTERLEAVE, PRF_SHORT_LIST_ARCS,
    PRF_STOP_ABORTED, PRF_STOP_EXCHANGE, PRF_STOP_OVERFLOW, PRF_STOP_PEER, PageRankPeers,
    PageRankPull, PageRankSettings, PageRankStateBlock,
};
pub use ptr::{DeviceMemory, DevicePtr, KernelArg};
pub use runtime::{
    FUSED_BARRIER_FENCED, FUSED_BARRIER_TAGGED, GridBarrierWords, PeerGroup, RUNTIME_CONSTANTS,
    VertexValue,
};
pub use traversal::{
    FUSED_DIRECT_MIN, FUSED_PHASE_DONE, FUSED_PHASE_EXPAND, FUSED_PHASE_SOLO,
    FUSED_SOLO_DIRECT_MIN, FUSED_SOLO_SHARED, FUSED_STOP_ABORTED, FUSED_STOP_NONE,
    FUSED_STOP_OVERFLOW, FUSED_STOP_PEER, FusedParams, FusedStateBlock, TRAVERSAL_CONSTANTS,
    TraversalCtrl,
};

/// Every struct of the ABI, for the layout check against the C headers.
pub const LAYOUTS: &[AbiLayout] = &[
    VertexValue::LAYOUT,
    PeerGroup::LAYOUT,
    GridBarrierWords::LAYOUT,
    TraversalCtrl::LAYOUT,
    FusedStateBlock::LAYOUT,
    FusedParams::LAYOUT,
    DirectionStateBlock::LAYOUT,
    DirectionParams::LAYOUT,
    PageRankStateBlock::LAYOUT,
    PageRankPeers::LAYOUT,
    PageRankPull::LAYOUT,
    PageRankSettings::LAYOUT,
    CcLink::LAYOUT,
];

/// Every constant of the ABI, for the check against the C enumerators.
pub const CONSTANTS: &[&[AbiConstant]] =
    &[RUNTIME_CONSTANTS, TRAVERSAL_CONSTANTS, PAGERANK_CONSTANTS];

/// The index of `field` in the ABI struct `S` counted in 32-bit words, as the kernels index a
/// block of words (`GROUTE_WORD` of `abi.h`): `abi_word!(TraversalCtrl, wl_end)` is 0.
#[macro_export]
macro_rules! abi_word {
    ($struct:ty, $field:ident) => {
        ::core::mem::offset_of!($struct, $field) / 4
    };
}

/// The ABI block `T` held at the start of `words`, as read back from the device (a state
/// block downloaded as `u32` or `u64` words); `None` when `words` is shorter than a `T`.
pub fn read_block<T: bytemuck::Pod, W: bytemuck::Pod>(words: &[W]) -> Option<T> {
    let bytes: &[u8] = bytemuck::cast_slice(words);
    bytes
        .get(..core::mem::size_of::<T>())
        .map(bytemuck::pod_read_unaligned)
}

/// The words of the ABI block `block`, to write it to the device.
pub fn block_words<T: bytemuck::Pod>(block: &T) -> &[u32] {
    bytemuck::cast_slice(core::slice::from_ref(block))
}

/// The size of the ABI struct `S` in 32-bit words (`GROUTE_WORDS` of `abi.h`).
pub const fn words_of<S>() -> usize {
    core::mem::size_of::<S>() / 4
}
