//! Connected components against the union-find reference: shipped and generated graphs, 1..8
//! devices, every backend of `test_contexts` (host, host with jitter, CUDA with
//! `GROUTE_TEST_CUDA=1`).

use groute_cc::{
    CcError, CcOptions, StagedEdges, cc_reference, component_stats, connected_components,
};
use groute_core::Context;
use groute_core::testing::test_contexts;
use groute_graph::testing::generated;
use groute_graph::{EdgeList, Graph, load_graph};

fn shipped(name: &str) -> Graph {
    let dir = groute_graph::shipped_datasets_dir().expect("the repository's datasets/ folder");
    let path = dir.join(name);
    load_graph(&path, None).expect("shipped graph")
}

fn from_pairs(n: usize, pairs: &[(u32, u32)], symmetric: bool) -> Graph {
    Graph::from_edges(n, &EdgeList::from_pairs(pairs), "pairs", symmetric).unwrap()
}

/// Solves `graph` on `ctx` and checks labels, component statistics and edge accounting.
fn check_on(ctx: &Context, label: &str, graph: &Graph, opts: &CcOptions) {
    let expected = cc_reference(&graph.csr);
    let staged = StagedEdges::new(ctx, graph).expect("stage");
    let got = connected_components(ctx, &staged, opts)
        .unwrap_or_else(|e| panic!("{label}, {}: {e}", graph.name));
    assert_eq!(
        got.labels,
        expected,
        "{label}, {} on {} devices, {opts:?}",
        graph.name,
        ctx.num_devices()
    );
    let (components, largest) = component_stats(&expected);
    assert_eq!(
        (got.components, got.largest_component),
        (components, largest)
    );
    let s = &got.stats;
    assert_eq!(s.edges_per_device.len(), ctx.num_devices());
    assert_eq!(
        s.edges_per_device.iter().sum::<u64>(),
        staged.num_edges() as u64
    );
    assert_eq!(s.chunks_per_device.iter().sum::<u64>(), s.chunks as u64);
    let n = graph.num_vertices() as u64;
    let merged: u64 = s.merged_per_device.iter().sum();
    assert_eq!(
        merged,
        n * (ctx.num_devices() as u64 - 1),
        "every non-root array merged once"
    );
}

/// [`check_on`] on every test context of each of `device_counts`.
fn check_everywhere(device_counts: &[usize], graph: &Graph, opts: &CcOptions) {
    for &devices in device_counts {
        for tc in test_contexts(devices, &[7]) {
            check_on(&tc.context, &tc.label, graph, opts);
        }
    }
}

#[test]
fn shipped_graphs_match_the_reference() {
    for name in ["4elt.graph", "test.mgraph", "tiny-weighted.gr"] {
        let g = shipped(name);
        check_everywhere(&[1, 2, 3], &g, &CcOptions::default().with_chunk_edges(2000));
    }
}

#[test]
fn many_small_components_and_isolated_vertices() {
    // 3000 vertices, 900 random edges: hundreds of components, most vertices isolated.
    let g = generated("random:n=3000,m=900,sym,seed=5");
    let (components, _) = component_stats(&cc_reference(&g.csr));
    assert!(components > 1000, "{components}");
    check_everywhere(&[1, 2, 4], &g, &CcOptions::default().with_chunk_edges(64));
}

#[test]
fn one_giant_component() {
    let g = generated("kron:scale=11,ef=8,sym,seed=3");
    let (_, largest) = component_stats(&cc_reference(&g.csr));
    assert!(largest > g.num_vertices() / 2, "{largest}");
    check_everywhere(&[1, 3], &g, &CcOptions::default().with_chunk_edges(1000));
    // Defaults (chunk = vertex count for this dense graph).
    check_everywhere(&[2], &g, &CcOptions::default());
}

#[test]
fn road_like_grid_with_gaps() {
    let g = generated("road:side=60,p=0.45,seed=9");
    check_everywhere(&[1, 2, 5], &g, &CcOptions::default().with_chunk_edges(500));
    check_everywhere(&[2], &g, &CcOptions::default());
}

#[test]
fn directed_inputs_give_weak_components() {
    // Arcs only one way: 5 -> 3 -> 1, 0 -> 4; 2, 6 isolated; 7 -> 7 a self-loop.
    let g = from_pairs(8, &[(5, 3), (3, 1), (0, 4), (7, 7)], false);
    assert!(!g.symmetric);
    check_everywhere(&[1, 2, 4], &g, &CcOptions::default().with_chunk_edges(1));
    let big = generated("random:n=2000,m=2500,seed=11");
    assert!(!big.symmetric);
    check_everywhere(&[3], &big, &CcOptions::default().with_chunk_edges(300));
}

#[test]
fn self_loops_and_duplicates_change_nothing() {
    let g = from_pairs(
        6,
        &[(0, 0), (1, 1), (2, 3), (3, 2), (2, 3), (5, 5), (4, 5)],
        true,
    );
    check_everywhere(&[1, 2], &g, &CcOptions::default().with_chunk_edges(2));
    let kron_loops = generated("kron:scale=9,ef=4,sym,seed=2");
    assert!(kron_loops.csr.degree_stats().self_loops > 0);
    check_everywhere(
        &[2],
        &kron_loops,
        &CcOptions::default().with_chunk_edges(200),
    );
}

#[test]
fn one_to_eight_devices() {
    let g = generated("random:n=1500,m=1400,sym,seed=21");
    for devices in 1..=8 {
        for tc in test_contexts(devices, &[devices as u64]) {
            check_on(
                &tc.context,
                &tc.label,
                &g,
                &CcOptions::default().with_chunk_edges(97),
            );
        }
    }
}

#[test]
fn options_do_not_change_the_result() {
    let g = generated("random:n=1200,m=1500,sym,seed=8");
    let variants = [
        CcOptions::default()
            .with_prefill(false)
            .with_chunk_edges(50),
        CcOptions::default()
            .with_chunk_edges(1)
            .with_input_buffers(1),
        CcOptions::default()
            .with_chunk_edges(100)
            .with_merge_packet(7),
        CcOptions {
            compress_every: 4,
            merge_buffers: 1,
            ..CcOptions::default().with_chunk_edges(40)
        },
        CcOptions::default().with_chunk_edges(1 << 20),
    ];
    for opts in &variants {
        check_everywhere(&[3], &g, opts);
    }
}

#[test]
fn repeated_runs_reuse_the_staged_edges() {
    let g = generated("road:side=30,p=0.5,seed=4");
    let ctx = Context::host(2).expect("host");
    let staged = StagedEdges::new(&ctx, &g).expect("stage");
    let expected = cc_reference(&g.csr);
    for _ in 0..3 {
        let r = connected_components(&ctx, &staged, &CcOptions::default()).expect("cc");
        assert_eq!(r.labels, expected);
    }
}

#[test]
fn edgeless_and_single_vertex_graphs() {
    for n in [1, 5] {
        let g = from_pairs(n, &[], true);
        check_everywhere(&[1, 3], &g, &CcOptions::default());
    }
}

#[test]
fn bad_settings_are_errors() {
    let g = from_pairs(4, &[(0, 1)], true);
    let ctx = Context::host(2).expect("host");
    let staged = StagedEdges::new(&ctx, &g).expect("stage");
    for opts in [
        CcOptions::default().with_chunk_edges(0),
        CcOptions::default().with_input_buffers(0),
        CcOptions::default().with_merge_packet(0),
        CcOptions {
            compress_every: 0,
            ..CcOptions::default()
        },
    ] {
        let e = connected_components(&ctx, &staged, &opts).expect_err("refused");
        assert!(matches!(e, CcError::InvalidOption { .. }), "{e}");
    }
    let other = Context::host(1).expect("host");
    let e = connected_components(&other, &staged, &CcOptions::default()).expect_err("foreign");
    assert!(matches!(e, CcError::ForeignStaging), "{e}");
}
