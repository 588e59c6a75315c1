//! Pull sweeps (`SweepMode::Pull`: take, push the cut vertices' shares along their cut arcs
//! only, gather over the in-CSR)
//! stay within the bounds of the crate docs against the power-iteration reference, on
//! symmetric graphs (pulled over their own CSR) and directed ones (over the transpose), on 1
//! to 4 devices (cut arcs pushed to other devices' halo slots), block and METIS partitions,
//! plain and jittered host contexts. The host backend pulls in its first sweep; CUDA in every
//! sweep, from none after the first (divisor 0) to every round (divisor `u32::MAX`).

mod common;

use common::{
    check_options, check_result, from_pairs, generated, options, sweep_divisors, with_hubs,
    with_in_hubs,
};
use std::time::Duration;

use groute_core::BackendKind;
use groute_core::testing::TestContext;
use groute_graph::{Graph, NoProgress, PartitionMethod, PartitionedGraph, partition_graph};
use groute_pagerank::cuda::HUB_MIN_DEGREE;
use groute_pagerank::cuda::push_round_launch::PUSH_GRID_DEGREE;
use groute_pagerank::{
    Driver, PULL_HUB_DEGREE, PageRankError, PageRankOptions, PageRankResult, SPARSE_SWEEP_DIVISOR,
    SweepMode, l1_distance, pagerank, pagerank_reference,
};
use groute_worklist::WorklistError;

fn pull(epsilon: f32, sweep_divisor: u32) -> PageRankOptions {
    let mut o = options(epsilon);
    o.tuning.sweep = SweepMode::Pull;
    o.tuning.sweep_divisor = Some(sweep_divisor);
    o
}

/// Checks `g` with pull sweeps on 1 to 4 devices under every divisor of the backend.
fn check_pull(g: &Graph, epsilon: f32) {
    for divisor in sweep_divisors(&[0, SPARSE_SWEEP_DIVISOR, u32::MAX]) {
        for devices in groute_core::testing::device_counts(&[1, 2, 3, 4]) {
            check_options(g, devices, &pull(epsilon, divisor), &[devices as u64]);
        }
    }
}

#[test]
fn pull_sweeps_on_symmetric_graphs_are_within_the_bound() {
    for spec in ["kron:scale=9,ef=8,sym,seed=3", "road:side=24,p=0.6,seed=5"] {
        let g = generated(spec);
        assert!(g.symmetric, "{spec} pulls over its own CSR");
        check_pull(&g, 0.01);
    }
}

#[test]
fn pull_sweeps_on_directed_graphs_are_within_the_bound() {
    let specs = ["random:n=600,m=1800,seed=7", "random:n=1500,m=9000,seed=4"];
    for spec in groute_core::testing::pick(specs, &[0]) {
        let g = generated(spec);
        assert!(!g.symmetric, "{spec} pulls over its transpose");
        assert!(!g.csr.is_symmetric(), "{spec} is really directed");
        check_pull(&g, 0.01);
    }
}

#[test]
fn pull_sweeps_with_dangling_vertices_self_loops_and_sources() {
    // 0 -> 1 -> 2 -> 0 cycle, 3 dangling, 4 a pure source with a self-loop, 5 isolated.
    let pairs = [(0, 1), (1, 2), (2, 0), (1, 3), (4, 4), (4, 0), (4, 3)];
    let g = from_pairs(6, &pairs, "dangling+loops");
    for eps in [1e-4, 0.01] {
        check_pull(&g, eps);
    }
}

#[test]
fn pull_sweeps_with_hubs_on_cut_arcs_are_within_the_bound() {
    // Two hubs above the CUDA hub degree: on 2 devices their cut arcs are pushed grid-wide
    // by pagerank_push_hubs over the cut lists (recorded by their index there).
    let g = with_hubs();
    let parted = partition_graph(g.clone(), 2, PartitionMethod::Block, &NoProgress).unwrap();
    let (csr, owned) = (&parted.graph.csr, parted.partition.range(0));
    let cut_degree = |v: u32| {
        csr.neighbors(v)
            .iter()
            .filter(|w| !owned.contains(w))
            .count()
    };
    assert!(
        owned
            .clone()
            .any(|v| cut_degree(v) as u64 >= HUB_MIN_DEGREE),
        "a cut list of device 0 of 2 is a hub"
    );
    for divisor in sweep_divisors(&[SPARSE_SWEEP_DIVISOR, u32::MAX]) {
        for devices in [1, 2] {
            check_options(&g, devices, &pull(0.01, divisor), &[]);
        }
    }
}

#[test]
fn pull_sweeps_with_in_hubs_are_within_the_bound() {
    // Two vertices of more in-arcs than the pull hub degree: CUDA sums their in-lists in
    // tiles over the whole grid (pagerank_pull_hub_tiles) before the gather, two tiles each.
    let g = with_in_hubs();
    let in_degree = |v: u32| g.csr.targets().iter().filter(|&&w| w == v).count() as u64;
    let tiles = |v: u32| in_degree(v).div_ceil(PULL_HUB_DEGREE);
    assert!(tiles(0) >= 2 && tiles(1) >= 2, "two hubs of two tiles");
    for divisor in sweep_divisors(&[SPARSE_SWEEP_DIVISOR, u32::MAX]) {
        for devices in [1, 2, 3] {
            check_options(&g, devices, &pull(0.01, divisor), &[]);
        }
    }
}

#[test]
fn pull_and_push_sweeps_reach_the_same_ranks_within_their_bounds() {
    // Both are exact up to the residual left: |push - pull|_1 <= (left_push + left_pull) /
    // (1 - alpha), with the f32 rounding slack of the checker.
    let g = generated("road:side=20,p=0.7,seed=9");
    let parted = partition_graph(g, 2, PartitionMethod::Block, &NoProgress).unwrap();
    let ctx = groute_core::testing::test_contexts(2, &[])
        .into_iter()
        .next()
        .unwrap()
        .context;
    let push = pagerank(&ctx, &parted, &options(0.001)).unwrap();
    let pulled = pagerank(&ctx, &parted, &pull(0.001, SPARSE_SWEEP_DIVISOR)).unwrap();
    let diff = l1_distance(&push.ranks, &pulled.ranks);
    let bound = (push.stats.residual_left + pulled.stats.residual_left) / (1.0 - 0.85)
        + 1e-4 * push.rank_sum();
    assert!(diff <= bound, "push vs pull: L1 {diff} above {bound}");
    assert!(pulled.stats.work_items >= parted.graph.num_vertices() as u64);
}

/// Graphs whose in-lists are all shorter than a block: symmetric (kron, road), directed,
/// and one with dangling vertices, self-loops and a pure source.
fn sweep_graphs() -> Vec<Graph> {
    let pairs = [(0, 1), (1, 2), (2, 0), (1, 3), (4, 4), (4, 0), (4, 3)];
    vec![
        generated("kron:scale=9,ef=8,sym,seed=3"),
        generated("road:side=24,p=0.6,seed=5"),
        generated("random:n=600,m=1800,seed=7"),
        from_pairs(6, &pairs, "dangling+loops"),
    ]
}

#[test]
fn sweeps_that_gather_only_the_taken_shares_match_those_that_read_every_share() {
    // Synchronous sweeps whose gathers read only the shares of the vertices taken (CUDA: the
    // bitmap marked before each gather) in every round (divisor 1), against the same sweeps
    // reading every share (divisor 0). Skipping a share of 0 changes no sum, so the ranks
    // are equal bit for bit and the rounds the same, on graphs whose in-lists are all
    // shorter than a block (a block's reduction adds its warps' sums in no fixed order). The
    // host backend's gathers read every share: no round of either run is sparse there.
    for g in &sweep_graphs() {
        let mut in_degree = vec![0u32; g.num_vertices()];
        for &w in g.csr.targets() {
            in_degree[w as usize] += 1;
        }
        let longest = in_degree.iter().copied().max().unwrap_or(0);
        assert!(
            longest < 256,
            "an in-list of {longest} arcs is summed by a block"
        );
        for devices in groute_core::testing::device_counts(&[1, 2, 3, 4]) {
            let parted =
                partition_graph(g.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
            for tc in groute_core::testing::test_contexts(devices, &[]) {
                let run = |divisor| {
                    let mut o = options(0.01);
                    o.driver = Driver::Sweeps;
                    o.tuning.sparse_gather_divisor = Some(divisor);
                    // Every round gathers (a push's atomics add in no fixed order).
                    o.tuning.sweep_push_divisor = Some(0);
                    pagerank(&tc.context, &parted, &o).unwrap()
                };
                let (every, sparse) = (run(0), run(1));
                let what = format!("{} on {devices} {} devices", g.name, tc.label);
                let bits = |r: &PageRankResult| r.ranks.iter().map(|x| x.to_bits()).collect();
                let (a, b): (Vec<u32>, Vec<u32>) = (bits(&every), bits(&sparse));
                assert!(a == b, "{what}: the ranks differ");
                assert_eq!(every.stats.rounds, sparse.stats.rounds, "{what}");
                assert_eq!(every.stats.sparse_gather_rounds, 0, "{what}");
                let cuda = tc.context.backend_kind() == BackendKind::Cuda;
                let expected = if cuda { sparse.stats.rounds } else { 0 };
                assert_eq!(sparse.stats.sparse_gather_rounds, expected, "{what}");
            }
        }
    }
}

#[test]
fn sweeps_that_gather_only_the_taken_shares_over_in_hubs_are_within_the_bound() {
    // In-lists long enough to be summed in tiles over the grid (their tiles read through the
    // bitmap too), every round sparse or those taking at most a quarter of the vertices.
    let g = with_in_hubs();
    for divisor in [1, 4] {
        let mut o = options(0.01);
        o.driver = Driver::Sweeps;
        o.tuning.sparse_gather_divisor = Some(divisor);
        for devices in groute_core::testing::device_counts(&[1, 2, 3, 4]) {
            check_options(&g, devices, &o, &[devices as u64]);
        }
    }
}

#[test]
fn sweeps_that_push_the_rounds_taking_few_arcs_are_within_the_bound_of_those_that_gather() {
    // The synchronous sweeps with push rounds (the shares of the vertices taken pushed along
    // their out-arcs, other devices' heads collected in this device's slots of them and
    // absorbed by their owners): every round after the first (divisor 1), those taking at
    // most an eighth of the arcs (the default), none (0). Against the reference, and against
    // the run that gathers every round: the same sweeps, their float additions apart, so the
    // ranks differ by at most what both runs left, over 1 - alpha. Graphs with out-hubs
    // (pushed by the whole grid), in-hubs, dangling vertices and self-loops, directed ones
    // (pushed over their own rows, gathered over the transpose).
    //
    // In whole-graph rounds and in rounds by 3 vertex ranges (degree order), which never
    // push: the divisor decides when a run leaves the ranges for whole-graph rounds (after
    // the first round with divisor 1, never with 0: the host backend never gathers sparse,
    // nor does CUDA where the shares fit the L2), and the pass that leaves them must deliver
    // the last ranged round's shares to the heads that had not read them.
    let mut graphs = sweep_graphs();
    graphs.extend([with_hubs(), with_in_hubs()]);
    let hub_degree = graphs[4].csr.out_degree(0);
    assert!(
        hub_degree >= PUSH_GRID_DEGREE,
        "a list of {hub_degree} arcs is pushed by one block, not the grid"
    );
    for g in &graphs {
        let exact = pagerank_reference(&g.csr, 0.85);
        for devices in groute_core::testing::device_counts(&[1, 2, 3, 4]) {
            if devices > g.num_vertices() {
                continue;
            }
            let parted =
                partition_graph(g.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
            for tc in groute_core::testing::test_contexts(devices, &[devices as u64]) {
                for ranges in [1, 3] {
                    let what = |divisor| {
                        format!(
                            "{} on {devices} {} devices, {ranges} ranges, push divisor {divisor}",
                            g.name, tc.label
                        )
                    };
                    let run = |divisor| {
                        let mut o = options(0.01);
                        o.driver = Driver::Sweeps;
                        o.tuning.sweep_push_divisor = Some(divisor);
                        o.tuning.sweep_ranges = Some(ranges);
                        o.tuning.degree_order = Some(ranges > 1);
                        let got = pagerank(&tc.context, &parted, &o)
                            .unwrap_or_else(|e| panic!("{}: {e}", what(divisor)));
                        check_result(&exact, &o, devices, &got, &what(divisor));
                        got
                    };
                    let gathered = run(0);
                    let s = &gathered.stats;
                    assert_eq!(s.push_rounds, 0, "{}", what(0));
                    if ranges > 1 {
                        assert_eq!(s.ranged_rounds, s.rounds, "{}: left the ranges", what(0));
                    }
                    for divisor in [1, 8] {
                        let pushed = run(divisor);
                        let p = &pushed.stats;
                        if ranges == 1 {
                            if divisor == 1 && p.rounds > 1 {
                                assert!(p.push_rounds > 0, "{}: no push round", what(1));
                            }
                            assert!(p.push_rounds < p.rounds.max(1));
                        } else if divisor == 1 {
                            assert_eq!(p.ranged_rounds, 1, "{}: stayed in the ranges", what(1));
                        }
                        let diff = l1_distance(&gathered.ranks, &pushed.ranks);
                        let bound = (s.residual_left + p.residual_left) / (1.0 - 0.85)
                            + 1e-4 * gathered.rank_sum();
                        assert!(
                            diff <= bound,
                            "{}: L1 {diff} from the gathers, above {bound}",
                            what(divisor)
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn sweeps_past_their_time_limit_stop_with_a_timeout_error_and_runs_within_it_complete() {
    let g = generated(SMALL_KRON);
    let exact = pagerank_reference(&g.csr, 0.85);
    on_one_to_three_devices(&g, |tc, devices, parted| {
        let what = format!("{} devices, {}", devices, tc.label);
        let mut o = options(0.01);
        o.driver = Driver::Sweeps;
        o.worklist.time_limit = Some(Duration::ZERO);
        match pagerank(&tc.context, parted, &o) {
            Err(PageRankError::Worklist(WorklistError::TimedOut { .. })) => {}
            other => panic!("{what}: expected a time-limit error, got {other:?}"),
        }
        o.worklist.time_limit = Some(groute_core::testing::scaled(Duration::from_secs(60)));
        let got = pagerank(&tc.context, parted, &o).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(got.stats.driver, Driver::Sweeps, "{what}");
        check_result(&exact, &o, devices, &got, &what);
    });
}

/// A small skewed graph, for the tests that run the sweeps many times.
const SMALL_KRON: &str = "kron:scale=9,ef=8,sym,seed=3";

/// Runs `body` with `g` split in blocks over one to three devices, in every test context.
fn on_one_to_three_devices(
    g: &Graph,
    mut body: impl FnMut(&TestContext, usize, &PartitionedGraph),
) {
    for devices in groute_core::testing::device_counts(&[1, 2, 3]) {
        let parted =
            partition_graph(g.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
        for tc in groute_core::testing::test_contexts(devices, &[]) {
            body(&tc, devices, &parted);
        }
    }
}

/// The synchronous sweeps by `ranges` vertex ranges at epsilon 0.01, in degree order where
/// `ordered`.
fn by_ranges(ordered: bool, ranges: u32) -> PageRankOptions {
    let mut o = options(0.01);
    o.driver = Driver::Sweeps;
    o.tuning.degree_order = Some(ordered);
    o.tuning.sweep_ranges = Some(ranges);
    o
}

#[test]
fn sweeps_by_vertex_ranges_are_within_the_bound_and_take_fewer_vertices_on_a_skewed_graph() {
    // Rounds that gather and take the vertices range by range (block Gauss-Seidel), 1 to 7
    // ranges (more than some graphs' hubs: empty and one-vertex ranges; at most one a vertex
    // on the 6-vertex graph), in the input order and in degree order, on one to three
    // devices (each splitting its own vertices, some of them then empty). Against the
    // reference within the bounds, and, on a skewed graph in degree order, fewer vertices
    // taken with 4 ranges than with 1.
    let mut graphs = sweep_graphs();
    graphs.extend([with_hubs(), with_in_hubs()]);
    for g in &graphs {
        let exact = pagerank_reference(&g.csr, 0.85);
        for devices in groute_core::testing::device_counts(&[1, 2, 3]) {
            if devices > g.num_vertices() {
                continue;
            }
            let parted =
                partition_graph(g.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
            for tc in groute_core::testing::test_contexts(devices, &[]) {
                for ordered in [false, true] {
                    let mut taken = Vec::new();
                    for ranges in [1, 2, 4, 7] {
                        let what = format!(
                            "{} on {devices} {} devices, {ranges} ranges, degree order {ordered}",
                            g.name, tc.label
                        );
                        let o = by_ranges(ordered, ranges);
                        let mut solver =
                            groute_pagerank::PageRankSolver::new(&tc.context, &parted, &o)
                                .unwrap_or_else(|e| panic!("{what}: {e}"));
                        // At most a range per vertex.
                        let most = g.num_vertices() as u32;
                        let expected = ranges.min(most);
                        assert_eq!(solver.sweep_ranges(), expected, "{what}");
                        for _ in 0..2 {
                            let got = solver.run().unwrap_or_else(|e| panic!("{what}: {e}"));
                            check_result(&exact, &o, devices, &got, &what);
                            let s = &got.stats;
                            if expected > 1 {
                                // The first rounds by ranges; the rest whole-graph rounds,
                                // where some may push.
                                assert!(s.ranged_rounds >= 1, "{what}: no ranged round");
                                assert!(s.ranged_rounds + s.push_rounds <= s.rounds, "{what}");
                            } else {
                                assert_eq!(s.ranged_rounds, 0, "{what}: a ranged round");
                            }
                            taken.push(got.stats.work_items);
                        }
                    }
                    if ordered && g.name.starts_with("kron") {
                        assert!(
                            taken[4] < taken[0],
                            "{} on {devices} devices: 4 ranges took {} vertices, 1 range {}",
                            g.name,
                            taken[4],
                            taken[0]
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn rounds_by_vertex_ranges_stay_in_them_where_whole_graph_rounds_would_gather_sparse() {
    // A whole-graph round through the bitmap of the vertices taken still reads a bit for every
    // in-arc, so in one process taking few vertices does not end the ranges: with every
    // round's gather sparse (divisor 1) and no push (divisor 0), every round of a run by 3
    // ranges is ranged, within the bound. It bites on CUDA (the host backend never gathers
    // sparse, so there it checks only the bound and the ranges).
    let g = generated(SMALL_KRON);
    let exact = pagerank_reference(&g.csr, 0.85);
    on_one_to_three_devices(&g, |tc, devices, parted| {
        let what = format!("{} on {devices} {} devices", g.name, tc.label);
        let mut o = by_ranges(true, 3);
        o.tuning.sparse_gather_divisor = Some(1);
        o.tuning.sweep_push_divisor = Some(0);
        let got = pagerank(&tc.context, parted, &o).unwrap_or_else(|e| panic!("{what}: {e}"));
        check_result(&exact, &o, devices, &got, &what);
        let s = &got.stats;
        assert!(s.rounds > 1, "{what}: {s:?}");
        assert_eq!(s.ranged_rounds, s.rounds, "{what}: left the ranges: {s:?}");
    });
}

#[test]
fn a_run_that_leaves_the_vertex_ranges_counts_each_take_once() {
    // Epsilon above any residual after the first round: the first round takes every vertex
    // (floor 0) and no later round takes any. Leaving the ranges after the first round
    // (push divisor 1) adds one pass that takes nothing; staying (0) ends on a round that
    // takes nothing. Either way exactly one take per vertex, the pass counted as a round.
    let road = generated("road:side=16,p=0.6,seed=5");
    let sinks = from_pairs(4, &[(0, 1), (2, 3)], "two sinks");
    for devices in groute_core::testing::device_counts(&[1, 2, 3]) {
        for g in [&road, &sinks] {
            let parted =
                partition_graph(g.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
            for tc in groute_core::testing::test_contexts(devices, &[]) {
                for divisor in [0, 1] {
                    let what = format!("{} on {devices} {}, divisor {divisor}", g.name, tc.label);
                    let mut o = options(0.01);
                    o.epsilon = 0.5;
                    o.driver = Driver::Sweeps;
                    o.tuning.sweep_ranges = Some(2);
                    o.tuning.sweep_push_divisor = Some(divisor);
                    let got = pagerank(&tc.context, &parted, &o)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let s = &got.stats;
                    assert_eq!(s.work_items, g.num_vertices() as u64, "{what}: {s:?}");
                    assert_eq!(s.rounds, 2, "{what}: {s:?}");
                    let left = divisor == 1 && g.num_edges() > 0;
                    assert_eq!(s.ranged_rounds, if left { 1 } else { 2 }, "{what}: {s:?}");
                }
            }
        }
    }
}

#[test]
fn ranged_gathers_by_tiles_and_by_destination_are_both_within_the_bound() {
    // CUDA's ranged gathers by tiles (their arcs by source, the default; or, tiles of at
    // least 8 arcs a destination, by destination; tiles of the default length, or of about
    // 20,000 arcs, long enough for the kernel's pipelined loads and runs of one
    // destination) and by destination, on a skewed graph and on one whose two in-hubs take
    // tiles of their own (directed: over the transpose), in degree order and not, by 2 and
    // 4 ranges, on one to three devices: each run within the bound of the reference,
    // ranged. The host backend gathers by destination either way.
    let gathers = [
        (false, None, None),
        (true, None, None),
        (true, Some(8), None),
        (true, None, Some(20_000)),
        (true, Some(8), Some(20_000)),
    ];
    for g in [
        generated(SMALL_KRON),
        generated("kron:scale=13,ef=16,sym"),
        with_in_hubs(),
    ] {
        let exact = pagerank_reference(&g.csr, 0.85);
        on_one_to_three_devices(&g, |tc, devices, parted| {
            for (ordered, ranges, (tiles, by_destination, tile_arcs)) in [false, true]
                .into_iter()
                .flat_map(|o| [2, 4].map(move |r| (o, r)))
                .flat_map(|(o, r)| gathers.map(move |t| (o, r, t)))
            {
                let what = format!(
                    "{} on {devices} {}, degree order {ordered}, {ranges} ranges, tiles \
                     {tiles} (by destination from {by_destination:?}, {tile_arcs:?} arcs)",
                    g.name, tc.label
                );
                let mut o = by_ranges(ordered, ranges);
                o.tuning.gather_tiles = Some(tiles);
                o.tuning.gather_tile_by_destination = by_destination;
                o.tuning.gather_tile_arcs = tile_arcs;
                let got =
                    pagerank(&tc.context, parted, &o).unwrap_or_else(|e| panic!("{what}: {e}"));
                check_result(&exact, &o, devices, &got, &what);
                assert!(got.stats.ranged_rounds >= 1, "{what}: {:?}", got.stats);
            }
        });
    }
}

#[test]
fn ranged_rounds_enqueued_ahead_of_their_counts_are_within_the_bound() {
    // A process alone enqueues a ranged round before it reads the counts of the round before
    // where the rounds before say it will be ranged too (the default), or never: on skewed
    // graphs by 4 ranges in degree order, on one to three devices, both within the bound of
    // the reference, in several ranged rounds; ahead, some rounds were enqueued ahead (never
    // the first three: a guess goes by the two rounds before the awaited one), none
    // otherwise.
    for g in [generated(SMALL_KRON), generated("kron:scale=13,ef=16,sym")] {
        let exact = pagerank_reference(&g.csr, 0.85);
        on_one_to_three_devices(&g, |tc, devices, parted| {
            for run_ahead in [true, false] {
                let what = format!("{} on {devices} {}, ahead {run_ahead}", g.name, tc.label);
                let mut o = by_ranges(true, 4);
                o.tuning.sweep_run_ahead = run_ahead;
                let got =
                    pagerank(&tc.context, parted, &o).unwrap_or_else(|e| panic!("{what}: {e}"));
                check_result(&exact, &o, devices, &got, &what);
                let s = &got.stats;
                assert!(s.ranged_rounds >= 3, "{what}: {s:?}");
                if run_ahead {
                    assert!(s.ranged_rounds_ahead >= 1, "{what}: {s:?}");
                    assert!(
                        s.ranged_rounds_ahead + 3 <= s.ranged_rounds,
                        "{what}: {s:?}"
                    );
                } else {
                    assert_eq!(s.ranged_rounds_ahead, 0, "{what}: {s:?}");
                }
            }
        });
    }
}

#[test]
fn a_ranged_round_enqueued_on_a_wrong_guess_is_counted_and_the_run_stays_within_the_bound() {
    // On a ring every vertex takes alike, so the arcs a round takes stay level and then drop
    // at once: the guess enqueues a ranged round that a run reading each round's counts would
    // not have run (one more ranged round, or one that takes nothing before the end). Run
    // ahead or not, within the bound; ahead, at most one ranged round and one round more than
    // waiting, each counted, and on one device a wrong guess at some epsilon.
    let pairs: Vec<(u32, u32)> = (0..256).map(|v| (v, (v + 1) % 256)).collect();
    let ring = groute_graph::testing::from_random_pairs(256, &pairs, true);
    let exact = pagerank_reference(&ring.csr, 0.85);
    on_one_to_three_devices(&ring, |tc, devices, parted| {
        let mut wrong_guesses = 0;
        for epsilon in [0.05, 0.02, 0.005, 0.001] {
            let what = format!("ring on {devices} {}, epsilon {epsilon}", tc.label);
            let run = |run_ahead: bool| {
                let mut o = by_ranges(true, 4);
                o.epsilon = epsilon;
                o.tuning.sweep_run_ahead = run_ahead;
                let got =
                    pagerank(&tc.context, parted, &o).unwrap_or_else(|e| panic!("{what}: {e}"));
                check_result(&exact, &o, devices, &got, &what);
                got.stats
            };
            let (ahead, waited) = (run(true), run(false));
            let more = |a: u64, w: u64| a == w || a == w + 1;
            assert!(
                more(ahead.ranged_rounds, waited.ranged_rounds),
                "{what}: {ahead:?}"
            );
            assert!(
                more(ahead.rounds, waited.rounds),
                "{what}: {ahead:?} {waited:?}"
            );
            assert!(
                ahead.ranged_rounds_ahead + 3 <= ahead.ranged_rounds.max(3),
                "{what}"
            );
            wrong_guesses += u32::from(ahead.ranged_rounds > waited.ranged_rounds);
        }
        if devices == 1 {
            assert!(
                wrong_guesses > 0,
                "ring on one {} device: every guess held",
                tc.label
            );
        }
    });
}
