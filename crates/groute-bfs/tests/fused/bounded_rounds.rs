//! Bounded fused rounds on several devices (host-driven): each round one launch of many
//! levels between the host's exchanges, equal to the reference with every level budget, with
//! the single-block frontier and with soft priority; chosen for host-driven runs on sparse
//! graphs or when asked.

use groute_bfs::bfs_reference;
use groute_core::testing::combinations;
use groute_worklist::traversal::{FusedDriver, FusedMode};

use crate::common::{cuda, fan_chain, generated, graphs_for, run};
use crate::options;

/// The shared frontier in bounded fused rounds on several devices (each device's
/// single-block levels between the host's exchanges): on and off, one level per launch to
/// unbounded, with soft priority.
#[test]
fn bounded_rounds_with_the_single_block_frontier_equal_the_reference() {
    let Some(ctx) = cuda(2) else {
        return;
    };
    let graphs = [generated("road:side=80,p=0.6,seed=13"), fan_chain()];
    let expected: Vec<_> = graphs.iter().map(|g| bfs_reference(&g.csr, 0)).collect();
    let level_budgets = [Some(1), Some(5), None];
    let solo_settings = [
        (false, false, None),
        (true, false, None),
        (true, true, Some(3)),
    ];
    for [gi, li, si] in combinations([graphs.len(), level_budgets.len(), solo_settings.len()]) {
        let (g, expected, levels) = (&graphs[gi], &expected[gi], level_budgets[li]);
        let (shared, direct, prio) = solo_settings[si];
        let mut o = options(FusedMode::On);
        o.worklist.fused_driver = FusedDriver::Host;
        o.worklist.fused_tuning.round_levels = levels;
        o.worklist.fused_tuning.solo_shared = shared;
        o.worklist.fused_tuning.solo_direct_min = direct;
        o.worklist.prio_delta = prio;
        let label = format!(
            "{}: levels {levels:?}, shared {shared}, solo direct min {direct}, prio \
             {prio:?}",
            g.name
        );
        let r = run(&ctx, g, 0, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(&r.levels, expected, "{label}");
        assert!(r.stats.fused, "{label}");
    }
}

#[test]
fn several_devices_run_bounded_fused_rounds_on_sparse_graphs_or_when_asked() {
    let g = generated("road:side=24,p=0.6,seed=2");
    let expected = bfs_reference(&g.csr, 0);
    if let Some(ctx) = cuda(1) {
        let r = run(&ctx, &g, 0, &options(FusedMode::Auto)).unwrap();
        assert!(r.stats.fused);
        assert_eq!(r.levels, expected);
    }
    let Some(ctx) = cuda(2) else {
        return;
    };
    let host_driven = |mode| {
        let mut o = options(mode);
        o.worklist.fused_driver = FusedDriver::Host;
        o
    };
    // A sparse graph: bounded fused rounds on several devices, unless turned off.
    let r = run(&ctx, &g, 0, &host_driven(FusedMode::Auto)).unwrap();
    assert!(r.stats.fused && !r.stats.worklist.device_driven);
    assert_eq!(r.levels, expected);
    let r = run(&ctx, &g, 0, &options(FusedMode::Off)).unwrap();
    assert!(!r.stats.fused);
    assert_eq!(r.levels, expected);
    // A dense one: host-driven, one launch per level, unless asked for; device-driven under
    // the default driver wherever the devices can run it, at any density.
    let dense = generated("kron:scale=10,ef=16,sym,seed=3");
    let expected = bfs_reference(&dense.csr, 1);
    let r = run(&ctx, &dense, 1, &host_driven(FusedMode::Auto)).unwrap();
    assert!(!r.stats.fused);
    assert_eq!(r.levels, expected);
    let r = run(&ctx, &dense, 1, &host_driven(FusedMode::On)).unwrap();
    assert!(
        r.stats.fused,
        "On runs bounded fused rounds on several devices"
    );
    assert_eq!(r.levels, expected);
    let r = run(&ctx, &dense, 1, &options(FusedMode::Auto)).unwrap();
    let device_driven = groute_core::cuda::PeerGroup::auto_device_driven(&ctx);
    assert_eq!(r.stats.fused, device_driven);
    assert_eq!(r.stats.worklist.device_driven, device_driven);
    assert_eq!(r.levels, expected);
}

/// Bounded fused rounds on several devices (`--fused --devices N`): every graph shape, from
/// several sources, with level budgets from one level per launch to more than the graph's
/// depth, in and out of single-block mode, with soft priority (the host's epochs across
/// devices), on 2 and 3 devices.
#[test]
fn bounded_fused_rounds_on_several_devices_equal_the_reference() {
    for devices in [2, 3] {
        let Some(ctx) = cuda(devices) else {
            return;
        };
        let graphs = graphs_for(devices);
        let settings = [
            (Some(1), None, None),
            (Some(3), Some(0), None),
            (None, None, None),
            (Some(100_000), None, Some(2)),
        ];
        for [gi, si, ki] in combinations([graphs.len(), 2, settings.len()]) {
            let g = &graphs[gi];
            let n = g.num_vertices() as u32;
            let s = [0, n / 2][si];
            let (levels, solo, prio) = settings[ki];
            let expected = bfs_reference(&g.csr, s);
            let mut o = options(FusedMode::On);
            o.worklist.fused_driver = FusedDriver::Host;
            o.worklist.fused_tuning.round_levels = levels;
            o.worklist.fused_tuning.solo_max = solo;
            o.worklist.prio_delta = prio;
            let label = format!(
                "{} from {s} on {devices} devices, levels {levels:?}, solo {solo:?}, \
                 prio {prio:?}",
                g.name
            );
            let r = run(&ctx, g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(r.levels, expected, "{label}");
            assert!(r.stats.fused, "{label}");
            assert!(
                !r.stats.worklist.device_driven,
                "{label}: host-driven asked"
            );
            assert!(r.stats.work_items >= r.reached() as u64, "{label}");
        }
        let mut zero = options(FusedMode::On);
        zero.worklist.fused_tuning.round_levels = Some(0);
        let g = generated("road:side=16,p=0.6,seed=2");
        let err = run(&ctx, &g, 0, &zero).unwrap_err().to_string();
        assert!(err.contains("--fused-round-levels"), "{err}");
    }
}
