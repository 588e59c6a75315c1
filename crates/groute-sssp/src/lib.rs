//! # groute-sssp: single-source shortest paths on 1..N devices
//!
//! Asynchronous push SSSP (label correcting, Bellman-Ford style) over groute's distributed
//! worklist, with integer arc weights: each device owns a contiguous range of the partitioned
//! graph, holds only the CSR rows of its range with their weights
//! ([`DeviceCsr`](groute_worklist::DeviceCsr)) and a full-length distance array, and relaxes
//! out-arcs with `fetch_min` (`atomicMin` on CUDA). Remote updates are filtered against the
//! device's own copy of the distance before they are sent (halo filtering) and travel as
//! [`VertexValue`](groute_worklist::VertexValue) pairs around the ring. The solver is the
//! generic [`groute_worklist::traversal`], shared with BFS; SSSP contributes only
//! `relax = distance + weight` ([`Sssp`]).
//!
//! | item | what it is |
//! |---|---|
//! | [`SsspSolver`] | the solver with its device storage kept across runs (graph uploaded once) |
//! | [`sssp`] | one-shot form: distances in the input's order plus statistics |
//! | [`SsspOptions`], [`SsspResult`], [`SsspStats`] | its settings and output |
//! | [`sssp_reference`] | sequential Dijkstra (binary heap), the oracle of the tests |
//! | [`Sssp`] | the [`WorklistAlgorithm`] implementation |
//! | [`SsspError`] | what can go wrong |
//!
//! ```
//! use groute_sssp::{sssp, sssp_reference, SsspOptions};
//! use groute_graph::{generate, partition_graph, GenSpec, NoProgress, PartitionMethod};
//!
//! let g = generate(&"road:side=16,p=0.6,seed=2,weights=1..100".parse::<GenSpec>()?, &NoProgress)?;
//! let expected = sssp_reference(&g.csr, 0);
//! let ctx = groute_core::Context::host(3)?;
//! let parted = partition_graph(g, 3, PartitionMethod::Metis, &NoProgress)?;
//! let result = sssp(&ctx, &parted, 0, &SsspOptions::default())?;
//! assert_eq!(result.distances, expected);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Weights and distances
//!
//! Arcs weigh their [`Csr::weights`](groute_graph::Csr::weights) (`u32`, zero allowed);
//! a graph without weights is solved with every arc weighing 1 (its distances are then BFS
//! levels). Distances are `u32`: [`UNREACHED`] (`u32::MAX`) marks an unreachable vertex, and a
//! path longer than [`MAX_DISTANCE`] saturates there instead of wrapping, on every backend.
//! Parallel arcs of different weights and self-loops need no preprocessing.
//!
//! ## Vertex numbering
//!
//! Partitioning renumbers vertices; the solver takes and returns vertices in the *input
//! order* ([`InputOrder`]): the rank of each vertex's external id (for generated graphs and
//! every offset-numbered format, simply the original vertex id).
//!
//! ## Soft priority (near-far)
//!
//! Label correcting expands a vertex once per improvement; on road networks, where long
//! paths are relaxed many times, that is two orders of magnitude more work than Dijkstra.
//! The worklist's soft priority ([`WorklistOptions::prio_delta`], `--prio-delta`) works on
//! distances below a threshold first and defers the others; the threshold advances by bands
//! of `prio_delta` (see the `groute_worklist` crate docs for the epoch protocol). Left at
//! `None`, SSSP runs with its default band ([`Sssp`]'s
//! [`WorklistAlgorithm::default_band`], which the executors ask for: one process's solver, and
//! a run across ranks on rank 0): [`PRIO_DELTA_AVERAGE_WEIGHTS`] times the
//! graph's average arc weight on sparse graphs, narrowing with the fifth power of the average
//! degree past [`PRIO_DELTA_FULL_BAND_MAX_DEGREE`] down to a floor of one
//! [`PRIO_DELTA_DENSE_FLOOR_DIVISOR`]th of the average weight ([`default_prio_delta`]), and on
//! sparse graphs [`PRIO_DELTA_MULTI_DEVICE_FACTOR`] times wider on several CUDA devices whose
//! run may be fused (over every rank's devices in a run across ranks).
//! `Some(0)` turns it off.

mod reference;

use std::borrow::Cow;

use groute_core::cuda::KernelSource;
use groute_graph::{Csr, GraphError, InputOrder, PartitionedGraph};
use groute_worklist::traversal::{
    MinTraversalSolver, TraversalKernels, TraversalStats, count_reached, max_reached,
};
use groute_worklist::{BandQuery, Combine, GraphShape, Start, WorklistAlgorithm};
use groute_worklist::{TraversalError, TraversalName, WorklistOptions};

pub use groute_worklist::traversal::UNREACHED;
pub use reference::sssp_reference;

/// The default band width of soft priority, in average arc weights (see
/// [`default_prio_delta`]).
///
/// Each epoch costs a grid-wide re-examination (one launch and a read-back without fusing), so
/// on high-diameter graphs such as road networks wider bands win until the extra work catches
/// up; 32 weights keep the work within a small factor of Dijkstra's, where turning priority off
/// multiplies it many times over. On low-diameter graphs the band matters little.
pub const PRIO_DELTA_AVERAGE_WEIGHTS: u64 = 32;

/// The average out-degree up to which the default band is [`PRIO_DELTA_AVERAGE_WEIGHTS`]
/// average weights wide; past it the band narrows with the
/// [`PRIO_DELTA_NARROWING_EXPONENT`]th power of the degree (see [`default_prio_delta`]).
///
/// A dense, low-diameter graph reaches most vertices in a few hops, so a wide band re-expands
/// them many times over; a very narrow one pays one epoch per band. Road networks (degree about
/// 2.4) keep the full 32 average weights.
pub const PRIO_DELTA_FULL_BAND_MAX_DEGREE: f64 = 5.0;

/// How steeply the default band narrows past [`PRIO_DELTA_FULL_BAND_MAX_DEGREE`]: the full band
/// times `(PRIO_DELTA_FULL_BAND_MAX_DEGREE / average degree)` to this power.
///
/// Fitted on Kronecker graphs with the bench's weights (1..100) on one and two H200s: past an
/// average degree of about 15 the fastest band is a few weight units whatever the degree
/// (every band wider than that re-expands vertices whose distance a few hops improve again).
/// At degree 8 one GPU ran fastest at a band of 8 and two at the widest (13 average weights);
/// this power gives about 3 average weights there, between the two.
pub const PRIO_DELTA_NARROWING_EXPONENT: i32 = 5;

/// The narrowest default band on a dense graph: the average arc weight over this divisor.
///
/// Narrower bands pay one epoch per band for no saved work: on Kronecker graphs of average
/// degree 16 to 86 with weights 1..100 (average 51) the fastest band was 3 or 4 on one and on
/// two H200s, and both halving and doubling it cost 5% to 20%.
pub const PRIO_DELTA_DENSE_FLOOR_DIVISOR: u64 = 12;

/// The soft-priority band width SSSP uses when the options leave it open:
/// [`PRIO_DELTA_AVERAGE_WEIGHTS`] times the average arc weight `w` (rounded up) on graphs of
/// average degree `d` up to [`PRIO_DELTA_FULL_BAND_MAX_DEGREE`]; past it that band times
/// `(PRIO_DELTA_FULL_BAND_MAX_DEGREE / d)^PRIO_DELTA_NARROWING_EXPONENT`, but at least
/// `w / PRIO_DELTA_DENSE_FLOOR_DIVISOR`; always rounded, and at least 1.
pub fn default_prio_delta(csr: &Csr) -> u32 {
    band_of(&GraphShape::of(csr))
}

/// [`default_prio_delta`] of a graph of this shape.
fn band_of(graph: &GraphShape) -> u32 {
    let average = graph.average_weight();
    let full = PRIO_DELTA_AVERAGE_WEIGHTS.saturating_mul(average) as f64;
    let degree = graph.average_degree();
    let band = if !sparse(degree) {
        let narrowed =
            full * (PRIO_DELTA_FULL_BAND_MAX_DEGREE / degree).powi(PRIO_DELTA_NARROWING_EXPONENT);
        narrowed.max(average as f64 / PRIO_DELTA_DENSE_FLOOR_DIVISOR as f64)
    } else {
        full
    };
    band.round().clamp(1.0, f64::from(u32::MAX)) as u32
}

/// Whether a graph of average degree `degree` gets the full band (no narrowing) and, on
/// several fused devices, the multi-device widening: degree at most
/// [`PRIO_DELTA_FULL_BAND_MAX_DEGREE`].
fn sparse(degree: f64) -> bool {
    degree <= PRIO_DELTA_FULL_BAND_MAX_DEGREE
}

/// When a CUDA run on several devices may be fused ([`FusedMode::fuses_device_driven`]:
/// device-driven at any density, else bounded rounds on sparse graphs) over a sparse graph
/// (average degree at most [`PRIO_DELTA_FULL_BAND_MAX_DEGREE`]), its default band is this many
/// times wider ([`Sssp`]'s default band). In host-driven rounds an epoch waits for every
/// device (across ranks: every rank's) to run out of work below the threshold and for the
/// hosts' consensus, where one device's fused kernel advances it between two levels (and
/// bounded rounds run many levels per round, so fewer epochs mean fewer short rounds). A
/// dense graph keeps its narrowed band: a device-driven member there re-expands, in a wider
/// band, vertices that a few hops reach again at shorter distances, and that work outgrows
/// the epochs it saves.
///
/// [`FusedMode::fuses_device_driven`]: groute_worklist::traversal::FusedMode::fuses_device_driven
pub const PRIO_DELTA_MULTI_DEVICE_FACTOR: u32 = 4;

/// The largest distance a reached vertex can have: longer paths saturate here.
pub const MAX_DISTANCE: u32 = UNREACHED - 1;

/// The CUDA translation unit of SSSP's rounds: `traversal.cuh`'s kernels instantiated with
/// `groute::SsspRelax` and weights (`sssp_expand`, `sssp_split_receive`).
pub const CUDA_SOURCE: KernelSource = groute_kernels::sssp::SSSP;

/// The CUDA translation unit of SSSP's fused persistent kernel: `fused.cuh`'s builds
/// instantiated with `groute::SsspRelax` and weights (`sssp_fused` and the others).
pub const CUDA_FUSED_SOURCE: KernelSource = groute_kernels::sssp::SSSP_FUSED;

/// SSSP as a min traversal: a neighbour's distance is the vertex's plus the arc's weight.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sssp;

impl WorklistAlgorithm for Sssp {
    type Value = u32;
    const COMBINE: Combine = Combine::Min;
    const START: Start = Start::Sources;
    const WEIGHTED: bool = true;
    const CUDA_KERNELS: Option<TraversalKernels> = Some(TraversalKernels {
        source: &CUDA_SOURCE,
        fused_source: &CUDA_FUSED_SOURCE,
        expand: "sssp_expand",
        split_receive: "sssp_split_receive",
        fused: "sssp_fused",
        reexamine: "sssp_reexamine",
    });

    fn init(&self, _vertex: u32, source: bool) -> u32 {
        if source { 0 } else { UNREACHED }
    }

    fn relax(&self, distance: u32, weight: u32, _out_degree: u32) -> Option<u32> {
        // Saturate below UNREACHED, like `groute::SsspRelax` in kernels/include/traversal.cuh.
        (distance != UNREACHED).then(|| distance.saturating_add(weight).min(MAX_DISTANCE))
    }

    /// [`default_prio_delta`]'s band, times [`PRIO_DELTA_MULTI_DEVICE_FACTOR`] on a sparse
    /// graph (average degree at most [`PRIO_DELTA_FULL_BAND_MAX_DEGREE`]) whose run on several
    /// CUDA devices may be fused ([`FusedMode::fuses_device_driven`]: device-driven, or bounded
    /// fused rounds where the GPUs lack peer access; across ranks, every rank's per-round
    /// launches). The host backend, which has neither, keeps the one-device band.
    ///
    /// [`FusedMode::fuses_device_driven`]: groute_worklist::traversal::FusedMode::fuses_device_driven
    fn default_band(run: &BandQuery) -> Option<u32> {
        let band = band_of(&run.graph);
        let widened = run.cuda
            && sparse(run.graph.average_degree())
            && run.fused.fuses_device_driven(run.devices);
        Some(if widened {
            band.saturating_mul(PRIO_DELTA_MULTI_DEVICE_FACTOR)
        } else {
            band
        })
    }
}

/// Settings of [`sssp`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SsspOptions {
    /// The distributed worklist's settings (capacities, packet size, batch, time limit, soft
    /// priority: `prio_delta` `None` means [`Sssp`]'s default band, `Some(0)` off).
    pub worklist: WorklistOptions,
}

/// Statistics of one SSSP run: the worklist's counters of a traversal from one source
/// ([`TraversalStats`]). Its `work_items` counts a vertex once per expansion (label
/// correcting may expand a vertex more than once); its `prio_delta` is the band the run used
/// (0: soft priority off).
pub type SsspStats = TraversalStats;

/// The result of [`sssp`].
#[derive(Clone, Debug)]
pub struct SsspResult {
    /// Distance of each vertex in the input order ([`UNREACHED`] where unreachable).
    pub distances: Vec<u32>,
    /// Statistics.
    pub stats: SsspStats,
}

impl SsspResult {
    /// Vertices reached from the source.
    pub fn reached(&self) -> usize {
        count_reached(&self.distances)
    }

    /// The largest distance of a reached vertex (the source's weighted eccentricity).
    pub fn max_distance(&self) -> u32 {
        max_reached(&self.distances)
    }
}

/// What can go wrong in [`sssp`]: the traversal error of [`Sssp`].
pub type SsspError = TraversalError<Sssp>;

impl TraversalName for Sssp {
    const NAME: &'static str = "SSSP";
}

/// `csr` itself if it has weights, else a copy whose every arc weighs 1.
fn weighted(csr: &Csr) -> Result<Cow<'_, Csr>, GraphError> {
    if csr.is_weighted() {
        return Ok(Cow::Borrowed(csr));
    }
    let m = csr.targets().len();
    Ok(Cow::Owned(csr.clone().with_weights(vec![1; m])?))
}

/// SSSP on one partitioned graph, with the graph uploaded and the device storage allocated
/// once ([`SsspSolver::new`]); each [`SsspSolver::run`] only resets the distances and
/// traverses.
pub struct SsspSolver {
    solver: MinTraversalSolver<Sssp>,
    order: InputOrder,
    num_vertices: usize,
    options: SsspOptions,
}

impl std::fmt::Debug for SsspSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsspSolver")
            .field("num_vertices", &self.num_vertices)
            .field("options", &self.options)
            .finish()
    }
}

impl SsspSolver {
    /// Uploads `graph` with its weights (1 per arc if it has none) to every device of
    /// `context` (device `d` owns `graph.partition.range(d)`) and allocates the run storage.
    pub fn new(
        context: &groute_core::Context,
        graph: &PartitionedGraph,
        options: &SsspOptions,
    ) -> Result<Self, SsspError> {
        SsspError::check_graph(context, graph)?;
        let n = graph.graph.num_vertices();
        // The generic traversal insists on weights when `WEIGHTED`; the unit-weight copy lives
        // only until the upload.
        let csr = weighted(&graph.graph.csr)?;
        let solver =
            MinTraversalSolver::new(context, Sssp, &csr, &graph.partition, &options.worklist)?;
        Ok(SsspSolver {
            solver,
            order: InputOrder::of(&graph.graph),
            num_vertices: n,
            options: options.clone(),
        })
    }

    /// SSSP from `source` (input order).
    pub fn run(&mut self, source: u32) -> Result<SsspResult, SsspError> {
        SsspError::check_source(source, self.num_vertices)?;
        let src = self.order.vertex_of_rank(source);
        let out = self.solver.run(&[src], &self.options.worklist)?;
        let (distances, stats) = out.into_values_and_stats();
        Ok(SsspResult {
            distances: self.order.to_rank_order(distances),
            stats,
        })
    }
}

/// SSSP from `source` (input order) over `graph` on every device of `context`; device `d`
/// owns `graph.partition.range(d)` (a one-shot [`SsspSolver`]).
pub fn sssp(
    context: &groute_core::Context,
    graph: &PartitionedGraph,
    source: u32,
    options: &SsspOptions,
) -> Result<SsspResult, SsspError> {
    let n = graph.graph.num_vertices();
    if n > 0 {
        SsspError::check_source(source, n)?;
    }
    SsspSolver::new(context, graph, options)?.run(source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relax_saturates_below_unreached() {
        assert_eq!(Sssp.relax(3, 4, 1), Some(7));
        assert_eq!(Sssp.relax(3, 0, 1), Some(3));
        assert_eq!(Sssp.relax(MAX_DISTANCE - 1, 1, 1), Some(MAX_DISTANCE));
        assert_eq!(Sssp.relax(MAX_DISTANCE, 1, 1), Some(MAX_DISTANCE));
        assert_eq!(Sssp.relax(5, u32::MAX, 1), Some(MAX_DISTANCE));
        assert_eq!(Sssp.relax(MAX_DISTANCE, u32::MAX, 1), Some(MAX_DISTANCE));
        assert_eq!(Sssp.relax(UNREACHED, 1, 1), None);
    }

    #[test]
    fn the_cuda_source_instantiates_the_named_kernels() {
        let k = Sssp::CUDA_KERNELS.map(|k| (k.source.name, k.expand, k.split_receive));
        assert_eq!(
            k,
            Some(("sssp/sssp.cu", "sssp_expand", "sssp_split_receive"))
        );
        assert!(
            CUDA_SOURCE
                .source
                .contains("GROUTE_TRAVERSAL_KERNELS(sssp, groute::SsspRelax, true)")
        );
        assert_eq!(Sssp::CUDA_KERNELS.map(|k| k.fused), Some("sssp_fused"));
        assert!(
            CUDA_FUSED_SOURCE
                .source
                .contains("GROUTE_FUSED_TRAVERSAL_KERNEL(sssp, groute::SsspRelax, true)")
        );
    }
}
