//! The runtime's own kernels: links' SM-driven copy, the probes of the cross-device group and
//! of the fused executors' grid barrier.

kernel_sources! {
    "runtime":

    /// `runtime/peer_copy.cu`: the SM-driven copy of `groute-core`'s links with
    /// `CopyMethod::Kernel` (16-byte vectors where the alignments allow, stores straight into a
    /// peer's memory); launched by `groute_core::cuda::peer_copy`.
    pub const PEER_COPY = "peer_copy.cu";

    /// `runtime/peer_group.cu`: the self-check and latency probe of the cross-device all-reduce
    /// (`include/peer_group.cuh`); launched by `groute_core::cuda::peer_group_probe`.
    pub const PEER_GROUP = "peer_group.cu";

    /// `runtime/fused_barrier.cu`: the fused executors' grid barrier alone, timed and
    /// self-checked (`groute-worklist`'s `traversal::time_fused_barrier`).
    pub const FUSED_BARRIER = "fused_barrier.cu";
}
