//! Graphs for test suites, built in one call and panicking where a test's own input is wrong
//! (a bad generator spec, an arc past `n`): the algorithm crates' tests share them.

use crate::{EdgeList, Graph};

/// The graph of generator spec `spec` ([`Graph::generated`]); panics on a bad spec.
pub fn generated(spec: &str) -> Graph {
    Graph::generated(spec).unwrap()
}

/// The directed, unweighted graph of `pairs` (arcs `u -> v`) on `n` vertices, named `name`;
/// panics where an arc is out of range.
pub fn from_pairs(n: usize, pairs: &[(u32, u32)], name: &str) -> Graph {
    Graph::from_edges(n, &EdgeList::from_pairs(pairs), name, false).unwrap()
}

/// The directed graph of weighted arcs `(u, v, w)` on `n` vertices, named `name`; panics where
/// an arc is out of range.
pub fn from_triples(n: usize, triples: &[(u32, u32, u32)], name: &str) -> Graph {
    Graph::from_edges(n, &EdgeList::from_triples(triples), name, false).unwrap()
}

/// `"self-loops"`: the directed 6-cycle `0 -> 1 -> ... -> 5 -> 0` with self-loops on 0, 1
/// and 3.
pub fn self_loops() -> Graph {
    from_pairs(
        6,
        &[
            (0, 0),
            (0, 1),
            (1, 1),
            (1, 2),
            (2, 3),
            (3, 3),
            (3, 4),
            (4, 5),
            (5, 0),
        ],
        "self-loops",
    )
}
