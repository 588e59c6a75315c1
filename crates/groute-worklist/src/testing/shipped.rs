//! The repository's shipped graphs (`datasets/`) as the suites run on them: every one, or on
//! reduced inputs (`groute_core::testing::reduced`) the few that a suite names.

use groute_core::testing::reduced;
use groute_graph::Graph;

/// The shipped METIS graph of 766 vertices: on reduced inputs it stands in for the shipped
/// graphs (the 7,434-vertex mesh `4elt.graph` among them).
pub const SMALL_SHIPPED_GRAPH: &str = "test.mgraph";

/// The tiny weighted graph of 6 vertices in one of its three formats: on reduced inputs it
/// stands in for the others.
pub const TINY_SHIPPED_GRAPH: &str = "tiny-weighted.gr";

/// Every shipped graph, or on reduced inputs those named in `reduced_to`; panics where the
/// repository's five shipped graphs are not all found.
pub fn shipped_graphs(reduced_to: &[&str]) -> Vec<Graph> {
    let dir = groute_graph::shipped_datasets_dir().expect("the repository's datasets/ folder");
    let shipped = groute_graph::shipped_graphs();
    assert!(
        shipped.len() >= 5,
        "expected the shipped graphs in {}",
        dir.display()
    );
    let all = !reduced();
    shipped
        .into_iter()
        .filter(|g| all || reduced_to.contains(&g.name.as_str()))
        .collect()
}
