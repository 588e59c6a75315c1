//! Graphs for test suites, built in one call and panicking where a test's own input is wrong
//! (a bad generator spec, an arc past `n`): the algorithm crates' tests share them.

use crate::{
    EdgeList, Graph, GraphError, NoProgress, Partition, PartitionMethod, PartitionedGraph,
    partition_graph,
};

/// The graph of generator spec `spec` ([`Graph::generated`]); panics on a bad spec.
pub fn generated(spec: &str) -> Graph {
    Graph::generated(spec).unwrap()
}

/// `graph` cut into `parts` contiguous blocks of vertices ([`PartitionMethod::Block`]).
pub fn in_blocks(graph: &Graph, parts: usize) -> Result<PartitionedGraph, GraphError> {
    partition_graph(graph.clone(), parts, PartitionMethod::Block, &NoProgress)
}

/// `n` vertices cut into `parts` contiguous ranges at the first `parts - 1` of `cuts`, each
/// taken modulo `n + 1` and sorted (random cuts from a property test give random, possibly
/// empty, ranges); where `cuts` holds fewer, the missing cuts fall at `n` (empty last parts).
pub fn partition_at_cuts(n: usize, parts: usize, cuts: &[u32]) -> Partition {
    let n = n as u32;
    let mut inner: Vec<u32> = cuts.iter().take(parts - 1).map(|&c| c % (n + 1)).collect();
    inner.resize(parts - 1, n);
    inner.sort_unstable();
    let mut bounds = Vec::with_capacity(parts + 1);
    bounds.push(0);
    bounds.extend(inner);
    bounds.push(n);
    Partition::from_bounds(bounds).expect("sorted bounds")
}

/// One small graph of each generator family, for sweeps over device counts: a symmetric
/// Kronecker graph of 512 vertices, a 24 x 24 road grid and a random graph of 600 vertices.
pub fn small_of_each_family() -> [Graph; 3] {
    [
        generated("kron:scale=9,ef=8,sym,seed=3"),
        generated("road:side=24,p=0.6,seed=5"),
        generated("random:n=600,m=1800,seed=7"),
    ]
}

/// The directed, unweighted graph of `pairs` (arcs `u -> v`) on `n` vertices, named `name`;
/// panics where an arc is out of range.
pub fn from_pairs(n: usize, pairs: &[(u32, u32)], name: &str) -> Graph {
    Graph::from_edges(n, &EdgeList::from_pairs(pairs), name, false).unwrap()
}

/// The unweighted graph named `"random"` on `n > 0` vertices of a property test's arbitrary
/// arcs `pairs`, each end taken modulo `n`; taken both ways when `symmetric`.
pub fn from_random_pairs(n: u32, pairs: &[(u32, u32)], symmetric: bool) -> Graph {
    let pairs: Vec<(u32, u32)> = pairs.iter().map(|&(a, b)| (a % n, b % n)).collect();
    Graph::from_edges(
        n as usize,
        &EdgeList::from_pairs(&pairs),
        "random",
        symmetric,
    )
    .unwrap()
}

/// The directed path `0 -> 1 -> ... -> n - 1` (unweighted), named `name`.
pub fn directed_path(n: u32, name: &str) -> Graph {
    let arcs: Vec<(u32, u32)> = (0..n.saturating_sub(1)).map(|i| (i, i + 1)).collect();
    from_pairs(n as usize, &arcs, name)
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

/// `"hub ladder"`: hubs (out-degree >= 2048, listed and expanded grid-wide by the fused
/// kernels) in rounds that follow hub-free rounds and in rounds that follow hub rounds: a
/// path 0 -> 1 -> ... -> 9 whose vertices 1, 4 and 7 each lead to four hubs; hub j has
/// 2048 + 97 j arcs into a shared pool of 6000 sink leaves and one arc to hub j + 1 (so a
/// leaf hears from several hubs, some of them in one round). A fused kernel whose hub
/// decision read the live counter would hang on exactly this: a round without hubs followed
/// by one with hubs.
pub fn hub_ladder() -> Graph {
    const PATH: u32 = 10;
    const HUBS: u32 = 12;
    const LEAVES: u32 = 6000;
    let mut pairs: Vec<(u32, u32)> = (0..PATH - 1).map(|i| (i, i + 1)).collect();
    for (k, c) in [1, 4, 7].into_iter().enumerate() {
        pairs.extend((0..4).map(|j| (c, PATH + 4 * k as u32 + j)));
    }
    for j in 0..HUBS {
        let hub = PATH + j;
        pairs.push((hub, PATH + (j + 1) % HUBS));
        pairs.extend((0..2048 + 97 * j).map(|i| (hub, PATH + HUBS + (i + 500 * j) % LEAVES)));
    }
    from_pairs((PATH + HUBS + LEAVES) as usize, &pairs, "hub ladder")
}
