//! Renumbering each part's vertices in order of decreasing out-degree: the most-referenced
//! vertices of a power-law graph then sit together at the start of each part's range, so an
//! array indexed by vertex and read at random along arcs (a pull sweep's shares) keeps them
//! in few cache lines. The parts keep their ranges and vertex sets, so a partition (and its
//! cut) stays valid.
//!
//! [`order_parts_by_degree`] renumbers a whole graph. A process that holds only some rows
//! of a graph (a rank of a job spanning processes) orders its own parts with
//! [`degree_order_of_parts`], learns the other parts' new ids from their holders, and
//! renames its rows with [`renumber_rows`].

use std::ops::Range;

use rayon::prelude::*;

use crate::alloc::try_zeroed;
use crate::csr::Csr;
use crate::error::{GraphError, PartitionProblem};
use crate::graph::Graph;
use crate::par::SharedSlice;
use crate::partition::{Partition, permute_rows};

/// `graph` renumbered so that within each part of `partition` its vertices come in order of
/// decreasing out-degree (ties in their current order): the parts keep their ranges and
/// vertex sets, so the partition (and its cut) is unchanged. The graph's ids follow their
/// vertices.
pub fn order_parts_by_degree(graph: &Graph, partition: &Partition) -> Result<Graph, GraphError> {
    let n = graph.num_vertices();
    let old_of_new = degree_order_of_parts(&graph.csr, partition, 0..partition.num_parts())?;
    let mut new_of_old = try_zeroed::<u32>(n, "the degree order's new vertex ids")?;
    {
        let out = SharedSlice::new(&mut new_of_old);
        old_of_new.par_iter().enumerate().for_each(|(new, &old)| {
            // SAFETY: `old_of_new` is a permutation: each old id is written once.
            unsafe { out.write(old as usize, new as u32) };
        });
    }
    let csr = permute_rows(&graph.csr, 0..n as u32, &old_of_new, &new_of_old)?;
    let ids = graph.ids.permuted(&old_of_new);
    Ok(Graph {
        csr,
        ids,
        name: graph.name.clone(),
        symmetric: graph.symmetric,
    })
}

/// The vertices of parts `parts` of `partition` (the range
/// [`Partition::range_of_parts`]`(parts)`), each part's in order of decreasing out-degree in
/// `csr`, ties by id: entry `i` is the vertex that becomes vertex `range.start + i`. Reads
/// only the degrees of those rows, so `csr` may hold only them. An error where `partition`
/// is not one of `csr`'s vertices or lacks those parts.
pub fn degree_order_of_parts(
    csr: &Csr,
    partition: &Partition,
    parts: Range<usize>,
) -> Result<Vec<u32>, GraphError> {
    let n = csr.num_vertices();
    let problem = if partition.num_vertices() != n {
        Some(PartitionProblem::Mismatch {
            parts_cover: partition.num_vertices(),
            vertices: n,
        })
    } else if parts.start > parts.end || parts.end > partition.num_parts() {
        Some(PartitionProblem::NoSuchParts {
            start: parts.start,
            end: parts.end,
            parts: partition.num_parts(),
        })
    } else {
        None
    };
    if let Some(problem) = problem {
        return Err(GraphError::Partition {
            parts: partition.num_parts(),
            problem,
        });
    }
    let rows = partition.range_of_parts(parts.clone());
    let mut old_of_new = try_zeroed::<u32>(rows.len(), "the degree order's old vertex ids")?;
    for p in parts {
        let range = partition.range(p);
        let at = (range.start - rows.start) as usize..(range.end - rows.start) as usize;
        let part = &mut old_of_new[at];
        part.par_iter_mut()
            .zip(range.clone().into_par_iter())
            .for_each(|(slot, v)| *slot = v);
        part.par_sort_by_key(|&v| (std::cmp::Reverse(csr.out_degree(v)), v));
    }
    Ok(old_of_new)
}

/// `csr`'s rows `rows` renamed by `new_of_old` (vertex `v` becomes `new_of_old[v]`, one entry
/// per vertex of the graph: the heads of the arcs are renamed too): the CSR over the same
/// vertices whose row `new_of_old[v]` holds `v`'s arcs for every `v` of `rows`, the other rows
/// empty, each row sorted. `new_of_old` must map `rows` onto themselves, each to its own id
/// (as [`degree_order_of_parts`]'s orders of whole parts do), and every id must be a vertex:
/// an error names a vertex that breaks it. Only the ids of `rows` are checked to be distinct;
/// the others are the renamed heads, which another holder of their rows checks.
pub fn renumber_rows(csr: &Csr, rows: Range<u32>, new_of_old: &[u32]) -> Result<Csr, GraphError> {
    let n = csr.num_vertices();
    if new_of_old.len() != n {
        return Err(GraphError::RenumberingLength {
            ids: new_of_old.len() as u64,
            vertices: n as u64,
        });
    }
    if rows.start > rows.end || rows.end as usize > n {
        return Err(GraphError::RowRange {
            start: u64::from(rows.start),
            end: u64::from(rows.end),
            num_vertices: n as u64,
        });
    }
    if let Some(v) = new_of_old.par_iter().position_any(|&new| new as usize >= n) {
        return Err(GraphError::Renumbering {
            vertex: v as u64,
            new_id: u64::from(new_of_old[v]),
            start: 0,
            end: n as u64,
        });
    }
    let mut old_of_new = try_zeroed::<u32>(rows.len(), "the renumbered rows' old vertex ids")?;
    // Every slot is written once where the renumbering is one: u32::MAX marks the free ones.
    old_of_new.par_iter_mut().for_each(|s| *s = u32::MAX);
    for v in rows.clone() {
        let new = new_of_old[v as usize];
        let slot = new
            .checked_sub(rows.start)
            .filter(|_| new < rows.end)
            .map(|i| &mut old_of_new[i as usize])
            .filter(|s| **s == u32::MAX)
            .ok_or(GraphError::Renumbering {
                vertex: u64::from(v),
                new_id: u64::from(new),
                start: u64::from(rows.start),
                end: u64::from(rows.end),
            })?;
        *slot = v;
    }
    permute_rows(csr, rows, &old_of_new, new_of_old)
}

#[cfg(test)]
mod tests;
