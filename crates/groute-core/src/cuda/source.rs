//! The kernel sources of the project, embedded at build time (`include_str!`), so nothing is
//! read from the working directory at run time.

/// One CUDA C++ translation unit (`kernels/<name>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelSource {
    /// File name, as NVRTC reports it in diagnostics (`"pbf.cu"`).
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

/// `kernels/pbf.cu`: the predicate-based filter with warp-aggregated append.
pub const PBF: KernelSource = KernelSource {
    name: "pbf.cu",
    source: include_str!("../../../../kernels/pbf.cu"),
};

/// `kernels/cc.cu`: connected components (init, hook, compress, merge); launched by `groute-cc`.
pub const CC: KernelSource = KernelSource {
    name: "cc.cu",
    source: include_str!("../../../../kernels/cc.cu"),
};

/// `kernels/bfs.cu`: BFS expand and split-receive (the generic min traversal of
/// `kernels/include/traversal.cuh`) and the fused persistent kernel (`kernels/include/
/// fused.cuh`); launched by `groute-worklist`'s traversal worker.
pub const BFS: KernelSource = KernelSource {
    name: "bfs.cu",
    source: include_str!("../../../../kernels/bfs.cu"),
};

/// `kernels/bfs_direction.cu`: direction-optimizing BFS's bottom-up step and frontier degree
/// sums (its top-down step is [`BFS`]'s expand); launched by `groute-bfs`.
pub const BFS_DIRECTION: KernelSource = KernelSource {
    name: "bfs_direction.cu",
    source: include_str!("../../../../kernels/bfs_direction.cu"),
};

/// `kernels/bfs_direction_fused.cu`: direction-optimizing BFS as one persistent cooperative
/// launch per device for a whole run, on 1..8 GPUs (peer stores and `peer_allreduce_sum`);
/// launched by `groute-bfs`.
pub const BFS_DIRECTION_FUSED: KernelSource = KernelSource {
    name: "bfs_direction_fused.cu",
    source: include_str!("../../../../kernels/bfs_direction_fused.cu"),
};

/// `kernels/pagerank.cu`: residual-push PageRank (sweep, expand, hub push, pack,
/// split-receive, and the pull sweep's take and gather passes);
/// launched by `groute-pagerank`.
pub const PAGERANK: KernelSource = KernelSource {
    name: "pagerank.cu",
    source: include_str!("../../../../kernels/pagerank.cu"),
};

/// `kernels/pagerank_fused.cu`: device-driven PageRank, every round of a run in one persistent
/// cooperative kernel per device (the round bodies of `kernels/include/pagerank_push.cuh`, grid
/// barriers of `grid_barrier.cuh`, cross-device exchanges of `peer_group.cuh`); launched by
/// `groute-pagerank`'s fused driver.
pub const PAGERANK_FUSED: KernelSource = KernelSource {
    name: "pagerank_fused.cu",
    source: include_str!("../../../../kernels/pagerank_fused.cu"),
};

/// `kernels/sssp.cu`: SSSP expand and split-receive (the generic min traversal with weights)
/// and the fused persistent kernel; launched by `groute-worklist`'s traversal worker for `groute-sssp`.
pub const SSSP: KernelSource = KernelSource {
    name: "sssp.cu",
    source: include_str!("../../../../kernels/sssp.cu"),
};

/// `kernels/fused_barrier.cu`: the fused kernel's grid barrier alone, timed and self-checked
/// (`groute-worklist`'s `traversal::time_fused_barrier`).
pub const FUSED_BARRIER: KernelSource = KernelSource {
    name: "fused_barrier.cu",
    source: include_str!("../../../../kernels/fused_barrier.cu"),
};

/// `kernels/peer_copy.cu`: the SM-driven copy of links' [`crate::CopyMethod::Kernel`]
/// (16-byte vectors where the alignments allow, stores straight into a peer's memory);
/// launched by [`crate::cuda::peer_copy`].
pub const PEER_COPY: KernelSource = KernelSource {
    name: "peer_copy.cu",
    source: include_str!("../../../../kernels/peer_copy.cu"),
};

/// `kernels/peer_group.cu`: the self-check and latency probe of the cross-device all-reduce
/// (`kernels/include/peer_group.cuh`); launched by [`crate::cuda::peer_group_probe`].
pub const PEER_GROUP: KernelSource = KernelSource {
    name: "peer_group.cu",
    source: include_str!("../../../../kernels/peer_group.cu"),
};

/// Every header in `kernels/include/`; all of them are given to every compilation.
pub const HEADERS: &[KernelHeader] = &[
    KernelHeader {
        name: "warp_append.cuh",
        source: include_str!("../../../../kernels/include/warp_append.cuh"),
    },
    KernelHeader {
        name: "predicated.cuh",
        source: include_str!("../../../../kernels/include/predicated.cuh"),
    },
    KernelHeader {
        name: "split.cuh",
        source: include_str!("../../../../kernels/include/split.cuh"),
    },
    KernelHeader {
        name: "worklist.cuh",
        source: include_str!("../../../../kernels/include/worklist.cuh"),
    },
    KernelHeader {
        name: "traversal.cuh",
        source: include_str!("../../../../kernels/include/traversal.cuh"),
    },
    KernelHeader {
        name: "solo_frontier.cuh",
        source: include_str!("../../../../kernels/include/solo_frontier.cuh"),
    },
    KernelHeader {
        name: "solo_queue.cuh",
        source: include_str!("../../../../kernels/include/solo_queue.cuh"),
    },
    KernelHeader {
        name: "cluster_solo.cuh",
        source: include_str!("../../../../kernels/include/cluster_solo.cuh"),
    },
    KernelHeader {
        name: "grid_barrier.cuh",
        source: include_str!("../../../../kernels/include/grid_barrier.cuh"),
    },
    KernelHeader {
        name: "fused.cuh",
        source: include_str!("../../../../kernels/include/fused.cuh"),
    },
    KernelHeader {
        name: "list_claim.cuh",
        source: include_str!("../../../../kernels/include/list_claim.cuh"),
    },
    KernelHeader {
        name: "fused_async.cuh",
        source: include_str!("../../../../kernels/include/fused_async.cuh"),
    },
    KernelHeader {
        name: "hubs.cuh",
        source: include_str!("../../../../kernels/include/hubs.cuh"),
    },
    KernelHeader {
        name: "block_count.cuh",
        source: include_str!("../../../../kernels/include/block_count.cuh"),
    },
    KernelHeader {
        name: "direction.cuh",
        source: include_str!("../../../../kernels/include/direction.cuh"),
    },
    KernelHeader {
        name: "direction_trace.cuh",
        source: include_str!("../../../../kernels/include/direction_trace.cuh"),
    },
    KernelHeader {
        name: "push_appends.cuh",
        source: include_str!("../../../../kernels/include/push_appends.cuh"),
    },
    KernelHeader {
        name: "pagerank_push.cuh",
        source: include_str!("../../../../kernels/include/pagerank_push.cuh"),
    },
    KernelHeader {
        name: "pull_gather.cuh",
        source: include_str!("../../../../kernels/include/pull_gather.cuh"),
    },
    KernelHeader {
        name: "peer_group.cuh",
        source: include_str!("../../../../kernels/include/peer_group.cuh"),
    },
    KernelHeader {
        name: "peer_post.cuh",
        source: include_str!("../../../../kernels/include/peer_post.cuh"),
    },
];

/// Every kernel source in `kernels/` (the CI compile check iterates over this list, and a test
/// checks it against the directory so a new `.cu` file cannot be forgotten).
pub const KERNELS: &[KernelSource] = &[
    PBF,
    CC,
    BFS,
    BFS_DIRECTION,
    BFS_DIRECTION_FUSED,
    PAGERANK,
    PAGERANK_FUSED,
    SSSP,
    FUSED_BARRIER,
    PEER_COPY,
    PEER_GROUP,
];
