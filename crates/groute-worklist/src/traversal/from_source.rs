//! What the algorithm crates' traversals from one source (BFS, SSSP) report of a worklist
//! run: its statistics ([`TraversalStats`]) and the summaries of its values
//! ([`count_reached`], [`max_reached`]).

use std::time::Duration;

use super::{TraversalOutput, UNREACHED};
use crate::engine::WorklistStats;

/// Statistics of one worklist run of a traversal from one source (`groute_sssp::SsspStats`;
/// `groute_bfs::BfsStats` has these fields and those of its direction-optimizing runs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraversalStats {
    /// Expand rounds of the busiest device: levels of a fused or per-level run; bounded fused
    /// launches (of many levels each) on several devices.
    pub rounds: u64,
    /// Work items processed on all devices (a vertex counts once per expansion; label
    /// correcting may expand a vertex more than once).
    pub work_items: u64,
    /// Items sent over the ring (remote updates and items passed on).
    pub items_sent: u64,
    /// Items deferred to a low-priority list (soft priority; 0 when off).
    pub items_deferred: u64,
    /// Soft-priority epochs: threshold advances (0 when off).
    pub epochs: u64,
    /// The band width the run used (0: soft priority off).
    pub prio_delta: u32,
    /// Time of the traversal alone: from the drivers' start until every device's stream has
    /// drained (graph upload, storage reset and result download excluded; host clock after
    /// synchronising the devices).
    pub elapsed: Duration,
    /// Whether the run used the fused kernel (CUDA; see [`FusedMode`](super::FusedMode)): one
    /// persistent launch on one device, bounded launches of many levels each on several; else
    /// one launch per level.
    pub fused: bool,
    /// The traversal's time on the devices (CUDA timing events after the reset, before the
    /// download, max over devices; the fused kernel alone when fused): what benchmarks
    /// report. `None` on the host backend.
    pub device_time: Option<Duration>,
    /// The worklist's per-device counters.
    pub worklist: WorklistStats,
}

impl<V> TraversalOutput<V> {
    /// The run's values (partitioned numbering) and its statistics, summed up from the
    /// worklist's counters.
    pub fn into_values_and_stats(self) -> (Vec<V>, TraversalStats) {
        let ws = self.stats;
        let stats = TraversalStats {
            rounds: ws.rounds(),
            work_items: ws.items_processed(),
            items_sent: ws.items_sent(),
            items_deferred: ws.items_deferred(),
            epochs: ws.epochs,
            prio_delta: ws.prio_delta,
            elapsed: ws.elapsed,
            fused: self.fused,
            device_time: self.device_time,
            worklist: ws,
        };
        (self.values, stats)
    }
}

/// How many of a traversal's `values` are reached (not [`UNREACHED`]).
pub fn count_reached(values: &[u32]) -> usize {
    values.iter().filter(|&&v| v != UNREACHED).count()
}

/// The largest of a traversal's reached `values` (not [`UNREACHED`]); 0 where none is.
pub fn max_reached(values: &[u32]) -> u32 {
    values
        .iter()
        .copied()
        .filter(|&v| v != UNREACHED)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reached_values_leave_out_unreached() {
        assert_eq!(count_reached(&[0, UNREACHED, 3, 1]), 3);
        assert_eq!(max_reached(&[0, UNREACHED, 3, 1]), 3);
        assert_eq!(count_reached(&[UNREACHED]), 0);
        assert_eq!(max_reached(&[UNREACHED]), 0);
        assert_eq!(max_reached(&[]), 0);
    }
}
