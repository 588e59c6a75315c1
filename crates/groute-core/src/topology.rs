//! Topology queries: which devices can reach which directly.

use std::fmt;

use crate::backend::BackendKind;
use crate::context::Context;
use crate::error::Result;

/// One device as the topology sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceSummary {
    /// Virtual device index.
    pub id: usize,
    /// Physical device index.
    pub physical: usize,
    /// Device name.
    pub name: String,
    /// Memory in bytes.
    pub memory: u64,
    /// Multiprocessors.
    pub multiprocessors: u32,
    /// Compute capability.
    pub compute_capability: (u32, u32),
}

/// How two devices are connected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerLink {
    /// The same physical device (virtual devices sharing it).
    SameDevice,
    /// Direct peer access (NVLink or PCIe P2P).
    Peer,
    /// Only through host memory.
    HostStaged,
}

/// Devices of a context and their connections.
#[derive(Clone, Debug)]
pub struct Topology {
    /// The backend.
    pub backend: BackendKind,
    /// The devices.
    pub devices: Vec<DeviceSummary>,
    /// `links[a][b]`: how `a` reaches `b`.
    pub links: Vec<Vec<PeerLink>>,
}

impl Topology {
    /// The topology of `ctx`.
    pub fn of(ctx: &Context) -> Result<Self> {
        let backend = ctx.backend();
        let devices: Vec<DeviceSummary> = ctx
            .devices()
            .iter()
            .map(|d| {
                let p = d.properties();
                DeviceSummary {
                    id: d.id().0,
                    physical: d.physical(),
                    name: p.name.clone(),
                    memory: p.total_memory,
                    multiprocessors: p.multiprocessors,
                    compute_capability: p.compute_capability,
                }
            })
            .collect();
        let links = devices
            .iter()
            .map(|a| {
                devices
                    .iter()
                    .map(|b| {
                        if a.physical == b.physical {
                            PeerLink::SameDevice
                        } else if backend.can_access_peer(a.physical, b.physical) {
                            PeerLink::Peer
                        } else {
                            PeerLink::HostStaged
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(Topology {
            backend: ctx.backend_kind(),
            devices,
            links,
        })
    }
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "backend: {}", self.backend)?;
        for d in &self.devices {
            writeln!(
                f,
                "device {} (physical {}): {}, {:.1} GiB, {} SMs, compute capability {}.{}",
                d.id,
                d.physical,
                d.name,
                d.memory as f64 / (1u64 << 30) as f64,
                d.multiprocessors,
                d.compute_capability.0,
                d.compute_capability.1
            )?;
        }
        write!(f, "      ")?;
        for b in &self.devices {
            write!(f, "{:>6}", b.id)?;
        }
        writeln!(f)?;
        for (a, row) in self.devices.iter().zip(&self.links) {
            write!(f, "{:>6}", a.id)?;
            for l in row {
                let s = match l {
                    PeerLink::SameDevice => "X",
                    PeerLink::Peer => "P2P",
                    PeerLink::HostStaged => "host",
                };
                write!(f, "{s:>6}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
