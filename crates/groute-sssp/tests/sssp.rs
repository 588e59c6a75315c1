//! SSSP equals Dijkstra on shipped and generated graphs (weighted and not), on 1, 2, 3, 4 and
//! 8 devices, block and METIS partitions, plain and jittered host contexts (and CUDA with
//! `GROUTE_TEST_CUDA=1`); zero weights, parallel arcs of different weights, self-loops,
//! disconnected graphs and saturating sums included; with soft priority (the default band,
//! small and huge bands) and without (`prio_delta = Some(0)`). The checks shared with BFS are
//! the bodies of `groute_worklist::testing::host`, run with [`SsspUnderTest`].
//!
//! With `GROUTE_TEST_REDUCED=1` (`groute_core::testing::reduced`) each check runs one source
//! on block partitions (soft priority on and off), on 1 to 3 devices, on smaller generated
//! graphs, with the small shipped METIS graph and one file of the tiny weighted graph's
//! formats (the mesh left to full runs), each priority band once, and fewer random graphs.

mod common;

use groute_core::testing::{device_counts, full_or_reduced, pick, test_contexts};
use groute_graph::testing::{directed_path, from_pairs, from_triples, generated};
use groute_graph::{
    Csr, Graph, NoProgress, PartitionMethod, WeightSpec, load_graph, partition_graph,
};
use groute_sssp::{MAX_DISTANCE, Sssp, SsspError, SsspOptions, SsspSolver, sssp, sssp_reference};
use groute_worklist::testing::host::{self, JitterSweep, check};
use groute_worklist::testing::{SMALL_SHIPPED_GRAPH, host_options, shipped_graphs};
use groute_worklist::traversal::FusedMode;
use groute_worklist::{BandQuery, GraphShape, WorklistAlgorithm};
use proptest::prelude::*;

use common::{BIG, SsspUnderTest, saturating, the_default_band_cuts_work};

/// The host suites' settings (`groute_worklist::testing::host_options`).
fn options() -> SsspOptions {
    host_options::<SsspUnderTest>()
}

/// [`options`] with soft priority `prio_delta` (`None`: the default band, `Some(0)`: off).
fn options_with_priority(prio_delta: Option<u32>) -> SsspOptions {
    let mut o = options();
    o.worklist.prio_delta = prio_delta;
    o
}

fn datasets() -> std::path::PathBuf {
    groute_graph::shipped_datasets_dir().expect("the repository's datasets/ folder")
}

/// A Kronecker graph, a road grid, zero weights and parallel arcs; on reduced inputs each
/// graph a third to a quarter the size (the runs on the sanitizer's CUDA device are the long
/// part), its middle vertex in its giant component.
#[test]
fn generated_weighted_graphs_match_dijkstra_on_1_to_8_devices() {
    let graphs = [
        full_or_reduced(
            "kron:scale=9,ef=8,sym,seed=3,weights=1..64:5",
            "kron:scale=7,ef=8,sym,seed=3,weights=1..64:5",
        ),
        full_or_reduced(
            "road:side=24,p=0.6,seed=5,weights=1..1000:2",
            "road:side=14,p=0.6,seed=5,weights=1..1000:2",
        ),
        // Zero weights: whole regions share a distance.
        full_or_reduced(
            "random:n=600,m=1800,seed=7,weights=0..3:4",
            "random:n=200,m=600,seed=7,weights=0..3:4",
        ),
        // Parallel arcs of different weights (keepdup): only the lightest may count.
        full_or_reduced(
            "random:n=300,m=1500,seed=8,keepdup,weights=1..50:6",
            "random:n=100,m=500,seed=8,keepdup,weights=1..50:6",
        ),
    ]
    .map(generated);
    for g in &graphs {
        assert!(g.csr.is_weighted(), "{}", g.name);
    }
    host::generated_graphs_match_on_1_to_8_devices::<SsspUnderTest>(&graphs);
}

#[test]
fn unweighted_graphs_weigh_one_per_arc() {
    let g = generated("kron:scale=8,ef=8,sym,seed=11").map_csr_without_weights();
    assert!(!g.csr.is_weighted());
    for devices in [1, 3, 8] {
        check::<SsspUnderTest>(&g, devices, &[0, 7], &[devices as u64 + 20]);
    }
    // Distances equal hop counts on a path.
    let path = directed_path(100, "unweighted path");
    let ctx = groute_core::Context::host(4).unwrap();
    let parted = partition_graph(path, 4, PartitionMethod::Block, &NoProgress).unwrap();
    let got = sssp(&ctx, &parted, 0, &options()).unwrap();
    assert_eq!(got.distances, (0..100).collect::<Vec<u32>>());
    assert_eq!(got.max_distance(), 99);
}

/// `Graph` with its weights dropped (generators weigh road graphs by default).
trait WithoutWeights {
    fn map_csr_without_weights(self) -> Graph;
}

impl WithoutWeights for Graph {
    fn map_csr_without_weights(self) -> Graph {
        Graph {
            csr: self.csr.without_weights(),
            ..self
        }
    }
}

/// The weighted arcs of `groups`, one after another (groups of a few arcs each: a graph's
/// parts).
fn arcs(groups: &[&[(u32, u32, u32)]]) -> Vec<(u32, u32, u32)> {
    groups.concat()
}

#[test]
fn special_shapes_match_dijkstra() {
    // Three components: 0 - 1 - 2 and 5 - 6 - 7 (one arc of weight 0), a loop on 8.
    let disconnected = from_triples(
        10,
        &arcs(&[
            &[(0, 1, 2), (1, 0, 2), (1, 2, 7), (2, 1, 7)],
            &[(5, 6, 1), (6, 5, 1), (6, 7, 0), (7, 6, 0)],
            &[(8, 8, 3)],
        ]),
        "disconnected",
    );
    // The cycle 0 -> 1 -> ... -> 5 -> 0 with loops on 0, 1 and 3.
    let loops = arcs(&[
        &[(0, 0, 0), (0, 1, 4), (1, 1, 1), (1, 2, 2)],
        &[(2, 3, 9), (3, 3, 0), (3, 4, 1)],
        &[(4, 5, 1), (5, 0, 3)],
    ]);
    // Parallel arcs: the heavy copy comes first in input order.
    let parallel = arcs(&[
        &[(0, 1, 10), (0, 1, 3), (0, 1, 7)],
        &[(1, 2, 5), (1, 2, 1)],
        &[(0, 2, 9)],
        &[(2, 3, 0), (2, 3, 0)],
        &[(3, 4, 4), (3, 4, 2)],
    ]);
    // Zero-weight cycles and a zero-weight shortcut (4 -> 5 -> 3) that is found late.
    let zeros = arcs(&[
        &[(0, 1, 0), (1, 2, 0), (2, 0, 0)],
        &[(0, 3, 100), (2, 4, 50)],
        &[(4, 5, 0), (5, 3, 0)],
        &[(3, 6, 0), (6, 3, 0)],
    ]);
    let (loops, parallel, zeros) = (
        from_triples(6, &loops, "self-loops"),
        from_triples(5, &parallel, "parallel arcs"),
        from_triples(7, &zeros, "zero weights"),
    );
    // A weighted path where the long direct arc loses to many short ones.
    let mut chain: Vec<(u32, u32, u32)> = (0..199).map(|i| (i, i + 1, 1 + i % 3)).collect();
    chain.push((0, 199, 1_000_000));
    chain.push((150, 10, 0));
    let path = from_triples(200, &chain, "weighted path");
    host::shapes_match_on_every_device_count::<SsspUnderTest>(&[
        (&from_triples(1, &[], "single vertex"), &[0], 1),
        (&from_triples(1, &[(0, 0, 5)], "single self-loop"), &[0], 1),
        (&disconnected, &[0, 5, 8, 9], 3),
        (&loops, &[0, 3], 4),
        (&parallel, &[0, 1], 6),
        (&zeros, &[0, 3], 7),
        (&path, &[0, 150], 5),
    ]);
    let ctx = groute_core::Context::host(1).unwrap();
    let parted = partition_graph(parallel, 1, PartitionMethod::Block, &NoProgress).unwrap();
    let got = sssp(&ctx, &parted, 0, &options()).unwrap();
    assert_eq!(got.distances, [0, 3, 4, 4, 6]);
}

#[test]
fn long_paths_saturate_instead_of_wrapping() {
    let g = saturating();
    let expected = [0, BIG, 2 * BIG, MAX_DISTANCE, MAX_DISTANCE];
    assert_eq!(sssp_reference(&g.csr, 0), expected);
    for devices in device_counts(&[1, 2, 5]) {
        check::<SsspUnderTest>(&g, devices, &[0, 1], &[9]);
    }
}

/// Every shipped graph (on reduced inputs the small METIS graph and the tiny weighted one),
/// and those without weights with generated ones too (`--gen-weights`).
#[test]
fn shipped_graphs_match_dijkstra() {
    host::shipped_graphs_match::<SsspUnderTest>(&[1, 2, 3]);
    for g in shipped_graphs(&[SMALL_SHIPPED_GRAPH]) {
        if !g.csr.is_weighted() {
            let w = "1..100:3".parse::<WeightSpec>().unwrap().apply(g).unwrap();
            check::<SsspUnderTest>(&w, 3, &[0], &[2]);
        }
    }
}

#[test]
fn tiny_weighted_distances_are_those_in_its_header() {
    // datasets/tiny-weighted.gr: "Shortest distances from vertex 1: 1:0 2:3 3:2 4:8 5:11 6:12",
    // the same graph in three formats.
    let files = ["tiny-weighted.gr", "tiny-weighted.txt", "tiny-weighted.mtx"];
    for file in pick(files, &[0]) {
        let g = load_graph(datasets().join(file), None).unwrap();
        assert!(g.csr.is_weighted(), "{file}");
        for devices in device_counts(&[1, 2, 3, 6]) {
            let parted =
                partition_graph(g.clone(), devices, PartitionMethod::Metis, &NoProgress).unwrap();
            for tc in test_contexts(devices, &[devices as u64]) {
                let got = sssp(&tc.context, &parted, 0, &options()).unwrap();
                assert_eq!(
                    got.distances,
                    [0, 3, 2, 8, 11, 12],
                    "{file} on {devices} devices ({})",
                    tc.label
                );
            }
        }
    }
}

#[test]
fn a_solver_runs_from_many_sources() {
    let g = generated("road:side=20,p=0.7,seed=3,weights=1..20:1");
    let ctx = groute_core::Context::host(4).unwrap();
    let parted = partition_graph(g.clone(), 4, PartitionMethod::Metis, &NoProgress).unwrap();
    let mut solver = SsspSolver::new(&ctx, &parted, &options()).unwrap();
    for s in [0, 17, 399, 0] {
        let got = solver.run(s).unwrap();
        assert_eq!(got.distances, sssp_reference(&g.csr, s), "from {s}");
    }
}

#[test]
fn bad_inputs_are_clear_errors() {
    host::bad_inputs_are_clear_errors::<SsspUnderTest>(
        &generated("random:n=50,m=100,seed=1,weights=1..9"),
        &generated("road:side=16,p=0.9,seed=3,weights=1..9"),
    );
    assert_eq!(
        SsspError::EmptyGraph.to_string(),
        "the graph is empty: SSSP needs at least one vertex"
    );
}

/// An improvement storm: the source reaches `a` vertices at distance 1, and each of them
/// reaches every one of `b` further vertices by an arc whose weight falls with the tail's id,
/// so a vertex of the second layer improves once per tail expanded before a better one (up
/// to `a` x `b` worklist items in one level, far beyond the solver's first sizing).
fn improvement_storm(a: u32, b: u32) -> Graph {
    let mut arcs = Vec::with_capacity((a + a * b) as usize);
    for i in 1..=a {
        arcs.push((0, i, 1));
        for j in 0..b {
            arcs.push((i, a + 1 + j, 10 * (a - i) + 1 + j % 7));
        }
    }
    from_triples((1 + a + b) as usize, &arcs, "improvement storm")
}

/// With the capacities left to the solver, a run whose worklists outgrow their first
/// sizing still ends with Dijkstra's distances (on CUDA the worklists and outgoing buffers
/// grow and the run starts again; the host's are sized by the arcs), on every device count.
#[test]
fn improvement_storms_grow_the_worklists() {
    let g = improvement_storm(600, 600);
    matches_dijkstra_from_vertex_0(&g, &[Some(0), None], |run, got| {
        eprintln!(
            "storm: {run}: {} restarts, {} items",
            got.stats.worklist.restarts, got.stats.work_items
        );
    });
}

/// Runs `g` from vertex 0 twice per solver on 1, 2 and 3 devices (block partitions), in
/// every test context and with every band of `prios`, and checks Dijkstra's distances;
/// `report` sees each run (described) and its result.
fn matches_dijkstra_from_vertex_0(
    g: &Graph,
    prios: &[Option<u32>],
    report: impl Fn(&str, &groute_sssp::SsspResult),
) {
    let expected = sssp_reference(&g.csr, 0);
    for devices in [1, 2, 3] {
        let parted =
            partition_graph(g.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
        for tc in test_contexts(devices, &[]) {
            for &prio in prios {
                let run = format!("{devices} devices ({}), prio {prio:?}", tc.label);
                let mut solver =
                    SsspSolver::new(&tc.context, &parted, &options_with_priority(prio)).unwrap();
                for _ in 0..2 {
                    let got = solver.run(0).unwrap_or_else(|e| panic!("{run}: {e}"));
                    assert_eq!(got.distances, expected, "{run}");
                    report(&run, &got);
                }
            }
        }
    }
}

/// Hubs whose every arc improves its head: the source reaches `hubs` vertices at distances 1,
/// 2, ..., each of which has an arc to every one of `heads` further vertices, weighing from 1
/// to 50 by head and hub, so that each hub's arcs improve most heads that the hubs before it
/// reached.
fn hub_storm(hubs: u32, heads: u32) -> Graph {
    let mut arcs = Vec::with_capacity((hubs + hubs * heads) as usize);
    for h in 1..=hubs {
        arcs.push((0, h, h));
        for j in 0..heads {
            arcs.push((h, hubs + 1 + j, 1 + (j * 7 + h * 13) % 50));
        }
    }
    from_triples((1 + hubs + heads) as usize, &arcs, "hub storm")
}

/// Hub tiles that defer more heads than a block stages in shared memory (on CUDA a tile is 2,048
/// arcs and a block stages 1,024 deferred and sent heads; here nearly every arc of a hub is
/// deferred under a narrow band) lose none of them: Dijkstra's distances on every device count,
/// with narrow bands, the default one and none.
#[test]
fn hub_tiles_that_defer_more_heads_than_a_block_stages_lose_none() {
    let g = hub_storm(12, 6000);
    matches_dijkstra_from_vertex_0(&g, &[Some(1), Some(3), None, Some(0)], |_, _| {});
}

#[test]
fn stats_count_work_and_ring_traffic() {
    host::stats_count_work_and_ring_traffic::<SsspUnderTest>(&generated(
        "road:side=20,p=0.6,seed=9,weights=1..100",
    ));
}

/// Bands of one distance, 37 and unbounded on 1, 2, 3, 5 and 8 devices; one CUDA device runs
/// fused by default, so the per-round worker is covered there too. On reduced inputs a grid
/// of 10 on a side (79 vertices reached), whose few distances keep the epochs of the
/// narrowest band few.
#[test]
fn soft_priority_matches_dijkstra_under_jitter_for_every_band() {
    let side: u32 = full_or_reduced(32, 10);
    let g = generated(&format!("road:side={side},p=0.6,seed=12,weights=1..100:3"));
    host::soft_priority_matches_under_jitter::<SsspUnderTest>(&JitterSweep {
        graph: &g,
        source: 5,
        devices: &[1, 2, 3, 5, 8],
        prios: &[Some(1), Some(37), Some(u32::MAX)],
        one_device_modes: &[FusedMode::On, FusedMode::Off],
        jitter: &[11, 12, 13],
    });
}

#[test]
fn soft_priority_cuts_work_on_a_road_grid() {
    // Without priority a road grid's work items run to many times the vertices reached; with
    // the default band they stay close to one per vertex.
    let g = generated("road:side=64,p=0.6,seed=4,weights=1..100:7");
    let ctx = groute_core::Context::host(2).unwrap();
    let parted = partition_graph(g.clone(), 2, PartitionMethod::Metis, &NoProgress).unwrap();
    let source = 2080; // the middle of the grid
    let with = sssp(&ctx, &parted, source, &options_with_priority(None)).unwrap();
    let without = sssp(&ctx, &parted, source, &options_with_priority(Some(0))).unwrap();
    assert_eq!(with.distances, sssp_reference(&g.csr, source));
    assert!(
        with.reached() > 1000,
        "the source lies in the giant component"
    );
    // The host backend keeps the one-device band.
    the_default_band_cuts_work(&g, &with, &without, "host, 2 devices");
}

#[test]
fn the_default_band_is_a_multiple_of_the_average_weight() {
    let g = from_triples(3, &[(0, 1, 10), (1, 2, 31)], "two arcs");
    // Average weight 20.5, rounded up.
    assert_eq!(
        groute_sssp::default_prio_delta(&g.csr),
        21 * groute_sssp::PRIO_DELTA_AVERAGE_WEIGHTS as u32
    );
    let unweighted = from_pairs(2, &[(0, 1)], "one arc");
    assert_eq!(
        groute_sssp::default_prio_delta(&unweighted.csr),
        groute_sssp::PRIO_DELTA_AVERAGE_WEIGHTS as u32
    );
}

/// SSSP's default band ([`WorklistAlgorithm::default_band`]) of a run over `devices` devices
/// (CUDA ones when `cuda`) in `fused` mode on `csr`.
fn band_on(csr: &Csr, devices: usize, fused: FusedMode, cuda: bool) -> u32 {
    let run = BandQuery {
        graph: GraphShape::of(csr),
        cuda,
        devices,
        fused,
        device_driven: false,
    };
    Sssp::default_band(&run).expect("SSSP always has a default band")
}

#[test]
fn the_default_band_narrows_past_a_sparse_degree_down_to_a_floor() {
    // A sparse graph: the full band on one device, four times it where several CUDA devices
    // may run fused, the full band otherwise (one launch per level, host backend).
    let road = generated("road:side=16,p=0.6,seed=3,weights=100..300:1");
    let one = groute_sssp::default_prio_delta(&road.csr);
    let on = |devices, mode, cuda| band_on(&road.csr, devices, mode, cuda);
    assert_eq!(on(1, FusedMode::Auto, true), one);
    assert_eq!(
        on(2, FusedMode::Auto, true),
        one * groute_sssp::PRIO_DELTA_MULTI_DEVICE_FACTOR
    );
    assert_eq!(on(2, FusedMode::Off, true), one);
    assert_eq!(on(2, FusedMode::Auto, false), one);
    let complete = |n: u32, weight: u32| {
        let arcs: Vec<(u32, u32, u32)> = (0..n)
            .flat_map(|u| (0..n).filter(move |&v| v != u).map(move |v| (u, v, weight)))
            .collect();
        from_triples(n as usize, &arcs, "complete graph")
    };
    let full = |weight: u32| f64::from(weight) * groute_sssp::PRIO_DELTA_AVERAGE_WEIGHTS as f64;
    // A complete directed graph on 9 vertices: average degree 8, so the full band times
    // (5 / 8)^5, well above the floor.
    let mid = complete(9, 1000);
    let narrowed = full(1000)
        * (groute_sssp::PRIO_DELTA_FULL_BAND_MAX_DEGREE / 8.0)
            .powi(groute_sssp::PRIO_DELTA_NARROWING_EXPONENT);
    assert_eq!(
        groute_sssp::default_prio_delta(&mid.csr),
        narrowed.round() as u32
    );
    // On 21 vertices (degree 20) the power falls below the floor: one
    // PRIO_DELTA_DENSE_FLOOR_DIVISORth of the average weight.
    let dense = complete(21, 120);
    let floor = 120.0 / groute_sssp::PRIO_DELTA_DENSE_FLOOR_DIVISOR as f64;
    assert!(
        full(120)
            * (groute_sssp::PRIO_DELTA_FULL_BAND_MAX_DEGREE / 20.0)
                .powi(groute_sssp::PRIO_DELTA_NARROWING_EXPONENT)
            < floor
    );
    assert_eq!(
        groute_sssp::default_prio_delta(&dense.csr),
        floor.round() as u32
    );
    // Unit weights and a very high degree: never narrower than 1.
    let n = 201u32;
    let pairs: Vec<(u32, u32)> = (0..n)
        .flat_map(|u| (0..n).filter(move |&v| v != u).map(move |v| (u, v)))
        .collect();
    let denser = from_pairs(n as usize, &pairs, "complete graph, unit weights");
    assert_eq!(groute_sssp::default_prio_delta(&denser.csr), 1);
    // Dense graphs keep their narrowed band on several CUDA devices, fused or not, and on the
    // host backend.
    let on = |devices, mode, cuda| band_on(&denser.csr, devices, mode, cuda);
    assert_eq!(on(4, FusedMode::Auto, true), 1);
    assert_eq!(on(4, FusedMode::On, true), 1);
    assert_eq!(on(4, FusedMode::Off, true), 1);
    assert_eq!(on(4, FusedMode::Auto, false), 1);
    assert_eq!(on(1, FusedMode::Auto, true), 1);
    // And the narrowed band still gives Dijkstra's distances.
    let ctx = groute_core::Context::host(1).unwrap();
    let parted = partition_graph(dense.clone(), 1, PartitionMethod::Block, &NoProgress).unwrap();
    let result = sssp(&ctx, &parted, 3, &options_with_priority(None)).unwrap();
    assert_eq!(result.distances, sssp_reference(&dense.csr, 3));
}

/// The CUDA translation units (the rounds' and the fused kernel's) compile with NVRTC for the
/// GPU machine's architecture and hold the entry points the executors look up (the same
/// compile check as groute-core's `kernels_compile`, which covers the `.cu` files only).
#[test]
fn the_cuda_kernels_compile() {
    if let Err(e) = groute_core::cuda::nvrtc_version() {
        if std::env::var("GROUTE_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!("GROUTE_REQUIRE_NVRTC=1 but NVRTC is unavailable: {e}");
        }
        eprintln!("the_cuda_kernels_compile: SKIPPED, NVRTC unavailable ({e})");
        return;
    }
    let sources: [(_, &[&str]); 2] = [
        (
            groute_sssp::CUDA_SOURCE,
            &["sssp_expand", "sssp_split_receive", "sssp_reexamine"],
        ),
        (
            groute_sssp::CUDA_FUSED_SOURCE,
            &["sssp_fused", "sssp_fused_peer_wide"],
        ),
    ];
    for (source, entries) in sources {
        let ptx = groute_core::cuda::compile_uncached(&source, "compute_90", &[])
            .unwrap_or_else(|e| panic!("{}: {e}", source.name));
        for entry in entries {
            assert!(
                ptx.text.contains(&format!(".entry {entry}(")),
                "{} lacks {entry}",
                source.name
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(full_or_reduced(48, 6)))]
    #[test]
    fn random_small_weighted_graphs_match_dijkstra(
        n in 1usize..40,
        raw in proptest::collection::vec((0u32..40, 0u32..40, 0u32..12), 0..120),
        devices in 1usize..6,
        src in 0u32..40,
        seed in 0u64..1000,
        unweighted in proptest::bool::weighted(0.2),
        prio in prop_oneof![Just(Some(0u32)), Just(None), (1u32..30).prop_map(Some)],
    ) {
        let triples: Vec<(u32, u32, u32)> = raw
            .into_iter()
            .map(|(a, b, w)| (a % n as u32, b % n as u32, w))
            .collect();
        let mut g = from_triples(n, &triples, "proptest");
        if unweighted {
            g = g.map_csr_without_weights();
        }
        host::random_graph_matches::<SsspUnderTest>(&g, devices.min(n), src % n as u32, seed, prio);
    }
}
