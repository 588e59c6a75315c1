//! Predicate-based filtering (the paper's Figures 5 and 6).

use crate::KernelSource;

/// `pbf/pbf.cu`: the predicate-based filter with warp-aggregated append; launched by the
/// `groute` facade's PBF pipeline.
pub const PBF: KernelSource = KernelSource {
    name: "pbf/pbf.cu",
    source: include_str!("pbf.cu"),
};
