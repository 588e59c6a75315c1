//! How an [`Execution`] maps onto each algorithm's own switch: the worklist traversals'
//! [`FusedMode`], the direction-optimizing BFS's [`MultiDriver`] and PageRank's [`Driver`]
//! (the table of [`Execution`]).

use groute_bfs::MultiDriver;
use groute_pagerank::Driver;
use groute_worklist::traversal::FusedMode;

use super::options::Execution;

impl Execution {
    /// BFS and SSSP on the worklist: device-driven is the fused persistent kernel, host-driven
    /// one launch per round.
    pub const fn fused_mode(self) -> FusedMode {
        match self {
            Execution::Auto => FusedMode::Auto,
            Execution::HostDriven => FusedMode::Off,
            Execution::DeviceDriven => FusedMode::On,
        }
    }

    /// Direction-optimizing BFS: device-driven is one persistent kernel per device,
    /// host-driven a host thread per device.
    pub const fn multi_driver(self) -> MultiDriver {
        match self {
            Execution::Auto => MultiDriver::Auto,
            Execution::HostDriven => MultiDriver::PerDevice,
            Execution::DeviceDriven => MultiDriver::Fused,
        }
    }

    /// PageRank: device-driven is one persistent kernel per device, host-driven a launch per
    /// round.
    pub const fn pagerank_driver(self) -> Driver {
        match self {
            Execution::Auto => Driver::Auto,
            Execution::HostDriven => Driver::Host,
            Execution::DeviceDriven => Driver::Fused,
        }
    }
}
