//! PageRank: residual push (and the pull sweep) launched per round, and the fused
//! device-driven form.

kernel_sources! {
    "pagerank":

    /// `pagerank/pagerank.cu`: residual-push PageRank (sweep, expand, hub push, pack,
    /// split-receive, the pull sweep's take and gather passes, and the boundary exchange's
    /// pack and unpack); launched by
    /// `groute-pagerank`.
    pub const PAGERANK = "pagerank.cu";

    /// `pagerank/pagerank_fused.cu`: device-driven PageRank, every round of a run in one persistent
    /// cooperative kernel per device (the round bodies of `include/pagerank_push.cuh`, grid
    /// barriers of `grid_barrier.cuh`, cross-device exchanges of `peer_group.cuh`); launched by
    /// `groute-pagerank`'s fused driver.
    pub const FUSED = "pagerank_fused.cu";
}
