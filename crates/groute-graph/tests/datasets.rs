//! The graphs shipped in `datasets/`: checksums, and that every reader agrees on them.

use std::path::PathBuf;

use groute_graph::{Graph, NoProgress, PartitionMethod, load_graph, partition_graph};
use sha2::{Digest, Sha256};

mod support;
use support::arcs;

fn datasets() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../datasets")
}

#[test]
fn datasets_match_their_checksums() {
    let sums = std::fs::read_to_string(datasets().join("SHA256SUMS")).unwrap();
    let mut checked = 0;
    for line in sums.lines().filter(|l| !l.trim().is_empty()) {
        let (hash, name) = line.split_once("  ").unwrap();
        let bytes = std::fs::read(datasets().join(name.trim())).unwrap();
        let got: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(got, hash, "{name}");
        checked += 1;
    }
    assert!(checked >= 5);
}

/// Dijkstra on the host, for the distances stated in tiny-weighted.gr.
fn distances(g: &Graph, s: u32) -> Vec<u64> {
    let mut dist = vec![u64::MAX; g.num_vertices()];
    let mut heap = std::collections::BinaryHeap::new();
    dist[s as usize] = 0;
    heap.push(std::cmp::Reverse((0u64, s)));
    while let Some(std::cmp::Reverse((d, u))) = heap.pop() {
        if d > dist[u as usize] {
            continue;
        }
        let ws = g.csr.edge_weights(u).unwrap();
        for (i, &v) in g.csr.neighbors(u).iter().enumerate() {
            let nd = d + u64::from(ws[i]);
            if nd < dist[v as usize] {
                dist[v as usize] = nd;
                heap.push(std::cmp::Reverse((nd, v)));
            }
        }
    }
    dist
}

#[test]
fn tiny_weighted_is_the_same_graph_in_every_text_format() {
    let gr = load_graph(datasets().join("tiny-weighted.gr"), None).unwrap();
    let txt = load_graph(datasets().join("tiny-weighted.txt"), None).unwrap();
    let mtx = load_graph(datasets().join("tiny-weighted.mtx"), None).unwrap();
    assert_eq!((gr.num_vertices(), gr.num_edges()), (6, 10));
    assert_eq!(arcs(&gr), arcs(&txt));
    assert_eq!(arcs(&gr), arcs(&mtx));
    let s = gr.internal_id(1).unwrap();
    let d = distances(&gr, s);
    let by_ext: Vec<u64> = (1..=6)
        .map(|e| d[gr.internal_id(e).unwrap() as usize])
        .collect();
    assert_eq!(by_ext, vec![0, 3, 2, 8, 11, 12]);
}

#[test]
fn metis_meshes_load_and_partition() {
    let g = load_graph(datasets().join("4elt.graph"), None).unwrap();
    assert_eq!((g.num_vertices(), g.num_edges()), (7434, 86_062));
    assert!(g.symmetric);
    let p = partition_graph(g, 4, PartitionMethod::Metis, &NoProgress).unwrap();
    assert_eq!(p.method, PartitionMethod::Metis);
    assert!(p.stats.cut_fraction < 0.05, "{:?}", p.stats);
    assert!(p.stats.vertex_balance < 1.1, "{:?}", p.stats);
    let m = load_graph(datasets().join("test.mgraph"), None).unwrap();
    assert_eq!((m.num_vertices(), m.num_edges()), (766, 2628));
}
