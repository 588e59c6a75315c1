//! Bounded fused rounds on several CUDA devices (host-driven: each round one launch of many
//! levels between the host's exchanges; `GROUTE_TEST_CUDA=1`, the bodies return at once
//! elsewhere): equal to the reference with every level budget, in and out of single-block
//! mode, with its shared frontier and with soft priority (the host's epochs across devices).
//! The bodies share the GPUs with the process's other tests ([`cuda_shared`]).

use groute_core::testing::combinations;
use groute_graph::Graph;
use groute_graph::testing::generated;

use super::{
    TraversalUnderTest, assert_fails_naming, cuda_shared, graphs_for, run_matching_the_reference,
    sweep_source, tuned,
};
use crate::traversal::{FusedDriver, FusedMode};

/// The sweep of [`bounded_rounds_with_the_single_block_frontier`].
#[derive(Debug)]
pub struct BoundedFrontierSweep {
    /// The graphs, each run from vertex 0.
    pub graphs: Vec<Graph>,
    /// Levels per launch (`fused_tuning.round_levels`; `None`: the default).
    pub level_budgets: &'static [Option<u32>],
    /// `(fused_tuning.solo_shared, fused_tuning.solo_direct_min, prio_delta)`.
    pub settings: &'static [(bool, bool, Option<u32>)],
}

/// The single-block mode's shared frontier in bounded fused rounds on two devices (each
/// device's single-block levels between the host's exchanges): on and off, one level per
/// launch to unbounded, with and without soft priority; always the reference, fused.
pub fn bounded_rounds_with_the_single_block_frontier<T: TraversalUnderTest>(
    sweep: &BoundedFrontierSweep,
) {
    let Some(ctx) = cuda_shared(2) else {
        return;
    };
    let BoundedFrontierSweep {
        graphs,
        level_budgets,
        settings,
    } = sweep;
    for [gi, li, ti] in combinations([graphs.len(), level_budgets.len(), settings.len()]) {
        let (g, levels, (shared, direct, prio)) = (&graphs[gi], level_budgets[li], settings[ti]);
        let o = tuned::<T>(FusedMode::On, |w| {
            w.fused_driver = FusedDriver::Host;
            w.fused_tuning.round_levels = levels;
            w.fused_tuning.solo_shared = shared;
            w.fused_tuning.solo_direct_min = direct;
            w.prio_delta = prio;
        });
        let label = format!(
            "{}: levels {levels:?}, shared {shared}, solo direct min {direct}, prio \
             {prio:?}",
            g.name
        );
        let r = run_matching_the_reference::<T>(&ctx, g, 0, &o, &label);
        assert!(r.fused, "{label}");
    }
}

/// Bounded fused rounds on 2 and 3 devices (`--fused --fused-driver host --devices N`) over
/// `T`'s graphs of every shape, from vertex 0 and the middle vertex, for each of `settings`
/// (`(fused_tuning.round_levels, fused_tuning.solo_max, prio_delta)`): the reference, fused,
/// host-driven as asked, every vertex reached expanded; and a budget of zero levels per launch
/// is refused naming `--fused-round-levels`.
pub fn bounded_fused_rounds_on_several_devices<T: TraversalUnderTest>(
    settings: &[(Option<u32>, Option<u32>, Option<u32>)],
) {
    for devices in [2, 3] {
        let Some(ctx) = cuda_shared(devices) else {
            return;
        };
        let graphs = graphs_for::<T>(devices);
        for [gi, si, ti] in combinations([graphs.len(), 2, settings.len()]) {
            let g = &graphs[gi];
            let s = sweep_source(g, si);
            let (levels, solo, prio) = settings[ti];
            let o = tuned::<T>(FusedMode::On, |w| {
                w.fused_driver = FusedDriver::Host;
                w.fused_tuning.round_levels = levels;
                w.fused_tuning.solo_max = solo;
                w.prio_delta = prio;
            });
            let label = format!(
                "{} from {s} on {devices} devices, levels {levels:?}, solo {solo:?}, \
                 prio {prio:?}",
                g.name
            );
            let r = run_matching_the_reference::<T>(&ctx, g, s, &o, &label);
            assert!(r.fused, "{label}");
            assert!(!r.worklist.device_driven, "{label}: host-driven asked");
            assert!(r.work_items >= r.reached as u64, "{label}");
        }
        let zero = tuned::<T>(FusedMode::On, |w| w.fused_tuning.round_levels = Some(0));
        let g = generated("road:side=16,p=0.6,seed=2");
        assert_fails_naming::<T>(&ctx, &g, &zero, "--fused-round-levels");
    }
}
