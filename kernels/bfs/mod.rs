//! Breadth-first search: the worklist BFS (on the generic min traversal of
//! `include/traversal.cuh`) and the direction-optimizing BFS, per level and fused.

kernel_sources! {
    "bfs":

    /// `bfs/bfs.cu`: BFS expand and split-receive, one launch per round (the generic min
    /// traversal of `include/traversal.cuh`); launched by `groute-worklist`'s traversal worker
    /// and the direction-optimizing BFS's push steps.
    pub const BFS = "bfs.cu";

    /// `bfs/bfs_fused.cu`: the worklist BFS's fused persistent kernel (`include/fused.cuh`), in
    /// all its builds; launched by `groute-worklist`'s traversal worker.
    pub const BFS_FUSED = "bfs_fused.cu";

    /// `bfs/bfs_direction.cu`: direction-optimizing BFS's bottom-up step and frontier degree sums
    /// (its top-down step is [`BFS`]'s expand); launched by `groute-bfs`.
    pub const DIRECTION = "bfs_direction.cu";

    /// `bfs/bfs_direction_fused.cu`: direction-optimizing BFS as one persistent cooperative
    /// launch per device for a whole run (`include/direction_fused.cuh`), its one-device builds
    /// (entry points `bfs_direction_fused_one` and `bfs_direction_fused_one_bits`); launched
    /// by `groute-bfs`.
    pub const DIRECTION_FUSED = "bfs_direction_fused.cu";

    /// `bfs/bfs_direction_fused_several.cu`: the same kernel's builds for 2..8 GPUs (peer
    /// stores and `peer_post_allreduce_sum`; entry points `bfs_direction_fused_several` and
    /// `bfs_direction_fused_several_bits`); launched by `groute-bfs`.
    pub const DIRECTION_FUSED_SEVERAL = "bfs_direction_fused_several.cu";
}
