//! Runs spanning ranks, the ranks as threads of this process ([`LocalRanks`], jittered):
//! BFS, SSSP, connected components and PageRank on 1 to 4 ranks of 1 or 2 devices over random
//! graphs and random partitions (SSSP with and without soft priority) equal their sequential
//! references; a failing rank ends the run on every rank with an error, and ranks that
//! disagree on their devices are refused.

use std::time::Duration;

use groute_bfs::{Bfs, bfs_reference};
use groute_cc::{LabelPropagation, cc_reference};
use groute_core::Context;
use groute_core::testing::scaled;
use groute_dist::{DistError, DistOutput, DistSolver, LocalRanks, RankComm};
use groute_graph::testing::{from_random_pairs, partition_at_cuts};
use groute_graph::{
    Csr, GenSpec, Graph, GraphCache, GraphFormat, HeldRows, NoProgress, Partition,
    block_partition_of_offsets, generate, write_graph,
};
use groute_pagerank::{PageRank, PageRankShare};
use groute_sssp::{Sssp, sssp_reference};
use groute_worklist::{WorklistAlgorithm, WorklistOptions};
use proptest::prelude::*;
use support::{host_context as context, on_every_rank, pagerank_close};

mod support;

fn options() -> WorklistOptions {
    WorklistOptions {
        time_limit: Some(scaled(Duration::from_secs(60))),
        packet_size: 16,
        max_batch: 32,
        ..WorklistOptions::default()
    }
}

/// Every rank's result of running `algorithm` on `ranks` threads of `devices` devices each,
/// in rank order; `options_of(rank)` gives each rank's options.
fn run_ranks<A>(
    algorithm: &A,
    csr: &Csr,
    partition: &Partition,
    (ranks, devices): (usize, usize),
    sources: &[u32],
    jitter: Option<u64>,
    options_of: impl Fn(usize) -> WorklistOptions + Sync,
) -> Vec<Result<DistOutput<A::Value>, DistError>>
where
    A: WorklistAlgorithm + Clone,
{
    let comms = LocalRanks::new(ranks, jitter);
    on_every_rank(comms, |mut comm| {
        let rank = comm.rank();
        let ctx = context(devices, jitter.map(|s| s + rank as u64));
        let options = options_of(rank);
        DistSolver::new(&mut comm, &ctx, algorithm.clone(), csr, partition, &options)
            .and_then(|mut s| s.run(sources, &options))
    })
}

/// Rank 0's values of a run that every rank finished; the other ranks' are empty.
fn values_on_root<V: Clone + std::fmt::Debug>(
    outs: Vec<Result<DistOutput<V>, DistError>>,
    label: &str,
) -> Vec<V> {
    let outs = support::expect_ok_on_every_rank(outs, label);
    for (r, o) in outs.iter().enumerate().skip(1) {
        assert!(o.values.is_empty(), "{label}: rank {r} holds values");
        assert_eq!(o.totals, outs[0].totals, "{label}: rank {r}'s totals");
    }
    for o in &outs {
        assert_eq!(o.stats.late_items, 0, "{label}");
    }
    outs.into_iter()
        .next()
        .map(|o| o.values)
        .unwrap_or_default()
}

/// Random graphs: `n` vertices, arcs from `pairs`, symmetric when asked, weights from
/// `weights` (cycled) when given.
fn graph(n: u32, pairs: &[(u32, u32)], symmetric: bool, weights: Option<&[u32]>) -> Csr {
    let csr = from_random_pairs(n, pairs, symmetric).csr;
    match weights {
        Some(w) if !w.is_empty() => {
            let m = csr.num_edges() as usize;
            csr.with_weights((0..m).map(|i| w[i % w.len()] % 100 + 1).collect())
                .expect("weights")
        }
        _ => csr,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn min_algorithms_equal_their_references(
        n in 1u32..120,
        pairs in prop::collection::vec((any::<u32>(), any::<u32>()), 0..300),
        weights in prop::collection::vec(any::<u32>(), 1..50),
        ranks in 1usize..5,
        devices in 1usize..3,
        cuts in prop::collection::vec(any::<u32>(), 8),
        source in any::<u32>(),
        jitter in any::<u64>(),
        prio_delta in prop::option::of(any::<u32>()),
    ) {
        let parts = ranks * devices;
        let source = source % n;
        let shape = (ranks, devices);
        let label = format!("{ranks} ranks x {devices} devices, jitter {jitter}");

        let csr = graph(n, &pairs, false, None);
        let part = partition_at_cuts(n as usize, parts, &cuts);
        let levels = run_ranks(&Bfs, &csr, &part, shape, &[source], Some(jitter), |_| options());
        prop_assert_eq!(values_on_root(levels, &label), bfs_reference(&csr, source), "BFS {}", label);

        // Soft priority advances within each rank, on its own threshold.
        let weighted = graph(n, &pairs, false, Some(&weights));
        let prio = |_| WorklistOptions { prio_delta: prio_delta.map(|d| d % 60 + 1), ..options() };
        let dist = run_ranks(&Sssp, &weighted, &part, shape, &[source], Some(jitter), prio);
        prop_assert_eq!(values_on_root(dist, &label), sssp_reference(&weighted, source), "SSSP {} prio {:?}", label, prio_delta);

        let symmetric = graph(n, &pairs, true, None);
        let labels = run_ranks(&LabelPropagation, &symmetric, &part, shape, &[], Some(jitter), |_| options());
        prop_assert_eq!(values_on_root(labels, &label), cc_reference(&symmetric), "CC {}", label);
    }
}

#[test]
fn pagerank_over_ranks_is_within_the_error_bound() {
    let pairs: Vec<(u32, u32)> = (0..2_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) % 500, (i * 7 + i / 3) % 500))
        .collect();
    let csr = graph(500, &pairs, false, None);
    let (alpha, epsilon) = (0.85f32, 1e-3f32);
    for (ranks, devices) in [(2, 1), (3, 1), (2, 2)] {
        let part = partition_at_cuts(500, ranks * devices, &[97, 211, 260, 333, 401, 450, 470]);
        let label = format!("{ranks} ranks x {devices} devices");
        let outs = run_ranks(
            &PageRank { alpha, epsilon },
            &csr,
            &part,
            (ranks, devices),
            &[],
            Some(3),
            |_| options(),
        );
        let ranks_found = values_on_root(outs, &label);
        assert!(
            pagerank_close(&csr, alpha, epsilon, &ranks_found),
            "{label}: ranks beyond the error bound"
        );
    }
}

/// Every rank's result of `algorithm` where each rank loads only the rows of its parts from
/// `cache` (blocks of vertices and arcs, as the examples partition under mpirun).
fn run_ranks_on_own_rows<A>(
    algorithm: &A,
    cache: &GraphCache,
    (ranks, devices): (usize, usize),
    sources: &[u32],
    options: &WorklistOptions,
) -> Vec<Result<DistOutput<A::Value>, DistError>>
where
    A: WorklistAlgorithm + Clone,
{
    let partition =
        block_partition_of_offsets(cache.offsets(), ranks * devices).expect("block partition");
    let comms = LocalRanks::new(ranks, Some(ranks as u64));
    on_every_rank(comms, |mut comm| {
        let rank = comm.rank();
        let held = partition.range_of_parts(rank * devices..(rank + 1) * devices);
        let graph = cache.load_rows(held.clone()).expect("the rank's rows");
        let others: u64 = (0..graph.num_vertices() as u32)
            .filter(|v| !held.contains(v))
            .map(|v| graph.csr.out_degree(v))
            .sum();
        assert_eq!(others, 0, "rank {rank} holds arcs of rows not its own");
        let rows = HeldRows::some(&graph.csr, held, graph.symmetric).expect("rows");
        let ctx = context(devices, Some(rank as u64));
        DistSolver::new(
            &mut comm,
            &ctx,
            algorithm.clone(),
            rows,
            &partition,
            options,
        )
        .and_then(|mut s| s.run(sources, options))
    })
}

/// Ranks that load only their parts' rows of a cache give the references' results: BFS and
/// SSSP on a directed and a symmetric graph, CC on the symmetric one, PageRank (pushes where
/// a directed graph's in-arcs are not held) within its bound.
#[test]
fn ranks_holding_only_their_rows_of_a_cache_equal_the_references() {
    let dir = std::env::temp_dir().join(format!("groute-dist-rows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let specs = [
        ("random:n=700,m=5000,seed=4,weights=1..40:2", false),
        ("kron:scale=10,ef=8,sym,seed=5,weights=1..64:3", true),
    ];
    for (spec, symmetric) in specs {
        let whole: Graph = generate(&spec.parse::<GenSpec>().expect("spec"), &NoProgress)
            .expect("generated graph");
        assert_eq!(whole.symmetric, symmetric, "{spec}");
        let path = dir.join("g.grc");
        write_graph(&whole, &path, Some(GraphFormat::Cache)).expect("cache written");
        let cache = GraphCache::open(&path).expect("cache opened");
        let csr = &whole.csr;
        let source = (csr.num_vertices() / 3) as u32;
        for shape in [(2, 1), (3, 1), (2, 2)] {
            let label = format!("{spec}, {} ranks x {} devices", shape.0, shape.1);
            let levels = run_ranks_on_own_rows(&Bfs, &cache, shape, &[source], &options());
            assert_eq!(
                values_on_root(levels, &label),
                bfs_reference(csr, source),
                "BFS {label}"
            );
            let dist = run_ranks_on_own_rows(&Sssp, &cache, shape, &[source], &options());
            assert_eq!(
                values_on_root(dist, &label),
                sssp_reference(csr, source),
                "SSSP {label}"
            );
            if symmetric {
                let labels =
                    run_ranks_on_own_rows(&LabelPropagation, &cache, shape, &[], &options());
                assert_eq!(
                    values_on_root(labels, &label),
                    cc_reference(csr),
                    "CC {label}"
                );
            }
            // Batches of 32 items a round make a host run of residual pushes on a power-law
            // graph send many more items than it processes: PageRank takes the defaults.
            let (alpha, epsilon) = (0.85f32, 1e-3f32);
            let defaults = WorklistOptions {
                time_limit: options().time_limit,
                ..WorklistOptions::default()
            };
            let pagerank = PageRank { alpha, epsilon };
            let ranks = run_ranks_on_own_rows(&pagerank, &cache, shape, &[], &defaults);
            assert!(
                pagerank_close(csr, alpha, epsilon, &values_on_root(ranks, &label)),
                "PageRank {label}: ranks beyond the error bound"
            );
        }
        drop(cache);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A rank whose rows miss its parts is refused, on every rank, with the fix.
#[test]
fn rows_that_miss_a_ranks_parts_are_refused_on_every_rank() {
    let csr = support::graphs::random_graph(200, 900, 7, true);
    let part = partition_at_cuts(200, 2, &[100]);
    let comms = LocalRanks::new(2, None);
    let errors: Vec<String> = on_every_rank(comms, |mut comm| {
        // Both ranks say they hold the first part's rows: rank 1's are missing.
        let rows = HeldRows::some(&csr, 0..100, true).expect("rows");
        let ctx = context(1, None);
        DistSolver::new(&mut comm, &ctx, Bfs, rows, &part, &options())
            .map(|_| ())
            .expect_err("rank 1's rows are missing")
            .to_string()
    });
    assert!(errors[1].contains("held rows"), "{}", errors[1]);
    assert!(errors[0].contains("rank"), "{}", errors[0]);
}

#[test]
fn a_failing_rank_ends_the_run_on_every_rank() {
    let pairs: Vec<(u32, u32)> = (0..400u32).map(|i| (i % 100, (i * 13 + 1) % 100)).collect();
    let csr = graph(100, &pairs, false, None);
    let part = partition_at_cuts(100, 3, &[30, 60]);
    // Rank 1's options are bad (a batch of zero items): its drivers refuse to start.
    let outs = run_ranks(&Bfs, &csr, &part, (3, 1), &[0], None, |rank| {
        WorklistOptions {
            max_batch: if rank == 1 { 0 } else { 32 },
            ..options()
        }
    });
    for (rank, out) in outs.into_iter().enumerate() {
        let err = out.map(|_| ()).expect_err("the run must fail");
        let text = err.to_string();
        if rank == 1 {
            assert!(text.contains("max_batch"), "rank 1: {text}");
        } else {
            assert!(
                matches!(
                    err,
                    DistError::PeerFailed {
                        failed: 1,
                        ranks: 3,
                        ..
                    }
                ),
                "rank {rank}: {text}"
            );
        }
    }
}

#[test]
fn ranks_with_different_device_counts_are_refused_on_every_rank() {
    let csr = graph(40, &[(0, 1), (1, 2), (2, 39)], false, None);
    let part = partition_at_cuts(40, 2, &[20]);
    let comms = LocalRanks::new(2, None);
    let errors: Vec<String> = on_every_rank(comms, |mut comm| {
        // Rank 0 has one device, rank 1 two: 2 parts fit rank 0's view only.
        let ctx = context(comm.rank() + 1, None);
        DistSolver::new(&mut comm, &ctx, Bfs, &csr, &part, &options())
            .map(|_| ())
            .expect_err("refused")
            .to_string()
    });
    for e in errors {
        assert!(
            e.contains("devices per rank") && e.contains("--devices"),
            "{e}"
        );
    }
}

/// BFS whose `init` panics on one chosen rank (an algorithm's own code failing).
#[derive(Clone)]
struct PanicsOnInit(bool);

impl WorklistAlgorithm for PanicsOnInit {
    type Value = u32;
    const COMBINE: groute_worklist::Combine = groute_worklist::Combine::Min;
    const START: groute_worklist::Start = groute_worklist::Start::Sources;
    const WEIGHTED: bool = false;
    fn init(&self, vertex: u32, source: bool) -> u32 {
        assert!(!self.0, "init panics on this rank");
        Bfs.init(vertex, source)
    }
    fn relax(&self, value: u32, weight: u32, out_degree: u32) -> Option<u32> {
        Bfs.relax(value, weight, out_degree)
    }
}

#[test]
fn a_panicking_rank_fails_the_run_on_every_rank_and_the_next_run_is_exact() {
    let pairs: Vec<(u32, u32)> = (0..600u32).map(|i| (i % 150, (i * 17 + 3) % 150)).collect();
    let csr = graph(150, &pairs, false, None);
    let part = partition_at_cuts(150, 3, &[50, 100]);
    let expected = bfs_reference(&csr, 0);
    for seed in 0..4u64 {
        let comms = LocalRanks::new(3, Some(seed));
        let outcomes: Vec<(String, Vec<u32>)> = on_every_rank(comms, |mut comm| {
            let rank = comm.rank();
            let ctx = context(1, Some(seed + rank as u64));
            // A run whose rank 1 panics in its algorithm's code...
            let failed = DistSolver::new(
                &mut comm,
                &ctx,
                PanicsOnInit(rank == 1),
                &csr,
                &part,
                &options(),
            )
            .and_then(|mut s| s.run(&[0], &options()))
            .map(|_| ())
            .expect_err("the run must fail")
            .to_string();
            // ...then a good one on the same communicator.
            let good = DistSolver::new(&mut comm, &ctx, Bfs, &csr, &part, &options())
                .and_then(|mut s| s.run(&[0], &options()))
                .unwrap_or_else(|e| panic!("rank {rank}, second run: {e}"));
            (failed, good.values)
        });
        for (rank, (failed, values)) in outcomes.into_iter().enumerate() {
            if rank == 1 {
                assert!(failed.contains("panicked"), "seed {seed}, rank 1: {failed}");
            } else {
                assert!(
                    failed.contains("1 of 3 ranks failed"),
                    "seed {seed}, rank {rank}: {failed}"
                );
            }
            if rank == 0 {
                assert_eq!(values, expected, "seed {seed}");
            }
        }
    }
}

/// Two runs of `algorithm` from `sources` on one solver over `comm`'s devices, each equal to
/// `expected` (`label` names the check in failures).
fn expect_two_runs<A: WorklistAlgorithm<Value = u32>>(
    comm: &mut LocalRanks,
    ctx: &Context,
    (algorithm, expected): (A, Vec<u32>),
    (csr, part): (&Csr, &Partition),
    sources: &[u32],
    label: &str,
) {
    let mut solver = DistSolver::new(comm, ctx, algorithm, csr, part, &options())
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    for _ in 0..2 {
        let out = solver.run(sources, &options()).expect(label);
        assert_eq!(out.values, expected, "{label}");
    }
}

/// One rank on CUDA devices (with `GROUTE_TEST_CUDA=1`): its ring closes on itself, the last
/// device's items staged onto device 0 (no NCCL). BFS, SSSP and CC (label propagation) equal
/// their references, and PageRank ([`PageRankShare`]) is within its error bound, each run
/// twice on one solver.
#[test]
fn one_rank_on_cuda_devices_equals_the_references() {
    for devices in [1, 2, 3] {
        let Some(ctx) = groute_core::testing::cuda_context(devices) else {
            return;
        };
        for seed in 0..3u32 {
            let n = 2_000 + 500 * seed;
            let pairs: Vec<(u32, u32)> = (0..8 * n)
                .map(|i| (i.wrapping_mul(2_654_435_761) % n, (i * 7 + seed) % n))
                .collect();
            let weights: Vec<u32> = (0..64).map(|i| i * 13 + seed).collect();
            let csr = graph(n, &pairs, false, Some(&weights));
            let part = partition_at_cuts(n as usize, devices, &[n / 3, 2 * n / 3]);
            let source = seed * 11 % n;
            let label = format!("{devices} CUDA devices, seed {seed}");
            let mut comms = LocalRanks::new(1, None);
            let comm = &mut comms[0];
            let parted = (&csr, &part);
            let bfs = (Bfs, bfs_reference(&csr, source));
            expect_two_runs(comm, &ctx, bfs, parted, &[source], &format!("BFS, {label}"));
            let sssp = (Sssp, sssp_reference(&csr, source));
            expect_two_runs(
                comm,
                &ctx,
                sssp,
                parted,
                &[source],
                &format!("SSSP, {label}"),
            );
            // A directed graph: pull sweeps read the owned rows of its transpose.
            let (alpha, epsilon) = (0.85f32, 1e-3f32);
            let mut pagerank = DistSolver::<_, _, PageRankShare>::with_device_solver(
                comm,
                &ctx,
                PageRank { alpha, epsilon },
                &csr,
                &part,
                &options(),
            )
            .unwrap_or_else(|e| panic!("{label}: {e}"));
            for _ in 0..2 {
                let out = pagerank.run(&[], &options()).expect("PageRank");
                assert!(
                    pagerank_close(&csr, alpha, epsilon, &out.values),
                    "PageRank, {label}: ranks beyond the error bound"
                );
                assert_eq!(out.left.len(), csr.num_vertices(), "PageRank, {label}");
            }
        }
        let pairs: Vec<(u32, u32)> = (0..900u32)
            .map(|i| (i * 7 % 1_000, i * 13 % 1_000))
            .collect();
        let csr = graph(1_000, &pairs, true, None);
        let part = partition_at_cuts(1_000, devices, &[300, 600]);
        let mut comms = LocalRanks::new(1, None);
        let cc = (LabelPropagation, cc_reference(&csr));
        let label = format!("CC, {devices} CUDA devices");
        expect_two_runs(&mut comms[0], &ctx, cc, (&csr, &part), &[], &label);
    }
}

/// Rank 0's words reach every rank, whatever the others give (and however many).
#[test]
fn broadcast_from_root_gives_every_rank_rank_zeros_words() {
    for ranks in [1, 2, 3, 5] {
        let comms = LocalRanks::new(ranks, Some(ranks as u64));
        let got: Vec<Vec<u64>> = on_every_rank(comms, |mut comm| {
            let rank = comm.rank() as u64;
            let mine: Vec<u64> = (0..=rank).map(|i| 100 * rank + i + 7).collect();
            comm.broadcast_from_root(&mine).expect("broadcast")
        });
        for (rank, words) in got.iter().enumerate() {
            assert_eq!(words, &[7], "{ranks} ranks: rank {rank}");
        }
    }
}
