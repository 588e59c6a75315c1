//! The fused persistent kernel (`--fused`): on one CUDA device it equals the sequential
//! reference and the per-round mode, counts its rounds and work, fails clearly on overflow,
//! a bad grid or the time limit, with and without its single-block mode and soft priority,
//! with its single-block mode on one block or on a cluster, and on several devices runs fused (On, and Auto on sparse graphs): device-driven (one persistent
//! kernel per device) or in bounded rounds between the host's exchanges.
//! The CUDA tests run under `GROUTE_TEST_CUDA=1`; the host backend ignores the mode.
//!
//! One binary (`--test fused`), one module per way of running: [`one_device`],
//! [`bounded_rounds`], [`device_driven`] and [`failures`]; the graphs and runs shared with the
//! other fused-kernel binaries are in `tests/common`.

#[path = "../common/mod.rs"]
mod common;

mod bounded_rounds;
mod device_driven;
mod failures;
mod one_device;

use groute_bfs::BfsOptions;
use groute_core::Context;
use groute_core::cuda::{GpuSharing, PeerGroup};
use groute_worklist::traversal::FusedMode;

use common::{from_pairs, fused_options};

fn options(mode: FusedMode) -> BfsOptions {
    fused_options(mode)
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
/// Whether `ctx`'s devices can run device-driven under `FusedDriver::Device`: on distinct GPUs
/// with peer access, or as members sharing a GPU (virtual devices, e.g. 2 or 3 devices on one
/// GPU), each on its share of it.
fn members_can_run(ctx: &Context) -> bool {
    PeerGroup::check_sharing(ctx, GpuSharing::Split).is_ok()
}
