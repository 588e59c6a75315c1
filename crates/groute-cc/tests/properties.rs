//! Property tests: random small edge lists, any device count and chunking, against union-find.

use groute_cc::{CcOptions, StagedEdges, cc_reference, connected_components, host};
use groute_core::Context;
use groute_graph::{CsrBuilder, EdgeList, Graph};
use proptest::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

fn graph(n: usize, pairs: &[(u32, u32)], symmetric: bool) -> Graph {
    let csr = CsrBuilder::new(n)
        .symmetrize(symmetric)
        .build(&EdgeList::from_pairs(pairs))
        .expect("csr");
    Graph::new(csr, "prop", symmetric)
}

fn edges_strategy() -> impl Strategy<Value = (usize, Vec<(u32, u32)>)> {
    (1usize..48).prop_flat_map(|n| {
        let v = 0..n as u32;
        (Just(n), prop::collection::vec((v.clone(), v), 0..80))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn solver_matches_union_find(
        (n, pairs) in edges_strategy(),
        symmetric in any::<bool>(),
        devices in 1usize..5,
        chunk in 1usize..12,
        prefill in any::<bool>(),
    ) {
        let g = graph(n, &pairs, symmetric);
        let ctx = Context::host(devices).expect("host");
        let staged = StagedEdges::new(&ctx, &g).expect("stage");
        let opts = CcOptions::default().with_chunk_edges(chunk).with_prefill(prefill);
        let r = connected_components(&ctx, &staged, &opts).expect("cc");
        prop_assert_eq!(r.labels, cc_reference(&g.csr));
    }

    #[test]
    fn host_kernels_in_any_split_match_union_find(
        (n, pairs) in edges_strategy(),
        split in 0usize..80,
    ) {
        // Two "devices" hook disjoint halves, then one merges the other's array.
        let g = graph(n, &pairs, true);
        let edges: Vec<groute_cc::Edge> =
            pairs.iter().map(|&(u, v)| groute_cc::Edge::new(u, v)).collect();
        let split = split.min(edges.len());
        let a: Vec<AtomicU32> = (0..n as u32).map(AtomicU32::new).collect();
        let b: Vec<AtomicU32> = (0..n as u32).map(AtomicU32::new).collect();
        host::hook_edges(&edges[..split], &a);
        host::hook_edges(&edges[split..], &b);
        host::compress(&a);
        host::compress(&b);
        let b_plain: Vec<u32> = b.iter().map(|x| x.load(Ordering::Relaxed)).collect();
        host::merge(0, &b_plain, &a);
        host::compress(&a);
        let labels: Vec<u32> = a.iter().map(|x| x.load(Ordering::Relaxed)).collect();
        prop_assert_eq!(labels, cc_reference(&g.csr));
    }
}
