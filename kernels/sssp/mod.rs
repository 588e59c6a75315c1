//! Single-source shortest paths on the generic min traversal of `include/traversal.cuh`.

kernel_sources! {
    "sssp":

    /// `sssp/sssp.cu`: SSSP expand and split-receive (the generic min traversal with weights) and
    /// the fused persistent kernel; launched by `groute-worklist`'s traversal worker for
    /// `groute-sssp`.
    pub const SSSP = "sssp.cu";
}
