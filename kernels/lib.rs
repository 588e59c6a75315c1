//! groute's CUDA C++ kernels, embedded at build time (`include_str!`) so nothing is read from
//! the working directory at run time. `groute-core` compiles them with NVRTC (per
//! architecture, cached) and launches them; this crate only holds the text.
//!
//! The folder is organised by owner, and the modules mirror it:
//!
//! | folder / module | kernels | launched by |
//! |---|---|---|
//! | `include/` ([`HEADERS`]) | the runtime's device headers: rings, barriers, worklists, the executors' templates; `abi*.h`, the structs shared with the host | (included) |
//! | [`abi`] | the `#[repr(C)]` twins of `include/abi*.h`, [`abi::DevicePtr`], [`abi::KernelArg`] | every launching crate |
//! | [`runtime`] | peer copy, peer group probe, grid barrier probe | `groute-core`, `groute-worklist` |
//! | [`bfs`] | worklist BFS, direction-optimizing BFS (per level and fused) | `groute-worklist`, `groute-bfs` |
//! | [`sssp`] | worklist SSSP | `groute-worklist` for `groute-sssp` |
//! | [`pagerank`] | residual-push and pull PageRank, fused PageRank | `groute-pagerank` |
//! | [`cc`] | connected components | `groute-cc` |
//! | [`pbf`] | the predicate-based filter | `groute` |
//!
//! A source's [`KernelSource::name`] is its path under `kernels/` (`"bfs/bfs_direction.cu"`),
//! the name NVRTC gives in diagnostics. File names keep their algorithm's prefix: NVRTC
//! mangles the names of internal-linkage symbols with the file's base name, so a renamed file
//! gives different PTX. Every header is given to every compilation under its bare file name,
//! so `#include "traversal.cuh"` resolves from any folder.
//!
//! ```
//! let bfs = &groute_kernels::bfs::BFS;
//! assert_eq!(bfs.name, "bfs/bfs.cu");
//! assert!(bfs.source.contains("bfs_expand"));
//! assert!(groute_kernels::KERNELS.contains(bfs));
//! ```

#![no_std]

/// The [`KernelSource`]s of one folder: each `pub const NAME = "file.cu";` (with its doc
/// comment) is the source `"<folder>/file.cu"`, its text embedded from that file.
macro_rules! kernel_sources {
    ($folder:literal: $($(#[$doc:meta])* pub const $name:ident = $file:literal;)+) => {
        $(
            $(#[$doc])*
            pub const $name: $crate::KernelSource = $crate::KernelSource {
                name: concat!($folder, "/", $file),
                source: include_str!($file),
            };
        )+
    };
}

pub mod abi;
pub mod bfs;
pub mod cc;
pub mod pagerank;
pub mod pbf;
pub mod runtime;
pub mod sssp;

/// One CUDA C++ translation unit (`kernels/<folder>/<file>.cu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelSource {
    /// The path under `kernels/`, as NVRTC reports it in diagnostics (`"pbf/pbf.cu"`).
    pub name: &'static str,
    /// The source text.
    pub source: &'static str,
}

/// One shared device header (`kernels/include/<name>`), resolved by NVRTC for
/// `#include "<name>"` without touching the file system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelHeader {
    /// Include name (`"warp_append.cuh"`).
    pub name: &'static str,
    /// The header text.
    pub source: &'static str,
}

/// One [`KernelHeader`] of `include/`, named by its file name.
macro_rules! header {
    ($file:literal) => {
        KernelHeader {
            name: $file,
            source: include_str!(concat!("include/", $file)),
        }
    };
}

/// Every header in `kernels/include/`; all of them are given to every compilation.
pub const HEADERS: &[KernelHeader] = &[
    header!("abi.h"),
    header!("abi_traversal.h"),
    header!("abi_direction.h"),
    header!("abi_pagerank.h"),
    header!("abi_cc.h"),
    header!("warp_append.cuh"),
    header!("predicated.cuh"),
    header!("split.cuh"),
    header!("worklist.cuh"),
    header!("traversal.cuh"),
    header!("solo_frontier.cuh"),
    header!("cluster_solo.cuh"),
    header!("grid_barrier.cuh"),
    header!("fused.cuh"),
    header!("fused_state.cuh"),
    header!("fused_next.cuh"),
    header!("fused_phase_trace.cuh"),
    header!("fused_solo_peer.cuh"),
    header!("fused_solo.cuh"),
    header!("list_claim.cuh"),
    header!("low_list.cuh"),
    header!("reexamine.cuh"),
    header!("block_stage.cuh"),
    header!("hubs.cuh"),
    header!("block_count.cuh"),
    header!("direction.cuh"),
    header!("direction_trace.cuh"),
    header!("direction_fused.cuh"),
    header!("direction_fused_words.cuh"),
    header!("direction_fused_run.cuh"),
    header!("direction_fused_decide.cuh"),
    header!("direction_fused_pull.cuh"),
    header!("pull_lists.cuh"),
    header!("frontier_words.cuh"),
    header!("push_appends.cuh"),
    header!("pagerank_push.cuh"),
    header!("pull_sweep_gather.cuh"),
    header!("pull_gather.cuh"),
    header!("gather_tiles.cuh"),
    header!("grid_dependency.cuh"),
    header!("peer_group.cuh"),
    header!("peer_post.cuh"),
];

/// Every kernel source of the crate (the CI compile check iterates over this list, and a test
/// checks it against the folders so a new `.cu` file cannot be forgotten).
pub const KERNELS: &[KernelSource] = &[
    pbf::PBF,
    cc::CC,
    cc::LABELS,
    cc::LABELS_FUSED,
    bfs::BFS,
    bfs::BFS_FUSED,
    bfs::DIRECTION,
    bfs::DIRECTION_FUSED,
    bfs::DIRECTION_FUSED_SEVERAL,
    pagerank::PAGERANK,
    pagerank::FUSED,
    sssp::SSSP,
    sssp::SSSP_FUSED,
    runtime::FUSED_BARRIER,
    runtime::PEER_COPY,
    runtime::PEER_GROUP,
];
