//! [`CcSolver`] stages the graph once; repeated runs give the reference labels every time
//! (host, jittered host, CUDA with `GROUTE_TEST_CUDA=1`).

use groute_cc::{CcOptions, CcSolver, cc_reference};
use groute_core::testing::test_contexts;
use groute_graph::{GenSpec, NoProgress, generate};

#[test]
fn repeated_runs_give_the_reference_labels() {
    for spec in ["kron:scale=9,ef=4,sym,seed=2", "road:side=24,p=0.5,seed=9"] {
        let graph = generate(&spec.parse::<GenSpec>().unwrap(), &NoProgress).unwrap();
        let expected = cc_reference(&graph.csr);
        for devices in [1, 2, 4] {
            for tc in test_contexts(devices, &[5]) {
                let opts = CcOptions::default().with_chunk_edges(256);
                let mut solver = CcSolver::new(&tc.context, &graph, &opts).unwrap();
                for run in 0..3 {
                    let got = solver.run().unwrap();
                    assert_eq!(
                        got.labels, expected,
                        "{spec} on {devices} devices ({}), run {run}",
                        tc.label
                    );
                    assert_eq!(
                        got.stats.edges_per_device.iter().sum::<u64>(),
                        solver.staged().num_edges() as u64
                    );
                }
            }
        }
    }
}
