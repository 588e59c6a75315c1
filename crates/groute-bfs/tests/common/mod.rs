//! Shared by the BFS test binaries: BFS as the shared test bodies run it
//! ([`BfsUnderTest`], `groute_worklist::testing`), its graphs of every shape, and the CUDA
//! context of members on one GPU.
#![allow(dead_code)] // each binary uses its own subset

mod under_test;

use groute_core::testing::{GpuHold, GpuTest, cuda_test, pick};
use groute_graph::Graph;
use groute_graph::testing::{directed_path, from_pairs, generated, hub_ladder, self_loops};
use groute_worklist::testing::{SMALL_SHIPPED_GRAPH, shipped_graphs};

pub use under_test::BfsUnderTest;

/// A CUDA context of `devices` virtual devices all on one GPU, with no other test of this
/// binary on it meanwhile: device-driven members sharing a GPU start together only where it
/// is free enough for all of them (`None` when CUDA is not tested).
pub fn cuda_one_gpu(devices: usize) -> Option<GpuTest> {
    cuda_test(devices, Some(1), GpuHold::Alone)
}

/// Graphs of every shape the tests cover: Kronecker (one with hubs), road grids, random,
/// disconnected, single vertex, self-loops, a long path (many rounds), hubs after hub-free
/// rounds, and the shipped datasets. On reduced inputs (`groute_core::testing::reduced`) the
/// smallest graph of each shape: the smaller Kronecker graph and road grid, the small shipped
/// METIS graph.
pub fn graphs() -> Vec<Graph> {
    let mut gs = pick(
        [
            "kron:scale=12,ef=16,sym,seed=3",
            "kron:scale=16,ef=16,sym,seed=3",
        ],
        &[0],
    )
    .into_iter()
    .map(generated)
    .collect::<Vec<_>>();
    gs.push(hub_ladder());
    gs.extend(
        pick(
            ["road:side=64,p=0.6,seed=5", "road:side=40,p=0.9,seed=1"],
            &[1],
        )
        .into_iter()
        .map(generated),
    );
    gs.extend([
        generated("random:n=2000,m=9000,seed=7"),
        from_pairs(1, &[], "single vertex"),
        from_pairs(1, &[(0, 0)], "single self-loop"),
        from_pairs(
            10,
            &[(0, 1), (1, 0), (1, 2), (5, 6), (6, 7), (8, 8)],
            "disconnected",
        ),
        self_loops(),
        directed_path(1000, "directed path"),
    ]);
    gs.extend(shipped_graphs(&[SMALL_SHIPPED_GRAPH]));
    gs
}

/// Stages of fans for the single-block mode: stage s is a centre with `fans[s % 5]` arcs (5,
/// 40, 300, 1500, 2100: thread, warp and block granularity and, last, a hub) to middle
/// vertices that all lead to the next stage's centre, 60 stages; the middles of the fan of
/// 1500 first split in two (a level of 3000 items: more than two per thread of the widest
/// block). Levels alternate between one centre (its list expanded cooperatively, its middles
/// appended by the block and warp paths) and its middles (expanded by their threads, which
/// append the next centre many times over).
pub fn fan_chain() -> Graph {
    const STAGES: u32 = 60;
    let fans = [5u32, 40, 300, 1500, 2100];
    let mut pairs = Vec::new();
    let mut centre = 0u32;
    for s in 0..STAGES {
        let fan = fans[s as usize % fans.len()];
        let split = if fan == 1500 { 2 } else { 1 };
        let first_middle = centre + 1;
        let first_split = first_middle + fan;
        let next = if split == 1 {
            first_split
        } else {
            first_split + split * fan
        };
        for j in 0..fan {
            pairs.push((centre, first_middle + j));
            if split == 1 {
                pairs.push((first_middle + j, next));
            } else {
                for k in 0..split {
                    let sub = first_split + split * j + k;
                    pairs.push((first_middle + j, sub));
                    pairs.push((sub, next));
                }
            }
        }
        centre = next;
    }
    from_pairs(centre as usize + 1, &pairs, "fan chain")
}
