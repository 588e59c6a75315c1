//! The degree order of a [`super::PageRankRanks`] run (the crate docs' "Degree order"):
//! every process renumbers its parts' vertices in order of decreasing out-degree, as
//! `groute_graph::order_parts_by_degree` renumbers a whole graph, holding only its own rows.
//!
//! ```text
//!  every process:  its parts' largest degree, arcs and smallest L2 -> sum -> the choice
//!  every process:  its parts ordered by degree (degree_order_of_parts, its rows only)
//!  device 0:       the new ids of its vertices -> all-gather -> every vertex's new id
//!  every process:  its rows renamed (renumber_rows): the rows the sweeps upload
//! ```
//!
//! Every step is agreed on: a process that cannot order (host or device memory) tells the
//! others in a sum, and every process then runs in the input order where the order was
//! Auto's choice, or fails where it was asked for. Each run's ranks go back to the input
//! order through the map kept here.

use std::ops::Range;

use groute_core::{Context, Error};
use groute_graph::{Csr, HeldRows, Partition, degree_order_of_parts, renumber_rows};
use groute_worklist::{RankCollectives, peers_failed};

use super::RUN;
use crate::{PageRankError, PageRankTuning};

/// The new id of every vertex, kept for the runs to map the ranks back.
pub(super) struct RankOrder {
    /// `new_of_old[v]`: the id vertex `v` of the input takes.
    new_of_old: Vec<u32>,
}

impl RankOrder {
    /// `values` (one per vertex, in the new order) in the input order. An error where the
    /// host cannot hold them twice.
    pub(super) fn to_input_order(&self, values: Vec<f32>) -> Result<Vec<f32>, Error> {
        let mut out = super::gather_ranks::rank_vec(self.new_of_old.len())?;
        out.extend(self.new_of_old.iter().map(|&new| values[new as usize]));
        Ok(out)
    }
}

/// A process's rows renamed by the degree order, until the sweeps have uploaded them.
pub(super) struct RenamedRows {
    /// Every row where the process holds the whole of a directed graph (its transpose gives
    /// the in-arcs), else its own parts' rows.
    csr: Csr,
    /// `None` where the whole graph is held (its symmetry found from its arcs), else the
    /// graph's symmetry.
    symmetric: Option<bool>,
    /// The rows `csr` holds.
    held: Range<u32>,
}

impl RenamedRows {
    /// The renamed rows, as the sweeps take them.
    pub(super) fn rows(&self) -> Result<HeldRows<'_>, PageRankError> {
        Ok(match self.symmetric {
            None => HeldRows::whole(&self.csr),
            Some(symmetric) => HeldRows::some(&self.csr, self.held.clone(), symmetric)?,
        })
    }
}

/// The degree order of the run, agreed on by every process (collective): `None` where the
/// run keeps the input order. `rows` hold (at least) this process's parts `parts` of
/// `partition`, whose ranges by process are `owned`; `asked` is
/// [`PageRankTuning::degree_order`] (every process's).
pub(super) fn agree_degree_order(
    context: &Context,
    (rows, partition): (&HeldRows<'_>, &Partition),
    (owned, parts): (&[Range<u32>], Range<usize>),
    asked: Option<bool>,
    collectives: &mut dyn RankCollectives,
) -> Result<Option<(RankOrder, RenamedRows)>, PageRankError> {
    let (rank, ranks) = (collectives.rank(), collectives.ranks());
    let csr = rows.csr();
    let mine = owned[rank].clone();
    let n = rows.num_vertices() as u64;
    // Every process was asked alike (its shape says so): they all skip the counts alike.
    if asked.is_none() && !order_by_the_rule(context, rows, &mine, collectives)? {
        return Ok(None);
    }
    if asked == Some(false) {
        return Ok(None);
    }
    // Auto's choice gives way where any process cannot order; an order asked for fails.
    let agree = |collectives: &mut dyn RankCollectives, failed: Option<PageRankError>| {
        let failures = collectives.sum(&[u64::from(failed.is_some())])?[0];
        match failed {
            Some(e) if asked == Some(true) => Err(e),
            _ if failures > 0 && asked == Some(true) => Err(PageRankError::from(peers_failed(
                RUN,
                failures,
                collectives,
            ))),
            _ => Ok(failures == 0),
        }
    };
    let longest = owned.iter().map(|r| r.len()).max().unwrap_or(0).max(1);
    let device = &context.devices()[0];
    let prepared = (|| -> Result<_, PageRankError> {
        let order = degree_order_of_parts(csr, partition, parts)?;
        // The new id of each of this process's vertices, in the input order.
        let mut new_ids = Vec::new();
        new_ids
            .try_reserve_exact(longest)
            .map_err(|_| Error::invalid("vertices", longest, "fewer per process"))?;
        new_ids.resize(longest, 0u32);
        for (i, &old) in order.iter().enumerate() {
            new_ids[(old - mine.start) as usize] = mine.start + i as u32;
        }
        let exchange = (
            device.upload(&new_ids)?,
            device.alloc::<u32>(
                longest
                    .checked_mul(ranks)
                    .ok_or_else(|| Error::invalid("processes", ranks, "fewer"))?,
            )?,
        );
        Ok(exchange)
    })();
    let (failed, prepared) = split(prepared);
    if !agree(collectives, failed)? {
        return Ok(None);
    }
    let Some((mine_ids, all_ids)) = prepared else {
        return Ok(None);
    };
    let gathered = collectives
        .all_gather(&mine_ids, &all_ids, device.stream())
        .map_err(PageRankError::from)
        .and_then(|()| {
            let all = device.download(&all_ids)?;
            let mut new_of_old = Vec::new();
            new_of_old
                .try_reserve_exact(n as usize)
                .map_err(|_| Error::invalid("vertices", n, "as many as host memory holds"))?;
            for (r, range) in owned.iter().enumerate() {
                let at = r * longest;
                new_of_old.extend_from_slice(&all[at..at + range.len()]);
            }
            // A whole directed graph's in-arcs come from its transpose: every row renamed.
            let symmetric = rows.is_symmetric();
            let every_row = rows.is_whole() && !symmetric;
            let held = if every_row { 0..n as u32 } else { mine.clone() };
            let csr = renumber_rows(csr, held.clone(), &new_of_old)?;
            let renamed = RenamedRows {
                csr,
                symmetric: (!every_row).then_some(symmetric),
                held,
            };
            Ok((RankOrder { new_of_old }, renamed))
        });
    let (failed, order) = split(gathered);
    Ok(if agree(collectives, failed)? {
        order
    } else {
        None
    })
}

/// Whether [`PageRankTuning::degree_order_for`]'s rule picks the order for the whole graph
/// (collective: every process's largest degree, arcs and smallest L2 summed, each in its own
/// word).
fn order_by_the_rule(
    context: &Context,
    rows: &HeldRows<'_>,
    mine: &Range<u32>,
    collectives: &mut dyn RankCollectives,
) -> Result<bool, PageRankError> {
    let (rank, ranks) = (collectives.rank(), collectives.ranks());
    let csr = rows.csr();
    let mut words = vec![0u64; 3 * ranks];
    words[rank] = mine.clone().map(|v| csr.out_degree(v)).max().unwrap_or(0);
    let o = csr.offsets();
    words[ranks + rank] = o[mine.end as usize] - o[mine.start as usize];
    words[2 * ranks + rank] = context.smallest_l2_cache_bytes();
    let sums = collectives.sum(&words)?;
    let arcs = sums[ranks..2 * ranks].iter().sum();
    let l2 = sums[2 * ranks..].iter().copied().min().unwrap_or(0);
    let largest = || sums[..ranks].iter().copied().max().unwrap_or(0);
    let n = rows.num_vertices() as u64;
    Ok(PageRankTuning::default().degree_order_of((n, arcs), largest, l2))
}

/// A result as its error and its value.
fn split<T>(r: Result<T, PageRankError>) -> (Option<PageRankError>, Option<T>) {
    match r {
        Ok(v) => (None, Some(v)),
        Err(e) => (Some(e), None),
    }
}
