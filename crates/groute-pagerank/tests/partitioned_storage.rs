//! Partitioned storage: each device holds only the rows of the vertices it owns (and, with
//! pull sweeps on a directed graph, the same rows of the transpose), so its graph bytes
//! (`MemoryUsage::peak_graph_bytes`) shrink with the device count, while the ranks agree with
//! the one-device run within PageRank's error bound. Host backend (a wrong row read panics
//! there and fails the device), and CUDA with `GROUTE_TEST_CUDA=1`.

use std::time::Duration;

use groute_core::testing::test_contexts;
use groute_graph::{Graph, NoProgress, PartitionMethod, PartitionedGraph, partition_graph};
use groute_pagerank::{Driver, PageRankOptions, PageRankResult, SweepMode, l1_distance, pagerank};

/// The acceptance: each device's peak graph bytes over the one-device run's, at most.
const MAX_RATIO: [(usize, f64); 2] = [(2, 0.60), (4, 0.40)];

/// The bytes beside its rows that CUDA pull sweeps on several devices upload for device `d`
/// of `parted`. Host-driven: the cut lists, a copy of every arc from an owned vertex to another
/// device's (4 B each), per owned vertex with such an arc its id and offset (12 B), and the
/// closing offset (8 B). Device-driven (`fused`): the mirrors, 4 B per owned vertex and peer
/// it has an arc into, nothing per arc. They count as graph structure; on power-law graphs
/// the cut lists are most of a part's arcs.
fn cut_list_bytes(parted: &PartitionedGraph, d: usize, fused: bool) -> u64 {
    let owned = parted.partition.range(d);
    let (mut arcs, mut vertices, mut mirrors) = (0u64, 0u64, 0u64);
    for v in owned.clone() {
        let mut peers: Vec<usize> = parted
            .graph
            .csr
            .neighbors(v)
            .iter()
            .filter(|w| !owned.contains(w))
            .map(|&w| parted.partition.owner(w))
            .collect();
        arcs += peers.len() as u64;
        vertices += u64::from(!peers.is_empty());
        peers.sort_unstable();
        peers.dedup();
        mirrors += peers.len() as u64;
    }
    if fused {
        4 * mirrors
    } else {
        4 * arcs + 12 * vertices + 8
    }
}

fn options(sweep: SweepMode) -> PageRankOptions {
    let mut o = PageRankOptions {
        epsilon: 1e-3,
        ..PageRankOptions::default()
    };
    o.tuning.sweep = sweep;
    o.worklist.time_limit = Some(groute_core::testing::scaled(Duration::from_secs(120)));
    o
}

/// `graph` in `devices` blocks of vertices.
fn blocks(graph: &Graph, devices: usize) -> PartitionedGraph {
    partition_graph(graph.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap()
}

/// Runs `parted` on its devices in every test context; per context label, the result and
/// each device's peak graph bytes.
fn run(parted: &PartitionedGraph, o: &PageRankOptions) -> Vec<(String, PageRankResult, Vec<u64>)> {
    let devices = parted.partition.num_parts();
    test_contexts(devices, &[])
        .into_iter()
        .map(|tc| {
            let result = pagerank(&tc.context, parted, o)
                .unwrap_or_else(|e| panic!("{} on {devices} devices: {e}", tc.label));
            let peaks = tc
                .context
                .memory_usage()
                .iter()
                .map(|u| u.peak_graph_bytes)
                .collect();
            (tc.label, result, peaks)
        })
        .collect()
}

#[test]
fn devices_hold_only_their_rows_and_agree_with_one_device() {
    for (spec, sweep) in [
        ("kron:scale=13,ef=16,sym,seed=5", SweepMode::Pull),
        ("kron:scale=13,ef=16,sym,seed=5", SweepMode::Push),
        // Directed: pull sweeps upload the owned rows of the transpose too.
        ("kron:scale=12,ef=16,seed=9", SweepMode::Pull),
    ] {
        let graph = Graph::generated(spec).unwrap();
        let o = options(sweep);
        let alpha = f64::from(o.alpha);
        let one = run(&blocks(&graph, 1), &o);
        // One device holds the whole CSR (and the transpose's, pulling on a directed graph).
        let csr = &graph.csr;
        let copies = if sweep == SweepMode::Pull && !graph.symmetric {
            2
        } else {
            1
        };
        let whole = copies * (8 * (csr.num_vertices() as u64 + 1) + 4 * csr.targets().len() as u64);
        for (label, _, peaks) in &one {
            assert!(
                peaks[0] >= whole,
                "{spec} ({label}, {sweep} sweeps): one device holds {} graph bytes, below the whole graph's {whole}",
                peaks[0]
            );
        }
        for (devices, max_ratio) in groute_core::testing::first(MAX_RATIO, 1) {
            let parted = blocks(&graph, devices);
            for ((label, r, peaks), (label1, r1, peaks1)) in run(&parted, &o).iter().zip(&one) {
                assert_eq!(label, label1);
                let what = format!("{spec} on {devices} devices ({label}, {sweep} sweeps)");
                // Both runs are below the fixed point r* and within |res|_1 / (1 - alpha) of
                // it (crate docs), so within the sum of the two of each other.
                let bound = (r.stats.residual_left + r1.stats.residual_left) / (1.0 - alpha);
                let diff = l1_distance(&r.ranks, &r1.ranks);
                assert!(
                    diff <= bound * 1.01 + 1e-3,
                    "{what}: L1 distance {diff} to one device above {bound}"
                );
                for (d, &peak) in peaks.iter().enumerate() {
                    let ratio = peak as f64 / peaks1[0] as f64;
                    // CUDA pull sweeps hold the cut lists (host-driven: a copy of the cut arcs)
                    // or the mirrors (device-driven) beside the rows.
                    let cut = if label == "cuda" && sweep == SweepMode::Pull {
                        let fused = r.stats.driver == Driver::Fused;
                        cut_list_bytes(&parted, d, fused)
                    } else {
                        0
                    };
                    let allowed = max_ratio * peaks1[0] as f64 + cut as f64;
                    println!(
                        "{what}: device {d} holds {peak} graph bytes, {ratio:.3} of one device's ({cut} of them cut lists)"
                    );
                    assert!(
                        peak > 0 && peak as f64 <= allowed,
                        "{what}: device {d} holds {peak} graph bytes, {ratio:.3} of one device's {} (at most {max_ratio} of it, plus {cut} bytes of cut lists)",
                        peaks1[0]
                    );
                }
            }
        }
    }
}
