//! Single-source shortest paths on the generic min traversal of `include/traversal.cuh`.

kernel_sources! {
    "sssp":

    /// `sssp/sssp.cu`: SSSP expand and split-receive, one launch per round (the generic min
    /// traversal with weights); launched by `groute-worklist`'s traversal worker for
    /// `groute-sssp`.
    pub const SSSP = "sssp.cu";

    /// `sssp/sssp_fused.cu`: SSSP's fused persistent kernel, in all its builds; launched by
    /// `groute-worklist`'s traversal worker for `groute-sssp`.
    pub const SSSP_FUSED = "sssp_fused.cu";
}
