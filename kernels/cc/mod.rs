//! Connected components: hook and compress, and label propagation on the generic min
//! traversal of `include/traversal.cuh`.

kernel_sources! {
    "cc":

    /// `cc/cc.cu`: connected components (init, hook, compress, merge); launched by `groute-cc`.
    pub const CC = "cc.cu";

    /// `cc/labels.cu`: label propagation's expand and split-receive, one launch per round (the
    /// generic min traversal with relax = the label); launched by `groute-worklist`'s traversal
    /// worker for `groute-cc`'s `LabelPropagation`.
    pub const LABELS = "labels.cu";

    /// `cc/labels_fused.cu`: label propagation's fused persistent kernel, in all its builds;
    /// launched by `groute-worklist`'s traversal worker for `groute-cc`'s `LabelPropagation`.
    pub const LABELS_FUSED = "labels_fused.cu";
}
