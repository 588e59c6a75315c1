//! Direction-optimizing BFS across ranks ([`BfsRanks`] over [`CommCollectives`]), the ranks
//! as threads of this process ([`LocalRanks`], jittered) on the host backend: on 1 to 3 ranks
//! of 1 or 2 devices and on 2 ranks of 9 (past 8, a rank's devices exchange through its device
//! 0), over generated and random graphs (random graphs over random cuts, some devices owning
//! nothing) and switch rules that pull early, late or never, every rank's levels equal the
//! sequential reference and every rank counts the same levels and arcs; ranks holding only
//! their rows of a cache give the same; a directed graph pulls over its transpose where every
//! rank holds it whole and is refused, naming the fix, where ranks hold only their rows; ranks
//! that disagree are refused, and a time limit stops every rank alike.

use std::time::Duration;

use groute_bfs::{BfsRanks, BfsResult, BfsTuning, Direction, SwitchRule, bfs_reference};
use groute_dist::{CommCollectives, LocalRanks, RankComm};
use groute_graph::testing::{generated, partition_at_cuts};
use groute_graph::{Csr, HeldRows, Partition};
use proptest::prelude::*;

mod support;

use support::graphs::{
    directed_in_four_parts, directed_rows_of, for_each_generated_shape, in_blocks, random_graph,
    seeded_cuts,
};
use support::rank_rows::RankRows;
use support::solve_on_ranks::JitteredRanks;
use support::{host_context as context, on_every_rank, switch_rules};

/// This file's ranks, jittered by seeds of its own.
const RANKS: JitteredRanks = JitteredRanks::new(7, 0);

/// The tuning of runs under `switch_rule`.
fn tuned(switch_rule: SwitchRule) -> BfsTuning {
    BfsTuning {
        switch_rule,
        ..BfsTuning::default()
    }
}

/// Every rank's runs from each of `sources` over the rows `rows_of(rank)` holds.
fn run_ranks<'g>(
    rows_of: impl Fn(usize) -> HeldRows<'g> + Sync,
    partition: &Partition,
    shape: (usize, usize),
    sources: &[u32],
    rule: SwitchRule,
) -> Vec<Result<Vec<BfsResult>, String>> {
    RANKS.solve_on_every_rank(rows_of, partition, shape, |ctx, held, collectives| {
        let mut solver =
            BfsRanks::new(ctx, held, collectives, &tuned(rule)).map_err(|e| e.to_string())?;
        sources
            .iter()
            .map(|&s| {
                solver
                    .run(collectives, s, Some(Duration::from_secs(120)))
                    .map_err(|e| e.to_string())
            })
            .collect()
    })
}

/// Checks every rank's runs against the reference from each source; gives them back.
fn check_runs(
    csr: &Csr,
    sources: &[u32],
    outs: Vec<Result<Vec<BfsResult>, String>>,
    label: &str,
) -> Vec<Vec<BfsResult>> {
    let outs = support::expect_ok_on_every_rank(outs, label);
    for (i, &source) in sources.iter().enumerate() {
        let expected = bfs_reference(csr, source);
        let first = &outs[0][i].stats;
        assert!(first.direction_optimized, "{label}");
        for (r, runs) in outs.iter().enumerate() {
            let run = &runs[i];
            assert_eq!(run.levels, expected, "{label}: rank {r}, source {source}");
            assert_eq!(run.stats.rounds, first.rounds, "{label}: rank {r}'s levels");
            assert_eq!(
                run.stats.pull_levels, first.pull_levels,
                "{label}: rank {r}"
            );
            assert_eq!(
                run.stats.arcs_examined, first.arcs_examined,
                "{label}: rank {r}"
            );
        }
    }
    outs
}

#[test]
fn generated_graphs_match_the_reference_on_every_rank() {
    let specs = [
        "kron:scale=11,ef=8,sym,seed=3",
        "road:side=24,p=0.6,seed=5",
        "er:n=1500,m=6000,sym,seed=8",
    ];
    // 2 ranks of 9 devices: each rank's devices exchange through its device 0.
    let shapes = [(1, 2), (2, 1), (2, 2), (3, 1), (2, 9)];
    for_each_generated_shape(&specs, &shapes, |csr, partition, shape, label| {
        let sources = [0, (csr.num_vertices() as u32) / 2 + 1];
        for rule in switch_rules() {
            let label = format!("{label} {rule:?}");
            let outs = run_ranks(|_| HeldRows::whole(csr), partition, shape, &sources, rule);
            let outs = check_runs(csr, &sources, outs, &label);
            // The counts are sums of exact per-device counts: one device's, where the parts
            // are blocks of the same numbering.
            let one = run_ranks(
                |_| HeldRows::whole(csr),
                &in_blocks(csr, 1),
                (1, 1),
                &sources,
                rule,
            );
            let one = check_runs(csr, &sources, one, &format!("{label}, one device"));
            for (got, one) in outs[0].iter().zip(&one[0]) {
                assert_eq!(got.stats.rounds, one.stats.rounds, "{label}");
                assert_eq!(got.stats.pull_levels, one.stats.pull_levels, "{label}");
                assert_eq!(got.stats.arcs_examined, one.stats.arcs_examined, "{label}");
            }
        }
    });
}

/// Where every rank runs one device, a push whose frontier has few out-arcs gathers a list of
/// its discoveries instead of a bitmap: a road grid's thin frontiers take both forms in one run
/// (lists on the first and last levels, bitmaps in between, under the rules that push), every
/// rank's levels still equal the reference, and the gathers total fewer bytes than bitmaps
/// after every level would.
#[test]
fn thin_pushes_gather_lists_on_ranks_of_one_device() {
    let g = generated("road:side=64,p=0.6,seed=5");
    let csr = &g.csr;
    let sources = [0, 2080];
    for ranks in [2, 3] {
        let partition = in_blocks(csr, ranks);
        for rule in switch_rules() {
            let label = format!("{ranks} ranks, {rule:?}");
            let outs = RANKS.solve_on_every_rank(
                |_| HeldRows::whole(csr),
                &partition,
                (ranks, 1),
                |ctx, held, collectives| {
                    let mut solver = BfsRanks::new(ctx, held, collectives, &tuned(rule))
                        .map_err(|e| e.to_string())?;
                    let bitmaps = (solver.gather_bytes(false), solver.gather_bytes(true));
                    let runs = sources.iter().map(|&s| {
                        let run = solver
                            .run(collectives, s, Some(Duration::from_secs(120)))
                            .map_err(|e| e.to_string())?;
                        Ok((run, solver.last_gathered_bytes()))
                    });
                    runs.collect::<Result<Vec<_>, String>>()
                        .map(|runs| (runs, bitmaps))
                },
            );
            let outs = support::expect_ok_on_every_rank(outs, &label);
            let (after_push, after_pull) = outs[0].1;
            for (i, &source) in sources.iter().enumerate() {
                let expected = bfs_reference(csr, source);
                let (first, gathered) = &outs[0].0[i];
                // What bitmaps alone would gather: a push level's whole, a pull level's window.
                let pulls = first.stats.pull_levels;
                let pushes = first.stats.rounds - pulls;
                let bitmaps = pushes * after_push + pulls * after_pull;
                let what = format!("{label}, from {source}: {gathered} bytes, bitmaps {bitmaps}");
                if pushes > 0 {
                    assert!(*gathered < bitmaps, "{what}");
                } else {
                    assert_eq!(*gathered, bitmaps, "{what}");
                }
                for (r, (runs, _)) in outs.iter().enumerate() {
                    let (run, bytes) = &runs[i];
                    assert_eq!(run.levels, expected, "{label}: rank {r}, source {source}");
                    assert_eq!(bytes, gathered, "{label}: rank {r} gathered as many bytes");
                    assert_eq!(run.stats.rounds, first.stats.rounds, "{label}: rank {r}");
                }
            }
        }
    }
}

/// Ranks that hold only their rows of a symmetric cache, each loaded from the file.
#[test]
fn ranks_holding_only_their_rows_match_the_reference() {
    let g = generated("kron:scale=10,ef=12,sym,seed=9");
    let shape = (3, 2);
    let held = RankRows::new(&g, shape, "do-rows");
    let sources = [1, 500];
    let rule = SwitchRule::default();
    let outs = run_ranks(|r| held.rows(r), &held.partition, shape, &sources, rule);
    check_runs(&g.csr, &sources, outs, "own rows");
}

#[test]
fn a_directed_graph_pulls_over_its_transpose_only_where_it_is_whole() {
    let (csr, partition) = directed_in_four_parts(3000);
    let pull_early = switch_rules()[0];
    let whole = |_| HeldRows::whole(&csr);
    let outs = run_ranks(whole, &partition, (2, 2), &[0, 7], pull_early);
    check_runs(&csr, &[0, 7], outs, "directed, whole");
    let own_rows = directed_rows_of(&csr, &partition, 2);
    let outs = run_ranks(own_rows, &partition, (2, 2), &[0], pull_early);
    support::expect_refused_on_every_rank(outs, &["symmetric graph", "--direction push"]);
}

#[test]
fn ranks_that_disagree_are_refused_on_every_rank() {
    let csr = random_graph(300, 1200, 2, true);
    let partition = partition_at_cuts(300, 2, &[150]);
    let errors = on_every_rank(LocalRanks::new(2, None), |mut comm| {
        // Rank 1 brings two devices to a partition of one part per rank.
        let ctx = context(1 + comm.rank(), None);
        let mut collectives = CommCollectives::new(&mut comm, &ctx).expect("collectives");
        BfsRanks::new(
            &ctx,
            (&HeldRows::whole(&csr), &partition),
            &mut collectives,
            &BfsTuning::default(),
        )
        .map(|_| ())
        .expect_err("refused")
        .to_string()
    });
    assert!(errors[1].contains("partition"), "{}", errors[1]);
    assert!(errors[0].contains("failed"), "{}", errors[0]);
}

/// A time limit stops every rank on the same level (none is left waiting in a collective),
/// and the same solvers then run to the reference.
#[test]
fn a_time_limit_stops_every_rank_and_the_solver_runs_again() {
    let g = generated("kron:scale=10,ef=8,sym,seed=4");
    let expected = bfs_reference(&g.csr, 3);
    let partition = in_blocks(&g.csr, 4);
    let outs = on_every_rank(LocalRanks::new(2, Some(9)), |mut comm| {
        let ctx = context(2, Some(comm.rank() as u64));
        let mut collectives = CommCollectives::new(&mut comm, &ctx).expect("collectives");
        let rows = HeldRows::whole(&g.csr);
        let tuning = BfsTuning::default();
        let mut solver =
            BfsRanks::new(&ctx, (&rows, &partition), &mut collectives, &tuning).expect("solver");
        let stopped = solver
            .run(&mut collectives, 3, Some(Duration::ZERO))
            .map(|_| ())
            .expect_err("past its limit")
            .to_string();
        let levels = solver
            .run(&mut collectives, 3, Some(Duration::from_secs(120)))
            .expect("a run within its limit")
            .levels;
        (stopped, levels)
    });
    for (stopped, levels) in outs {
        assert!(stopped.contains("time limit"), "{stopped}");
        assert_eq!(levels, expected);
    }
}

/// Three ranks given graphs of 100, 200 and 300 vertices: every rank refuses
/// ([`support::expect_different_graphs_refused_on_every_rank`]).
#[test]
fn ranks_given_different_graphs_are_refused_on_every_rank() {
    support::expect_different_graphs_refused_on_every_rank(|ctx, held, collectives| {
        BfsRanks::new(ctx, held, collectives, &BfsTuning::default())
            .err()
            .map(|e| e.to_string())
    });
}

#[test]
fn auto_chooses_alike_on_every_rank_by_the_whole_graphs_degree() {
    let dense = generated("kron:scale=10,ef=16,sym,seed=1");
    let sparse = generated("road:side=20,p=0.6,seed=1");
    for (g, expected) in [(&dense, true), (&sparse, false)] {
        let partition = in_blocks(&g.csr, 2);
        let chosen = on_every_rank(LocalRanks::new(2, None), |mut comm| {
            let ctx = context(1, None);
            let mut collectives = CommCollectives::new(&mut comm, &ctx).expect("collectives");
            let rows = HeldRows::whole(&g.csr);
            BfsRanks::is_chosen(
                Direction::Auto,
                &ctx,
                (&rows, &partition),
                g.symmetric,
                &mut collectives,
            )
            .expect("decided")
        });
        assert_eq!(chosen, vec![expected; 2]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random symmetric graphs, rank and device counts, sources and rules, over random cuts
    /// (some parts empty, some devices owning nothing).
    #[test]
    fn random_runs_match_the_reference(
        n in 1u32..400,
        density in 1u32..8,
        seed in any::<u64>(),
        ranks in 1usize..=3,
        devices in 1usize..=2,
        rule in 0usize..3,
        source_at in 0.0f64..1.0,
        cut_seed in any::<u64>(),
    ) {
        let csr = random_graph(n, n * density, seed, true);
        let (cuts, partition) = seeded_cuts(n, ranks * devices, cut_seed);
        let source = ((f64::from(n) * source_at) as u32).min(n - 1);
        let rule = switch_rules()[rule];
        let shape = (ranks, devices);
        let outs = run_ranks(|_| HeldRows::whole(&csr), &partition, shape, &[source], rule);
        let label = format!("n {n} seed {seed} {ranks}x{devices} cuts {cuts:?}");
        check_runs(&csr, &[source], outs, &label);
    }
}

/// A device that crashes (rank 1's last device, after some of its stream operations: while
/// the solver is made, in a reset, a level or the levels' read-back) ends the solver or the
/// run with an error on every rank, none left waiting in a level's gather or sum: 2 and 3
/// ranks of one device (the leader failing), 2 ranks of two (a follower failing), pulling
/// early (every level exchanges bitmaps) and never.
#[test]
fn a_device_crash_mid_run_ends_every_rank_with_an_error() {
    let faults = [1, 3, 6, 10, 15, 20, 30, 45, 60, 90];
    for rule in [switch_rules()[0], switch_rules()[2]] {
        support::expect_a_crash_to_end_every_rank(&faults, 6, |ctx, held, collectives| {
            BfsRanks::new(ctx, held, collectives, &tuned(rule))
                .and_then(|mut solver| {
                    (0..3).try_for_each(|_| {
                        let limit = Some(Duration::from_secs(60));
                        solver.run(collectives, 0, limit).map(|_| ())
                    })
                })
                .map_err(|e| e.to_string())
        });
    }
}
