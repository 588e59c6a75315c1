//! Who drives the rounds of a CUDA run ([`Driver`], `--driver`): the host (a launch and a
//! read-back per round, the ring between devices) or the device (one persistent kernel per
//! device running every round, the devices exchanging over NVLink; crate docs, "Device-driven
//! runs"). [`Driver::Auto`] picks by the graph and the devices (crate docs, "Choosing a
//! driver").

/// Who runs the rounds of a CUDA run ([`crate::PageRankOptions::driver`], `--driver`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Driver {
    /// On CUDA with pull sweeps: [`Driver::Sweeps`] on several devices whose partition cuts
    /// at least a tenth of the arcs, and on one device holding a dense graph uploaded in
    /// degree order whose shares fit its L2 or that has at least
    /// [`crate::SWEEP_RANGES_MIN_ARCS`] arcs (rounds by vertex ranges); [`Driver::Host`] on
    /// one device holding a dense graph whose shares outgrow its L2 not in degree order;
    /// else [`Driver::Fused`] where `PeerGroup::auto_device_driven`
    /// holds (one device, distinct GPUs with peer access, or members sharing a GPU); else
    /// [`Driver::Host`] ("Choosing a driver" in the crate docs). On the host backend, and
    /// with push sweeps: [`Driver::Host`].
    #[default]
    Auto,
    /// One persistent cooperative kernel per device runs every round; remote contributions go
    /// straight to their owner's halo over NVLink, the devices agree on the counts by
    /// cross-device all-reduces. Virtual devices sharing a GPU run as members splitting it
    /// (each on its share of the resident blocks). An error where it cannot run (naming
    /// `--driver host`). On the host backend: the worklist's device-driven host executor, one
    /// persistent member per device exchanging through inboxes
    /// ([`HostSolver`](groute_worklist::algorithm::HostSolver)).
    Fused,
    /// The host launches every round, reads the counts back and moves remote items over the
    /// worklist's ring (what [`Driver::Auto`] runs on the host backend).
    Host,
    /// Synchronous sweeps of the whole graph, launched by the host (the executor of
    /// [`PageRankRanks`](crate::PageRankRanks), in one process): each device takes its
    /// vertices' residuals into shares, the devices copy each other's owned shares, and each
    /// gathers over its vertices' in-arcs. No atomic and no message per cut arc: what a
    /// partition that cuts many arcs needs. A round expected to take few arcs pushes instead
    /// ([`PageRankTuning::sweep_push_divisor`](crate::PageRankTuning::sweep_push_divisor)):
    /// atomics along the out-arcs of the vertices taken, each device collecting its peers'
    /// heads in its own slots, copied to their owners. The gather reads in-arcs: the
    /// transpose of a directed graph is built on the host and uploaded. No worklist: the
    /// worklist options do not apply.
    Sweeps,
}

groute_core::choice_names! {
    /// The flag value (`auto`, `fused`, `host`).
    Driver, "driver" {
        Auto => "auto",
        Fused => "fused",
        Host => "host",
        Sweeps => "sweeps",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_errors() {
        for d in [Driver::Auto, Driver::Fused, Driver::Host, Driver::Sweeps] {
            assert_eq!(d.to_string().parse::<Driver>(), Ok(d));
        }
        let e = "gpu".parse::<Driver>().unwrap_err();
        assert!(e.to_string().contains("auto, fused, host, sweeps"), "{e}");
    }
}
