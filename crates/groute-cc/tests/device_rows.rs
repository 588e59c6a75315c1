//! Connected components over the devices' own rows ([`DeviceRows`]: arcs 0 to lower heads,
//! then on dense graphs sampling and the rest of the rows but the anchor's tree, on sparse ones
//! every arc once), against union-find on every generator family, on directed graphs (no
//! anchor: every arc linked), on hubs long enough to be tiled (dense and sparse), on many
//! small dense components, and on random graphs; on 1..4 devices of the host backend (plain
//! and jittered) and, with `GROUTE_TEST_CUDA=1`, of CUDA.

use groute_cc::{
    CcError, CcOptions, CcSolver, CcStorage, DeviceRows, SAMPLED_ARCS, TILE_ARCS, cc_reference,
    connected_components,
};
use groute_core::Context;
use groute_core::testing::test_contexts;
use groute_graph::testing::{from_random_pairs, generated, hub_ladder, small_of_each_family};
use groute_graph::{EdgeList, Graph};
use proptest::prelude::*;

/// `graph` taken both ways, marked symmetric.
fn both_ways(graph: &Graph) -> Graph {
    let mut g = graph.clone();
    g.csr = g.csr.symmetrized().unwrap();
    g.symmetric = true;
    g
}

fn graphs() -> Vec<Graph> {
    let mut graphs: Vec<Graph> = small_of_each_family().into();
    let ladder = hub_ladder();
    graphs.push(both_ways(&ladder));
    graphs.push(ladder);
    graphs.push(generated("kron:scale=12,ef=16,sym,seed=4"));
    graphs.push(generated("road:side=40,p=0.45,seed=2"));
    graphs.push(two_stars(false));
    graphs.push(two_stars(true));
    // Dense: directed (every arc linked once), rows long enough to be tiled, and many
    // components (most rows outside the anchor's tree).
    graphs.push(generated("kron:scale=10,ef=16,seed=3,sym=0"));
    graphs.push(dense_stars());
    graphs.push(cliques(60, 10));
    graphs
}

/// `count` disjoint cliques of `size` vertices, both ways: dense, and no anchor's tree holds
/// more than one of them.
fn cliques(count: u32, size: u32) -> Graph {
    let pairs: Vec<(u32, u32)> = (0..count)
        .flat_map(|c| {
            let first = c * size;
            (first..first + size).flat_map(move |u| (u + 1..first + size).map(move |v| (u, v)))
        })
        .collect();
    from_random_pairs(count * size, &pairs, true)
}

/// A symmetric graph of at least 8 arcs per vertex whose hubs (vertices 0 and 1) have rows of
/// more than two tiles: each of the other vertices joined to both hubs and to 3 more.
fn dense_stars() -> Graph {
    let n = 4200u32;
    let mut pairs = Vec::new();
    for v in 2..n {
        pairs.push((0, v));
        pairs.push((1, v));
        for k in 1..=3 {
            pairs.push((v, 2 + (v - 2 + k * 97) % (n - 2)));
        }
    }
    from_random_pairs(n, &pairs, true)
}

/// Hubs whose rows span several tiles: vertex 7000 leads to the 5,000 vertices below it,
/// vertex 12000 to the 4,500 vertices above 7000, the two joined only through leaves 4999 and
/// 7001, and vertices past 11501 but 12000 isolated.
fn two_stars(symmetric: bool) -> Graph {
    let mut pairs: Vec<(u32, u32)> = (0..5000).map(|v| (7000, v)).collect();
    pairs.extend((7001..11501).map(|v| (12000, v)));
    pairs.push((4999, 7001));
    from_random_pairs(12001, &pairs, symmetric)
}

#[test]
fn device_rows_give_the_reference_labels_on_every_family_and_device_count() {
    let graphs = graphs();
    // The ladder's hubs (sparse) and the dense stars' are long enough to be tiled on CUDA.
    let longest = |g: &Graph| {
        (0..g.csr.num_vertices() as u32)
            .map(|v| g.csr.out_degree(v))
            .max()
    };
    assert!(longest(&graphs[graphs.len() - 5]) >= Some(u64::from(2 * TILE_ARCS + SAMPLED_ARCS)));
    let dense_stars = &graphs[graphs.len() - 2];
    assert!(longest(dense_stars) >= Some(u64::from(2 * TILE_ARCS + SAMPLED_ARCS)));
    assert!(dense_stars.csr.num_edges() >= CcStorage::DENSE_DEGREE * 4200);
    for graph in &graphs {
        let expected = cc_reference(&graph.csr);
        let arcs = graph.csr.num_edges();
        let (loops, lower) = loops_and_lower_arcs(graph);
        for devices in 1..=4 {
            for tc in test_contexts(devices, &[3]) {
                let what = format!("{} on {devices} devices ({})", graph.name, tc.label);
                let opts = CcOptions::default().with_storage(CcStorage::DeviceRows);
                let mut solver = CcSolver::new(&tc.context, graph, &opts)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let anchor = solver.device_rows().expect("rows as asked").anchor();
                assert!(graph.symmetric || anchor.is_none(), "{what}");
                for run in 0..2 {
                    let got = solver.run().unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(got.labels, expected, "{what}, run {run}");
                    let linked: u64 = got.stats.edges_per_device.iter().sum();
                    assert_eq!(got.stats.edges_per_device.len(), devices, "{what}");
                    match (graph.symmetric, anchor) {
                        // Sampling around the anchor skips arcs, how many depends on timing.
                        (true, Some(_)) => {
                            assert!(linked <= arcs, "{what}: {linked} of {arcs} arcs linked")
                        }
                        // Every arc once, from its higher end.
                        (true, None) => assert_eq!(linked, lower, "{what}, run {run}"),
                        // No anchor: every arc of every row but the loops, exactly once.
                        (false, _) => assert_eq!(linked, arcs - loops, "{what}, run {run}"),
                    }
                }
            }
        }
    }
}

/// The arcs of `graph` from a vertex to itself, and those to a lower vertex.
fn loops_and_lower_arcs(graph: &Graph) -> (u64, u64) {
    let mut counts = (0, 0);
    for u in 0..graph.csr.num_vertices() as u32 {
        for &v in graph.csr.neighbors(u) {
            counts.0 += u64::from(v == u);
            counts.1 += u64::from(v < u);
        }
    }
    counts
}

#[test]
fn sampling_skips_most_arcs_of_a_power_law_graph() {
    let graph = generated("kron:scale=12,ef=16,sym,seed=4");
    let arcs = graph.csr.num_edges();
    for devices in [1, 3] {
        for tc in test_contexts(devices, &[]) {
            let mut solver = CcSolver::new(&tc.context, &graph, &CcOptions::default()).unwrap();
            assert_eq!(
                solver.storage(),
                CcStorage::DeviceRows,
                "Auto on a dense graph"
            );
            let got = solver.run().unwrap();
            let linked: u64 = got.stats.edges_per_device.iter().sum();
            assert!(
                linked < arcs / 4,
                "{devices} devices ({}): {linked} of {arcs} arcs linked",
                tc.label
            );
        }
    }
}

#[test]
fn the_anchor_is_the_vertex_of_largest_degree() {
    // A clique on 1..=19 (degree 18) and the arc 0 - 2: vertex 2 has degree 19, and the graph
    // is dense enough to be sampled (344 arcs, 20 vertices).
    let mut pairs: Vec<(u32, u32)> = (1..20u32)
        .flat_map(|u| (u + 1..20).map(move |v| (u, v)))
        .collect();
    pairs.push((0, 2));
    let dense = from_random_pairs(20, &pairs, true);
    assert!(dense.csr.num_edges() >= CcStorage::DENSE_DEGREE * 20);
    let ctx = Context::host(2).unwrap();
    assert_eq!(DeviceRows::new(&ctx, &dense).unwrap().anchor(), Some(2));
    let directed = from_random_pairs(20, &pairs, false);
    assert_eq!(DeviceRows::new(&ctx, &directed).unwrap().anchor(), None);
    // A sparse graph links every arc once: no anchor.
    let sparse = from_random_pairs(6, &[(0, 1), (2, 3), (2, 4), (2, 5), (5, 4)], true);
    assert_eq!(DeviceRows::new(&ctx, &sparse).unwrap().anchor(), None);
    // No arcs: no anchor, and every vertex its own component.
    let empty = from_random_pairs(4, &[], true);
    let rows = DeviceRows::new(&ctx, &empty).unwrap();
    assert_eq!(rows.anchor(), None);
    let got = connected_components(&ctx, &rows, &CcOptions::default()).unwrap();
    assert_eq!(got.labels, vec![0, 1, 2, 3]);
    // No vertices at all: no labels, on any number of devices.
    let none = Graph::from_edges(0, &EdgeList::from_pairs(&[]), "none", true).unwrap();
    for devices in [1, 3] {
        let ctx = Context::host(devices).unwrap();
        let opts = CcOptions::default().with_storage(CcStorage::DeviceRows);
        let got = CcSolver::new(&ctx, &none, &opts).unwrap().run().unwrap();
        assert!(got.labels.is_empty() && got.components == 0);
    }
}

#[test]
fn more_devices_than_vertices_leave_some_devices_without_rows() {
    for symmetric in [true, false] {
        let graph = from_random_pairs(2, &[(0, 1)], symmetric);
        for tc in test_contexts(4, &[]) {
            let rows = DeviceRows::new(&tc.context, &graph).unwrap();
            assert_eq!(rows.rows(), vec![0..1, 1..2, 2..2, 2..2], "{}", tc.label);
            let got = connected_components(&tc.context, &rows, &CcOptions::default()).unwrap();
            assert_eq!(got.labels, vec![0, 0], "{}", tc.label);
        }
    }
}

/// Rows that do not fit a device's memory: an error that names the limit and the storage that
/// streams the edges instead, which then runs.
#[test]
fn rows_that_do_not_fit_are_refused_naming_the_streaming_storage() {
    let graph = generated("kron:scale=12,ef=16,sym,seed=4");
    let ctx = Context::builder()
        .devices(1)
        .backend(groute_core::BackendChoice::Host)
        .device_memory_limit(64 * 1024)
        .build()
        .unwrap();
    let e = CcSolver::new(&ctx, &graph, &CcOptions::default()).expect_err("over the limit");
    assert!(matches!(e, CcError::RowsDoNotFit(_)), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("memory limit") && text.contains("--storage stream"),
        "{text}"
    );
    let streamed = CcOptions::default()
        .with_storage(CcStorage::HostStream)
        .with_chunk_edges(512)
        .with_input_buffers(1);
    let got = CcSolver::new(&ctx, &graph, &streamed)
        .unwrap()
        .run()
        .unwrap();
    assert_eq!(got.labels, cc_reference(&graph.csr));
}

#[test]
fn rows_of_another_context_are_refused() {
    let graph = generated("road:side=8,p=0.6,seed=1");
    let rows = DeviceRows::new(&Context::host(2).unwrap(), &graph).unwrap();
    let other = Context::host(2).unwrap();
    let e = connected_components(&other, &rows, &CcOptions::default()).expect_err("foreign");
    assert!(matches!(e, CcError::ForeignStaging), "{e}");
}

#[test]
fn auto_keeps_the_rows_of_dense_graphs_on_the_devices() {
    let auto = CcStorage::Auto;
    assert_eq!(auto.resolve(100, 800), CcStorage::DeviceRows);
    assert_eq!(auto.resolve(100, 799), CcStorage::HostStream);
    assert_eq!(auto.resolve(0, 0), CcStorage::DeviceRows);
    for chosen in [CcStorage::DeviceRows, CcStorage::HostStream] {
        assert_eq!(chosen.resolve(100, 10), chosen);
        assert_eq!(chosen.resolve(100, 10_000), chosen);
    }
    let road = generated("road:side=24,p=0.6,seed=5");
    let ctx = Context::host(2).unwrap();
    let solver = CcSolver::new(&ctx, &road, &CcOptions::default()).unwrap();
    assert_eq!(solver.storage(), CcStorage::HostStream);
    assert!(solver.staged().is_some() && solver.device_rows().is_none());
}

#[test]
fn both_storages_give_the_same_labels() {
    for graph in small_of_each_family() {
        let ctx = Context::host(3).unwrap();
        let labels = |storage| {
            let opts = CcOptions::default().with_storage(storage);
            CcSolver::new(&ctx, &graph, &opts)
                .unwrap()
                .run()
                .unwrap()
                .labels
        };
        assert_eq!(labels(CcStorage::DeviceRows), labels(CcStorage::HostStream));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn device_rows_match_union_find_on_random_graphs(
        n in 1u32..60,
        pairs in prop::collection::vec((0u32..60, 0u32..60), 0..120),
        symmetric in any::<bool>(),
        devices in 1usize..5,
    ) {
        let graph = from_random_pairs(n, &pairs, symmetric);
        let ctx = Context::host(devices).expect("host");
        let rows = DeviceRows::new(&ctx, &graph).expect("rows");
        let got = connected_components(&ctx, &rows, &CcOptions::default()).expect("cc");
        prop_assert_eq!(got.labels, cc_reference(&graph.csr));
    }
}
