//! Where one device's run time goes, as the host sees it ([`DeviceProfile`]): rounds by kind,
//! receives, host synchronisations, and the host time spent in each part of the driver loop.
//! Counted by the CUDA worker (a few clock reads per round, no device work) and handed to the
//! solver when the worker is dropped, through a [`ProfileSink`] the storage keeps.

use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One device's counters of a CUDA run ([`crate::PageRankStats::devices`]). The host times
/// cover the worker's calls: `round_time + receive_time + send_time + finish_time` is what the
/// driver spent in them; the rest of the run's `elapsed` was the driver's own work (ring,
/// termination count) and its waits for packets (idle).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceProfile {
    /// Rounds run (sweep, worklist and settle rounds).
    pub rounds: u64,
    /// Sweep rounds (the first round included).
    pub sweep_rounds: u64,
    /// Worklist rounds.
    pub worklist_rounds: u64,
    /// Receive steps (one per batch of packets split together).
    pub receives: u64,
    /// Packets received.
    pub packets: u64,
    /// Items received.
    pub items_received: u64,
    /// Receive steps that read nothing back ([`crate::PageRankTuning::lazy_receive`]): their
    /// counts went with the next round's read-back.
    pub lazy_receives: u64,
    /// Rounds with no kernel, run only to read a lazy receive's counts back (no local work
    /// was pending).
    pub settle_rounds: u64,
    /// Device-driven runs: cross-device exchanges (`peer_allreduce_sum` calls; 0 on one
    /// device and in host-driven runs).
    pub exchanges: u64,
    /// Host synchronisations with the device: one per round and per receive step that is not
    /// lazy (the control block's read-back) plus the final one.
    pub syncs: u64,
    /// Outgoing buffers enlarged during the run (each one more synchronisation; rare: only
    /// while every other buffer is in flight and received items keep being passed on).
    pub buffer_growths: u64,
    /// Host time blocked in those synchronisations (the device still working, or the copy).
    pub sync_wait: Duration,
    /// Host time inside rounds (launches, the read-back wait included).
    pub round_time: Duration,
    /// Host time inside receive steps (launches, the read-back wait included).
    pub receive_time: Duration,
    /// Host time handing outgoing buffers to the ring.
    pub send_time: Duration,
    /// Host time in the final synchronisation.
    pub finish_time: Duration,
    /// Device-driven runs: where the device's time went, by phase (`None` in host-driven
    /// runs).
    pub phases: Option<FusedPhaseTimes>,
    /// Device-driven runs: blocks of the persistent kernel's grid (`None` in host-driven
    /// runs).
    pub fused_grid: Option<u32>,
    /// Device-driven runs: share values this device's sweeps posted into its peers' share
    /// arrays (one per mirror and sweep; 0 on one device and in host-driven runs).
    pub mirror_values_sent: u64,
}

/// Device time of a device-driven run by phase, summed over its rounds (`%globaltimer`
/// stamps taken by the grid barriers' actions, `kernels/pagerank/pagerank_fused.cu`): each phase from
/// the previous barrier's action to the arrival of its slowest block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FusedPhaseTimes {
    /// Sweeps' take (pull sweep pass 1).
    pub sweep_take: Duration,
    /// Sweeps' mirror posts to the peers, with the wait for every peer's (several devices).
    pub mirror: Duration,
    /// Hub phases: a sweep's pull hub tiles, a worklist round's listed hubs.
    pub hubs: Duration,
    /// Sweeps' gather (pull sweep pass 2).
    pub gather: Duration,
    /// Worklist rounds' push (their hubs apart).
    pub worklist: Duration,
    /// Cross-device exchanges (the wait for the slowest device included).
    pub exchange: Duration,
    /// Inbox drains, with the pick of the next round.
    pub drain: Duration,
}

impl FusedPhaseTimes {
    /// The phases' sum.
    pub fn total(&self) -> Duration {
        self.sweep_take
            + self.mirror
            + self.hubs
            + self.gather
            + self.worklist
            + self.exchange
            + self.drain
    }
}

impl DeviceProfile {
    /// Host time inside the worker's calls (rounds, receives, sends, finish).
    pub fn busy(&self) -> Duration {
        self.round_time + self.receive_time + self.send_time + self.finish_time
    }
}

/// Where a worker leaves its profile when dropped; the storage keeps one per device.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProfileSink(Arc<Mutex<DeviceProfile>>);

impl ProfileSink {
    /// Stores `p` (the last run's profile).
    pub(crate) fn store(&self, p: DeviceProfile) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = p;
        }
    }

    /// The last stored profile.
    pub(crate) fn load(&self) -> DeviceProfile {
        self.0.lock().map(|p| p.clone()).unwrap_or_default()
    }
}
