//! Connected components: hook and compress, and label propagation on the generic min
//! traversal of `include/traversal.cuh`.

kernel_sources! {
    "cc":

    /// `cc/cc.cu`: connected components (init, hook, compress, merge); launched by `groute-cc`.
    pub const CC = "cc.cu";

    /// `cc/labels.cu`: label propagation's expand and split-receive (the generic min traversal
    /// with relax = the label) and the fused persistent kernel; launched by `groute-worklist`'s
    /// traversal worker for `groute-cc`'s `LabelPropagation`.
    pub const LABELS = "labels.cu";
}
