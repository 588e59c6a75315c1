//! The default band of soft priority ([`WorklistOptions::prio_delta`]): what an algorithm's
//! [`WorklistAlgorithm::default_band`] is given to choose it, the shape of the graph
//! ([`GraphShape`]) and of the run ([`BandQuery`]). The executors ask for it where the options
//! leave the band open, so that every path that runs an algorithm (one process or several
//! ranks) applies the same rule.
//!
//! [`WorklistOptions::prio_delta`]: crate::WorklistOptions::prio_delta
//! [`WorklistAlgorithm::default_band`]: crate::WorklistAlgorithm::default_band

use std::ops::Range;

use groute_graph::{Csr, HeldRows};

use crate::traversal::FusedMode;

/// The size of a graph (or of the rows a process holds) and the total weight of its arcs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphShape {
    /// Vertices.
    pub vertices: u64,
    /// Arcs.
    pub arcs: u64,
    /// The sum of the arcs' weights (each arc weighs 1 in a graph without weights).
    pub total_weight: u64,
}

impl GraphShape {
    /// The shape of the whole of `csr`.
    pub fn of(csr: &Csr) -> GraphShape {
        GraphShape::of_arcs(csr, 0..csr.num_vertices() as u32)
    }

    /// The shape of the rows a process holds (the whole graph where it holds every row).
    pub fn of_rows(rows: &HeldRows<'_>) -> GraphShape {
        GraphShape::of_arcs(rows.csr(), rows.held())
    }

    /// The rows `rows` of `csr`: their vertices and the arcs leaving them.
    fn of_arcs(csr: &Csr, rows: Range<u32>) -> GraphShape {
        let offsets = csr.offsets();
        let first = offsets[rows.start as usize] as usize;
        let last = offsets[rows.end as usize] as usize;
        let arcs = (last - first) as u64;
        let total_weight = csr
            .weights()
            .map_or(arcs, |w| w[first..last].iter().map(|&x| u64::from(x)).sum());
        GraphShape {
            vertices: u64::from(rows.end - rows.start),
            arcs,
            total_weight,
        }
    }

    /// Arcs per vertex (0 on a graph without vertices).
    pub fn average_degree(&self) -> f64 {
        self.arcs as f64 / self.vertices.max(1) as f64
    }

    /// The average arc weight, rounded up, at least 1.
    pub fn average_weight(&self) -> u64 {
        self.total_weight.div_ceil(self.arcs.max(1)).max(1)
    }
}

/// What a run's default band may depend on: the graph and how the run executes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BandQuery {
    /// The graph (in a run spanning several processes, the whole graph as rank 0 holds it).
    pub graph: GraphShape,
    /// Whether the run is on CUDA devices.
    pub cuda: bool,
    /// The devices the run spans (over every process of a run spanning several).
    pub devices: usize,
    /// The run's fused mode ([`WorklistOptions::fused`](crate::WorklistOptions::fused)).
    pub fused: FusedMode,
    /// Whether the run is device-driven on several devices: one persistent kernel per CUDA
    /// device, exchanging items over their peer links.
    pub device_driven: bool,
}
