//! PageRank across ranks ([`PageRankRanks`] over [`CommCollectives`]), the ranks as threads
//! of this process ([`LocalRanks`], jittered) on the host backend: on 1 to 4 ranks of 1 or 2
//! devices, over generated and random graphs and uneven partitions, every rank's ranks are
//! the same, never above the reference (power iteration in f64) beyond rounding, and within
//! the a-posteriori bound of the residual left, on every run of one solver; ranks holding
//! only their rows of a cache give the same; a directed graph held whole is ranked, and
//! refused, naming the fix, where ranks hold only their rows; ranks given different graphs
//! or thresholds are refused on every rank; a device that crashes mid-run ends every rank
//! with an error.

use groute_graph::testing::{generated, partition_at_cuts};
use groute_graph::{Csr, Graph, HeldRows, Partition};
use groute_pagerank::{
    PageRank, PageRankRanks, PageRankRanksResult, PageRankTuning, pagerank_reference,
};
use groute_worklist::RankCollectives;
use proptest::prelude::*;

mod support;

use support::graphs::{
    directed_in_four_parts, directed_rows_of, for_each_generated_shape, in_blocks, random_graph,
    seeded_cuts,
};
use support::rank_rows::RankRows;
use support::solve_on_ranks::JitteredRanks;

/// This file's ranks, jittered by seeds of its own.
const RANKS: JitteredRanks = JitteredRanks::new(3, 7);

const PAGERANK: PageRank = PageRank {
    alpha: 0.85,
    epsilon: 1e-4,
};

/// Every rank's `runs` runs over the rows `rows_of(rank)` holds, in the input order.
fn run_ranks<'g>(
    rows_of: impl Fn(usize) -> HeldRows<'g> + Sync,
    partition: &Partition,
    (ranks, devices): (usize, usize),
    algorithm: impl Fn(usize) -> PageRank + Sync,
    runs: usize,
) -> Vec<Result<Vec<PageRankRanksResult>, String>> {
    let auto = Tuned::default();
    run_ranks_in(rows_of, partition, (ranks, devices), algorithm, runs, &auto)
}

/// What [`run_ranks_in`] asks of the solvers' tuning.
#[derive(Default)]
struct Tuned {
    /// The degree order (`Some(asked)`: every solver must hold the order asked for; `None`:
    /// the rule's, which on CUDA may order a skewed graph).
    degree_order: Option<bool>,
    /// Rank `r`'s vertex ranges per device (`None`: whole-graph rounds, as Auto's across
    /// processes).
    ranges: Option<fn(usize) -> Option<u32>>,
}

/// [`run_ranks`] with the tuning `tuned` asks for.
fn run_ranks_in<'g>(
    rows_of: impl Fn(usize) -> HeldRows<'g> + Sync,
    partition: &Partition,
    shape: (usize, usize),
    algorithm: impl Fn(usize) -> PageRank + Sync,
    runs: usize,
    tuned: &Tuned,
) -> Vec<Result<Vec<PageRankRanksResult>, String>> {
    let degree_order = tuned.degree_order;
    RANKS.solve_on_every_rank(rows_of, partition, shape, |ctx, held, collectives| {
        let rank = collectives.rank();
        let tuning = PageRankTuning {
            degree_order,
            sweep_ranges: tuned.ranges.and_then(|of| of(rank)),
            // A rank alone would push the rounds that take few arcs, whose atomics add in no
            // fixed order: every round gathers, so that every run gives the same ranks
            // (`check_runs`). The push rounds are checked against the bound in
            // groute-pagerank's `tests/pull_sweep.rs`.
            sweep_push_divisor: Some(0),
            ..PageRankTuning::default()
        };
        let mut solver =
            PageRankRanks::with_tuning(ctx, held, algorithm(rank), &tuning, collectives)
                .map_err(|e| e.to_string())?;
        if degree_order.is_some_and(|asked| solver.degree_ordered() != asked) {
            return Err(format!("degree order {}", solver.degree_ordered()));
        }
        (0..runs)
            .map(|_| solver.run(collectives).map_err(|e| e.to_string()))
            .collect()
    })
}

/// Checks every rank's runs against the reference on `csr`: the same ranks and counts on
/// every rank and run, no rank above the exact one beyond f32 rounding, the L1 error within
/// the a-posteriori bound (`residual_left / (1 - alpha)`) plus rounding, and the residual
/// left within the a-priori `n * epsilon`.
fn check_runs(csr: &Csr, outs: Vec<Result<Vec<PageRankRanksResult>, String>>, label: &str) {
    let exact = pagerank_reference(csr, f64::from(PAGERANK.alpha));
    let norm: f64 = exact.ranks.iter().sum();
    let outs = support::expect_ok_on_every_rank(outs, label);
    let first = &outs[0][0];
    assert!(first.stats.rounds >= 1, "{label}");
    let n = csr.num_vertices() as f64;
    let alpha = f64::from(PAGERANK.alpha);
    let s = &first.stats;
    assert!(
        s.residual_left >= 0.0 && s.residual_left <= n * f64::from(PAGERANK.epsilon),
        "{label}: residual left {} of {n} vertices",
        s.residual_left
    );
    assert!(
        s.pushes >= csr.num_vertices() as u64,
        "{label}: {} pushes",
        s.pushes
    );
    let rounding = 1e-4 * norm;
    let l1: f64 = first
        .ranks
        .iter()
        .zip(&exact.ranks)
        .map(|(&a, &b)| (f64::from(a) - b).abs())
        .sum();
    let bound = s.residual_left / (1.0 - alpha) + exact.error_bound + rounding;
    assert!(l1 <= bound, "{label}: L1 error {l1} above {bound}");
    for (v, (&a, &b)) in first.ranks.iter().zip(&exact.ranks).enumerate() {
        assert!(
            f64::from(a) <= b * (1.0 + 1e-4) + exact.error_bound,
            "{label}: vertex {v}: rank {a} above the exact {b}"
        );
    }
    for (r, i, run) in support::runs_of_every_rank(&outs) {
        assert_eq!(run.ranks, first.ranks, "{label}: rank {r}, run {i}");
        assert_eq!(run.stats.rounds, s.rounds, "{label}: rank {r}, run {i}");
        assert_eq!(run.stats.pushes, s.pushes, "{label}: rank {r}, run {i}");
        assert_eq!(
            run.stats.residual_left, s.residual_left,
            "{label}: rank {r}, run {i}"
        );
    }
}

#[test]
fn generated_graphs_match_the_reference_on_every_rank() {
    let specs = [
        "kron:scale=11,ef=8,sym,seed=3",
        "road:side=24,p=0.6,seed=5",
        "er:n=1500,m=6000,seed=8",
    ];
    let shapes = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (4, 1)];
    for_each_generated_shape(&specs, &shapes, |csr, partition, shape, label| {
        let outs = run_ranks(|_| HeldRows::whole(csr), partition, shape, |_| PAGERANK, 2);
        check_runs(csr, outs, label);
    });
}

/// Rounds by 3 vertex ranges per device across ranks (each step's boundary shares
/// all-gathered before the next step), in the input order and in degree order, held whole
/// or as rows of a cache: every round goes by ranges (the ranks never leave them: no sparse
/// gathers on the host backend, no push rounds across ranks), and the ranks match the
/// reference as the whole-graph rounds' do.
#[test]
fn ranks_by_vertex_ranges_match_the_reference() {
    let specs = ["kron:scale=11,ef=8,sym,seed=3", "road:side=24,p=0.6,seed=5"];
    let shapes = [(1, 2), (2, 1), (2, 2), (3, 1), (3, 2)];
    let check = |csr: &Csr, outs: Vec<Result<Vec<PageRankRanksResult>, String>>, label: &str| {
        for run in outs.iter().flatten().flatten() {
            let s = &run.stats;
            assert!(
                s.rounds > 1 && s.ranged_rounds == s.rounds,
                "{label}: {s:?}"
            );
        }
        check_runs(csr, outs, label);
    };
    for degree_order in [Some(false), Some(true)] {
        let tuned = Tuned {
            degree_order,
            ranges: Some(|_| Some(3)),
        };
        for_each_generated_shape(&specs, &shapes, |csr, partition, shape, label| {
            let whole = |_| HeldRows::whole(csr);
            let outs = run_ranks_in(whole, partition, shape, |_| PAGERANK, 2, &tuned);
            check(
                csr,
                outs,
                &format!("{label}, 3 ranges, order {degree_order:?}"),
            );
        });
    }
    let g = generated("kron:scale=10,ef=12,sym,seed=9");
    let tuned = Tuned {
        degree_order: Some(true),
        ranges: Some(|_| Some(4)),
    };
    let outs = run_own_rows(&g, "pagerank-rows-ranges", &tuned);
    check(&g.csr, outs, "own rows, 4 ranges");
}

/// One run on 3 ranks of 2 devices, each rank holding only its rows of a symmetric cache of
/// `g` (made under `name`), loaded from the file.
fn run_own_rows(
    g: &Graph,
    name: &str,
    tuned: &Tuned,
) -> Vec<Result<Vec<PageRankRanksResult>, String>> {
    let shape = (3, 2);
    let held = RankRows::new(g, shape, name);
    run_ranks_in(
        |r| held.rows(r),
        &held.partition,
        shape,
        |_| PAGERANK,
        1,
        tuned,
    )
}

/// Ranks that hold only their rows of a symmetric cache, each loaded from the file.
#[test]
fn ranks_holding_only_their_rows_match_the_reference() {
    let g = generated("kron:scale=10,ef=12,sym,seed=9");
    let outs = run_own_rows(&g, "pagerank-rows", &Tuned::default());
    check_runs(&g.csr, outs, "own rows");
}

/// The degree order asked for, on ranks holding the whole graph (symmetric or directed) or
/// only their rows of a cache: the ranks come back in the input order, as the reference
/// gives them.
#[test]
fn degree_ordered_ranks_match_the_reference_in_the_input_order() {
    let g = generated("kron:scale=10,ef=12,sym,seed=5");
    let ordered = Tuned {
        degree_order: Some(true),
        ..Tuned::default()
    };
    for (ranks, devices) in [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1)] {
        let partition = in_blocks(&g.csr, ranks * devices);
        let outs = run_ranks_in(
            |_| HeldRows::whole(&g.csr),
            &partition,
            (ranks, devices),
            |_| PAGERANK,
            2,
            &ordered,
        );
        check_runs(
            &g.csr,
            outs,
            &format!("degree order, whole, {ranks}x{devices}"),
        );
    }
    let outs = run_own_rows(&g, "pagerank-rows-ordered", &ordered);
    check_runs(&g.csr, outs, "degree order, own rows");
    let (csr, partition) = directed_in_four_parts(2400);
    let outs = run_ranks_in(
        |_| HeldRows::whole(&csr),
        &partition,
        (2, 2),
        |_| PAGERANK,
        1,
        &ordered,
    );
    check_runs(&csr, outs, "degree order, directed, whole");
}

#[test]
fn a_directed_graph_is_ranked_when_held_whole_and_refused_when_only_rows_are() {
    let (csr, partition) = directed_in_four_parts(2400);
    let whole = |_| HeldRows::whole(&csr);
    let outs = run_ranks(whole, &partition, (2, 2), |_| PAGERANK, 1);
    check_runs(&csr, outs, "directed, whole");
    let own_rows = directed_rows_of(&csr, &partition, 2);
    let outs = run_ranks(own_rows, &partition, (2, 2), |_| PAGERANK, 1);
    support::expect_refused_on_every_rank(outs, &["symmetric graph", "whole graph"]);
}

/// Three ranks given graphs of 100, 200 and 300 vertices: every rank refuses
/// ([`support::expect_different_graphs_refused_on_every_rank`]).
#[test]
fn ranks_given_different_graphs_are_refused_on_every_rank() {
    support::expect_different_graphs_refused_on_every_rank(|ctx, held, collectives| {
        PageRankRanks::new(ctx, held, PAGERANK, collectives)
            .err()
            .map(|e| e.to_string())
    });
}

/// One rank with another epsilon, or an alpha out of range on one rank: every rank refuses,
/// the odd one saying what is wrong.
#[test]
fn ranks_given_different_or_invalid_settings_are_refused_on_every_rank() {
    let csr = random_graph(300, 900, 2, true);
    let partition = partition_at_cuts(300, 3, &[100, 200]);
    let odd_epsilon = |r: usize| PageRank {
        epsilon: if r == 2 { 1e-3 } else { PAGERANK.epsilon },
        ..PAGERANK
    };
    let outs = run_ranks(
        |_| HeldRows::whole(&csr),
        &partition,
        (3, 1),
        odd_epsilon,
        1,
    );
    let errors: Vec<String> = outs.into_iter().map(|o| o.expect_err("refused")).collect();
    assert!(errors.iter().all(|e| e.contains("processes")), "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("epsilon")), "{errors:?}");
    let bad_alpha = |r: usize| PageRank {
        alpha: if r == 1 { 1.5 } else { PAGERANK.alpha },
        ..PAGERANK
    };
    let outs = run_ranks(|_| HeldRows::whole(&csr), &partition, (3, 1), bad_alpha, 1);
    let errors: Vec<String> = outs.into_iter().map(|o| o.expect_err("refused")).collect();
    assert!(errors[1].contains("alpha"), "{errors:?}");
    assert!(
        errors[0].contains("processes") && errors[2].contains("processes"),
        "{errors:?}"
    );
    // Rounds by vertex ranges step together on every rank: one asking for other ranges is
    // refused.
    let odd_ranges = Tuned {
        ranges: Some(|r| Some(if r == 1 { 2 } else { 3 })),
        ..Tuned::default()
    };
    let whole = |_| HeldRows::whole(&csr);
    let outs = run_ranks_in(whole, &partition, (3, 1), |_| PAGERANK, 1, &odd_ranges);
    let errors: Vec<String> = outs.into_iter().map(|o| o.expect_err("refused")).collect();
    assert!(
        errors.iter().all(|e| e.contains("vertex ranges")),
        "{errors:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Random graphs (symmetric or directed, with dangling vertices), cuts, and rank and
    /// device counts.
    #[test]
    fn random_runs_match_the_reference(
        n in 1u32..400,
        density in 0u32..6,
        seed in any::<u64>(),
        symmetric in any::<bool>(),
        ranks in 1usize..=3,
        devices in 1usize..=2,
        cut_seed in any::<u64>(),
        by_ranges in any::<bool>(),
    ) {
        let csr = random_graph(n, n * density + 1, seed, symmetric);
        let (cuts, partition) = seeded_cuts(n, ranks * devices, cut_seed);
        // Whole-graph rounds, or 3 vertex ranges per device.
        let tuned = Tuned {
            ranges: by_ranges.then_some((|_| Some(3)) as fn(usize) -> Option<u32>),
            ..Tuned::default()
        };
        let outs = run_ranks_in(
            |_| HeldRows::whole(&csr),
            &partition,
            (ranks, devices),
            |_| PAGERANK,
            1,
            &tuned,
        );
        let label = format!("n {n} {ranks}x{devices} cuts {cuts:?} ranges {by_ranges}");
        check_runs(&csr, outs, &label);
    }
}

/// A device that crashes (rank 1's last device, after some of its stream operations: while
/// the solver is made, or in one of its runs) ends the solver or the run with an error on
/// every rank (or, past the ops of the runs, never fires), none left waiting in a
/// collective: 2 and 3 ranks of one device, 2 ranks of two.
#[test]
fn a_device_crash_mid_run_ends_every_rank_with_an_error() {
    let faults = [1, 5, 10, 20, 40, 80, 160, 320];
    for ranges in [None, Some(3)] {
        // Rounds by vertex ranges all-gather once a step: a rank that fails mid-round still
        // takes part in the rest of the round's gathers.
        let tuning = PageRankTuning {
            sweep_ranges: ranges,
            ..PageRankTuning::default()
        };
        support::expect_a_crash_to_end_every_rank(&faults, 5, |ctx, held, collectives| {
            PageRankRanks::with_tuning(ctx, held, PAGERANK, &tuning, collectives)
                .and_then(|mut solver| (0..3).try_for_each(|_| solver.run(collectives).map(|_| ())))
                .map_err(|e| e.to_string())
        });
    }
}
