//! What SSSP's default soft-priority band does on a road grid.

use groute_graph::Graph;
use groute_sssp::SsspResult;

/// Asserts that on the road grid `graph` the run `with` the default band and the run
/// `without` soft priority found the same distances, that `with` used the band of the
/// graph's weights, deferred items over epochs and expanded at most three items per vertex
/// reached (a road grid's label-correcting runs to many times that without priority), and
/// that `without` deferred nothing; `label` names the runs.
pub fn the_default_band_cuts_work(
    graph: &Graph,
    with: &SsspResult,
    without: &SsspResult,
    label: &str,
) {
    assert_eq!(with.distances, without.distances, "{label}");
    assert_eq!(
        with.stats.prio_delta,
        groute_sssp::default_prio_delta(&graph.csr),
        "{label}: the band of the graph's weights"
    );
    assert!(
        with.stats.epochs > 0 && with.stats.items_deferred > 0,
        "{label}"
    );
    assert_eq!(
        (without.stats.epochs, without.stats.items_deferred),
        (0, 0),
        "{label}"
    );
    let reached = with.reached() as u64;
    assert!(
        with.stats.work_items <= 3 * reached,
        "{label}: {} work items with priority for {reached} vertices (without: {})",
        with.stats.work_items,
        without.stats.work_items
    );
}
