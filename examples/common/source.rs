//! The source of a traversal: `--source`, or by default the vertex of highest out-degree in
//! the largest weakly connected component (so the run covers most of the graph), with a
//! warning when a given source lies in a component of fewer than 1% of the vertices.

use groute::graph::{Graph, InputOrder, WeakComponents, largest_component_hub};

use super::AnyError;

/// Components smaller than this share of the vertices draw a warning for `--source`.
pub const SMALL_COMPONENT: f64 = 0.01;

/// `--source ext` as a rank of `order`, or the default source; prints to stderr which vertex
/// the default picked and why, and warns when a given source lies in a component of fewer
/// than 1% of the vertices.
pub fn pick(graph: &Graph, order: &InputOrder, given: Option<u64>) -> Result<u32, AnyError> {
    let n = graph.num_vertices();
    match given {
        Some(ext) => {
            let rank = rank_of(graph, order, ext)?;
            match WeakComponents::of(&graph.csr) {
                Ok(components) => {
                    let size = components.size_of(order.vertex_of_rank(rank));
                    if (size as f64) < SMALL_COMPONENT * n as f64
                        && !super::ranks::is_secondary_rank()
                    {
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
            let hub = largest_component_hub(graph, order)
                .map_err(|e| format!("{e}; pass --source to skip the component search"))?
                .ok_or("the graph has no vertices; give a non-empty graph")?;
            if !super::ranks::is_secondary_rank() {
                eprintln!(
                    "source: vertex {} (out-degree {}, the highest in the largest weakly \
                     connected component: {} of {n} vertices); pass --source to choose",
                    order.external_of_rank(hub.rank),
                    hub.out_degree,
                    hub.component
                );
            }
            Ok(hub.rank)
        }
    }
}

/// `--source ext` as a rank of `order`, or the error naming the graph's ids.
pub fn rank_of(graph: &Graph, order: &InputOrder, ext: u64) -> Result<u32, AnyError> {
    let n = graph.num_vertices();
    Ok(order.rank_of_external(ext, n).ok_or_else(|| {
        format!(
            "--source {ext} is not a vertex of {} ({n} vertices, ids from {}); pick an id from the file",
            graph.name,
            order.external_of_rank(0)
        )
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use groute::graph::EdgeList;

    #[test]
    fn without_source_the_hub_of_the_largest_component_is_picked() {
        // Component {0, 1} first in the numbering; component {2..7} larger, hub 5.
        let pairs = [(0, 1), (2, 5), (3, 5), (4, 5), (5, 6), (6, 7)];
        let g = Graph::from_edges(8, &EdgeList::from_pairs(&pairs), "two-parts", true).unwrap();
        let order = InputOrder::of(&g);
        let rank = pick(&g, &order, None).unwrap();
        assert_eq!(order.external_of_rank(rank), order.external_of_rank(5));
        assert_eq!(
            pick(&g, &order, Some(order.external_of_rank(0))).unwrap(),
            0
        );
        assert!(pick(&g, &order, Some(1 << 40)).is_err());
    }
}
