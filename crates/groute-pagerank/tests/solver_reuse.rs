//! [`PageRankSolver`] keeps the graph on the devices across runs: every run starts from the
//! initial residuals, so repeated runs stay within the error bound of the reference and
//! agree with the one-shot [`pagerank`] (host, jittered host, CUDA with `GROUTE_TEST_CUDA=1`).

use std::time::Duration;

use groute_core::testing::{combinations, test_contexts};
use groute_graph::testing::generated;
use groute_graph::{NoProgress, PartitionMethod, partition_graph};
use groute_pagerank::{PageRankOptions, PageRankSolver, SweepMode, pagerank, pagerank_reference};

fn options() -> PageRankOptions {
    let mut o = PageRankOptions {
        epsilon: 0.001,
        ..PageRankOptions::default()
    };
    o.worklist.time_limit = Some(groute_core::testing::scaled(Duration::from_secs(60)));
    o.worklist.packet_size = 64;
    o.worklist.max_batch = 256;
    o
}

fn l1(a: &[f32], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (f64::from(*x) - y).abs())
        .sum()
}

#[test]
fn repeated_runs_reset_the_residuals_and_stay_within_the_bound() {
    let push = options();
    let mut pull = options();
    pull.tuning.sweep = SweepMode::Pull;
    // CUDA: receives settled by the next round's read-back (several devices exchange).
    let mut lazy_receive = options();
    lazy_receive.tuning.lazy_receive = true;
    let configurations = [push, pull, lazy_receive];
    let specs = ["kron:scale=8,ef=8,sym,seed=7", "road:side=20,p=0.6,seed=2"];
    let device_counts = [3, 1];
    // Every combination; on reduced inputs each configuration once, the lazy receive on
    // several devices.
    for [oi, gi, di] in combinations([configurations.len(), specs.len(), device_counts.len()]) {
        repeated_runs_with(&configurations[oi], specs[gi], device_counts[di]);
    }
}

fn repeated_runs_with(o: &PageRankOptions, spec: &str, devices: usize) {
    let alpha = f64::from(o.alpha);
    let graph = generated(spec);
    let n = graph.num_vertices();
    let exact = pagerank_reference(&graph.csr, alpha);
    let norm: f64 = exact.ranks.iter().sum();
    let parted = partition_graph(graph, devices, PartitionMethod::Metis, &NoProgress).unwrap();
    for tc in test_contexts(devices, &[11]) {
        let what = format!(
            "{spec} on {devices} devices ({}, {} sweeps, lazy receive {})",
            tc.label, o.tuning.sweep, o.tuning.lazy_receive
        );
        let mut solver = PageRankSolver::new(&tc.context, &parted, o).unwrap();
        let one_shot = pagerank(&tc.context, &parted, o).unwrap();
        let mut sums = Vec::new();
        for run in 0..groute_core::testing::full_or_reduced(3, 2) {
            let got = solver.run().unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(got.ranks.len(), n, "{what}");
            let bound = got.stats.residual_left / (1.0 - alpha) + 1e-4 * norm;
            let err = l1(&got.ranks, &exact.ranks);
            assert!(err <= bound, "{what}, run {run}: L1 error {err} > {bound}");
            assert!(got.stats.work_items >= n as u64, "{what}: first sweep");
            sums.push(got.rank_sum());
        }
        // A run that did not reset would start from the previous ranks and end with about
        // twice their sum; asynchronous runs differ only within the bound.
        let slack = n as f64 * f64::from(o.epsilon) / (1.0 - alpha) + 1e-4 * norm;
        for s in &sums {
            assert!(
                (s - one_shot.rank_sum()).abs() <= slack,
                "{what}: rank sums {sums:?} vs one-shot {}",
                one_shot.rank_sum()
            );
        }
    }
}

#[test]
fn the_solver_rejects_what_the_one_shot_form_rejects() {
    let graph = generated("road:side=6,p=0.6");
    let parted = partition_graph(graph, 2, PartitionMethod::Block, &NoProgress).unwrap();
    let ctx = groute_core::Context::host(3).unwrap();
    let err = PageRankSolver::new(&ctx, &parted, &options()).unwrap_err();
    assert!(err.to_string().contains("partition it into 3"), "{err}");
    let bad = PageRankOptions {
        alpha: 1.0,
        ..options()
    };
    let ctx = groute_core::Context::host(2).unwrap();
    let err = PageRankSolver::new(&ctx, &parted, &bad).unwrap_err();
    assert!(err.to_string().contains("--alpha"), "{err}");
}
