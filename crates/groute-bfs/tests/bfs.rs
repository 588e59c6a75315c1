//! BFS equals the sequential reference on shipped and generated graphs, on 1, 2, 3, 4 and 8
//! devices, block and METIS partitions, plain and jittered host contexts: the bodies of
//! `groute_worklist::testing::host`, shared with SSSP, run with [`BfsUnderTest`].
//!
//! With `GROUTE_TEST_REDUCED=1` (`groute_core::testing::reduced`) each check runs one source
//! on block partitions, on 1 to 3 devices, with the small shipped METIS graph and the tiny
//! weighted one (the mesh left to full runs), and the random graphs are fewer.

mod common;

use groute_bfs::{BfsError, bfs};
use groute_core::testing::full_or_reduced;
use groute_graph::testing::{
    directed_path, from_pairs, from_random_pairs, generated, self_loops, small_of_each_family,
};
use groute_graph::{NoProgress, PartitionMethod, partition_graph};
use groute_worklist::testing::host::{self, JitterSweep};
use groute_worklist::testing::host_options;
use groute_worklist::traversal::FusedMode;
use proptest::prelude::*;

use common::BfsUnderTest;

#[test]
fn generated_graphs_match_the_reference_on_1_to_8_devices() {
    host::generated_graphs_match_on_1_to_8_devices::<BfsUnderTest>(&small_of_each_family());
}

#[test]
fn special_shapes_match_the_reference() {
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
    host::shapes_match_on_every_device_count::<BfsUnderTest>(&[
        (&from_pairs(1, &[], "single vertex"), &[0], 1),
        (&from_pairs(1, &[(0, 0)], "single self-loop"), &[0], 1),
        (&disconnected, &[0, 5, 8, 9], 3),
        (&self_loops(), &[0, 3], 4),
        (&directed_path(200, "directed path"), &[0, 150], 5),
    ]);
}

#[test]
fn shipped_graphs_match_the_reference() {
    host::shipped_graphs_match::<BfsUnderTest>(&[1, 2, 4]);
}

#[test]
fn bad_inputs_are_clear_errors() {
    host::bad_inputs_are_clear_errors::<BfsUnderTest>(
        &generated("random:n=50,m=100,seed=1"),
        &generated("road:side=16,p=0.9,seed=3"),
    );
    assert_eq!(
        BfsError::EmptyGraph.to_string(),
        "the graph is empty: BFS needs at least one vertex"
    );
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
    let mut tiny = host_options::<BfsUnderTest>();
    tiny.worklist.wl_capacity = Some(1);
    tiny.worklist.max_batch = 1 << 20;
    let err = bfs(&ctx, &kron, 0, &tiny).unwrap_err();
    assert!(err.to_string().contains("--wl-capacity"), "{err}");
    let mut tiny = host_options::<BfsUnderTest>();
    tiny.worklist.send_capacity = Some(1);
    tiny.worklist.max_batch = 1 << 20;
    let err = bfs(&ctx, &kron, 0, &tiny).unwrap_err();
    assert!(err.to_string().contains("--send-capacity"), "{err}");
}

#[test]
fn stats_count_work_and_ring_traffic() {
    host::stats_count_work_and_ring_traffic::<BfsUnderTest>(&generated(
        "road:side=20,p=0.6,seed=9",
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(full_or_reduced(48, 6)))]
    #[test]
    fn random_small_graphs_match_the_reference(
        n in 1usize..40,
        raw in proptest::collection::vec((0u32..40, 0u32..40), 0..120),
        devices in 1usize..5,
        src in 0u32..40,
        seed in 0u64..1000,
    ) {
        let g = from_random_pairs(n as u32, &raw, false);
        host::random_graph_matches::<BfsUnderTest>(&g, devices.min(n), src % n as u32, seed, None);
    }
}

/// Bands of one and four levels on 1, 2, 4 and 8 devices (on reduced inputs on 1 and 2, over a
/// grid a quarter the size, 17 levels deep from the source): with bands of one level, level 1
/// is deferred at first, so the run needs an epoch.
#[test]
fn soft_priority_by_level_matches_the_reference_under_jitter() {
    let g = generated(full_or_reduced(
        "road:side=24,p=0.6,seed=6",
        "road:side=12,p=0.6,seed=6",
    ));
    host::soft_priority_matches_under_jitter::<BfsUnderTest>(&JitterSweep {
        graph: &g,
        source: 3,
        devices: &[1, 2, 4, 8],
        prios: &[Some(1), Some(4)],
        one_device_modes: &[FusedMode::Auto],
        jitter: &[21, 22],
    });
}
