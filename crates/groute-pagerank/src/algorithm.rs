//! PageRank's residual push as a [`WorklistAlgorithm`]: the host backend's executor runs it
//! (the CUDA worker and the device-driven kernel are PageRank's own), and its packed item on
//! CUDA ([`VertexResidual`]).

use bytemuck::{Pod, Zeroable};
use groute_worklist::{Combine, Start, WorklistAlgorithm};

/// Residual-push PageRank: a vertex's value is its residual; processing it moves the residual
/// into its rank (the result) and spreads `alpha * residual / outdeg` along its arcs; a
/// vertex becomes an item when its residual crosses `epsilon`. Every vertex starts with
/// `1 - alpha`, and the first round pushes every vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageRank {
    /// Damping factor.
    pub alpha: f32,
    /// Scheduling threshold.
    pub epsilon: f32,
}

impl WorklistAlgorithm for PageRank {
    type Value = f32;
    const COMBINE: Combine = Combine::Sum;
    const START: Start = Start::EveryVertex;
    const WEIGHTED: bool = false;

    fn init(&self, _vertex: u32, _source: bool) -> f32 {
        1.0 - self.alpha
    }

    fn relax(&self, residual: f32, _weight: u32, out_degree: u32) -> Option<f32> {
        let share = self.alpha * residual / out_degree as f32;
        (share > 0.0).then_some(share)
    }

    /// The residual crossed epsilon: it was at or below, so the vertex was not pending.
    fn schedules(&self, old: f32, new: f32) -> bool {
        old <= self.epsilon && new > self.epsilon
    }
}

/// A vertex and residual mass pushed to it: the packed item of PageRank's CUDA worker.
/// Mirrors `struct VertexResidual` in `kernels/pagerank/pagerank.cu` (8 bytes, vertex first).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default, Pod, Zeroable)]
pub struct VertexResidual {
    /// The vertex (partitioned numbering).
    pub vertex: u32,
    /// Residual mass for it (0 for an item that stays on its owner).
    pub residual: f32,
}

const _: () = assert!(std::mem::size_of::<VertexResidual>() == 8);
const _: () = assert!(std::mem::align_of::<VertexResidual>() == 4);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossing_epsilon_schedules_once() {
        let pr = PageRank {
            alpha: 0.85,
            epsilon: 0.01,
        };
        assert!(pr.schedules(0.0, 0.02));
        assert!(pr.schedules(0.01, 0.011));
        assert!(!pr.schedules(0.02, 0.52));
        assert!(!pr.schedules(0.0, 0.005));
    }

    #[test]
    fn a_push_spreads_the_damped_residual_over_the_out_arcs() {
        let pr = PageRank {
            alpha: 0.5,
            epsilon: 0.01,
        };
        assert_eq!(pr.relax(0.8, 1, 4), Some(0.1));
        assert_eq!(pr.relax(0.0, 1, 4), None);
    }
}
