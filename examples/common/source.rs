//! The source of a traversal: `--source`, or by default the vertex of highest out-degree in
//! the largest weakly connected component (so the run covers most of the graph), with a
//! warning when a given source lies in a component of fewer than 1% of the vertices.

use groute::graph::{Graph, InputOrder};

use super::AnyError;

/// Components smaller than this share of the vertices draw a warning for `--source`.
pub const SMALL_COMPONENT: f64 = 0.01;

/// The source of a run, as a rank of `order`, and why it was picked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The source's rank (input order).
    pub rank: u32,
    /// Vertices of its weakly connected component.
    pub component: usize,
}

/// A zeroed vector of `len` `u32`s, or an error naming what it was for (no abort when the
/// host cannot hold it).
fn try_u32s(len: usize, what: &str) -> Result<Vec<u32>, AnyError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        format!(
            "out of memory: cannot allocate {} bytes for {what} (4 bytes per vertex); pass \
             --source to skip the component search, or use a smaller graph",
            len.saturating_mul(4)
        )
    })?;
    v.resize(len, 0);
    Ok(v)
}

/// Each vertex's weakly connected component (the smallest vertex of it, by union-find with
/// path halving over every arc) and the component sizes indexed by that label: 8 bytes per
/// vertex, allocated fallibly.
fn components(graph: &Graph) -> Result<(Vec<u32>, Vec<u32>), AnyError> {
    let csr = &graph.csr;
    let n = csr.num_vertices();
    let mut parent = try_u32s(n, "the component labels")?;
    parent
        .iter_mut()
        .enumerate()
        .for_each(|(v, p)| *p = v as u32);
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            let grand = parent[parent[x as usize] as usize];
            parent[x as usize] = grand;
            x = grand;
        }
        x
    }
    for u in 0..n {
        for &v in csr.neighbors(u as u32) {
            let (ru, rv) = (find(&mut parent, u as u32), find(&mut parent, v));
            if ru != rv {
                let (lo, hi) = if ru < rv { (ru, rv) } else { (rv, ru) };
                parent[hi as usize] = lo;
            }
        }
    }
    for v in 0..n as u32 {
        let root = find(&mut parent, v);
        parent[v as usize] = root;
    }
    let mut sizes = try_u32s(n, "the component sizes")?;
    for &label in &parent {
        sizes[label as usize] += 1;
    }
    Ok((parent, sizes))
}

/// The highest-out-degree vertex (lowest rank among equals) of the largest weakly connected
/// component (the lowest label among equally large ones). An error when the graph has no
/// vertices.
pub fn default_source(graph: &Graph, order: &InputOrder) -> Result<Source, AnyError> {
    let n = graph.num_vertices();
    let (labels, sizes) = components(graph)?;
    let largest = (0..n)
        .max_by_key(|&l| (sizes[l], std::cmp::Reverse(l)))
        .ok_or("the graph has no vertices; give a non-empty graph")?;
    let rank = (0..n as u32)
        .filter(|&r| labels[order.vertex_of_rank(r) as usize] as usize == largest)
        .max_by_key(|&r| {
            (
                graph.csr.out_degree(order.vertex_of_rank(r)),
                std::cmp::Reverse(r),
            )
        })
        .ok_or("the largest component has no vertex")?;
    Ok(Source {
        rank,
        component: sizes[largest] as usize,
    })
}

/// `--source ext` as a rank of `order`, or the default source; prints to stderr which vertex
/// the default picked and why, and warns when a given source lies in a component of fewer
/// than 1% of the vertices.
pub fn pick(graph: &Graph, order: &InputOrder, given: Option<u64>) -> Result<u32, AnyError> {
    let n = graph.num_vertices();
    match given {
        Some(ext) => {
            let rank = order.rank_of_external(ext, n).ok_or_else(|| {
                format!(
                    "--source {ext} is not a vertex of {} ({n} vertices, ids from {}); pick an id from the file",
                    graph.name,
                    order.external_of_rank(0)
                )
            })?;
            match components(graph) {
                Ok((labels, sizes)) => {
                    let size = sizes[labels[order.vertex_of_rank(rank) as usize] as usize];
                    if (size as f64) < SMALL_COMPONENT * n as f64 {
                        eprintln!(
                            "warning: --source {ext} lies in a component of {size} of the {n} \
                             vertices (under 1%); the run reaches at most those. Leave --source \
                             out to start in the largest component"
                        );
                    }
                }
                Err(e) => eprintln!("note: the source's component was not checked: {e}"),
            }
            Ok(rank)
        }
        None => {
            let source = default_source(graph, order)?;
            let v = order.vertex_of_rank(source.rank);
            eprintln!(
                "source: vertex {} (out-degree {}, the highest in the largest weakly connected \
                 component: {} of {n} vertices); pass --source to choose",
                order.external_of_rank(source.rank),
                graph.csr.out_degree(v),
                source.component
            );
            Ok(source.rank)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use groute::graph::EdgeList;

    #[test]
    fn default_source_is_the_hub_of_the_largest_component() {
        // Component {0, 1} first in the numbering; component {2..7} larger, hub 5.
        let pairs = [(0, 1), (2, 5), (3, 5), (4, 5), (5, 6), (6, 7)];
        let g = Graph::from_edges(8, &EdgeList::from_pairs(&pairs), "two-parts", true).unwrap();
        let order = InputOrder::of(&g);
        let s = default_source(&g, &order).unwrap();
        assert_eq!(order.external_of_rank(s.rank), order.external_of_rank(5));
        assert_eq!(s.component, 6);
    }
}
