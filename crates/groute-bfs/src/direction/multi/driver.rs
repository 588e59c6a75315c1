//! [`MultiDriver`]: what drives the levels of a direction-optimizing run (`--do-driver`): the
//! devices themselves (one persistent kernel per device) or the host.

/// What drives the levels of a direction-optimizing run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MultiDriver {
    /// [`MultiDriver::Fused`] where the context supports it
    /// (`groute_core::cuda::PeerGroup::auto_device_driven`: CUDA, one GPU, distinct physical
    /// GPUs with peer access between every pair, or members sharing a GPU: even sharing one
    /// GPU, members run faster than host-driven levels per device), else
    /// [`MultiDriver::PerDevice`].
    #[default]
    Auto,
    /// The devices: one persistent cooperative kernel per device runs every level, the
    /// devices exchanging discoveries by peer stores and agreeing on each step through a
    /// cross-device all-reduce; the host launches and waits. Devices sharing a GPU (virtual
    /// devices: more devices than GPUs) run as members sharing it, each on its share of the
    /// GPU's resident blocks (`groute_core::cuda::member_share`). Refused (naming the fix)
    /// where the context cannot run it
    /// (`groute_core::cuda::PeerGroup::check_sharing` with `GpuSharing::Split`).
    Fused,
    /// One host thread per device runs that device's share of every level and the threads
    /// sum their counts once per level: the devices' launches, copies and synchronisations
    /// are issued in parallel.
    PerDevice,
}

groute_core::choice_names! {
    /// The flag's spelling (`auto`, `fused`, `per-device`).
    MultiDriver, "driver" {
        Auto => "auto",
        Fused => "fused",
        PerDevice => "per-device",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_its_spellings() {
        for d in [
            MultiDriver::Auto,
            MultiDriver::Fused,
            MultiDriver::PerDevice,
        ] {
            assert_eq!(d.name().parse::<MultiDriver>().unwrap(), d);
        }
        let e = "both".parse::<MultiDriver>().unwrap_err();
        assert!(e.to_string().contains("auto, fused, per-device"), "{e}");
    }
}
