//! Predicate-based filtering (the paper's Figures 5 and 6).

kernel_sources! {
    "pbf":

    /// `pbf/pbf.cu`: the predicate-based filter with warp-aggregated append; launched by the
    /// `groute` facade's PBF pipeline.
    pub const PBF = "pbf.cu";
}
