//! Who drives the rounds of a CUDA run ([`Driver`], `--driver`): the host (a launch and a
//! read-back per round, the ring between devices) or the device (one persistent kernel per
//! device running every round, the devices exchanging over NVLink; crate docs, "Device-driven
//! runs").

use std::fmt;
use std::str::FromStr;

/// Who runs the rounds of a CUDA run ([`crate::PageRankOptions::driver`], `--driver`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Driver {
    /// [`Driver::Fused`] where it can run (the CUDA backend, pull sweeps, distinct physical
    /// GPUs with peer access between every pair: `groute_core::cuda::PeerGroup::supported`)
    /// AND where it wins ([`auto_picks_fused`]: several devices and a cut of at most
    /// [`AUTO_FUSED_MAX_CUT`] of the arcs), else [`Driver::Host`].
    #[default]
    Auto,
    /// One persistent cooperative kernel per device runs every round; remote contributions go
    /// straight to their owner's halo over NVLink, the devices agree on the counts by
    /// cross-device all-reduces. An error where it cannot run (naming `--driver host`).
    Fused,
    /// The host launches every round, reads the counts back and moves remote items over the
    /// worklist's ring (the only driver of the host backend).
    Host,
}

/// The largest fraction of cut arcs (arcs between two devices' vertices) at which
/// [`Driver::Auto`] picks the device-driven loop on several devices.
///
/// Measured on 2 x H200 over NVLink (`pagerank --partition block --repeat 3`, median ms):
///
/// | graph, devices           | cut arcs | fused | host  |
/// |--------------------------|----------|-------|-------|
/// | road-usa, 1              | 0        | 17.1  | 15.65 |
/// | road-usa, 2              | ~0.01%   | 12.1  | 13.3  |
/// | kron21.sym, 1            | 0        | 59.2  | 58.6  |
/// | kron21.sym, 2            | ~50%     | 444   | ~115  |
///
/// On one device the host-driven loop is as fast or faster (no exchange to save). On several,
/// every cut arc the fused loop pushes is a system-scope atomic over NVLink into the owner's
/// halo (plus a fence), so it wins only while the cut is small: 1% keeps road networks
/// (0.01%) and leaves kron-like graphs (50%) to the host-driven ring.
pub const AUTO_FUSED_MAX_CUT: f64 = 0.01;

/// Whether [`Driver::Auto`] runs the device-driven loop (where it can run) on `devices`
/// devices with `cut_arcs` of `arcs` arcs between two devices: several devices and
/// `cut_arcs <= AUTO_FUSED_MAX_CUT * arcs` (see [`AUTO_FUSED_MAX_CUT`] for the measurements).
pub fn auto_picks_fused(devices: usize, cut_arcs: u64, arcs: u64) -> bool {
    devices > 1 && (cut_arcs as f64) <= AUTO_FUSED_MAX_CUT * arcs as f64
}

impl Driver {
    /// The flag value (`auto`, `fused`, `host`).
    pub fn name(self) -> &'static str {
        match self {
            Driver::Auto => "auto",
            Driver::Fused => "fused",
            Driver::Host => "host",
        }
    }
}

impl fmt::Display for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a [`Driver`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown driver {0:?}: use auto, fused or host")]
pub struct ParseDriverError(String);

impl FromStr for Driver {
    type Err = ParseDriverError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Driver::Auto),
            "fused" => Ok(Driver::Fused),
            "host" => Ok(Driver::Host),
            other => Err(ParseDriverError(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_errors() {
        for d in [Driver::Auto, Driver::Fused, Driver::Host] {
            assert_eq!(d.to_string().parse::<Driver>(), Ok(d));
        }
        let e = "gpu".parse::<Driver>().unwrap_err();
        assert!(e.to_string().contains("auto, fused or host"), "{e}");
    }

    #[test]
    fn auto_picks_fused_on_several_devices_with_a_small_cut_only() {
        // One device: never (the host-driven loop was faster on road-usa and kron21).
        assert!(!auto_picks_fused(1, 0, 1_000));
        assert!(!auto_picks_fused(1, 0, 0));
        // road-usa's block cut (~0.01%) and the 1% limit itself: fused.
        assert!(auto_picks_fused(2, 1, 10_000));
        assert!(auto_picks_fused(2, 100, 10_000));
        assert!(auto_picks_fused(4, 0, 10_000));
        // Just above 1%, and kron's ~50%: host.
        assert!(!auto_picks_fused(2, 101, 10_000));
        assert!(!auto_picks_fused(2, 5_000, 10_000));
    }
}
