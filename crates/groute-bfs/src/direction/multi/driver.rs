//! [`MultiDriver`]: how the host drives the devices of a multi-device direction-optimizing
//! run (`--do-driver`).

/// How the host drives the devices of a multi-device direction-optimizing run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MultiDriver {
    /// One host thread per device runs that device's share of every level and the threads
    /// sum their counts once per level: the devices' launches, copies and synchronisations
    /// are issued in parallel.
    #[default]
    PerDevice,
    /// One host thread issues every device's work, device after device, phase after phase.
    Shared,
}

impl MultiDriver {
    /// The flag's spelling (`per-device`, `shared`).
    pub fn as_str(self) -> &'static str {
        match self {
            MultiDriver::PerDevice => "per-device",
            MultiDriver::Shared => "shared",
        }
    }
}

impl std::fmt::Display for MultiDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `--do-driver` value that is neither `per-device` nor `shared`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown driver `{0}`: use per-device or shared")]
pub struct MultiDriverParseError(pub String);

impl std::str::FromStr for MultiDriver {
    type Err = MultiDriverParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "per-device" => Ok(MultiDriver::PerDevice),
            "shared" => Ok(MultiDriver::Shared),
            other => Err(MultiDriverParseError(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_its_spellings() {
        for d in [MultiDriver::PerDevice, MultiDriver::Shared] {
            assert_eq!(d.as_str().parse::<MultiDriver>().unwrap(), d);
        }
        let e = "both".parse::<MultiDriver>().unwrap_err();
        assert!(e.to_string().contains("per-device or shared"), "{e}");
    }
}
