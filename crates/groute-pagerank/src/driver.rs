//! Who drives the rounds of a CUDA run ([`Driver`], `--driver`): the host (a launch and a
//! read-back per round, the ring between devices) or the device (one persistent kernel per
//! device running every round, the devices exchanging over NVLink; crate docs, "Device-driven
//! runs"). [`Driver::Auto`] runs host-driven, and the device-driven driver on several devices
//! is behind [`EXPERIMENTAL_FUSED_ENV`] (open bug, issue #7).

use std::fmt;
use std::str::FromStr;

/// Who runs the rounds of a CUDA run ([`crate::PageRankOptions::driver`], `--driver`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Driver {
    /// Always [`Driver::Host`] for now: the device-driven loop was never faster and stalls on
    /// several GPUs (see "Device-driven runs" in the crate docs for the 2 x H200 figures and
    /// issue #7). Kept as the default so that a future fix can make it pick again.
    #[default]
    Auto,
    /// One persistent cooperative kernel per device runs every round; remote contributions go
    /// straight to their owner's halo over NVLink, the devices agree on the counts by
    /// cross-device all-reduces. An error where it cannot run (naming `--driver host`), and,
    /// on several devices, unless [`EXPERIMENTAL_FUSED_ENV`] is `1` (open bug, issue #7:
    /// [`check_fused_devices`]).
    Fused,
    /// The host launches every round, reads the counts back and moves remote items over the
    /// worklist's ring (the only driver of the host backend).
    Host,
}

/// The environment variable that, set to `1`, lets [`Driver::Fused`] run on several devices
/// (the reproducer of issue #7; see [`check_fused_devices`]).
pub const EXPERIMENTAL_FUSED_ENV: &str = "GROUTE_EXPERIMENTAL_FUSED_PAGERANK";

/// Whether [`EXPERIMENTAL_FUSED_ENV`] is set to `1` in this process's environment.
pub fn experimental_fused_enabled() -> bool {
    std::env::var(EXPERIMENTAL_FUSED_ENV).as_deref() == Ok("1")
}

/// Whether [`Driver::Fused`] may run on `devices` devices: always on one; on several only
/// when `experimental` ([`experimental_fused_enabled`]), else an error naming the open bug
/// and the fix.
///
/// On 2 x H200 the device-driven runs on two GPUs stalled on the SMALL test graphs (every
/// member waiting the 60 s exchange timeout, cause unknown, issue #7), while the same runs on
/// one GPU, and the 2-GPU runs on road-usa and kron21, completed and passed their checks. It
/// was never faster than the host-driven loop either (crate docs, "Device-driven runs").
pub fn check_fused_devices(devices: usize, experimental: bool) -> Result<(), groute_core::Error> {
    if devices <= 1 || experimental {
        return Ok(());
    }
    Err(groute_core::Error::invalid(
        "driver (--driver)",
        Driver::Fused,
        format!(
            "the device-driven PageRank driver stalls on small graphs on several GPUs (open \
             bug, issue #7); use --driver host (or auto), or set {EXPERIMENTAL_FUSED_ENV}=1 to \
             run it anyway"
        ),
    ))
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
    fn fused_on_several_devices_needs_the_experimental_switch() {
        assert!(check_fused_devices(1, false).is_ok());
        assert!(check_fused_devices(1, true).is_ok());
        assert!(check_fused_devices(2, true).is_ok());
        for devices in [2, 4] {
            let e = check_fused_devices(devices, false).unwrap_err().to_string();
            for needed in [
                "issue #7",
                "--driver host",
                "GROUTE_EXPERIMENTAL_FUSED_PAGERANK=1",
            ] {
                assert!(
                    e.contains(needed),
                    "{devices} devices: {e:?} lacks {needed:?}"
                );
            }
        }
    }
}
