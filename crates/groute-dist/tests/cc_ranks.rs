//! Connected components across ranks ([`CcRanks`] over [`CommCollectives`]), the ranks as
//! threads of this process ([`LocalRanks`], jittered) on the host backend: on 1 to 4 ranks of
//! 1 or 2 devices, over generated and random graphs and uneven partitions, every rank's
//! labels equal the sequential reference (union-find) on every run of one solver; ranks
//! holding only their rows of a cache give the same; a directed graph is labelled weakly
//! where every rank holds it whole or two ranks hold their rows, and refused, naming the fix,
//! where more ranks hold only their rows; ranks given different graphs are refused on every
//! rank.

use groute_cc::{CcRanks, CcRanksResult, cc_reference};
use groute_graph::testing::{generated, partition_at_cuts};
use groute_graph::{Csr, CsrBuilder, EdgeList, HeldRows, Partition};
use proptest::prelude::*;

mod support;

use support::graphs::{
    directed_in_four_parts, directed_rows_of, for_each_generated_shape, random_graph, seeded_cuts,
};
use support::rank_rows::RankRows;
use support::solve_on_ranks::JitteredRanks;

/// This file's ranks, jittered by seeds of its own.
const RANKS: JitteredRanks = JitteredRanks::new(5, 1);

/// Every rank's `runs` runs over the rows `rows_of(rank)` holds.
fn run_ranks<'g>(
    rows_of: impl Fn(usize) -> HeldRows<'g> + Sync,
    partition: &Partition,
    shape: (usize, usize),
    runs: usize,
) -> Vec<Result<Vec<CcRanksResult>, String>> {
    RANKS.solve_on_every_rank(rows_of, partition, shape, |ctx, held, collectives| {
        let mut solver = CcRanks::new(ctx, held, collectives).map_err(|e| e.to_string())?;
        (0..runs)
            .map(|_| solver.run(collectives).map_err(|e| e.to_string()))
            .collect()
    })
}

/// Checks every rank's runs against union-find on `csr`; every rank counts a run alike (the
/// arcs a sampled run links may differ from run to run: which rows it skips depends on
/// timing). Returns rank 0's runs' statistics.
fn check_runs(
    csr: &Csr,
    outs: Vec<Result<Vec<CcRanksResult>, String>>,
    label: &str,
) -> Vec<groute_cc::CcRanksStats> {
    let expected = cc_reference(csr);
    let outs = support::expect_ok_on_every_rank(outs, label);
    let first = &outs[0][0].stats;
    assert!(first.rounds >= 1, "{label}");
    for (r, i, run) in support::runs_of_every_rank(&outs) {
        assert_eq!(run.labels, expected, "{label}: rank {r}, run {i}");
        assert_eq!(run.stats.rounds, first.rounds, "{label}: rank {r}'s rounds");
        let rank0 = &outs[0][i].stats;
        assert_eq!(
            run.stats.edges_hooked, rank0.edges_hooked,
            "{label}: rank {r}, run {i}"
        );
        assert_eq!(
            run.stats.edges_per_process, rank0.edges_per_process,
            "{label}: rank {r}"
        );
        assert_eq!(
            run.stats.edges_per_process.iter().sum::<u64>(),
            run.stats.edges_hooked,
            "{label}: rank {r}"
        );
    }
    outs[0].iter().map(|run| run.stats.clone()).collect()
}

#[test]
fn generated_graphs_match_the_reference_on_every_rank() {
    let specs = [
        "kron:scale=11,ef=8,sym,seed=3",
        "road:side=24,p=0.6,seed=5",
        "er:n=1500,m=1200,sym,seed=8",
    ];
    let shapes = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (4, 1)];
    for_each_generated_shape(&specs, &shapes, |csr, partition, shape, label| {
        let outs = run_ranks(|_| HeldRows::whole(csr), partition, shape, 2);
        check_runs(csr, outs, label);
    });
}

/// One or two ranks holding a symmetric power-law graph link their rows by sampling first:
/// they skip most arcs (more ranks hook every edge between ranks at both ends, so link more
/// arcs than the graph has edges); on a sparse graph two ranks hook each edge once.
#[test]
fn one_or_two_ranks_skip_most_arcs_of_a_power_law_graph() {
    let road = generated("road:side=30,p=0.6,seed=2");
    let partition = groute_graph::block_partition(&road.csr, 2).unwrap();
    let outs = run_ranks(|_| HeldRows::whole(&road.csr), &partition, (2, 1), 1);
    for stats in check_runs(&road.csr, outs, "road, 2 ranks") {
        assert_eq!(stats.edges_hooked * 2, road.csr.num_edges(), "{stats:?}");
    }
    let g = generated("kron:scale=11,ef=16,sym,seed=6");
    let arcs = g.csr.num_edges();
    for shape in [(1, 1), (1, 2), (2, 1), (2, 2)] {
        let partition = groute_graph::block_partition(&g.csr, shape.0 * shape.1).unwrap();
        let outs = run_ranks(|_| HeldRows::whole(&g.csr), &partition, shape, 2);
        for stats in check_runs(&g.csr, outs, &format!("{shape:?}")) {
            assert!(
                stats.edges_hooked < arcs / 4,
                "{shape:?}: {stats:?} of {arcs}"
            );
            assert_eq!(stats.edges_per_process.len(), shape.0);
        }
    }
    let partition = groute_graph::block_partition(&g.csr, 3).unwrap();
    let outs = run_ranks(|_| HeldRows::whole(&g.csr), &partition, (3, 1), 1);
    for stats in check_runs(&g.csr, outs, "3 ranks") {
        assert!(
            stats.edges_hooked >= arcs / 2,
            "3 ranks: {stats:?} of {arcs}"
        );
    }
}

/// A path that walks an edge within a rank, then one to the next of 3 ranks, and so on:
/// each rank sees only pieces of it, and an arc between two other ranks reaches a rank only
/// through their labels, so the labels settle over several rounds of exchange. (With 2
/// ranks, the second round always confirms the first: every arc is at one of its ends.)
#[test]
fn a_path_walking_between_three_ranks_takes_rounds_and_matches_the_reference() {
    let (k, ranks) = (120u32, 3u32);
    let mut pairs = Vec::new();
    let mut at = [0u32; 3];
    let mut prev: Option<u32> = None;
    for step in 0..(k / 2) * ranks {
        let r = step % ranks;
        let a = r * k + at[r as usize];
        at[r as usize] += 2;
        pairs.push((a, a + 1));
        if let Some(p) = prev {
            pairs.push((p, a));
        }
        prev = Some(a + 1);
    }
    let csr = CsrBuilder::new((ranks * k) as usize)
        .symmetrize(true)
        .build(&EdgeList::from_pairs(&pairs))
        .expect("graph");
    let partition = partition_at_cuts((ranks * k) as usize, 3, &[k, 2 * k]);
    let outs = run_ranks(|_| HeldRows::whole(&csr), &partition, (3, 1), 1);
    let rounds = outs[0].as_ref().map(|runs| runs[0].stats.rounds).ok();
    check_runs(&csr, outs, "path between ranks");
    assert!(rounds.is_some_and(|r| r > 2), "{rounds:?}");
}

/// Ranks that hold only their rows of a symmetric cache, each loaded from the file.
#[test]
fn ranks_holding_only_their_rows_match_the_reference() {
    let g = generated("kron:scale=10,ef=12,sym,seed=9");
    let shape = (3, 2);
    let held = RankRows::new(&g, shape, "cc-rows");
    let outs = run_ranks(|r| held.rows(r), &held.partition, shape, 1);
    check_runs(&g.csr, outs, "own rows");
}

#[test]
fn a_directed_graph_is_labelled_weakly_and_refused_only_where_more_ranks_need_its_in_arcs() {
    let (csr, partition) = directed_in_four_parts(700);
    let outs = run_ranks(|_| HeldRows::whole(&csr), &partition, (2, 2), 1);
    check_runs(&csr, outs, "directed, whole");
    // Two ranks hook every arc at its tail: their own rows suffice.
    let outs = run_ranks(directed_rows_of(&csr, &partition, 2), &partition, (2, 2), 1);
    check_runs(&csr, outs, "directed, own rows, 2 ranks");
    // More ranks hook the arcs between them at both ends: the in-arcs are missing.
    let thirds = partition_at_cuts(600, 3, &[150, 400]);
    let outs = run_ranks(
        |r| HeldRows::some(&csr, thirds.range(r), false).expect("rows"),
        &thirds,
        (3, 1),
        1,
    );
    support::expect_refused_on_every_rank(outs, &["symmetric graph", "whole graph"]);
}

/// Three ranks given graphs of 100, 200 and 300 vertices: every rank refuses
/// ([`support::expect_different_graphs_refused_on_every_rank`]).
#[test]
fn ranks_given_different_graphs_are_refused_on_every_rank() {
    support::expect_different_graphs_refused_on_every_rank(|ctx, held, collectives| {
        CcRanks::new(ctx, held, collectives)
            .err()
            .map(|e| e.to_string())
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Random graphs (symmetric or directed, sparse enough for many components), cuts, and
    /// rank and device counts.
    #[test]
    fn random_runs_match_the_reference(
        n in 1u32..400,
        density in 0u32..3,
        seed in any::<u64>(),
        symmetric in any::<bool>(),
        ranks in 1usize..=3,
        devices in 1usize..=2,
        cut_seed in any::<u64>(),
    ) {
        let csr = random_graph(n, n * density / 2 + 1, seed, symmetric);
        let (cuts, partition) = seeded_cuts(n, ranks * devices, cut_seed);
        let outs = run_ranks(|_| HeldRows::whole(&csr), &partition, (ranks, devices), 1);
        check_runs(&csr, outs, &format!("n {n} {ranks}x{devices} cuts {cuts:?}"));
    }
}

/// A device that crashes (rank 1's device 0, after `after_ops` of its stream operations:
/// while the solver is made, or in one of its runs) ends the solver or the run with an error
/// on every rank (or, past the ops of the runs, never fires), none left waiting in a
/// collective: two ranks (one gather of forests) and three (label rounds).
#[test]
fn a_device_crash_mid_run_ends_every_rank_with_an_error() {
    let faults = [1, 2, 3, 5, 7, 9, 11, 13, 16, 20, 30, 40];
    support::expect_a_crash_to_end_every_rank(&faults, 5, |ctx, held, collectives| {
        CcRanks::new(ctx, held, collectives)
            .and_then(|mut solver| (0..3).try_for_each(|_| solver.run(collectives).map(|_| ())))
            .map_err(|e| e.to_string())
    });
}
