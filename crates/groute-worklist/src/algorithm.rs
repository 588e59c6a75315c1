//! The one interface of a worklist algorithm ([`WorklistAlgorithm`]), in the shape of the
//! Groute paper's worklist programs: a value per vertex, its initial value, where a run
//! starts, the operator that proposes an update to the head of each arc, how updates to one
//! vertex combine, when an update schedules the vertex, and the priority of an item.
//!
//! Everything else is the executors': the storage of each device's part, the split of
//! produced items into kept, passed and dropped ones, the combining of remote updates before
//! they leave a device, soft priority and termination. The host backend runs any
//! implementation (`host`: [`HostAlgorithm`]); the CUDA executors run the min-combined ones
//! that name their kernels ([`WorklistAlgorithm::CUDA_KERNELS`],
//! [`MinTraversalSolver`](crate::traversal::MinTraversalSolver)).
//!
//! BFS, SSSP and PageRank's residual push are each one implementation; the crate's tests add
//! connected components by label propagation, widest paths and path counts in a few lines
//! each. Connected components, run on three host-backend devices:
//!
//! ```
//! use groute_graph::{EdgeList, Graph, Partition};
//! use groute_worklist::algorithm::HostSolver;
//! use groute_worklist::{Combine, Start, WorklistAlgorithm, WorklistOptions};
//!
//! /// Each vertex ends with the smallest id of its component.
//! struct ComponentLabels;
//!
//! impl WorklistAlgorithm for ComponentLabels {
//!     type Value = u32;
//!     const COMBINE: Combine = Combine::Min;
//!     const START: Start = Start::EveryVertex;
//!     const WEIGHTED: bool = false;
//!     fn init(&self, vertex: u32, _source: bool) -> u32 {
//!         vertex
//!     }
//!     fn relax(&self, label: u32, _weight: u32, _out_degree: u32) -> Option<u32> {
//!         Some(label)
//!     }
//! }
//!
//! let pairs = [(0, 4), (4, 5), (1, 2), (3, 6), (6, 2)];
//! let graph = Graph::from_edges(7, &EdgeList::from_pairs(&pairs), "two parts", true)?;
//! let context = groute_core::Context::host(3)?;
//! let partition = Partition::from_bounds(vec![0, 2, 5, 7]).ok_or("unsorted bounds")?;
//! let options = WorklistOptions::default();
//! let mut solver = HostSolver::new(&context, ComponentLabels, &graph.csr, &partition, &options)?;
//! let out = solver.run(&[], &options)?;
//! assert_eq!(out.values, [0, 1, 1, 1, 0, 0, 1]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod host;
mod solver;
mod value;

pub(crate) use host::check_weights;
pub use host::{AlgorithmSplit, AtomicArray, HostAlgorithm, HostRound, par_collect};
pub use solver::{HostOutput, HostSolver};
pub(crate) use solver::{check_partition, download_owned, for_owned_ranges};
pub use value::AtomicValue;

use crate::band::BandQuery;
use crate::traversal::TraversalKernels;

/// How updates to one vertex combine, and so what processing an item does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// The smaller value wins (label correcting: BFS levels, SSSP distances, component
    /// labels). Processing an item reads its vertex's value, which stays the result. A device
    /// keeps the best value it has sent for another device's vertex (its halo copy) and sends
    /// an update only when it improves on it.
    Min,
    /// Updates add up (accumulating: PageRank's residuals; values are never negative).
    /// Processing an item *takes* its vertex's value, leaving zero, adds it to the vertex's
    /// result, and relaxes the arcs with it. A device adds the updates for another device's
    /// vertex into its halo slot and sends the sum once per round.
    Sum,
}

/// Where a run starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// From the run's sources: they are the first items, valued
    /// `init(vertex, true)`.
    Sources,
    /// From every vertex: the first round processes each device's whole owned range, run as
    /// a range (no worklist of every vertex is built); the run's sources are ignored.
    EveryVertex,
}

/// Whether a vertex's value going from `old` to `new` is a change worth an item: under
/// [`Combine::Min`] an improvement, under [`Combine::Sum`] a first addition to an empty
/// accumulation. The default of [`WorklistAlgorithm::schedules`], and the executors' rule for
/// the halo copies of other devices' vertices (an update worth sending).
pub(crate) fn changes<A: WorklistAlgorithm + ?Sized>(old: A::Value, new: A::Value) -> bool {
    match A::COMBINE {
        Combine::Min => new < old,
        Combine::Sum => old == A::Value::ZERO && new != A::Value::ZERO,
    }
}

/// A worklist algorithm: what BFS, SSSP and PageRank each implement once.
///
/// The value of every vertex is one 32-bit word ([`AtomicValue`]: `u32` or `f32`), updated
/// atomically. Vertex ids are those of the partitioned graph (device `d` owns a contiguous
/// range of them).
///
/// A run processes items (vertices) until no device holds any: processing a vertex with value
/// `x` (its current value under [`Combine::Min`], the value taken under [`Combine::Sum`])
/// calls [`relax`](WorklistAlgorithm::relax) for each of its out-arcs and combines each
/// update into the arc's head; the head becomes an item when
/// [`schedules`](WorklistAlgorithm::schedules) says so (on another device, once the update
/// reaches it).
pub trait WorklistAlgorithm: Send + Sync + 'static {
    /// The value of a vertex.
    type Value: AtomicValue;
    /// How updates to one vertex combine.
    const COMBINE: Combine;
    /// Where a run starts.
    const START: Start;
    /// Whether [`relax`](WorklistAlgorithm::relax) reads arc weights (the graph must have
    /// them).
    const WEIGHTED: bool;
    /// The CUDA kernels (`None`: the host backend only). The CUDA executors run min-combined
    /// `u32` algorithms: two programs instantiate `kernels/include/traversal.cuh` (the rounds'
    /// kernels, [`TraversalKernels::source`]) and `fused.cuh` (the fused kernel's builds,
    /// [`TraversalKernels::fused_source`]) with the algorithm's relax function. Started from
    /// sources, a vertex starts at `UNREACHED` and a source at 0 (`init` must say so); started
    /// from every vertex, at `init(v, false)`, uploaded once.
    const CUDA_KERNELS: Option<TraversalKernels> = None;

    /// The value of `vertex` before the run; `source`: the run starts from it
    /// ([`Start::Sources`]). Under [`Combine::Sum`] a device's slots for other devices'
    /// vertices start at zero whatever this says.
    fn init(&self, vertex: u32, source: bool) -> Self::Value;

    /// The update that an item of value `value` proposes to the head of one of its arcs, of
    /// weight `weight` (1 when unweighted), the item's vertex having `out_degree` arcs.
    /// `None`: no update. Saturate rather than wrap.
    fn relax(&self, value: Self::Value, weight: u32, out_degree: u32) -> Option<Self::Value>;

    /// Whether combining an update turned a vertex's value from `old` into `new` in a way
    /// that makes it an item. Default: under [`Combine::Min`] when it improved (`new <
    /// old`); under [`Combine::Sum`] when it was zero and is not (the vertex was not
    /// pending).
    ///
    /// Under [`Combine::Min`] it must hold whenever `new < old`: a vertex whose value improved
    /// has to relax its arcs again (else the run stops short of the fixed point), and soft
    /// priority drops a deferred item whose vertex improved since, counting on the copy
    /// that the improvement queued. Override it under [`Combine::Sum`], where it is the
    /// algorithm's threshold (PageRank: the residual crossed `epsilon`).
    fn schedules(&self, old: Self::Value, new: Self::Value) -> bool {
        changes::<Self>(old, new)
    }

    /// The priority of an item whose vertex has value `value` (lower is more urgent), for
    /// soft priority. Default: the value's bits under [`Combine::Min`] (a level or a
    /// distance), 0 under [`Combine::Sum`] (no priority).
    fn priority(&self, value: Self::Value) -> u32 {
        match Self::COMBINE {
            Combine::Min => value.to_bits(),
            Combine::Sum => 0,
        }
    }

    /// The soft-priority band of a run whose options leave it open
    /// ([`WorklistOptions::prio_delta`](crate::WorklistOptions::prio_delta) `None`), given the
    /// graph and how the run executes; `None`, the default: no soft priority. The min
    /// traversals' executor asks for it at every run
    /// ([`MinTraversalSolver::run`](crate::traversal::MinTraversalSolver::run)). A run across
    /// processes takes the band it is given (one left open is off): its caller asks on one
    /// process, over the whole graph and every process's devices, and gives that band to all
    /// (the examples do so on rank 0).
    fn default_band(_run: &BandQuery) -> Option<u32>
    where
        Self: Sized,
    {
        None
    }
}
