//! Traffic between devices on the host executor: remote updates are combined per vertex
//! before they leave a device, so on a Kronecker graph of scale 16 (edge factor 16) PageRank
//! and SSSP on 2 and 4 host devices put at most half as many updates on the ring as they
//! relax arcs across parts, with results equal to the one-device run's (PageRank within its
//! error bound).

use groute::graph::{
    GenSpec, InputOrder, NoProgress, block_partition, generate, largest_component_hub,
};
use groute::pagerank::{PageRank, l1_error_bound, pagerank_reference};
use groute::sssp::{Sssp, sssp_reference};
use groute::worklist::algorithm::HostSolver;
use groute::worklist::{WorklistAlgorithm, WorklistOptions, WorklistStats};

const GRAPH: &str = "kron:scale=16,ef=16,sym,seed=2,weights=1..64:7";

/// The values and counters of `algorithm` on `devices` host devices, from `sources`.
fn run<A: WorklistAlgorithm>(
    algorithm: A,
    csr: &groute::graph::Csr,
    devices: usize,
    sources: &[u32],
) -> (Vec<A::Value>, WorklistStats) {
    let context = groute::core::Context::host(devices).expect("host context");
    let partition = block_partition(csr, devices).expect("partition");
    let options = WorklistOptions::default();
    let mut solver =
        HostSolver::new(&context, algorithm, csr, &partition, &options).expect("solver");
    let out = solver.run(sources, &options).expect("run");
    (out.values, out.stats)
}

/// Checks the traffic of a run on several devices: counted, and combined to at most half
/// the cut arcs relaxed.
fn check_combined(stats: &WorklistStats, label: &str) {
    let cut = stats
        .cut_arcs_traversed()
        .unwrap_or_else(|| panic!("{label}: the host executor counts cut arcs"));
    let updates = stats.remote_updates();
    assert!(cut > 0, "{label}: no arc crossed parts");
    assert!(
        2 * updates <= cut,
        "{label}: {updates} remote updates for {cut} cut arcs relaxed"
    );
    assert!(
        stats.items_sent() >= updates && stats.segments_sent() > 0,
        "{label}: {} items sent in {} messages",
        stats.items_sent(),
        stats.segments_sent()
    );
}

#[test]
fn sssp_remote_updates_are_combined_and_distances_exact() {
    let graph = generate(&GRAPH.parse::<GenSpec>().expect("spec"), &NoProgress).expect("graph");
    let order = InputOrder::of(&graph);
    let hub = largest_component_hub(&graph, &order)
        .expect("components")
        .expect("a vertex");
    let source = order.vertex_of_rank(hub.rank);
    let expected = sssp_reference(&graph.csr, source);
    let (one, stats) = run(Sssp, &graph.csr, 1, &[source]);
    assert_eq!(one, expected, "one device");
    assert_eq!(stats.remote_updates(), 0, "one device sends nothing");
    for devices in [2, 4] {
        let (values, stats) = run(Sssp, &graph.csr, devices, &[source]);
        assert_eq!(values, one, "{devices} devices");
        check_combined(&stats, &format!("SSSP, {devices} devices"));
    }
}

#[test]
fn pagerank_remote_updates_are_combined_and_ranks_within_the_bound() {
    let graph = generate(&GRAPH.parse::<GenSpec>().expect("spec"), &NoProgress).expect("graph");
    let (alpha, epsilon) = (0.85f32, 1e-3f32);
    let algorithm = PageRank { alpha, epsilon };
    let exact = pagerank_reference(&graph.csr, f64::from(alpha));
    let n = graph.num_vertices();
    let tolerance = l1_error_bound(n, f64::from(alpha), f64::from(epsilon))
        + exact.error_bound
        + 1e-4 * exact.ranks.iter().sum::<f64>();
    for devices in [1, 2, 4] {
        let (ranks, stats) = run(algorithm, &graph.csr, devices, &[]);
        let l1: f64 = ranks
            .iter()
            .zip(&exact.ranks)
            .map(|(&a, &b)| (f64::from(a) - b).abs())
            .sum();
        assert!(
            l1 <= tolerance,
            "{devices} devices: L1 error {l1} past {tolerance}"
        );
        if devices > 1 {
            check_combined(&stats, &format!("PageRank, {devices} devices"));
        }
    }
}
