//! The sequential reference: Dijkstra with a binary heap, the oracle of the tests.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use groute_graph::Csr;

use crate::{MAX_DISTANCE, UNREACHED};

/// Shortest distances of every vertex of `csr` from `source` ([`UNREACHED`] where
/// unreachable); arcs weigh their [`Csr::weights`], or 1 when the graph has none. Sums
/// saturate at [`MAX_DISTANCE`](crate::MAX_DISTANCE), exactly as the solver's relaxation does.
/// An out-of-range source reaches nothing.
///
/// ```
/// use groute_graph::{CsrBuilder, EdgeList};
/// let csr = CsrBuilder::new(4).build(&EdgeList::from_triples(&[(0, 1, 5), (0, 2, 1), (2, 1, 2)]))?;
/// assert_eq!(groute_sssp::sssp_reference(&csr, 0), [0, 3, 1, u32::MAX]);
/// # Ok::<(), groute_graph::GraphError>(())
/// ```
pub fn sssp_reference(csr: &Csr, source: u32) -> Vec<u32> {
    let n = csr.num_vertices();
    let mut dist = vec![UNREACHED; n];
    if (source as usize) >= n {
        return dist;
    }
    let weights = csr.weights();
    let mut heap = BinaryHeap::new();
    dist[source as usize] = 0;
    heap.push(Reverse((0u32, source)));
    while let Some(Reverse((d, v))) = heap.pop() {
        if d > dist[v as usize] {
            continue; // a stale entry: v was settled at a smaller distance
        }
        for (e, &u) in csr.edge_range(v).zip(csr.neighbors(v)) {
            let w = weights.map_or(1, |w| w[e]);
            // Written out rather than calling `Sssp::relax`, so the oracle stays independent.
            let cand = d.saturating_add(w).min(MAX_DISTANCE);
            if cand < dist[u as usize] {
                dist[u as usize] = cand;
                heap.push(Reverse((cand, u)));
            }
        }
    }
    dist
}
