//! Bounded fused rounds on several devices (host-driven): each round one launch of many
//! levels between the host's exchanges, equal to the reference with every level budget, with
//! the single-block frontier and with soft priority; chosen for host-driven runs on sparse
//! graphs or when asked.

use groute_bfs::BfsOptions;
use groute_graph::Graph;
use groute_graph::testing::generated;
use groute_worklist::testing::fused_bounded::{self as shared, BoundedFrontierSweep};
use groute_worklist::testing::{cuda_shared, run_matching_the_reference, tuned};
use groute_worklist::traversal::{FusedDriver, FusedMode};

use crate::common::{BfsUnderTest, fan_chain};
use crate::options;

/// The shared frontier in bounded fused rounds on several devices (each device's
/// single-block levels between the host's exchanges): on and off, one level per launch to
/// unbounded, with soft priority.
#[test]
fn bounded_rounds_with_the_single_block_frontier_equal_the_reference() {
    shared::bounded_rounds_with_the_single_block_frontier::<BfsUnderTest>(&BoundedFrontierSweep {
        graphs: vec![generated("road:side=80,p=0.6,seed=13"), fan_chain()],
        level_budgets: &[Some(1), Some(5), None],
        settings: &[
            (false, false, None),
            (true, false, None),
            (true, true, Some(3)),
        ],
    });
}

#[test]
fn several_devices_run_bounded_fused_rounds_on_sparse_graphs_or_when_asked() {
    let g = generated("road:side=24,p=0.6,seed=2");
    if let Some(ctx) = cuda_shared(1) {
        let r = run_matching_the_reference::<BfsUnderTest>(
            &ctx,
            &g,
            0,
            &options(FusedMode::Auto),
            "one device",
        );
        assert!(r.fused);
    }
    let Some(ctx) = cuda_shared(2) else {
        return;
    };
    let host_driven = |mode| tuned::<BfsUnderTest>(mode, |w| w.fused_driver = FusedDriver::Host);
    let run = |g: &Graph, source, options: BfsOptions, label: &str| {
        run_matching_the_reference::<BfsUnderTest>(&ctx, g, source, &options, label)
    };
    // A sparse graph: bounded fused rounds on several devices, unless turned off.
    let r = run(&g, 0, host_driven(FusedMode::Auto), "sparse");
    assert!(r.fused && !r.worklist.device_driven);
    let r = run(&g, 0, options(FusedMode::Off), "sparse, Off");
    assert!(!r.fused);
    // A dense one: host-driven, one launch per level, unless asked for; device-driven under
    // the default driver wherever the devices can run it, at any density.
    let dense = generated("kron:scale=10,ef=16,sym,seed=3");
    let r = run(&dense, 1, host_driven(FusedMode::Auto), "dense");
    assert!(!r.fused);
    let r = run(&dense, 1, host_driven(FusedMode::On), "dense, On");
    assert!(r.fused, "On runs bounded fused rounds on several devices");
    let r = run(&dense, 1, options(FusedMode::Auto), "dense, Auto");
    let device_driven = groute_core::cuda::PeerGroup::auto_device_driven(&ctx);
    assert_eq!(r.fused, device_driven);
    assert_eq!(r.worklist.device_driven, device_driven);
}

/// Bounded fused rounds on several devices (`--fused --devices N`): every graph shape, from
/// several sources, with level budgets from one level per launch to more than the graph's
/// depth, in and out of single-block mode, with soft priority (the host's epochs across
/// devices), on 2 and 3 devices.
#[test]
fn bounded_fused_rounds_on_several_devices_equal_the_reference() {
    shared::bounded_fused_rounds_on_several_devices::<BfsUnderTest>(&[
        (Some(1), None, None),
        (Some(3), Some(0), None),
        (None, None, None),
        (Some(100_000), None, Some(2)),
    ]);
}
