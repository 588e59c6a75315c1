//! [`FusedDirectionOptions`]: the switches of a device-driven run ([`MultiDriver::Fused`]):
//! its per-phase trace and the step variants a benchmark can compare.
//!
//! [`MultiDriver::Fused`]: crate::MultiDriver::Fused

/// Settings of a device-driven direction-optimizing run (ignored by the host-driven ones).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FusedDirectionOptions {
    /// Stamp every phase of every level on every device ([`DirectionTrace`], in
    /// [`BfsStats::do_trace`](crate::BfsStats)); off: no stamps, no cost but one branch each.
    ///
    /// [`DirectionTrace`]: crate::DirectionTrace
    pub trace: bool,
    /// A pull step builds the next frontier itself and stores its finds straight into the
    /// peers' inboxes (no grid barrier and no send pass between the pull and the exchange,
    /// no scan after it); off: the pull, then the send and scan passes every step takes.
    pub pull_builds_frontier: bool,
}

impl FusedDirectionOptions {
    /// The kernel's `flags` word (`groute::DoFlag`).
    pub(crate) fn kernel_flags(&self) -> u32 {
        /// `groute::DO_FLAG_PULL_FRONTIER`.
        const PULL_FRONTIER: u32 = 1;
        if self.pull_builds_frontier {
            PULL_FRONTIER
        } else {
            0
        }
    }
}
