//! Connected components as a worklist algorithm (`LabelPropagation`) on the worklist's host
//! executor: on random symmetric graphs, 1 to 4 devices, random partitions, plain and
//! jittered, the labels are union-find's.

use std::time::Duration;

use groute_cc::{LabelPropagation, cc_reference};
use groute_core::testing::{scaled, test_contexts};
use groute_core::{BackendKind, Error};
use groute_graph::{CsrBuilder, EdgeList, Partition};
use groute_worklist::algorithm::HostSolver;
use groute_worklist::{WorklistError, WorklistOptions};
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
        let pairs: Vec<(u32, u32)> = pairs.iter().map(|&(a, b)| (a % n, b % n)).collect();
        let csr = CsrBuilder::new(n as usize)
            .symmetrize(true)
            .build(&EdgeList::from_pairs(&pairs))
            .unwrap();
        let mut bounds: Vec<u32> = cuts.iter().take(devices - 1).map(|c| c % (n + 1)).collect();
        bounds.sort_unstable();
        bounds.insert(0, 0);
        bounds.push(n);
        let partition = Partition::from_bounds(bounds).unwrap();
        for tc in test_contexts(devices, &[11]) {
            let solver = HostSolver::new(&tc.context, LabelPropagation, &csr, &partition, &options());
            if tc.context.backend_kind() == BackendKind::Cuda {
                // The worklist's CUDA executors run min traversals from sources.
                let refused = matches!(solver, Err(WorklistError::Runtime(Error::Unsupported { .. })));
                prop_assert!(refused, "{}", tc.label);
                continue;
            }
            let out = solver.and_then(|mut s| s.run(&[], &options())).unwrap();
            prop_assert_eq!(&out.values, &cc_reference(&csr), "{} on {} devices", tc.label, devices);
        }
    }
}
