//! Device-driven fused runs (`--fused-driver device`: one persistent kernel per device, items
//! stored into the next device's inbox, termination counted on the devices; under
//! `GROUTE_TEST_CUDA=1`, the body returns at once elsewhere) in a group of one and on 2 and 3
//! devices: distinct GPUs with peer access, or members sharing GPUs where there are fewer,
//! each on its share. The GPUs are the test's alone ([`member_groups`]): members sharing one
//! start only beside no other test's kernel.

use groute_core::testing::combinations;
use groute_graph::testing::generated;

use super::{
    TraversalUnderTest, assert_fails_naming, graphs_for, member_groups, run_matching_the_reference,
    sweep_source, tuned,
};
use crate::WorklistStats;
use crate::traversal::{FusedDriver, FusedMode};

/// Device-driven runs over `T`'s graphs of every shape, from the first `sources` sweep
/// sources (vertex 0, the middle and the last vertex), for each of `settings`
/// (`(fused_tuning.solo_max, fused_tuning.solo_shared, prio_delta, fused_tuning.cluster)`):
/// the reference, fused, device-driven, every vertex reached expanded; at the end every
/// listed item was expanded once (the seed too) and every published item received, so the
/// termination count cannot have reached 0 early, and the traffic adds up
/// ([`traffic_adds_up`]); some run on several devices crossed the partition, none on one.
/// Devices that cannot run members refuse it naming `--fused-driver`.
pub fn device_driven_fused_runs_on_several_devices<T: TraversalUnderTest>(
    sources: usize,
    settings: &[(Option<u32>, bool, Option<u32>, bool)],
) {
    for (ctx, members_run) in member_groups() {
        let devices = ctx.num_devices();
        if !members_run {
            let o = tuned::<T>(FusedMode::On, |w| w.fused_driver = FusedDriver::Device);
            let g = generated("road:side=16,p=0.6,seed=2");
            assert_fails_naming::<T>(&ctx, &g, &o, "--fused-driver");
            continue;
        }
        // Over the runs on these devices: whether some run sent updates.
        let mut crossed = false;
        let graphs = graphs_for::<T>(devices);
        for [gi, si, ti] in combinations([graphs.len(), sources, settings.len()]) {
            let g = &graphs[gi];
            let s = sweep_source(g, si);
            let (solo, shared, prio, cluster) = settings[ti];
            let o = tuned::<T>(FusedMode::On, |w| {
                w.fused_driver = FusedDriver::Device;
                w.fused_tuning.solo_max = solo;
                w.fused_tuning.solo_shared = shared;
                w.fused_tuning.cluster = Some(cluster);
                w.prio_delta = prio;
            });
            let label = format!(
                "{} from {s} on {devices} devices, solo {solo:?}, shared {shared}, \
                 prio {prio:?}, cluster {cluster}",
                g.name
            );
            let r = run_matching_the_reference::<T>(&ctx, g, s, &o, &label);
            assert!(r.fused, "{label}");
            let w = &r.worklist;
            assert!(w.device_driven, "{label}: not device-driven");
            assert!(r.work_items >= r.reached as u64, "{label}");
            assert_eq!(
                w.items_processed(),
                w.items_produced() + 1,
                "{label}: every listed item expanded once, the seed too"
            );
            assert_eq!(
                w.items_sent(),
                w.items_received(),
                "{label}: every published item received"
            );
            traffic_adds_up(w, devices, &label);
            crossed |= w.items_sent() > 0;
        }
        // The large graphs cross the block partition's cuts.
        assert_eq!(crossed, devices > 1, "{devices} devices: updates sent");
    }
}

/// The traffic counters of a device-driven run on `devices` devices: every batch published
/// (`segments_sent`) carried at least one item; on two devices every item sent is a remote
/// update (nothing is passed on), on more they are not counted apart (0); none is sent on one.
pub fn traffic_adds_up(w: &WorklistStats, devices: usize, label: &str) {
    for (d, s) in w.devices.iter().enumerate() {
        assert!(s.segments_sent <= s.items_sent, "{label}: device {d}");
        assert_eq!(
            s.segments_sent > 0,
            s.items_sent > 0,
            "{label}: device {d} published its sends"
        );
        assert_eq!(s.cut_arcs_traversed, None, "{label}: device {d}");
    }
    let (sent, remote) = (w.items_sent(), w.remote_updates());
    assert_eq!(w.counts_remote_updates(), devices <= 2, "{label}");
    match devices {
        1 => assert_eq!((sent, w.segments_sent()), (0, 0), "{label}"),
        2 => assert_eq!(remote, sent, "{label}: every item sent is a remote update"),
        _ => assert_eq!(remote, 0, "{label}: not counted apart from items passed on"),
    }
}
