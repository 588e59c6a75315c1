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

#[cfg(test)]
mod tests {
    use groute_graph::{CsrBuilder, EdgeList};

    use super::*;

    /// Arcs 0 -> 1 (weight 3), 0 -> 2 (4), 1 -> 2 (10), 3 -> 0 (1) on 5 vertices.
    fn weighted() -> Csr {
        let edges = EdgeList::from_triples(&[(0, 1, 3), (0, 2, 4), (1, 2, 10), (3, 0, 1)]);
        CsrBuilder::new(5).build(&edges).unwrap()
    }

    #[test]
    fn a_whole_graph_counts_every_vertex_arc_and_weight() {
        let shape = GraphShape::of(&weighted());
        assert_eq!(
            shape,
            GraphShape {
                vertices: 5,
                arcs: 4,
                total_weight: 18
            }
        );
        assert_eq!(shape.average_degree(), 0.8);
        // 18 / 4 = 4.5, rounded up.
        assert_eq!(shape.average_weight(), 5);
        assert_eq!(GraphShape::of_rows(&HeldRows::whole(&weighted())), shape);
    }

    #[test]
    fn held_rows_count_their_own_arcs_only() {
        let csr = weighted();
        let rows = HeldRows::some(&csr, 1..4, false).unwrap();
        assert_eq!(
            GraphShape::of_rows(&rows),
            GraphShape {
                vertices: 3,
                arcs: 2,
                total_weight: 11
            }
        );
        let none = HeldRows::some(&csr, 2..2, false).unwrap();
        assert_eq!(GraphShape::of_rows(&none), GraphShape::default());
    }

    #[test]
    fn unweighted_and_empty_graphs_average_one() {
        let edges = EdgeList::from_pairs(&[(0, 1), (1, 0)]);
        let unweighted = GraphShape::of(&CsrBuilder::new(2).build(&edges).unwrap());
        assert_eq!(
            (unweighted.total_weight, unweighted.average_weight()),
            (2, 1)
        );
        let empty = GraphShape::default();
        assert_eq!((empty.average_degree(), empty.average_weight()), (0.0, 1));
    }
}
