//! Weakly connected components, and the traversal source they suggest: the vertex of highest
//! out-degree in the largest component, so that a BFS or SSSP from it covers most of the graph
//! (a fixed vertex such as 0 may lie in a component of a few vertices).

use crate::alloc::try_zeroed;
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
    /// The components of `csr`, by union-find with path halving over every arc.
    pub fn of(csr: &Csr) -> Result<WeakComponents, GraphError> {
        let n = csr.num_vertices();
        let mut parent: Vec<u32> = try_zeroed(n, "the component labels")?;
        parent
            .iter_mut()
            .enumerate()
            .for_each(|(v, p)| *p = v as u32);
        for u in 0..n as u32 {
            for &v in csr.neighbors(u) {
                let (ru, rv) = (find(&mut parent, u), find(&mut parent, v));
                if ru != rv {
                    // The smaller root wins, so a label is the smallest vertex of its component.
                    let (lo, hi) = if ru < rv { (ru, rv) } else { (rv, ru) };
                    parent[hi as usize] = lo;
                }
            }
        }
        for v in 0..n as u32 {
            parent[v as usize] = find(&mut parent, v);
        }
        let mut sizes: Vec<u32> = try_zeroed(n, "the component sizes")?;
        for &label in &parent {
            sizes[label as usize] += 1;
        }
        Ok(WeakComponents {
            labels: parent,
            sizes,
        })
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

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let grand = parent[parent[x as usize] as usize];
        parent[x as usize] = grand;
        x = grand;
    }
    x
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
