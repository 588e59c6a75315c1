//! Shared by the SSSP test binaries: SSSP as the shared test bodies run it
//! ([`SsspUnderTest`], `groute_worklist::testing`), its weighted graphs of every shape, and
//! what its default band does on a road grid.
#![allow(dead_code)] // each binary uses its own subset

mod band;
mod under_test;

use groute_core::testing::{pick, reduced};
use groute_graph::testing::{from_triples, generated, hub_ladder};
use groute_graph::{Graph, WeightSpec};
use groute_worklist::testing::{SMALL_SHIPPED_GRAPH, shipped_graphs};

pub use band::the_default_band_cuts_work;
pub use under_test::SsspUnderTest;

/// Weighted graphs of every shape: Kronecker (the larger one with hubs of degree >= 2048 in
/// rounds after hub-free ones, improved several times a round), a road grid, random graphs
/// with zero weights and with parallel arcs, a single vertex, self-loops, a disconnected
/// graph, saturating sums, and the shipped datasets. On reduced inputs
/// (`groute_core::testing::reduced`) the smallest graph of each shape: the smaller Kronecker
/// graph, the hub ladder weighted in its stead (hubs after hub-free rounds, each leaf improved
/// by several hubs, some in one round), the small shipped METIS graph.
pub fn graphs() -> Vec<Graph> {
    // A weighted path 0 -> 1 -> ... -> 5 with loops on 0 and 1.
    let self_loops = [
        [(0, 0, 5), (0, 1, 2), (1, 1, 0), (1, 2, 7)].as_slice(),
        &[(2, 3, 1), (3, 4, 0), (4, 5, 3)],
    ]
    .concat();
    let mut gs: Vec<Graph> = pick(
        [
            "kron:scale=12,ef=16,sym,seed=3,weights=1..64:5",
            "kron:scale=16,ef=16,sym,seed=3,weights=1..64:5",
        ],
        &[0],
    )
    .into_iter()
    .map(generated)
    .collect();
    if reduced() {
        let weights: WeightSpec = "1..64:5".parse().unwrap();
        gs.push(weights.apply(hub_ladder()).unwrap());
    }
    gs.extend([
        generated("road:side=64,p=0.6,seed=5,weights=1..1000:2"),
        generated("random:n=2000,m=6000,seed=7,weights=0..3:4"),
        generated("random:n=500,m=2500,seed=8,keepdup,weights=1..50:6"),
        from_triples(1, &[], "single vertex"),
        from_triples(6, &self_loops, "self-loops"),
        from_triples(
            8,
            &[(0, 1, 4), (1, 0, 4), (5, 6, 1), (6, 7, 2), (7, 7, 9)],
            "disconnected",
        ),
        saturating(),
    ]);
    gs.extend(shipped_graphs(&[SMALL_SHIPPED_GRAPH]));
    gs
}

/// Half of `u32::MAX`, less one: three arcs of it sum past `groute_sssp::MAX_DISTANCE`.
pub const BIG: u32 = u32::MAX / 2 - 1;

/// `"saturating"`: the path 0 -> 1 -> 2 -> 3 of arcs weighing [`BIG`], an arc of weight 0 on
/// to 4, and one of `u32::MAX` from 0 to 4: the distances of 3 and 4 saturate at
/// `groute_sssp::MAX_DISTANCE` instead of wrapping.
pub fn saturating() -> Graph {
    from_triples(
        5,
        &[
            (0, 1, BIG),
            (1, 2, BIG),
            (2, 3, BIG),
            (3, 4, 0),
            (0, 4, u32::MAX),
        ],
        "saturating",
    )
}
