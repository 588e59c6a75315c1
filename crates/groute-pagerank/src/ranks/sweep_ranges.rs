//! Rounds by vertex ranges ([`crate::PageRankTuning::sweep_ranges`]): each device splits
//! its vertices into consecutive ranges of about equal in-arcs ([`SweepRanges::split`]), and
//! a round gathers and takes one range after the other ([`PageRankRanks::ranged_round`]):
//!
//! ```text
//!  for each step s:  every device d:  gather residual[v] += sum of share[u] over the
//!                                              in-arcs u -> v, v in its range s
//!                                      take   residual > floor -> rank, share, for the
//!                                              vertices of its range s
//!                    every device e:  copy every peer's range s shares, after its take
//! ```
//!
//! A range's gather reads the shares the earlier ranges took in the same round and those the
//! later ranges took in the round before, so a take sees what every share taken since its
//! range's last take added (block Gauss-Seidel): on a Kronecker graph of scale 21 in degree
//! order, 4 ranges converge in 27 rounds on one device where whole-graph rounds need 43,
//! each round still one gather over every in-arc. On several devices the ranges of one step
//! run side by side, and a peer's shares of step `s` reach a device before its gather of
//! step `s + 1`, so a gather sees the shares of every earlier step of every device.
//!
//! Every share is read by every head exactly once. Order the ranges by step (the ranges of one
//! step in any order among themselves): a share that range `(d, s)` takes in round `p` is read
//! by a head in a range of a later step in round `p` (copied to the head's device after the
//! take, before that step's gather), and by a head in a range of step `s` or an earlier one in
//! round `p + 1`, before range `(d, s)`'s take of round `p + 1` rewrites it (that take is
//! ordered after every peer's copy of round `p`: a peer copies step `s` before its take of step
//! `s + 1` on its stream, and device `d` waits for that take before its copies of step `s + 1`,
//! which come before its next take of range `s`; a peer's copy of the last step comes before
//! its take of the next round's first step, for which `d` waits before its copies of that step,
//! so with at least two ranges no host wait between rounds is needed, and a round may be
//! enqueued before the last one's counts are read: `ranks/run_ahead.rs`). So no mass is lost or
//! counted twice, and once every share is delivered the invariant `r* = r + M res` holds. A
//! round that takes nothing ends the run: it delivered every share taken before it, took none,
//! and left every residual at most epsilon (at most `floor`, a take's threshold, after each
//! range's take: only the range's gather adds to its residuals; the first round's floor is 0,
//! as the whole-graph rounds').
//!
//! # The order of the steps
//!
//! Step `s` takes a device's `s`-th range from the end: in degree order the lightest
//! vertices first and the heaviest, the hubs, last. A hub's gather then sees the shares
//! every other range took in the same round, which reach it through most of its in-arcs,
//! and its own share reaches the light vertices at their next gather. Any order of the steps
//! keeps the argument above; this one converges in fewer rounds on a skewed graph: on one
//! H200 at epsilon 0.01, a Kronecker graph of scale 25 (8 ranges) in 24 ranged rounds
//! where hubs first took 28 (188 ms against 212), scale 21 (4 ranges) in 23 where they took
//! 25 (22.2 ms against 24.1).
//!
//! # Leaving the ranges
//!
//! A ranged round gathers every in-arc however few vertices it takes, where a whole-graph
//! round that takes few arcs pushes them (`ranks/sweeps.rs`). So a run goes on in
//! whole-graph rounds once a ranged round takes that few ([`PageRankRanks::leaves_ranges`]).
//! A whole-graph round that takes few vertices but many arcs gathers only their shares
//! (through a bitmap of them), but it still reads a bit for every in-arc, at random: on one
//! H200, PageRank on a Kronecker graph of scale 25 paid four fifths of a ranged round for
//! such a gather, and needed more of them, as whole-graph rounds converge slower. So in one
//! process that alone does not end the ranges. Across processes, where no round pushes and
//! a ranged round exchanges every step's boundaries, it does.
//!
//! The shares of the last ranged round are not all delivered: those of a range of step `s`
//! are still to be read by the heads of the ranges of steps up to `s`. One pass delivers
//! them ([`PageRankRanks::leave_ranges`]): every device gathers its ranges in step order
//! without taking, and after its gather of step `s` zeroes the shares of every range of
//! step `s` in its share array, so that the gather of a range of step `t` reads exactly the
//! shares of steps `t` and later. Then every share is 0 and every residual
//! holds its mass, as after the gather of a whole-graph round, and the vertices above
//! epsilon are those the pass counted: the next round takes them.

use std::ops::Range;

use groute_core::Context;
use groute_graph::Csr;
use groute_worklist::RankCollectives;

use super::PageRankRanks;
use super::sweeps::SweepCounts;
use crate::{PageRankError, PageRankTuning};

/// How many vertex ranges each device of a run by ranges splits its vertices into.
pub(super) struct SweepRanges {
    /// Ranges per device (at least 2).
    count: u32,
}

impl SweepRanges {
    /// The ranges of a run of `ranks` processes over a graph whose in-arcs are `in_arcs`
    /// (the transpose, or the CSR of a symmetric graph) uploaded in degree order where
    /// `ordered`: where [`PageRankTuning::sweep_ranges_for`] gives more than one range (in
    /// a run across processes, only where [`PageRankTuning::sweep_ranges`] asks for them),
    /// that many per device; else `None` (whole-graph rounds).
    pub(super) fn for_run(
        tuning: &PageRankTuning,
        context: &Context,
        (ranks, ordered): (usize, bool),
        in_arcs: &Csr,
    ) -> Option<Self> {
        // Across processes only where asked (every process asks the same: the solver's
        // shape check).
        if ranks != 1 && tuning.sweep_ranges.is_none() {
            return None;
        }
        let n = in_arcs.num_vertices() as u64;
        let l2 = context.smallest_l2_cache_bytes();
        let asked = tuning.sweep_ranges_for(ordered, (n, in_arcs.num_edges()), l2);
        // At most one a vertex.
        let count = asked.min(u32::try_from(n).unwrap_or(u32::MAX));
        (count > 1).then_some(SweepRanges { count })
    }

    /// The ranges of the device owning `owned`, in the order of the steps that take them:
    /// [`SweepRanges`]'s count of consecutive ranges covering `owned` with about equal
    /// in-arcs (`in_offsets`, the in-CSR's offsets), some empty where `owned` has fewer
    /// vertices, the last vertices' range first (module docs, "The order of the steps").
    pub(super) fn split(&self, in_offsets: &[u64], owned: &Range<u32>) -> Vec<Range<u32>> {
        let mut ranges = ranges_of(in_offsets, owned, self.count);
        ranges.reverse();
        ranges
    }
}

/// `count` consecutive ranges covering `owned`, cut where the arcs of `owned` (by
/// `offsets`, the in-CSR's) before the cut reach the next multiple of a `count`th of them.
fn ranges_of(offsets: &[u64], owned: &Range<u32>, count: u32) -> Vec<Range<u32>> {
    let (first, end) = (owned.start as usize, owned.end as usize);
    let (base, arcs) = (offsets[first], offsets[end] - offsets[first]);
    let count = u64::from(count.max(1));
    let mut cuts = Vec::with_capacity(count as usize + 1);
    cuts.push(owned.start);
    for b in 1..count {
        let target = base + (u128::from(arcs) * u128::from(b) / u128::from(count)) as u64;
        let cut = (first + offsets[first..end].partition_point(|&o| o < target)) as u32;
        cuts.push(cut.max(*cuts.last().unwrap_or(&owned.start)));
    }
    cuts.push(owned.end);
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

impl PageRankRanks {
    /// The vertex ranges a round gathers and takes one after the other
    /// ([`PageRankTuning::sweep_ranges_for`]; 1: the whole graph at once).
    pub fn sweep_ranges(&self) -> u32 {
        self.devices[0].sweep_ranges().max(1) as u32
    }

    /// Whether a range's gather goes by tiles on some device
    /// ([`PageRankTuning::gather_tiles_for`]; CUDA only, where the tiles fit).
    pub fn gathers_by_tiles(&self) -> bool {
        self.devices.iter().any(|d| d.gathers_by_tiles())
    }

    /// A round by vertex ranges on every device (see the module docs): the counters zeroed,
    /// then, step by step, each device's gather of its step's range and the take of its
    /// vertices above `floor`, each device's copy of every peer's step's shares (after that
    /// peer's take), and across processes the exchange of the step's boundary shares
    /// (collective: `ranks/step_boundaries.rs`). Returns the round's counts of each device
    /// (waits for them): the vertices taken over every range and the crossings of every
    /// gather. A process that fails to enqueue a step still takes part in every later
    /// step's exchange, then returns its error.
    pub(super) fn ranged_round(
        &self,
        floor: f32,
        collectives: &mut dyn RankCollectives,
    ) -> Result<Vec<SweepCounts>, PageRankError> {
        self.enqueue_ranged_round(floor, collectives)?;
        self.counts()
    }

    /// Enqueues a round by vertex ranges ([`PageRankRanks::ranged_round`]) without waiting
    /// for its counts: the counters zeroed, then every step.
    pub(super) fn enqueue_ranged_round(
        &self,
        floor: f32,
        collectives: &mut dyn RankCollectives,
    ) -> Result<(), PageRankError> {
        let mut failure = None;
        for (device, sweeps) in self.context.devices().iter().zip(&self.devices) {
            if let Err(e) = sweeps.zero_counts(device.stream()) {
                failure.get_or_insert(e.into());
            }
        }
        for step in 0..self.devices[0].sweep_ranges() {
            if failure.is_none()
                && let Err(e) = self.ranged_step(step, floor)
            {
                failure = Some(e);
            }
            if let Some(boundaries) = &self.step_boundaries {
                let devices = (&self.context, &self.devices[..]);
                let exchanged = boundaries.exchange(step, devices, collectives, failure.is_some());
                if let Err(e) = exchanged {
                    failure.get_or_insert(e);
                }
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// Enqueues step `step` of a ranged round in this process: every device's gather and
    /// take of its range of the step, then (several devices) each device's copies of its
    /// peers' shares of the step, after their takes.
    fn ranged_step(&self, step: usize, floor: f32) -> Result<(), PageRankError> {
        let devices = self.context.devices();
        let several = devices.len() > 1;
        let mut taken = Vec::with_capacity(devices.len());
        for (device, sweeps) in devices.iter().zip(&self.devices) {
            sweeps.gather_range(device.stream(), step)?;
            sweeps.take_range(device.stream(), step, floor)?;
            if several {
                taken.push(device.stream().record()?);
            }
        }
        if several {
            self.copy_peer_shares(&taken, |peer| peer.range_shares(step))?;
        }
        Ok(())
    }

    /// Whether a run by vertex ranges goes on in whole-graph rounds after a ranged round
    /// that took `taken` vertices of `taken_arcs` out-arcs over every device and process:
    /// in a process alone, where the next round in whole-graph rounds would push them
    /// ([`PageRankTuning::sweep_push_below`]; 0: never), which costs less than a ranged
    /// round's gather over every in-arc, but not where it would only gather their shares;
    /// across processes (which never push), where every process's next round would gather
    /// only their shares ([`PageRankTuning::sparse_gather_below`], the smallest of every
    /// process's), saving the exchange of every step's boundaries (module docs, "Leaving the
    /// ranges"). A round that took nothing ends the run instead. Every process decides
    /// alike, from the round's sums.
    pub(super) fn leaves_ranges(&self, taken: u64, taken_arcs: u64) -> bool {
        let sparse = taken <= self.leave_sparse_below;
        let push = self.push_below > 0 && taken_arcs <= self.push_below;
        taken > 0 && (sparse || push)
    }

    /// The gathers that end a run by vertex ranges (module docs, "Leaving the ranges"):
    /// each device gathers its ranges in step order, taking nothing, and after each step's
    /// gather zeroes the shares of every range of that step (of every device of every
    /// process) in its share array. Returns each device's counts (waits for them): nothing
    /// taken, and the vertices the gathers left above epsilon.
    pub(super) fn leave_ranges(&self) -> Result<Vec<SweepCounts>, PageRankError> {
        let devices = self.context.devices();
        for (d, (device, sweeps)) in devices.iter().zip(&self.devices).enumerate() {
            let stream = device.stream();
            sweeps.zero_counts(stream)?;
            for step in 0..sweeps.sweep_ranges() {
                sweeps.gather_range(stream, step)?;
                for shares in self.devices.iter().map(|peer| peer.range_shares(step)) {
                    if !shares.is_empty() {
                        stream.fill(&sweeps.share().slice(shares)?, 0u32)?;
                    }
                }
                if let Some(boundaries) = &self.step_boundaries {
                    boundaries.zero_theirs(step, d, (&self.context, sweeps.share()))?;
                }
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
        assert_eq!(ranges_of(&offsets, &(0..7), 1), vec![0..7]);
        assert_eq!(ranges_of(&offsets, &(0..7), 2), vec![0..1, 1..7]);
        assert_eq!(ranges_of(&offsets, &(0..7), 3), vec![0..1, 1..3, 3..7]);
        // A device's part: its 5 arcs split in 2 where the 2nd and 3rd meet.
        assert_eq!(ranges_of(&offsets, &(2..7), 2), vec![2..4, 4..7]);
        assert_eq!(ranges_of(&offsets, &(1..2), 2), vec![1..1, 1..2]);
        // More ranges than vertices: some empty, still in order and covering.
        let r = ranges_of(&[0, 2, 4], &(0..2), 5);
        assert_eq!(r.first().map(|r| r.start), Some(0));
        assert_eq!(r.last().map(|r| r.end), Some(2));
        assert!(r.windows(2).all(|w| w[0].end == w[1].start));
        // No vertex.
        assert_eq!(ranges_of(&[0], &(0..0), 3), vec![0..0, 0..0, 0..0]);
    }
}
