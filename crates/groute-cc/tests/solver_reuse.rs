//! [`CcSolver`] stages the graph once; repeated runs give the reference labels every time
//! (host, jittered host, CUDA with `GROUTE_TEST_CUDA=1`).

use groute_cc::{CcOptions, CcSolver, CcStorage, cc_reference};
use groute_core::testing::test_contexts;
use groute_graph::testing::generated;

#[test]
fn repeated_runs_give_the_reference_labels() {
    for spec in ["kron:scale=9,ef=4,sym,seed=2", "road:side=24,p=0.5,seed=9"] {
        let graph = generated(spec);
        let expected = cc_reference(&graph.csr);
        for devices in [1, 2, 4] {
            for tc in test_contexts(devices, &[5]) {
                for storage in [CcStorage::DeviceRows, CcStorage::HostStream] {
                    let opts = CcOptions::default()
                        .with_chunk_edges(256)
                        .with_storage(storage);
                    let mut solver = CcSolver::new(&tc.context, &graph, &opts).unwrap();
                    for run in 0..3 {
                        let got = solver.run().unwrap();
                        assert_eq!(
                            got.labels, expected,
                            "{spec} on {devices} devices ({}, {storage:?}), run {run}",
                            tc.label
                        );
                        if let Some(staged) = solver.staged() {
                            assert_eq!(
                                got.stats.edges_per_device.iter().sum::<u64>(),
                                staged.num_edges() as u64
                            );
                        }
                    }
                }
            }
        }
    }
}

/// A run leaves nothing behind on the devices: eight runs hold at most one run's worth of
/// device memory more than the first (each run's buffers are released once its kernels have
/// completed, with no synchronisation in between: a CUDA stream that only launches kernels
/// once kept every run's chunk buffers alive, seven runs' worth after eight). A run may take
/// a fresh pool block while the previous run's is still being released (under load), so
/// the bound is one run's allocations, not zero.
#[test]
fn repeated_runs_hold_no_more_than_one_more_runs_device_memory() {
    let graph = generated("kron:scale=10,ef=8,sym,seed=3");
    for devices in [1, 2] {
        for tc in test_contexts(devices, &[]) {
            let opts = CcOptions::default().with_chunk_edges(512);
            let mut solver = CcSolver::new(&tc.context, &graph, &opts).unwrap();
            let held = || -> Vec<u64> {
                tc.context
                    .devices()
                    .iter()
                    .map(|d| d.memory_usage().current_bytes)
                    .collect()
            };
            let staged = held();
            solver.run().unwrap();
            let first = held();
            for _ in 1..8 {
                solver.run().unwrap();
            }
            let last = held();
            for d in 0..devices {
                let one_run = first[d].saturating_sub(staged[d]);
                assert!(
                    last[d] <= first[d] + one_run,
                    "{devices} devices ({}), device {d}: {} B held after 8 runs, {} B after \
                     the first, {} B staged before it",
                    tc.label,
                    last[d],
                    first[d],
                    staged[d]
                );
            }
        }
    }
}
