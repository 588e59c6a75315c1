//! `--execution auto|host-driven|device-driven` ([`groute::Execution`], whose methods map it
//! onto each algorithm's engine switch): what the examples add to it.

use groute::Execution;
use groute::core::{BackendKind, Context};

use super::AnyError;

/// For an algorithm with only host-driven runs (`name`): an error naming the choices when
/// `execution` is device-driven.
pub fn host_driven_only(execution: Execution, name: &str) -> Result<(), AnyError> {
    if execution == Execution::DeviceDriven {
        return Err(format!(
            "--execution device-driven: {name} has host-driven runs only; give auto or host-driven"
        )
        .into());
    }
    Ok(())
}

/// The mode a run's engine belongs to, for the report.
pub fn mode_of(device_driven: bool) -> &'static str {
    if device_driven {
        Execution::DeviceDriven.name()
    } else {
        Execution::HostDriven.name()
    }
}

/// What runs a device-driven run on `ctx`, for the report: persistent kernels on CUDA, one
/// persistent member (a host thread) per device on the host backend.
pub fn persistent_form(ctx: &Context) -> &'static str {
    if ctx.backend_kind() == BackendKind::Host {
        "one persistent member (host thread) per device, exchanging through inboxes"
    } else {
        "one persistent kernel per device"
    }
}

/// The mode and engine of a worklist traversal's run on `ctx` (BFS pushing, SSSP), for the
/// report: `fused` and `device_driven_members` as the run's statistics give them (one launch
/// per round, one device's fused persistent kernel, device-driven members, or bounded fused
/// rounds).
pub fn worklist_engine(
    fused: bool,
    device_driven_members: bool,
    ctx: &Context,
) -> (&'static str, String) {
    match (fused, ctx.num_devices(), device_driven_members) {
        (false, _, _) => (mode_of(false), "worklist, one launch per round".into()),
        (true, 1, false) => (mode_of(true), "worklist, fused persistent kernel".into()),
        (true, _, true) => (mode_of(true), format!("worklist, {}", persistent_form(ctx))),
        (true, _, false) => (mode_of(false), "worklist, bounded fused rounds".into()),
    }
}
