//! The fused persistent kernel (`--fused`): on one CUDA device it equals the sequential
//! reference and the per-round mode, counts its rounds and work, fails clearly on overflow,
//! a bad grid or the time limit, with and without its single-block mode and soft priority,
//! with its single-block mode on one block or on a cluster, and on several devices runs fused (On, and Auto on sparse graphs): device-driven (one persistent
//! kernel per device) or in bounded rounds between the host's exchanges.
//! The CUDA tests run under `GROUTE_TEST_CUDA=1`; the host backend ignores the mode.
//!
//! One binary (`--test fused`), one module per way of running: [`one_device`],
//! [`bounded_rounds`], [`device_driven`] and [`failures`]. The bodies shared with SSSP are
//! `groute_worklist::testing`'s, run with [`BfsUnderTest`]; BFS's graphs are in `tests/common`.

#[path = "../common/mod.rs"]
mod common;

mod bounded_rounds;
mod device_driven;
mod failures;
mod one_device;

use groute_bfs::BfsOptions;
use groute_graph::testing::from_pairs;
use groute_worklist::testing::fused_options;
use groute_worklist::traversal::FusedMode;

use common::BfsUnderTest;

/// The worklist BFS in fused `mode`, with a generous time limit.
fn options(mode: FusedMode) -> BfsOptions {
    fused_options::<BfsUnderTest>(mode)
}

/// A tree of `fanout`^3 leaves: levels of 1, `fanout`, `fanout`^2 and `fanout`^3 items, every
/// list under 32 arcs (the cluster mode's graphs) while the last level outgrows the cluster's
/// 4,096 frontier entries.
fn wide_tree(fanout: u32) -> groute_graph::Graph {
    let mut pairs = Vec::new();
    let mut level = vec![0u32];
    let mut next_id = 1u32;
    for _ in 0..3 {
        let mut children = Vec::new();
        for &v in &level {
            for _ in 0..fanout {
                pairs.push((v, next_id));
                children.push(next_id);
                next_id += 1;
            }
        }
        level = children;
    }
    from_pairs(next_id as usize, &pairs, "wide tree")
}
