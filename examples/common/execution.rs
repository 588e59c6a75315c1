//! `--execution auto|host-driven|device-driven`: who drives a run's rounds, and how each
//! algorithm's engine switches map onto it.

use clap::ValueEnum;
use groute::bfs::MultiDriver;
use groute::core::{BackendKind, Context};
use groute::pagerank::Driver;
use groute::worklist::traversal::FusedMode;

use super::AnyError;

/// Who drives a run: the host between kernel launches, or the devices in persistent kernels.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Execution {
    /// Picked from the graph and the devices; the report says what ran.
    #[default]
    Auto,
    /// The host launches every round and moves the data between rounds.
    HostDriven,
    /// Persistent kernels run the whole traversal; the host launches and waits.
    DeviceDriven,
}

impl Execution {
    /// The flag's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Execution::Auto => "auto",
            Execution::HostDriven => "host-driven",
            Execution::DeviceDriven => "device-driven",
        }
    }

    /// BFS/SSSP worklist traversals: device-driven is the fused persistent kernel, host-driven
    /// one launch per round.
    pub fn fused_mode(self) -> FusedMode {
        match self {
            Execution::Auto => FusedMode::Auto,
            Execution::HostDriven => FusedMode::Off,
            Execution::DeviceDriven => FusedMode::On,
        }
    }

    /// Direction-optimizing BFS on several devices: device-driven is one persistent kernel
    /// per device, host-driven a host thread per device.
    pub fn multi_driver(self) -> MultiDriver {
        match self {
            Execution::Auto => MultiDriver::Auto,
            Execution::HostDriven => MultiDriver::PerDevice,
            Execution::DeviceDriven => MultiDriver::Fused,
        }
    }

    /// PageRank's driver of the rounds on CUDA.
    pub fn pagerank_driver(self) -> Driver {
        match self {
            Execution::Auto => Driver::Auto,
            Execution::HostDriven => Driver::Host,
            Execution::DeviceDriven => Driver::Fused,
        }
    }

    /// For an algorithm with only host-driven runs (`name`): an error naming the choices when
    /// device-driven was asked for.
    pub fn host_driven_only(self, name: &str) -> Result<(), AnyError> {
        if self == Execution::DeviceDriven {
            return Err(format!(
                "--execution device-driven: {name} has host-driven runs only; give auto or host-driven"
            )
            .into());
        }
        Ok(())
    }
}

/// The mode a run's engine belongs to, for the report.
pub fn mode_of(device_driven: bool) -> &'static str {
    if device_driven {
        Execution::DeviceDriven.as_str()
    } else {
        Execution::HostDriven.as_str()
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
