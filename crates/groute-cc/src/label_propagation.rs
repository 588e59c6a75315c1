//! Connected components as a [`WorklistAlgorithm`]: label propagation, run by the worklist's
//! executors instead of the routers of [`connected_components`](crate::connected_components).

use groute_worklist::traversal::TraversalKernels;
use groute_worklist::{Combine, Start, WorklistAlgorithm};

/// The CUDA kernels of [`LabelPropagation`]'s rounds: `kernels/cc/labels.cu`.
const LABELS_SOURCE: groute_kernels::KernelSource = groute_kernels::cc::LABELS;

/// The CUDA fused persistent kernel of [`LabelPropagation`]: `kernels/cc/labels_fused.cu`.
const LABELS_FUSED_SOURCE: groute_kernels::KernelSource = groute_kernels::cc::LABELS_FUSED;

/// Label propagation: every vertex starts with its own id as its label and offers it to its
/// neighbours; a smaller label replaces a larger one. On a symmetric graph each vertex ends
/// with the smallest id of its component, the labels of [`cc_reference`](crate::cc_reference)
/// (on a directed graph, the smallest id of the vertices that reach it).
///
/// The topology-driven solver ([`CcSolver`](crate::CcSolver)) remains what `groute::cc`
/// runs: it needs one pass over the edges where label propagation needs as many rounds as
/// the components' diameter. This form runs wherever a [`WorklistAlgorithm`] does
/// (`groute_worklist::algorithm::HostSolver`, `groute::Runner::run_algorithm`), on CUDA
/// devices too (`groute_worklist::traversal::MinTraversalSolver`, and across the ranks of an
/// MPI job: `groute_dist::DistSolver`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LabelPropagation;

impl WorklistAlgorithm for LabelPropagation {
    type Value = u32;
    const COMBINE: Combine = Combine::Min;
    const START: Start = Start::EveryVertex;
    const WEIGHTED: bool = false;
    const CUDA_KERNELS: Option<TraversalKernels> = Some(TraversalKernels {
        source: &LABELS_SOURCE,
        fused_source: &LABELS_FUSED_SOURCE,
        expand: "cc_labels_expand",
        split_receive: "cc_labels_split_receive",
        fused: "cc_labels_fused",
        reexamine: "cc_labels_reexamine",
    });

    fn init(&self, vertex: u32, _source: bool) -> u32 {
        vertex
    }

    fn relax(&self, label: u32, _weight: u32, _out_degree: u32) -> Option<u32> {
        Some(label)
    }
}
