//! The hook (CUDA: the warp-cooperative kernel) against the union-find reference, on the
//! inputs it is built for and on those it must merely survive: hubs at low ids (whole warps
//! and chunks sharing one `u`), CSR order and shuffled edge lists, reversed, duplicate and
//! self-loop edges, 1 and 2 devices (merging), small and large chunks. Runs on every backend of
//! `test_contexts` (CUDA with `GROUTE_TEST_CUDA=1`).

use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};

use groute_cc::{CcError, CcOptions, Edge, StagedEdges, cc_reference, connected_components, host};
use groute_core::Context;
use groute_core::testing::test_contexts;
use groute_graph::testing::generated;
use groute_graph::{CsrBuilder, EdgeList, Graph};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The components of `pairs` (weak: direction ignored), by the reference.
fn reference(n: usize, pairs: &[(u32, u32)]) -> Vec<u32> {
    let csr = CsrBuilder::new(n)
        .symmetrize(true)
        .build(&EdgeList::from_pairs(pairs))
        .expect("csr");
    cc_reference(&csr)
}

/// `hubs` hubs (ids 0..hubs) each joined to `spokes` random vertices, plus `extra` random
/// edges, over `n` vertices: a few huge adjacency lists first in CSR order, as in Kronecker
/// graphs whose ids are not permuted.
fn hub_pairs(n: u32, hubs: u32, spokes: usize, extra: usize, seed: u64) -> Vec<(u32, u32)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut pairs = Vec::new();
    for h in 0..hubs {
        for _ in 0..spokes {
            pairs.push((h, rng.random_range(0..n)));
        }
    }
    for _ in 0..extra {
        pairs.push((rng.random_range(0..n), rng.random_range(0..n)));
    }
    pairs
}

/// Runs the hook on every context with these staged-edge makers and chunk sizes.
fn check_hook(
    devices: usize,
    label: &str,
    expected: &[u32],
    stage: impl Fn(&Context) -> StagedEdges,
    chunks: &[Option<usize>],
) {
    for tc in test_contexts(devices, &[3]) {
        let staged = stage(&tc.context);
        for &chunk in chunks {
            let opts = CcOptions {
                chunk_edges: chunk,
                ..CcOptions::default()
            };
            let got = connected_components(&tc.context, &staged, &opts)
                .unwrap_or_else(|e| panic!("{label} on {}: {e}", tc.label));
            assert_eq!(
                got.labels, expected,
                "{label} on {} x{devices}, chunk {chunk:?}",
                tc.label
            );
            assert_eq!(
                got.stats.edges_per_device.iter().sum::<u64>(),
                staged.num_edges() as u64
            );
        }
    }
}

#[test]
fn hubs_in_csr_order_match_the_reference() {
    let n = 4000;
    let pairs = hub_pairs(n, 6, 700, 1500, 1);
    let g = Graph::new(
        CsrBuilder::new(n as usize)
            .symmetrize(true)
            .build(&EdgeList::from_pairs(&pairs))
            .expect("csr"),
        "hubs",
        true,
    );
    let expected = cc_reference(&g.csr);
    for devices in [1, 2] {
        check_hook(
            devices,
            "hubs (csr order)",
            &expected,
            |ctx| StagedEdges::new(ctx, &g).expect("stage"),
            &[Some(64), Some(1000), None],
        );
    }
}

#[test]
fn unpermuted_kronecker_matches_the_reference() {
    // perm=0: the hubs are the lowest ids, so the first chunks are a few huge adjacency lists.
    let g = generated("kron:scale=11,ef=8,sym,perm=0,seed=5");
    let expected = cc_reference(&g.csr);
    check_hook(
        1,
        "kron perm=0",
        &expected,
        |ctx| StagedEdges::new(ctx, &g).expect("stage"),
        &[Some(2048), None],
    );
    // Directed: every arc is staged, u > v included (runs of equal u still, any order of v).
    let directed = generated("kron:scale=10,ef=4,sym=0,perm=0,seed=6");
    assert!(!directed.symmetric);
    check_hook(
        2,
        "directed kron perm=0",
        &cc_reference(&directed.csr),
        |ctx| StagedEdges::new(ctx, &directed).expect("stage"),
        &[Some(500)],
    );
}

#[test]
fn shuffled_edge_lists_with_loops_duplicates_and_reversals_match_the_reference() {
    // Random inputs: the grouping by u is an optimisation, never an assumption.
    for seed in 0..6u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
        let n = rng.random_range(40..3000u32);
        let hubs = rng.random_range(1..5u32).min(n);
        let mut pairs = hub_pairs(
            n,
            hubs,
            rng.random_range(0..600),
            rng.random_range(0..900),
            seed,
        );
        // Reversed copies, duplicates, self-loops.
        let k = pairs.len() / 4;
        for i in 0..k {
            let (u, v) = pairs[i];
            pairs.push((v, u));
            pairs.push((u, v));
            pairs.push((u, u));
        }
        let expected = reference(n as usize, &pairs);
        // Shuffled, and sorted by u with runs straddling warps (v in any order).
        let mut shuffled = pairs.clone();
        shuffled.shuffle(&mut rng);
        let mut by_u = shuffled.clone();
        by_u.sort_by_key(|&(u, _)| u);
        for (order, list) in [("shuffled", &shuffled), ("sorted by u", &by_u)] {
            let edges: Vec<Edge> = list.iter().map(|&(u, v)| Edge::new(u, v)).collect();
            let chunk = rng.random_range(1..400usize);
            check_hook(
                1 + (seed as usize % 2),
                &format!("seed {seed}, {order}, n {n}"),
                &expected,
                |ctx| StagedEdges::from_edges(ctx, n as usize, &edges).expect("stage"),
                &[Some(chunk), Some(edges.len().max(1))],
            );
        }
    }
}

#[test]
fn staging_refuses_edges_out_of_range() {
    let ctx = Context::host(1).expect("host");
    let err = StagedEdges::from_edges(&ctx, 4, &[Edge::new(0, 1), Edge::new(2, 4)])
        .expect_err("vertex 4 of 4");
    assert!(matches!(err, CcError::InvalidOption { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("(2, 4)") && msg.contains("num_vertices = 4"),
        "{msg}"
    );
    let empty = StagedEdges::from_edges(&ctx, 3, &[]).expect("no edges");
    let r = connected_components(&ctx, &empty, &CcOptions::default()).expect("cc");
    assert_eq!(r.labels, vec![0, 1, 2]);
}

#[test]
fn first_parents_point_roots_at_lower_neighbours_only() {
    // The plain-store initialisation before a chunk's hook: every entry it writes is a root's,
    // pointed at a lower end of one of that root's edges, so the array stays a forest whose
    // trees are connected, and the hook after it finishes the components.
    for seed in 0..4u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(200 + seed);
        let n = rng.random_range(10..2000u32);
        let mut pairs = hub_pairs(
            n,
            2,
            rng.random_range(0..300),
            rng.random_range(0..900),
            seed,
        );
        pairs.push((n - 1, n - 1));
        pairs.shuffle(&mut rng);
        let edges: Vec<Edge> = pairs.iter().map(|&(u, v)| Edge::new(u, v)).collect();
        let parent: Vec<AtomicU32> = (0..n).map(AtomicU32::new).collect();
        // A root from an earlier chunk's hook stays one unless an edge names it.
        parent[1].store(0, Ordering::Relaxed);
        host::first_parents(&edges, &parent);
        let joined: HashSet<(u32, u32)> =
            pairs.iter().map(|&(u, v)| (u.min(v), u.max(v))).collect();
        for v in 2..n {
            let p = parent[v as usize].load(Ordering::Relaxed);
            assert!(
                p == v || (p < v && joined.contains(&(p, v))),
                "seed {seed}: parent[{v}] = {p} is neither {v} nor a lower neighbour"
            );
        }
        assert_eq!(parent[1].load(Ordering::Relaxed), 0, "seed {seed}");
        host::hook_edges(&edges, &parent);
        host::compress(&parent);
        let mut expected = reference(n as usize, &pairs);
        // Vertex 1 was joined to 0 before the chunk.
        let (zero, one) = (expected[0], expected[1]);
        for label in &mut expected {
            if *label == one {
                *label = zero.min(one);
            }
        }
        let got: Vec<u32> = parent.iter().map(|p| p.load(Ordering::Relaxed)).collect();
        assert_eq!(got, expected, "seed {seed}");
    }
}
