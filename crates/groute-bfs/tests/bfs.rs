//! BFS equals the sequential reference on shipped and generated graphs, on 1, 2, 3, 4 and 8
//! devices, block and METIS partitions, plain and jittered host contexts.
//!
//! With `GROUTE_TEST_REDUCED=1` (`groute_core::testing::reduced`) each check runs one source
//! on block partitions, on 1 to 3 devices, and the random graphs are fewer.

use std::time::Duration;

use groute_bfs::{BfsError, BfsOptions, Direction, bfs, bfs_reference};
use groute_core::testing::{device_counts, first, full_or_reduced, test_contexts};
use groute_graph::testing::{
    directed_path, from_pairs, generated, self_loops, small_of_each_family,
};
use groute_graph::{Graph, NoProgress, PartitionMethod, partition_graph};
use proptest::prelude::*;

/// The worklist BFS (these tests are about it; `direction.rs` tests direction-optimizing).
fn options() -> BfsOptions {
    let mut o = BfsOptions {
        direction: Direction::Push,
        ..BfsOptions::default()
    };
    o.worklist.time_limit = Some(groute_core::testing::scaled(Duration::from_secs(60)));
    o.worklist.packet_size = 64;
    o.worklist.max_batch = 256;
    o
}

/// Checks BFS from `sources` on `devices` devices with both partition methods (on reduced
/// inputs: from the first source, on blocks).
fn check(graph: &Graph, devices: usize, sources: &[u32], jitter: &[u64]) {
    let n = graph.num_vertices();
    if devices > n {
        return;
    }
    let sources = first(sources.iter().copied(), 1);
    for method in first([PartitionMethod::Block, PartitionMethod::Metis], 1) {
        let parted = partition_graph(graph.clone(), devices, method, &NoProgress).unwrap();
        for tc in test_contexts(devices, jitter) {
            for &s in &sources {
                let expected = bfs_reference(&graph.csr, s);
                let got = bfs(&tc.context, &parted, s, &options()).unwrap_or_else(|e| {
                    panic!(
                        "{} on {devices} devices ({method}, {}): {e}",
                        graph.name, tc.label
                    )
                });
                assert_eq!(
                    got.levels, expected,
                    "{} from {s} on {devices} devices ({method}, {})",
                    graph.name, tc.label
                );
                assert_eq!(got.stats.worklist.late_items, 0);
            }
        }
    }
}

#[test]
fn generated_graphs_match_the_reference_on_1_to_8_devices() {
    for g in &small_of_each_family() {
        for devices in device_counts(&[1, 2, 3, 4, 8]) {
            check(
                g,
                devices,
                &[0, (g.num_vertices() / 2) as u32],
                &[devices as u64],
            );
        }
    }
}

#[test]
fn special_shapes_match_the_reference() {
    let single = from_pairs(1, &[], "single vertex");
    let single_loop = from_pairs(1, &[(0, 0)], "single self-loop");
    let disconnected = from_pairs(
        10,
        &[
            (0, 1),
            (1, 0),
            (1, 2),
            (2, 1),
            (5, 6),
            (6, 5),
            (6, 7),
            (7, 6),
            (8, 8),
        ],
        "disconnected",
    );
    let loops = self_loops();
    let path = directed_path(200, "directed path");
    check(&single, 1, &[0], &[1]);
    check(&single_loop, 1, &[0], &[1]);
    for devices in device_counts(&[1, 2, 3, 4, 8]) {
        check(&disconnected, devices, &[0, 5, 8, 9], &[3]);
        check(&loops, devices.min(6), &[0, 3], &[4]);
        check(&path, devices, &[0, 150], &[5]);
    }
}

#[test]
fn shipped_graphs_match_the_reference() {
    let dir = groute_graph::shipped_datasets_dir().expect("the repository's datasets/ folder");
    let shipped = groute_graph::shipped_graphs();
    for g in &shipped {
        for devices in device_counts(&[1, 2, 4]) {
            check(g, devices, &[0], &[]);
        }
    }
    assert!(
        shipped.len() >= 3,
        "expected the shipped graphs in {}",
        dir.display()
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    let g = generated("random:n=50,m=100,seed=1");
    let ctx = groute_core::Context::host(2).unwrap();
    let parted = partition_graph(g.clone(), 2, PartitionMethod::Block, &NoProgress).unwrap();
    let err = bfs(&ctx, &parted, 50, &options()).unwrap_err();
    assert!(
        matches!(
            err,
            BfsError::SourceOutOfRange {
                vertex: 50,
                vertices: 50
            }
        ),
        "{err}"
    );
    assert_eq!(
        BfsError::EmptyGraph.to_string(),
        "the graph is empty: BFS needs at least one vertex"
    );
    let three = partition_graph(g, 3, PartitionMethod::Block, &NoProgress).unwrap();
    assert!(matches!(
        bfs(&ctx, &three, 0, &options()).unwrap_err(),
        BfsError::PartitionMismatch { .. }
    ));
    let mut tiny = options();
    tiny.worklist.wl_capacity = Some(1);
    let big = partition_graph(
        generated("road:side=16,p=0.9,seed=3"),
        2,
        PartitionMethod::Block,
        &NoProgress,
    )
    .unwrap();
    let err = bfs(&ctx, &big, 0, &tiny).unwrap_err();
    assert!(err.to_string().contains("--wl-capacity"), "{err}");
}

#[test]
fn cuda_queue_overflows_fail_naming_the_setting() {
    let Some(ctx) = groute_core::testing::cuda_context(2) else {
        return;
    };
    // The device worklist is at least 1024 items: a Kronecker frontier overflows it.
    let kron = partition_graph(
        generated("kron:scale=12,ef=16,sym,seed=4"),
        2,
        PartitionMethod::Block,
        &NoProgress,
    )
    .unwrap();
    let mut tiny = options();
    tiny.worklist.wl_capacity = Some(1);
    tiny.worklist.max_batch = 1 << 20;
    let err = bfs(&ctx, &kron, 0, &tiny).unwrap_err();
    assert!(err.to_string().contains("--wl-capacity"), "{err}");
    let mut tiny = options();
    tiny.worklist.send_capacity = Some(1);
    tiny.worklist.max_batch = 1 << 20;
    let err = bfs(&ctx, &kron, 0, &tiny).unwrap_err();
    assert!(err.to_string().contains("--send-capacity"), "{err}");
}

#[test]
fn stats_count_work_and_ring_traffic() {
    let g = generated("road:side=20,p=0.6,seed=9");
    let ctx = groute_core::Context::host(4).unwrap();
    let parted = partition_graph(g, 4, PartitionMethod::Block, &NoProgress).unwrap();
    let r = bfs(&ctx, &parted, 0, &options()).unwrap();
    assert!(r.stats.work_items >= r.reached() as u64);
    assert!(r.stats.items_sent > 0);
    assert!(r.stats.rounds > 0);
    assert_eq!(r.stats.worklist.devices.len(), 4);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: full_or_reduced(48, 6),
        ..ProptestConfig::default()
    })]
    #[test]
    fn random_small_graphs_match_the_reference(
        n in 1usize..40,
        raw in proptest::collection::vec((0u32..40, 0u32..40), 0..120),
        devices in 1usize..5,
        src in 0u32..40,
        seed in 0u64..1000,
    ) {
        let pairs: Vec<(u32, u32)> = raw.into_iter().map(|(a, b)| (a % n as u32, b % n as u32)).collect();
        let g = from_pairs(n, &pairs, "proptest");
        let devices = devices.min(n);
        let s = src % n as u32;
        let parted = partition_graph(g.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
        for tc in test_contexts(devices, &[seed]) {
            let got = bfs(&tc.context, &parted, s, &options()).unwrap();
            prop_assert_eq!(&got.levels, &bfs_reference(&g.csr, s));
        }
    }
}

#[test]
fn soft_priority_by_level_matches_the_reference_under_jitter() {
    let g = generated("road:side=24,p=0.6,seed=6");
    let expected = bfs_reference(&g.csr, 3);
    for devices in device_counts(&[1, 2, 4, 8]) {
        let parted =
            partition_graph(g.clone(), devices, PartitionMethod::Metis, &NoProgress).unwrap();
        for delta in [1, 4] {
            for tc in test_contexts(devices, &[21, 22]) {
                let mut o = options();
                o.worklist.prio_delta = Some(delta);
                let got = bfs(&tc.context, &parted, 3, &o).unwrap();
                let label = format!("{devices} devices, prio_delta {delta}, {}", tc.label);
                assert_eq!(got.levels, expected, "{label}");
                assert_eq!(got.stats.worklist.late_items, 0, "{label}");
                if delta == 1 && got.reached() > 1 {
                    // Bands of one level: level 1 is deferred at first, so it needs an epoch.
                    assert!(got.stats.epochs > 0, "{label}");
                }
            }
        }
    }
}
