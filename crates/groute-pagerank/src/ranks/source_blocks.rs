//! Rounds by source ranges ([`crate::PageRankTuning::source_blocks`]): the sources are split
//! into consecutive ranges of about equal out-arcs ([`SourceBlocks::split`]), each device
//! keeps, per range, the in-arcs of its owned vertices whose tails lie in it, and a round
//! takes and gathers one range after the other ([`PageRankRanks::source_block_round`]):
//!
//! ```text
//!  for each range R:  take   residual > floor -> rank, share, for the owned vertices of R
//!                     gather residual[v] += sum of share[u] over the in-arcs u -> v, u in R
//! ```
//!
//! Every share a take writes is read by exactly one gather (the next one, over the in-arcs
//! from its range) before the range's next take rewrites it, so no mass is lost or counted
//! twice and the invariant `r* = r + M res` holds after every gather, as in the whole-graph
//! round. A take sees what the earlier ranges' gathers of the same round added (block
//! Gauss-Seidel): on kron21 in degree order, 4 ranges need 26 rounds' worth of arcs where the
//! whole-graph round needs 43. In degree order the first ranges are few vertices with most of
//! the arcs, whose shares the gathers read from the L1.
//!
//! A round ends the run when no vertex crossed epsilon in any of its gathers: every residual
//! is then at most epsilon (a vertex is above epsilon only after crossing since its take).
//! A round whose gathers saw crossings that later ranges' takes of the same round took is
//! followed by one that takes nothing, crosses nothing and ends the run. A vertex crosses at
//! most twice a round (before and after its range's take), so each device's worklist holds
//! twice its owned vertices.

use std::ops::Range;

use groute_core::{Context, Error};
use groute_graph::Csr;
use rayon::prelude::*;

use super::PageRankRanks;
use super::sweeps::SweepCounts;
use crate::{PageRankError, PageRankTuning};

/// The source ranges of a run and, for one device, the in-arcs of its owned vertices from
/// each.
pub(super) struct SourceBlocks {
    /// Consecutive ranges covering every vertex.
    pub(super) ranges: Vec<Range<u32>>,
    /// Per range, an in-CSR over every vertex whose owned rows hold the in-arcs from that
    /// range (the other rows empty).
    pub(super) parts: Vec<Csr>,
}

impl SourceBlocks {
    /// The split of a run of `ranks` processes on `devices` devices each, over `csr` (and
    /// `transpose`, a directed graph's) uploaded in degree order where `ordered`: where one
    /// process runs on one device and [`PageRankTuning::source_blocks_for`] gives more than
    /// one range; else `None` (whole-graph rounds).
    pub(super) fn for_run(
        tuning: &PageRankTuning,
        context: &Context,
        (ranks, devices, ordered): (usize, usize, bool),
        (csr, transpose): (&Csr, Option<&Csr>),
    ) -> Result<Option<Self>, PageRankError> {
        if (ranks, devices) != (1, 1) {
            return Ok(None);
        }
        let n = csr.num_vertices();
        let l2 = crate::tuning::smallest_l2(context);
        let blocks = tuning.source_blocks_for(1, ordered, (n as u64, csr.num_edges()), l2);
        let owned = 0..n as u32;
        (blocks > 1)
            .then(|| Self::split(csr, transpose.unwrap_or(csr), &owned, blocks))
            .transpose()
    }

    /// Splits the sources of `out` (the CSR, whose offsets give the out-degrees) into
    /// `blocks` ranges of about equal out-arcs, and the in-arcs of the `owned` rows of
    /// `in_arcs` (the transpose, or `out` itself on a symmetric graph) by them.
    pub(super) fn split(
        out: &Csr,
        in_arcs: &Csr,
        owned: &Range<u32>,
        blocks: u32,
    ) -> Result<Self, PageRankError> {
        let ranges = ranges_of(out.offsets(), blocks);
        let parts = ranges
            .par_iter()
            .map(|range| arcs_from(in_arcs, owned, range))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SourceBlocks { ranges, parts })
    }
}

/// `blocks` consecutive vertex ranges covering the `offsets.len() - 1` vertices, cut where
/// the arcs before the cut reach the next multiple of a `blocks`th of the arcs.
fn ranges_of(offsets: &[u64], blocks: u32) -> Vec<Range<u32>> {
    let n = offsets.len().saturating_sub(1);
    let arcs = offsets.last().copied().unwrap_or(0);
    let blocks = u64::from(blocks.max(1));
    let mut cuts = Vec::with_capacity(blocks as usize + 1);
    cuts.push(0u32);
    for b in 1..blocks {
        let target = (u128::from(arcs) * u128::from(b) / u128::from(blocks)) as u64;
        let cut = offsets[..n].partition_point(|&o| o < target) as u32;
        cuts.push(cut.max(*cuts.last().unwrap_or(&0)));
    }
    cuts.push(n as u32);
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// The in-CSR over every vertex of `in_arcs` whose `owned` rows keep their arcs from
/// `sources` (the other rows empty).
fn arcs_from(in_arcs: &Csr, owned: &Range<u32>, sources: &Range<u32>) -> Result<Csr, Error> {
    let n = in_arcs.num_vertices();
    let keep = |v: u32| {
        let list: &[u32] = if owned.contains(&v) {
            in_arcs.neighbors(v)
        } else {
            &[]
        };
        list.iter().copied().filter(|u| sources.contains(u))
    };
    let short = |what: &'static str, len: usize| {
        Error::invalid(
            what,
            len,
            "as many as host memory holds (fewer --source-blocks)",
        )
    };
    let mut offsets = Vec::new();
    offsets
        .try_reserve_exact(n + 1)
        .map_err(|_| short("source range offsets", n + 1))?;
    offsets.push(0u64);
    let mut count = 0u64;
    for v in 0..n as u32 {
        count += keep(v).count() as u64;
        offsets.push(count);
    }
    let mut targets = Vec::new();
    targets
        .try_reserve_exact(count as usize)
        .map_err(|_| short("source range arcs", count as usize))?;
    for v in owned.clone() {
        targets.extend(keep(v));
    }
    Csr::from_parts(offsets, targets, None)
        .map_err(|e| Error::invalid("source range in-arcs", e, "a valid CSR (a bug)"))
}

impl PageRankRanks {
    /// The source ranges a round takes and gathers one after the other
    /// ([`PageRankTuning::source_blocks_for`]; 1: the whole graph at once).
    pub fn source_blocks(&self) -> u32 {
        self.devices[0].source_blocks().max(1) as u32
    }

    /// A round by source ranges on every device (one process; see the module docs): the
    /// counters zeroed, then, range by range, the take of the range's owned vertices above
    /// `floor` and the gather of the in-arcs from it. Returns the round's counts of each
    /// device (waits for them): the vertices taken over every range and the crossings of
    /// every gather.
    pub(super) fn source_block_round(&self, floor: f32) -> Result<Vec<SweepCounts>, PageRankError> {
        let devices = self.context.devices();
        for (device, sweeps) in devices.iter().zip(&self.devices) {
            sweeps.zero_counts(device.stream())?;
            for block in 0..sweeps.source_blocks() {
                sweeps.take_source_block(device.stream(), block, floor)?;
                sweeps.gather_source_block(device.stream(), block)?;
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

    #[test]
    fn the_parts_hold_each_owned_in_arc_once_by_its_tails_range() {
        let graph = groute_graph::Graph::generated("kron:scale=8,ef=8,sym,seed=3").unwrap();
        let csr = &graph.csr;
        let n = csr.num_vertices() as u32;
        let owned = 10..n - 20;
        let split = SourceBlocks::split(csr, csr, &owned, 3).unwrap();
        assert_eq!(split.ranges.len(), 3);
        for v in 0..n {
            let mut from_parts: Vec<u32> = split
                .parts
                .iter()
                .zip(&split.ranges)
                .flat_map(|(part, range)| {
                    assert!(part.neighbors(v).iter().all(|u| range.contains(u)));
                    part.neighbors(v).to_vec()
                })
                .collect();
            let mut expected = if owned.contains(&v) {
                csr.neighbors(v).to_vec()
            } else {
                Vec::new()
            };
            from_parts.sort_unstable();
            expected.sort_unstable();
            assert_eq!(from_parts, expected, "vertex {v}");
        }
    }
}
