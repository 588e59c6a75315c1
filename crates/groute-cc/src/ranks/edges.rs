//! Which edges each device of a run spanning processes hooks, from its process's rows
//! ([`device_edges`]).

use std::ops::Range;

use groute_core::Error;
use groute_graph::Csr;
use rayon::prelude::*;

use crate::{CcError, Edge};

/// Rows per task when expanding rows into edges.
const ROWS_PER_TASK: usize = 1 << 14;

/// The edges that the device owning `part` hooks, each as (lower end, higher end), sorted:
/// the arcs of its rows, each edge of a symmetric graph from one end only ([`hooks_from`];
/// its reverse is in the other end's rows), every arc of a `directed` graph, at its tail.
/// With
/// `both_ends` (label rounds), an arc to a vertex outside `owned` (this process's) is
/// hooked at both ends: from a symmetric graph's rows whatever its direction, from a
/// directed graph's transpose as the in-arcs of the owned vertices. Self-loops are left
/// out.
pub(super) fn device_edges(
    (csr, transpose, directed): (&Csr, Option<&Csr>, bool),
    part: Range<u32>,
    owned: Range<u32>,
    both_ends: bool,
) -> Result<Vec<Edge>, CcError> {
    let transpose = transpose.filter(|_| both_ends);
    let keep_out = |u: u32, v: u32| {
        v != u && (directed || hooks_from(u, v) || (both_ends && !owned.contains(&v)))
    };
    let keep_in = |u: u32, w: u32| w != u && !owned.contains(&w);
    let rows: Vec<Range<u32>> = part
        .clone()
        .step_by(ROWS_PER_TASK)
        .map(|s| s..s.saturating_add(ROWS_PER_TASK as u32).min(part.end))
        .collect();
    let count = |block: &Range<u32>| -> usize {
        block
            .clone()
            .map(|u| {
                let out = csr.neighbors(u).iter().filter(|&&v| keep_out(u, v)).count();
                let inn = transpose.map_or(0, |t| {
                    t.neighbors(u).iter().filter(|&&w| keep_in(u, w)).count()
                });
                out + inn
            })
            .sum()
    };
    let counts: Vec<usize> = rows.par_iter().map(count).collect();
    let total: usize = counts.iter().sum();
    let mut edges: Vec<Edge> = bytemuck::allocation::try_zeroed_vec(total).map_err(|()| {
        CcError::Core(Error::OutOfMemory {
            bytes: total.saturating_mul(std::mem::size_of::<Edge>()),
            location: "host memory (the edges of this process's rows)".into(),
            source: None,
        })
    })?;
    let mut slices = Vec::with_capacity(rows.len());
    let mut rest = edges.as_mut_slice();
    for &c in &counts {
        let (head, tail) = rest.split_at_mut(c);
        slices.push(head);
        rest = tail;
    }
    rows.par_iter().zip(slices).for_each(|(block, out)| {
        let mut k = 0;
        for u in block.clone() {
            let out_arcs = csr.neighbors(u).iter().filter(|&&v| keep_out(u, v));
            let in_arcs = transpose
                .map(|t| t.neighbors(u))
                .unwrap_or_default()
                .iter()
                .filter(|&&w| keep_in(u, w));
            for &v in out_arcs.chain(in_arcs) {
                out[k] = Edge::new(u.min(v), u.max(v));
                k += 1;
            }
        }
    });
    // Listed from their lower ends, in order of them (as one process stages its edges): a
    // hub's edges then come in runs whose lower end a warp finds the root of once, and each
    // hooks a higher root under it (`warp_link` in kernels/cc/cc.cu). The edges a process
    // hooks from their higher ends (half of those to earlier processes) would otherwise make
    // every lane climb to a hub's root and hook its own under it, one CAS after another.
    edges.par_sort_unstable_by_key(|e| (u64::from(e.u) << 32) | u64::from(e.v));
    Ok(edges)
}

/// Whether the edge `{u, v}` (`u != v`) of a symmetric graph is hooked from `u` (else
/// from `v`): from the higher end or the lower one by a hash of the pair, so that the
/// edges between two processes, whose higher ends all lie in the later process, are split
/// evenly between them.
fn hooks_from(u: u32, v: u32) -> bool {
    let lower_end = (u ^ v).wrapping_mul(0x9e37_79b9) >> 31 == 1;
    (u > v) != lower_end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_edge_is_hooked_from_exactly_one_end_and_the_ends_split_evenly() {
        let mut from_higher = 0;
        for u in 0..200u32 {
            for v in (0..200u32).filter(|&v| v != u) {
                let (uv, vu) = (hooks_from(u, v), hooks_from(v, u));
                assert_ne!(uv, vu, "{u} {v}");
                from_higher += u32::from(u > v && uv);
            }
        }
        let edges = 200 * 199 / 2;
        assert!(
            (edges * 2 / 5..edges * 3 / 5).contains(&from_higher),
            "{from_higher}"
        );
    }
}
