//! Connected components' ABI struct (`include/abi_cc.h`): the parameter of the kernels that
//! link a device's own rows.

use super::layout::abi_struct;
use super::ptr::{DevicePtr, KernelArg};

abi_struct! {
    /// The rows one device links into its parent array (`cc_link_first`, `cc_link_sampled`,
    /// `cc_link_rest`, `cc_link_tiles`). `offsets` and `targets` are rebased to global ids:
    /// `offsets[v]` is valid for `first_row <= v <= end_row`, `targets[e]` for the arcs of those
    /// rows.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct CcLink in "abi_cc.h" {
        /// Row offsets, by global vertex id.
        pub offsets: DevicePtr<u64>,
        /// Arc heads, by global arc id.
        pub targets: DevicePtr<u32>,
        /// The row of each tile (rows with at least `tile_arcs` arcs).
        pub tile_row: DevicePtr<u32>,
        /// The first arc of each tile; a tile runs `tile_arcs` arcs or to its row's end.
        pub tile_begin: DevicePtr<u64>,
        /// The parent array, `n` entries.
        pub parent: DevicePtr<u32>,
        /// Arcs linked, added to.
        pub linked: DevicePtr<u64>,
        /// The first row.
        pub first_row: u32,
        /// One past the last row.
        pub end_row: u32,
        /// Vertices of the graph (entries of `parent`).
        pub n: u32,
        /// `cc_link_sampled`: the arc of every row it links.
        pub round: u32,
        /// Arcs at the start of each row that `cc_link_rest` and `cc_link_tiles` skip (linked
        /// by `cc_link_first` and the sampling round), but arc 0 where its head is above the
        /// row (which neither links).
        pub sampled: u32,
        /// Rows in this vertex's tree are skipped (`>= n`: none).
        pub anchor: u32,
        /// Tiles.
        pub tile_count: u32,
        /// Arcs per tile (0: no row is tiled).
        pub tile_arcs: u32,
        /// Nonzero: only arcs to heads below their row are linked (a symmetric graph's other
        /// arcs are their reverses).
        pub lower_only: u32,
        /// Zero: completes the struct's last 8 bytes.
        pub pad: u32,
    }
}

// SAFETY: `#[repr(C)]`, laid out as `struct CcLink` of abi_cc.h (checked by tests/abi.rs): six
// 8-byte pointers and ten u32, no padding.
unsafe impl KernelArg for CcLink {}
