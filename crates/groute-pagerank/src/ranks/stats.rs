//! What a [`PageRankRanks::run`] returns: the ranks and the run's measurements.

use std::time::Duration;

#[cfg(doc)]
use super::PageRankRanks;
use super::SweepRoundTimes;
#[cfg(doc)]
use crate::PageRankTuning;

/// Ranks and statistics of a [`PageRankRanks::run`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageRankRanksResult {
    /// `ranks[v]`: the rank of every vertex (the graph's numbering), on every process.
    pub ranks: Vec<f32>,
    /// Measurements.
    pub stats: PageRankRanksStats,
}

impl PageRankRanksResult {
    /// Sum of all ranks, in `f64`.
    pub fn rank_sum(&self) -> f64 {
        self.ranks.iter().map(|&r| f64::from(r)).sum()
    }
}

/// Measurements of a [`PageRankRanks::run`] (times of this process; counts over every
/// process).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageRankRanksStats {
    /// Host clock from the start of the run (every process has started it) to the last
    /// round's end, before the ranks are gathered.
    pub elapsed: Duration,
    /// The same span on the devices (CUDA timing events; max over this process's devices);
    /// `None` on the host backend.
    pub device_time: Option<Duration>,
    /// Sweeps (rounds of exchange).
    pub rounds: u64,
    /// Residuals moved into ranks, over every round and process (each vertex once a round
    /// at most).
    pub pushes: u64,
    /// The residual left on every vertex when the run ended: `|r - r*|_1 <= residual_left /
    /// (1 - alpha)` (the crate docs' a-posteriori bound).
    pub residual_left: f64,
    /// Bytes that crossed between processes in the rounds: each process receives every
    /// other's boundary shares once a round (every process's padded to the largest boundary,
    /// or in rounds by vertex ranges to each step's largest, as the gathers move them). The
    /// ranks' gather at the end is not counted.
    pub bytes_between_ranks: u64,
    /// Each process's boundary vertices (those with arcs to other processes' vertices, whose
    /// shares cross), in process order.
    pub boundary_per_process: Vec<u64>,
    /// Bytes copied between this process's devices in the rounds: each device receives the
    /// others' owned shares every round that gathers (in a push round, as many bytes: each
    /// peer's slots of its own vertices), and the other processes' shares from device 0.
    pub bytes_between_devices: u64,
    /// Residuals each of this process's devices moved into ranks, over every round.
    pub pushes_per_device: Vec<u64>,
    /// The largest residual left on one of this process's vertices (at most epsilon).
    pub max_residual_left: f32,
    /// The rounds whose gathers read only the shares of the vertices taken
    /// ([`PageRankTuning::sparse_gather_divisor`]; the same on every process that kept the
    /// bitmaps, 0 on the host backend, whose gathers read every share).
    pub sparse_gather_rounds: u64,
    /// The rounds that pushed the shares instead of gathering them
    /// ([`PageRankTuning::sweep_push_divisor`]; 0 across processes).
    pub push_rounds: u64,
    /// The rounds that gathered and took the vertices range by range
    /// ([`PageRankTuning::sweep_ranges`]): a run's first rounds, all of them unless it left
    /// the ranges for whole-graph rounds, after a pass (counted in
    /// [`PageRankRanksStats::rounds`]) that delivers the shares in flight
    /// (`ranks/sweep_ranges.rs`).
    pub ranged_rounds: u64,
    /// Of those, the rounds enqueued before the counts of the round before them were read
    /// (`ranks/run_ahead.rs`; alone only).
    pub ranged_rounds_ahead: u64,
    /// This process's host time of the rounds, by kind.
    pub round_times: SweepRoundTimes,
}
