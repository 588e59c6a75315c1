//! SSSP as the shared test bodies run it (`groute_worklist::testing`).

use groute_sssp::{Sssp, SsspOptions, SsspSolver, sssp, sssp_reference};

groute_worklist::traversal_under_test! {
    /// SSSP under the shared test bodies: its distances against Dijkstra's (`sssp_reference`).
    pub struct SsspUnderTest runs Sssp {
        options: SsspOptions = SsspOptions::default(),
        solver: SsspSolver, one_shot: sssp, reference: sssp_reference,
        values: distances, deepest: max_distance,
        // Soft priority off, then the default band.
        levels: false, priorities: &[Some(0), None], graphs: super::graphs(),
    }
}
