//! Shared by the fused-kernel test binaries: their holds on the GPU lock
//! (`groute_core::testing::cuda_test`), graphs of every shape, and runs on a block partition.
#![allow(dead_code)] // each binary uses its own subset

use std::time::Duration;

use groute_bfs::{BfsError, BfsOptions, BfsResult, Direction, bfs};
use groute_core::Context;
use groute_core::testing::{GpuHold, GpuTest, cuda_test};
use groute_graph::Graph;
use groute_graph::testing::in_blocks;
use groute_worklist::traversal::FusedMode;

/// A CUDA context of `devices` devices, sharing the GPU with the other tests (`None` when
/// CUDA is not tested).
pub fn cuda(devices: usize) -> Option<GpuTest> {
    cuda_test(devices, None, GpuHold::Shared)
}

/// A CUDA context of `devices` virtual devices all on one GPU, with no other test of this
/// binary on it meanwhile: device-driven members sharing a GPU start together only where it
/// is free enough for all of them (`None` when CUDA is not tested).
pub fn cuda_one_gpu(devices: usize) -> Option<GpuTest> {
    cuda_test(devices, Some(1), GpuHold::Alone)
}

/// A CUDA context of one device, with no other test of this binary on the GPU meanwhile.
pub fn cuda_alone() -> Option<GpuTest> {
    cuda_alone_on(1)
}

/// A CUDA context of `devices` devices, with no other test of this binary on the GPUs
/// meanwhile (tests that ask a running kernel to stop, and device-driven runs whose members
/// may share a GPU: `GpuHold::Alone`).
pub fn cuda_alone_on(devices: usize) -> Option<GpuTest> {
    cuda_test(devices, None, GpuHold::Alone)
}

pub use groute_graph::testing::{directed_path, from_pairs, generated, self_loops};

/// BFS from `source` on `ctx`, over `graph` cut into a block per device.
pub fn run(
    ctx: &Context,
    graph: &Graph,
    source: u32,
    o: &BfsOptions,
) -> Result<BfsResult, BfsError> {
    bfs(ctx, &in_blocks(graph, ctx.num_devices())?, source, o)
}

/// Hubs (out-degree >= 2048, listed and expanded grid-wide) in rounds that follow hub-free
/// rounds and in rounds that follow hub rounds: a path 0 -> 1 -> ... -> 9 whose vertices 1, 4
/// and 7 each lead to four hubs; hub j has 2048 + 97 j arcs into a shared pool of 6000 sink
/// leaves and one arc to hub j + 1. A fused kernel whose hub decision read the live counter
/// would hang on exactly this: a round without hubs followed by one with hubs.
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

/// Graphs of every shape the tests cover: Kronecker (one with hubs), road grids, random,
/// disconnected, single vertex, self-loops, a long path (many rounds), hubs after hub-free
/// rounds, and the shipped datasets. On reduced inputs (`groute_core::testing::reduced`) the
/// smallest graph of each shape: the smaller Kronecker graph and road grid, one shipped graph.
pub fn graphs() -> Vec<Graph> {
    let mut gs = groute_core::testing::pick(
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
        groute_core::testing::pick(
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
    let shipped = groute_graph::shipped_graphs();
    assert!(
        shipped.len() >= 3,
        "expected the repository's datasets/ graphs"
    );
    gs.extend(groute_core::testing::first(shipped, 1));
    gs
}

/// [`graphs`] with at least one vertex per device of `devices`.
pub fn graphs_for(devices: usize) -> Vec<Graph> {
    graphs()
        .into_iter()
        .filter(|g| g.num_vertices() >= devices)
        .collect()
}

/// The worklist BFS (Auto would run dense symmetric graphs direction-optimizing) in fused
/// `mode`, with a generous time limit.
pub fn fused_options(mode: FusedMode) -> BfsOptions {
    let mut o = BfsOptions::default();
    o.worklist.time_limit = Some(groute_core::testing::scaled(Duration::from_secs(60)));
    o.worklist.fused = mode;
    o.direction = Direction::Push;
    o
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
