//! The fused mode on the host backend, which has no fused kernel: `On` runs one persistent
//! member per device (device-driven), any other mode host-driven rounds.

use groute_core::Context;
use groute_graph::Graph;

use super::{TraversalUnderTest, fused_options, run_matching_the_reference};
use crate::traversal::FusedMode;

/// `T` from `source` of `graph` on each of `devices` host devices in each of `modes`: the
/// reference; fused and device-driven exactly under `On`; no device time.
pub fn the_host_backend_runs_the_fused_mode_as_its_persistent_members<T: TraversalUnderTest>(
    graph: &Graph,
    source: u32,
    devices: &[usize],
    modes: &[FusedMode],
) {
    for &count in devices {
        let ctx = Context::host(count).unwrap();
        for &mode in modes {
            let label = format!("{count} devices, {mode:?}");
            let options = fused_options::<T>(mode);
            let r = run_matching_the_reference::<T>(&ctx, graph, source, &options, &label);
            // On: one persistent member per device, device-driven; else driven rounds.
            let members = mode == FusedMode::On;
            assert_eq!(r.fused, members, "{label}");
            assert_eq!(r.worklist.device_driven, members, "{label}");
            assert_eq!(r.device_time, None, "{label}");
        }
    }
}
