//! The device-driven loop (`Driver::Fused`: one persistent kernel per device runs every round)
//! against the power-iteration reference, with the bounds of the crate docs: on one device and,
//! where the GPUs allow it (distinct physical GPUs with peer access), on two; on symmetric and
//! directed graphs, with dangling vertices, sources and hubs; every sweep divisor. The device
//! runs need `GROUTE_TEST_CUDA=1`; the host backend's persistent members and the refusal of
//! push sweeps run everywhere.
//!
//! Two devices: these tests in parallel threads reproduce the stalls that the start gate of
//! `groute_core::cuda::PeerGroup` prevents (issue #7).

mod common;

use std::time::Duration;

use common::{
    check_options, from_pairs, generated, options, two_peer_gpus, with_hubs, with_in_hubs,
};
use groute_core::Context;
use groute_core::testing::{full_or_reduced, pick};
use groute_graph::{Graph, NoProgress, PartitionMethod, partition_graph};
use groute_pagerank::{
    Driver, PageRankError, PageRankOptions, SPARSE_SWEEP_DIVISOR, SweepMode, pagerank,
};
use groute_worklist::WorklistError;

fn fused(epsilon: f32, sweep_divisor: u32) -> PageRankOptions {
    let mut o = PageRankOptions {
        driver: Driver::Fused,
        ..options(epsilon)
    };
    o.tuning.sweep_divisor = Some(sweep_divisor);
    o
}

/// Device counts the fused driver runs on here: 1, and 2 when two distinct GPUs with peer
/// access are present (`None`: CUDA not tested).
fn device_counts() -> Option<Vec<usize>> {
    let one = groute_core::testing::cuda_context(1)?;
    drop(one);
    let mut counts = vec![1];
    if two_peer_gpus().is_some() {
        counts.push(2);
    }
    Some(counts)
}

fn check_fused(g: &Graph, epsilon: f32, divisors: &[u32]) {
    check_fused_with(g, epsilon, divisors, |_| {});
}

/// [`check_fused`] with the options of each run changed by `tweak`.
fn check_fused_with(
    g: &Graph,
    epsilon: f32,
    divisors: &[u32],
    tweak: impl Fn(&mut PageRankOptions),
) {
    let Some(counts) = device_counts() else {
        return;
    };
    for &divisor in divisors {
        for &devices in &counts {
            let mut o = fused(epsilon, divisor);
            tweak(&mut o);
            check_options(g, devices, &o, &[]);
        }
    }
}

#[test]
fn fused_runs_on_symmetric_graphs_are_within_the_bound() {
    for spec in ["kron:scale=10,ef=8,sym,seed=3", "road:side=40,p=0.6,seed=5"] {
        check_fused(&generated(spec), 0.01, &[0, SPARSE_SWEEP_DIVISOR, u32::MAX]);
    }
}

#[test]
fn fused_runs_on_directed_graphs_are_within_the_bound() {
    let specs = ["random:n=600,m=1800,seed=7", "random:n=3000,m=15000,seed=4"];
    for spec in pick(specs, &[0]) {
        check_fused(
            &generated(spec),
            0.001,
            &[0, SPARSE_SWEEP_DIVISOR, u32::MAX],
        );
    }
}

#[test]
fn fused_runs_with_one_fence_per_round_are_within_the_bound() {
    // --fused-fence-per-round: the peer adds unfenced, one system fence per thread before the
    // exchange; on the graphs of the directed and hub tests.
    for g in pick([generated("random:n=600,m=1800,seed=7"), with_hubs()], &[0]) {
        check_fused_with(&g, 0.01, &[0, SPARSE_SWEEP_DIVISOR], |o| {
            o.tuning.fused_fence_per_round = true;
        });
    }
}

#[test]
fn fused_runs_held_to_more_blocks_per_sm_are_within_the_bound() {
    // --fused-blocks-per-sm 6 and 8: the entry points with capped registers (spills).
    for g in pick(
        [generated("random:n=3000,m=15000,seed=4"), with_hubs()],
        &[0],
    ) {
        for blocks in [6, 8] {
            check_fused_with(&g, 0.01, &[SPARSE_SWEEP_DIVISOR], |o| {
                o.tuning.fused_blocks_per_sm = blocks;
            });
        }
    }
}

#[test]
fn blocks_per_sm_other_than_0_6_8_are_refused_with_the_choices_named() {
    for blocks in [1, 5, 7, 16] {
        let mut o = fused(0.01, SPARSE_SWEEP_DIVISOR);
        o.tuning.fused_blocks_per_sm = blocks;
        let e = o.validate().unwrap_err().to_string();
        assert!(
            e.contains("--fused-blocks-per-sm") && e.contains("6 or 8"),
            "{e}"
        );
    }
    for blocks in [0, 6, 8] {
        let mut o = fused(0.01, SPARSE_SWEEP_DIVISOR);
        o.tuning.fused_blocks_per_sm = blocks;
        o.validate().expect("a valid choice");
    }
}

#[test]
fn fused_runs_with_dangling_vertices_sources_and_self_loops() {
    // 0 -> 1 -> 2 -> 0 cycle, 3 dangling, 4 a pure source with a self-loop, 5 isolated.
    let pairs = [(0, 1), (1, 2), (2, 0), (1, 3), (4, 4), (4, 0), (4, 3)];
    let g = from_pairs(6, &pairs, "dangling+loops");
    for eps in [1e-4, 0.01] {
        check_fused(&g, eps, &[SPARSE_SWEEP_DIVISOR, u32::MAX]);
    }
}

#[test]
fn fused_runs_with_out_and_in_hubs_are_within_the_bound() {
    check_fused(&with_hubs(), 0.01, &[0, SPARSE_SWEEP_DIVISOR]);
    check_fused(&with_in_hubs(), 0.01, &[SPARSE_SWEEP_DIVISOR]);
}

#[test]
fn the_fused_driver_on_the_host_backend_runs_its_persistent_members() {
    let g = generated("road:side=8,p=0.7,seed=1");
    let parted = partition_graph(g, 2, PartitionMethod::Block, &NoProgress).unwrap();
    let ctx = Context::host(2).unwrap();
    let run = pagerank(&ctx, &parted, &fused(0.01, SPARSE_SWEEP_DIVISOR)).unwrap();
    assert_eq!(run.stats.driver, Driver::Fused);
    assert!(run.stats.worklist.device_driven, "{:?}", run.stats.worklist);
    // Auto runs host-driven there, and says so.
    let o = PageRankOptions {
        driver: Driver::Auto,
        ..options(0.01)
    };
    let run = pagerank(&ctx, &parted, &o).unwrap();
    assert_eq!(run.stats.driver, Driver::Host);
    assert!(!run.stats.worklist.device_driven);
}

#[test]
fn fused_with_push_sweeps_is_an_error_and_auto_falls_back() {
    let Some(ctx) = groute_core::testing::cuda_context(1) else {
        return;
    };
    let g = generated("road:side=16,p=0.7,seed=2");
    let parted = partition_graph(g, 1, PartitionMethod::Block, &NoProgress).unwrap();
    let mut push = fused(0.01, SPARSE_SWEEP_DIVISOR);
    push.tuning.sweep = SweepMode::Push;
    let e = pagerank(&ctx, &parted, &push).unwrap_err();
    assert!(e.to_string().contains("--sweep pull"), "{e}");
    let auto = PageRankOptions {
        driver: Driver::Auto,
        ..push
    };
    assert_eq!(
        pagerank(&ctx, &parted, &auto).unwrap().stats.driver,
        Driver::Host
    );
    // Pull sweeps on one device (no cut): Auto runs device-driven.
    let auto_pull = PageRankOptions {
        driver: Driver::Auto,
        ..options(0.01)
    };
    assert_eq!(
        pagerank(&ctx, &parted, &auto_pull).unwrap().stats.driver,
        Driver::Fused
    );
}

#[test]
fn auto_picks_by_the_cut_on_two_gpus() {
    let Some(ctx) = two_peer_gpus() else {
        return;
    };
    let auto = PageRankOptions {
        driver: Driver::Auto,
        ..options(0.01)
    };
    // A road grid cut once in the middle (well under 1% of its arcs) runs device-driven, a
    // kron graph (about half its arcs cut by a block partition) in synchronous sweeps; both
    // within the bound.
    for spec in [
        "road:side=200,p=0.6,seed=2",
        "kron:scale=10,ef=8,sym,seed=3",
    ] {
        let g = generated(spec);
        let parted = partition_graph(g.clone(), 2, PartitionMethod::Block, &NoProgress).unwrap();
        let got = pagerank(&ctx, &parted, &auto).unwrap();
        let expected = if spec.starts_with("road") {
            Driver::Fused
        } else {
            Driver::Sweeps
        };
        assert_eq!(got.stats.driver, expected, "{spec}");
        assert_eq!(expected, common::auto_on_several_devices(&parted), "{spec}");
        check_options(&g, 2, &auto, &[]);
    }
}

#[test]
fn a_fused_run_past_its_time_limit_is_a_timeout_error() {
    let Some(counts) = device_counts() else {
        return;
    };
    let g = generated(full_or_reduced(
        "road:side=64,p=0.6,seed=8",
        "road:side=32,p=0.6,seed=8",
    ));
    for devices in counts {
        let ctx = groute_core::testing::cuda_context(devices).unwrap();
        let parted =
            partition_graph(g.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
        let mut o = fused(1e-5, SPARSE_SWEEP_DIVISOR);
        o.worklist.time_limit = Some(Duration::ZERO);
        match pagerank(&ctx, &parted, &o) {
            Err(PageRankError::Worklist(WorklistError::TimedOut { .. })) => {}
            other => panic!("{devices} devices: expected a time-limit error, got {other:?}"),
        }
        // The solver's next run is not affected.
        o.worklist.time_limit = Some(groute_core::testing::scaled(Duration::from_secs(60)));
        let ok = pagerank(&ctx, &parted, &o).unwrap();
        assert_eq!(ok.stats.driver, Driver::Fused);
    }
}

#[test]
fn repeated_fused_runs_reset_the_halos_inboxes_and_mailbox() {
    let Some(counts) = device_counts() else {
        return;
    };
    let g = generated("road:side=48,p=0.6,seed=3");
    let n = g.num_vertices();
    let o = fused(0.001, SPARSE_SWEEP_DIVISOR);
    let alpha = f64::from(o.alpha);
    let exact = groute_pagerank::pagerank_reference(&g.csr, alpha);
    let norm: f64 = exact.ranks.iter().sum();
    for devices in counts {
        let ctx = groute_core::testing::cuda_context(devices).unwrap();
        let parted =
            partition_graph(g.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
        let mut solver = groute_pagerank::PageRankSolver::new(&ctx, &parted, &o).unwrap();
        for run in 0..full_or_reduced(3, 2) {
            let got = solver.run().unwrap();
            let err = common::l1_distance(&got.ranks, &exact.ranks);
            let bound = got.stats.residual_left / (1.0 - alpha) + 1e-4 * norm;
            assert!(
                err <= bound,
                "{devices} devices, run {run}: L1 error {err} > {bound}"
            );
            assert!(
                got.stats.work_items >= n as u64,
                "run {run}: the first sweep"
            );
            assert_eq!(got.stats.driver, Driver::Fused);
            common::check_fused_profiles(&got.stats, &format!("{devices} devices, run {run}"));
        }
    }
}
