//! Rounds by vertex ranges ([`crate::PageRankTuning::sweep_ranges`]): the vertices are split
//! into consecutive ranges of about equal in-arcs ([`SweepRanges::for_run`]), and a round
//! gathers and takes one range after the other ([`PageRankRanks::ranged_round`]):
//!
//! ```text
//!  for each range R:  gather residual[v] += sum of share[u] over the in-arcs u -> v, v in R
//!                     take   residual > floor -> rank, share, for the vertices of R
//! ```
//!
//! A range's gather reads the shares the earlier ranges took in the same round and those the
//! later ranges took in the round before, so a take sees what every share taken since its
//! range's last take added (block Gauss-Seidel): on a Kronecker graph of scale 21 in degree
//! order, 4 ranges converge in 28 rounds where whole-graph rounds need 43, each round still
//! one gather over every in-arc.
//!
//! Every share is read by every head exactly once: a share that range `b` takes in round `p`
//! is read by a head in a later range in round `p`, and by a head in range `b` or an earlier
//! one in round `p + 1`, before range `b`'s take of round `p + 1` rewrites it. So no mass is
//! lost or counted twice, and once every share is delivered the invariant `r* = r + M res`
//! holds. A round that takes nothing ends the run: it delivered every share taken before it,
//! took none, and left every residual at most epsilon (at most `floor`, a take's threshold,
//! after each range's take; the first round's floor is 0, as the whole-graph rounds').

use std::ops::Range;

use groute_core::Context;
use groute_graph::Csr;

use super::PageRankRanks;
use super::sweeps::SweepCounts;
use crate::{PageRankError, PageRankTuning};

/// The vertex ranges of a run by ranges.
pub(super) struct SweepRanges {
    /// Consecutive ranges covering every vertex.
    pub(super) ranges: Vec<Range<u32>>,
}

impl SweepRanges {
    /// The ranges of a run of `ranks` processes on `devices` devices each, over a graph
    /// whose in-arcs are `in_arcs` (the transpose, or the CSR of a symmetric graph) uploaded
    /// in degree order where `ordered`: where one process runs on one device and
    /// [`PageRankTuning::sweep_ranges_for`] gives more than one range, that many (at most one
    /// a vertex) of about equal in-arcs, what a range's gather reads; else `None`
    /// (whole-graph rounds).
    pub(super) fn for_run(
        tuning: &PageRankTuning,
        context: &Context,
        (ranks, devices, ordered): (usize, usize, bool),
        in_arcs: &Csr,
    ) -> Option<Self> {
        if (ranks, devices) != (1, 1) {
            return None;
        }
        let n = in_arcs.num_vertices();
        let l2 = crate::tuning::smallest_l2(context);
        let asked = tuning.sweep_ranges_for(1, ordered, (n as u64, in_arcs.num_edges()), l2);
        let count = asked.min(u32::try_from(n.max(1)).unwrap_or(u32::MAX));
        (count > 1).then(|| SweepRanges {
            ranges: ranges_of(in_arcs.offsets(), count),
        })
    }
}

/// `count` consecutive vertex ranges covering the `offsets.len() - 1` vertices, cut where
/// the arcs before the cut reach the next multiple of a `count`th of the arcs.
fn ranges_of(offsets: &[u64], count: u32) -> Vec<Range<u32>> {
    let n = offsets.len().saturating_sub(1);
    let arcs = offsets.last().copied().unwrap_or(0);
    let count = u64::from(count.max(1));
    let mut cuts = Vec::with_capacity(count as usize + 1);
    cuts.push(0u32);
    for b in 1..count {
        let target = (u128::from(arcs) * u128::from(b) / u128::from(count)) as u64;
        let cut = offsets[..n].partition_point(|&o| o < target) as u32;
        cuts.push(cut.max(*cuts.last().unwrap_or(&0)));
    }
    cuts.push(n as u32);
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

impl PageRankRanks {
    /// The vertex ranges a round gathers and takes one after the other
    /// ([`PageRankTuning::sweep_ranges_for`]; 1: the whole graph at once).
    pub fn sweep_ranges(&self) -> u32 {
        self.devices[0].sweep_ranges().max(1) as u32
    }

    /// A round by vertex ranges on every device (one process; see the module docs): the
    /// counters zeroed, then, range by range, the gather of the range's in-arcs and the take
    /// of its vertices above `floor`. Returns the round's counts of each device (waits for
    /// them): the vertices taken over every range and the crossings of every gather.
    pub(super) fn ranged_round(&self, floor: f32) -> Result<Vec<SweepCounts>, PageRankError> {
        let devices = self.context.devices();
        for (device, sweeps) in devices.iter().zip(&self.devices) {
            sweeps.zero_counts(device.stream())?;
            for range in 0..sweeps.sweep_ranges() {
                sweeps.gather_range(device.stream(), range)?;
                sweeps.take_range(device.stream(), range, floor)?;
            }
        }
        self.counts()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_every_vertex_in_order_with_about_equal_arcs() {
        // Degrees 6, 1, 1, 1, 1, 1, 1: 12 arcs.
        let offsets = [0u64, 6, 7, 8, 9, 10, 11, 12];
        assert_eq!(ranges_of(&offsets, 1), vec![0..7]);
        assert_eq!(ranges_of(&offsets, 2), vec![0..1, 1..7]);
        assert_eq!(ranges_of(&offsets, 3), vec![0..1, 1..3, 3..7]);
        // More ranges than vertices: some empty, still in order and covering.
        let r = ranges_of(&[0, 2, 4], 5);
        assert_eq!(r.first().map(|r| r.start), Some(0));
        assert_eq!(r.last().map(|r| r.end), Some(2));
        assert!(r.windows(2).all(|w| w[0].end == w[1].start));
        // No vertex.
        assert_eq!(ranges_of(&[0], 3), vec![0..0, 0..0, 0..0]);
    }
}
