//! Weakly connected components, and the traversal source they suggest: the vertex of highest
//! out-degree in the largest component, so that a BFS or SSSP from it covers most of the graph
//! (a fixed vertex such as 0 may lie in a component of a few vertices).

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::alloc::{try_with_capacity, try_zeroed};
use crate::csr::Csr;
use crate::error::GraphError;
use crate::graph::Graph;
use crate::order::InputOrder;

/// Each vertex's weakly connected component (arcs taken in both directions), labelled by the
/// smallest vertex in it, and the components' sizes: 8 bytes per vertex, allocated fallibly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeakComponents {
    labels: Vec<u32>,
    sizes: Vec<u32>,
}

impl WeakComponents {
    /// The components of `csr`, by union-find over every arc on every core (rayon): a
    /// lock-free forest in which a root is linked under the smaller root by a compare-and-swap
    /// and finds halve their paths, so that each component's root, and its label, is its
    /// smallest vertex whatever order the arcs were taken in.
    pub fn of(csr: &Csr) -> Result<WeakComponents, GraphError> {
        let n = csr.num_vertices();
        let mut parent: Vec<AtomicU32> = try_with_capacity(n, "the component labels")?;
        parent.par_extend((0..n as u32).into_par_iter().map(AtomicU32::new));
        (0..n as u32)
            .into_par_iter()
            .with_min_len(UNION_MIN_VERTICES_PER_TASK)
            .for_each(|u| {
                for &v in csr.neighbors(u) {
                    union(&parent, u, v);
                }
            });
        // Every union has ended: a find now reads the final forest.
        let mut labels: Vec<u32> = try_with_capacity(n, "the component labels")?;
        labels.par_extend((0..n as u32).into_par_iter().map(|v| find(&parent, v)));
        drop(parent);
        let mut sizes: Vec<u32> = try_zeroed(n, "the component sizes")?;
        for &label in &labels {
            sizes[label as usize] += 1;
        }
        Ok(WeakComponents { labels, sizes })
    }

    /// The label of `vertex`'s component (its smallest vertex).
    pub fn label(&self, vertex: u32) -> u32 {
        self.labels[vertex as usize]
    }

    /// The number of vertices in `vertex`'s component.
    pub fn size_of(&self, vertex: u32) -> usize {
        self.sizes[self.label(vertex) as usize] as usize
    }

    /// The largest component's label and size (the smallest label among equally large ones);
    /// `None` for a graph without vertices.
    pub fn largest(&self) -> Option<(u32, usize)> {
        (0..self.sizes.len())
            .max_by_key(|&l| (self.sizes[l], std::cmp::Reverse(l)))
            .map(|l| (l as u32, self.sizes[l] as usize))
    }
}

/// Vertices per rayon task of the union pass: enough to amortise a task over a few thousand
/// arcs on sparse graphs, few enough to balance a power-law graph's heavy rows.
const UNION_MIN_VERTICES_PER_TASK: usize = 1024;

/// The root of `x`'s tree, halving the path on the way (each visited vertex is pointed at its
/// grandparent, an ancestor: a parent is never larger than its child, so no cycle forms).
fn find(parent: &[AtomicU32], mut x: u32) -> u32 {
    loop {
        let p = parent[x as usize].load(Ordering::Acquire);
        if p == x {
            return x;
        }
        let grandparent = parent[p as usize].load(Ordering::Acquire);
        if grandparent != p {
            // Another thread may have moved x's parent already; either value is an ancestor.
            let _ = parent[x as usize].compare_exchange_weak(
                p,
                grandparent,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
        x = grandparent;
    }
}

/// Joins the trees of `a` and `b`: the larger root goes under the smaller one, by a
/// compare-and-swap that fails (and the finds run again) where that root was linked
/// meanwhile.
fn union(parent: &[AtomicU32], a: u32, b: u32) {
    loop {
        let (ra, rb) = (find(parent, a), find(parent, b));
        if ra == rb {
            return;
        }
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        if parent[hi as usize]
            .compare_exchange(hi, lo, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return;
        }
    }
}

/// A traversal source picked by [`largest_component_hub`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hub {
    /// The vertex, as a rank of the input order.
    pub rank: u32,
    /// Its out-degree.
    pub out_degree: u64,
    /// The number of vertices in its weakly connected component (the largest).
    pub component: usize,
}

/// The vertex of highest out-degree (the lowest rank among equals) in the largest weakly
/// connected component of `graph` (the one with the smallest label among equally large ones),
/// as a rank of `order`; `None` for a graph without vertices.
///
/// ```
/// use groute_graph::{CsrBuilder, EdgeList, Graph, InputOrder, largest_component_hub};
/// // A pair {0, 1} and a star around 4 with three leaves.
/// let edges = EdgeList::from_pairs(&[(0, 1), (4, 2), (4, 3), (4, 5)]);
/// let graph = Graph::new(CsrBuilder::new(6).build(&edges)?, "two components", false);
/// let hub = largest_component_hub(&graph, &InputOrder::of(&graph))?.unwrap();
/// assert_eq!((hub.rank, hub.out_degree, hub.component), (4, 3, 4));
/// # Ok::<(), groute_graph::GraphError>(())
/// ```
pub fn largest_component_hub(graph: &Graph, order: &InputOrder) -> Result<Option<Hub>, GraphError> {
    let csr = &graph.csr;
    let components = WeakComponents::of(csr)?;
    let Some((largest, size)) = components.largest() else {
        return Ok(None);
    };
    let hub = (0..csr.num_vertices() as u32)
        .into_par_iter()
        .filter(|&r| components.label(order.vertex_of_rank(r)) == largest)
        .max_by_key(|&r| {
            (
                csr.out_degree(order.vertex_of_rank(r)),
                std::cmp::Reverse(r),
            )
        })
        .map(|rank| Hub {
            rank,
            out_degree: csr.out_degree(order.vertex_of_rank(rank)),
            component: size,
        });
    Ok(hub)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csr::{CsrBuilder, EdgeList};

    fn csr(n: usize, arcs: &[(u32, u32)]) -> Csr {
        CsrBuilder::new(n)
            .build(&EdgeList::from_pairs(arcs))
            .unwrap()
    }

    #[test]
    fn components_follow_arcs_in_both_directions_and_are_labelled_by_their_smallest_vertex() {
        // 3 -> 1 and 2 -> 1 join {1, 2, 3} against the arcs' direction; 0 and 4 stay alone.
        let c = WeakComponents::of(&csr(5, &[(3, 1), (2, 1)])).unwrap();
        assert_eq!(
            (0..5).map(|v| c.label(v)).collect::<Vec<_>>(),
            [0, 1, 1, 1, 4]
        );
        assert_eq!(c.size_of(3), 3);
        assert_eq!(c.size_of(4), 1);
        assert_eq!(c.largest(), Some((1, 3)));
    }

    #[test]
    fn equally_large_components_pick_the_smallest_label_and_no_vertices_pick_none() {
        let c = WeakComponents::of(&csr(4, &[(2, 3), (0, 1)])).unwrap();
        assert_eq!(c.largest(), Some((0, 2)));
        assert_eq!(WeakComponents::of(&csr(0, &[])).unwrap().largest(), None);
    }

    /// Each vertex's label by a breadth-first search over the arcs taken both ways, from
    /// every vertex in increasing order (so the label is the component's smallest vertex).
    fn labels_by_search(n: usize, arcs: &[(u32, u32)]) -> Vec<u32> {
        let mut adjacent = vec![Vec::new(); n];
        for &(u, v) in arcs {
            adjacent[u as usize].push(v);
            adjacent[v as usize].push(u);
        }
        let mut labels = vec![u32::MAX; n];
        for start in 0..n as u32 {
            if labels[start as usize] != u32::MAX {
                continue;
            }
            labels[start as usize] = start;
            let mut queue = std::collections::VecDeque::from([start]);
            while let Some(u) = queue.pop_front() {
                for &v in &adjacent[u as usize] {
                    if labels[v as usize] == u32::MAX {
                        labels[v as usize] = start;
                        queue.push_back(v);
                    }
                }
            }
        }
        labels
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// The parallel union-find labels and sizes every component as a sequential search
        /// does, on random graphs (heavy rows and long chains among them, which the union
        /// pass splits over many tasks).
        #[test]
        fn parallel_union_find_matches_a_search(
            n in 1usize..5_000,
            raw in proptest::collection::vec((0u32..5_000, 0u32..5_000), 0..8_000),
            hub_arcs in 0usize..3_000,
            chain in proptest::prelude::any::<bool>(),
        ) {
            let mut arcs: Vec<(u32, u32)> =
                raw.iter().map(|&(u, v)| (u % n as u32, v % n as u32)).collect();
            // A heavy row: vertex n / 2 points at many others.
            arcs.extend((0..hub_arcs as u32).map(|i| ((n / 2) as u32, (i * 7) % n as u32)));
            if chain {
                // A path through every vertex in decreasing order: deep trees to halve.
                arcs.extend((1..n as u32).map(|v| (v, v - 1)));
            }
            let c = WeakComponents::of(&csr(n, &arcs)).unwrap();
            let expected = labels_by_search(n, &arcs);
            let labels: Vec<u32> = (0..n as u32).map(|v| c.label(v)).collect();
            proptest::prop_assert_eq!(&labels, &expected);
            for v in 0..n as u32 {
                let size = expected.iter().filter(|&&l| l == expected[v as usize]).count();
                proptest::prop_assert_eq!(c.size_of(v), size);
            }
        }
    }

    #[test]
    fn the_hub_is_the_highest_out_degree_vertex_of_the_largest_component() {
        // {0, 1, 2}: 1 has out-degree 2; {3, 4, 5, 6}: 4 and 5 both have out-degree 2, the
        // lower rank wins.
        let g = Graph::new(
            csr(7, &[(0, 1), (1, 0), (1, 2), (4, 3), (4, 6), (5, 6), (5, 3)]),
            "test",
            false,
        );
        let hub = largest_component_hub(&g, &InputOrder::of(&g))
            .unwrap()
            .unwrap();
        assert_eq!(
            hub,
            Hub {
                rank: 4,
                out_degree: 2,
                component: 4
            }
        );
    }
}
