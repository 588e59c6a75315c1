//! Connected components: hook and compress, and label propagation on the generic min
//! traversal of `include/traversal.cuh`.

use crate::KernelSource;

/// `cc/cc.cu`: connected components (init, hook, compress, merge); launched by `groute-cc`.
pub const CC: KernelSource = KernelSource {
    name: "cc/cc.cu",
    source: include_str!("cc.cu"),
};

/// `cc/labels.cu`: label propagation's expand and split-receive (the generic min traversal
/// with relax = the label) and the fused persistent kernel; launched by `groute-worklist`'s
/// traversal worker for `groute-cc`'s `LabelPropagation`.
pub const LABELS: KernelSource = KernelSource {
    name: "cc/labels.cu",
    source: include_str!("labels.cu"),
};
