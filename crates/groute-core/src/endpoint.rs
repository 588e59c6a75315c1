//! Endpoints: anything that can communicate.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::context::DeviceId;

/// Identity of a router, unique within the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RouterId(pub u32);

impl RouterId {
    /// A fresh, process-unique id.
    pub fn fresh() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        RouterId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// Something that can send or receive segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Endpoint {
    /// The host (pinned host memory).
    Host,
    /// One (virtual) device of the context.
    Device(DeviceId),
    /// A router, which forwards what it receives.
    Router(RouterId),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Host => f.write_str("host"),
            Endpoint::Device(d) => write!(f, "device {}", d.0),
            Endpoint::Router(r) => write!(f, "router {}", r.0),
        }
    }
}

impl From<DeviceId> for Endpoint {
    fn from(d: DeviceId) -> Self {
        Endpoint::Device(d)
    }
}
