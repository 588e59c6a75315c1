//! Connected components.

use crate::KernelSource;

/// `cc/cc.cu`: connected components (init, hook, compress, merge); launched by `groute-cc`.
pub const CC: KernelSource = KernelSource {
    name: "cc/cc.cu",
    source: include_str!("cc.cu"),
};
