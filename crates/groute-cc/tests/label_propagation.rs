//! Connected components as a worklist algorithm (`LabelPropagation`) on the min traversals'
//! executors (host backend, and the CUDA kernels of `kernels/cc/labels.cu` and
//! `labels_fused.cu` with `GROUTE_TEST_CUDA=1`): on random symmetric graphs, 1 to 4 devices,
//! random partitions, plain and jittered, the labels are union-find's, run after run on one
//! solver.

use std::time::Duration;

use groute_cc::{LabelPropagation, cc_reference};
use groute_core::testing::{scaled, test_contexts};
use groute_graph::testing::{from_random_pairs, partition_at_cuts};
use groute_worklist::WorklistOptions;
use groute_worklist::traversal::MinTraversalSolver;
use proptest::prelude::*;

fn options() -> WorklistOptions {
    WorklistOptions {
        time_limit: Some(scaled(Duration::from_secs(60))),
        packet_size: 16,
        max_batch: 32,
        ..WorklistOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn labels_are_union_finds(
        n in 1u32..150,
        pairs in prop::collection::vec((any::<u32>(), any::<u32>()), 0..220),
        devices in 1usize..5,
        cuts in prop::collection::vec(any::<u32>(), 3),
    ) {
        let csr = from_random_pairs(n, &pairs, true).csr;
        let partition = partition_at_cuts(n as usize, devices, &cuts);
        let expected = cc_reference(&csr);
        for tc in test_contexts(devices, &[11]) {
            let mut solver =
                MinTraversalSolver::new(&tc.context, LabelPropagation, &csr, &partition, &options())
                    .unwrap();
            for run in 0..2 {
                let out = solver.run(&[], &options()).unwrap();
                prop_assert_eq!(&out.values, &expected, "{} on {} devices, run {}", tc.label, devices, run);
            }
        }
    }
}
