//! BFS as the shared test bodies run it (`groute_worklist::testing`).

use groute_bfs::{Bfs, BfsOptions, BfsSolver, Direction, bfs, bfs_reference};

groute_worklist::traversal_under_test! {
    /// The worklist BFS under the shared test bodies: its levels against `bfs_reference`.
    pub struct BfsUnderTest runs Bfs {
        // The worklist BFS: Auto would run dense symmetric graphs direction-optimizing (the
        // direction suites test that).
        options: BfsOptions = BfsOptions { direction: Direction::Push, ..BfsOptions::default() },
        solver: BfsSolver, one_shot: bfs, reference: bfs_reference,
        values: levels, deepest: depth,
        // Soft priority off, its default: the rounds of an asynchronous BFS already run
        // roughly level by level.
        levels: true, priorities: &[None], graphs: super::graphs(),
    }
}
