//! The high-level API against the sequential references: every algorithm on several generated
//! graphs and 1, 2 and 3 devices, results in input order, serde round trips, the text files
//! the examples write, and the errors of bad arguments.
//!
//! The runs use the host backend; with `GROUTE_TEST_CUDA=1` (the GPU machine) they use CUDA.
//! With `GROUTE_TEST_REDUCED=1` the BFS, SSSP and PageRank checks run each graph once and each
//! device count at least once (`groute::core::testing::combinations`).

use std::collections::HashMap;

use groute::bfs::{BfsTuning, SwitchRule, bfs_reference};
use groute::cc::cc_reference;
use groute::core::testing::{combinations, cuda_required};
use groute::pagerank::{PageRankTuning, l1_distance, pagerank_reference};
use groute::sssp::sssp_reference;
use groute::worklist::traversal::FusedTuning;
use groute::{Backend, Error, Execution, Graph, Partition, Runner, Tuning, UNREACHED};

/// Generated graphs of different shapes: a weighted road grid (sparse, asynchronous BFS), a
/// Kronecker graph (dense enough for direction-optimizing BFS), a directed random graph
/// (METIS falls back to blocks) and a grid with several components.
const SPECS: &[&str] = &[
    "road:side=24,p=0.6,seed=5",
    "kron:scale=9,ef=16,sym,seed=2",
    "random:n=400,m=1600,seed=3,weights=1..20",
    "road:side=20,p=0.4,seed=9",
];

const DEVICES: &[usize] = &[1, 2, 3];

fn backend() -> Backend {
    if cuda_required() {
        Backend::Cuda
    } else {
        Backend::Host
    }
}

fn runner(devices: usize) -> Runner {
    Runner::new().devices(devices).backend(backend())
}

fn graphs() -> Vec<Graph> {
    SPECS
        .iter()
        .map(|s| Graph::generate(s).expect("generator spec"))
        .collect()
}

/// The first vertex with an out-arc (generated graphs are numbered in input order).
fn source_of(graph: &Graph) -> u32 {
    let csr = &graph.as_graph().csr;
    (0..graph.vertices() as u32)
        .find(|&v| csr.out_degree(v) > 0)
        .expect("a vertex with out-arcs")
}

/// Each of `graphs` with each device count of [`DEVICES`]; on reduced inputs each graph once
/// and each device count at least once ([`combinations`]).
fn with_device_counts(graphs: &[Graph]) -> Vec<(&Graph, usize)> {
    combinations([graphs.len(), DEVICES.len()])
        .into_iter()
        .map(|[gi, di]| (&graphs[gi], DEVICES[di]))
        .collect()
}

/// Asserts that `run` comes back from JSON equal to itself ([`round_trip`]); `name` names the
/// graph in the failure.
fn assert_round_trips<T>(run: &T, name: &str)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq,
{
    assert!(round_trip(run) == *run, "serde round trip: {name}");
}

/// `value` written to JSON and read back (serde_json's `float_roundtrip` keeps the f64s exact).
fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(value: &T) -> T {
    let json = serde_json::to_string(value).expect("serializes");
    serde_json::from_str(&json).expect("deserializes")
}

#[test]
fn bfs_matches_the_reference_on_every_graph_and_device_count() {
    let graphs = graphs();
    for (graph, devices) in with_device_counts(&graphs) {
        let source = source_of(graph);
        let expected = bfs_reference(&graph.as_graph().csr, source);
        let run = runner(devices).bfs(graph, source).expect("bfs runs");
        assert_eq!(run.levels, expected, "{} on {devices}", graph.name());
        assert_eq!(run.source, source);
        assert_eq!(run.stats.devices, devices);
        assert_eq!(run.stats.algorithm, "bfs");
        assert_ne!(run.stats.execution, Execution::Auto);
        assert_ne!(run.stats.partition, Some(Partition::Auto));
        assert_eq!(
            run.reached(),
            expected.iter().filter(|&&l| l != UNREACHED).count()
        );
        assert_round_trips(&run, graph.name());
    }
}

#[test]
fn sssp_matches_the_reference_on_every_graph_and_device_count() {
    let graphs = graphs();
    for (graph, devices) in with_device_counts(&graphs) {
        let source = source_of(graph);
        let expected = sssp_reference(&graph.as_graph().csr, source);
        let run = runner(devices).sssp(graph, source).expect("sssp runs");
        assert_eq!(run.distances, expected, "{} on {devices}", graph.name());
        assert_round_trips(&run, graph.name());
    }
}

#[test]
fn pagerank_stays_within_its_error_bound_of_the_reference() {
    let graphs = graphs();
    for (graph, devices) in with_device_counts(&graphs) {
        let exact = pagerank_reference(&graph.as_graph().csr, 0.85);
        let run = runner(devices).pagerank(graph).expect("pagerank runs");
        let l1 = l1_distance(&run.ranks, &exact.ranks);
        // The a-posteriori bound, plus f32 rounding of the accumulated ranks.
        let allowed = run.error_bound() + 1e-5 * graph.vertices() as f64;
        assert!(
            l1 <= allowed,
            "{} on {devices}: L1 {l1} > {allowed}",
            graph.name()
        );
        assert!(run.error_bound() > 0.0 && run.residual_left >= 0.0);
        assert_round_trips(&run, graph.name());
    }
}

#[test]
fn cc_matches_the_reference_on_every_graph_and_device_count() {
    for graph in graphs() {
        let expected = cc_reference(&graph.as_graph().csr);
        let components = {
            let mut labels = expected.clone();
            labels.sort_unstable();
            labels.dedup();
            labels.len()
        };
        for &devices in DEVICES {
            let run = runner(devices).cc(&graph).expect("cc runs");
            assert_eq!(run.labels, expected, "{} on {devices}", graph.name());
            assert_eq!(run.components, components);
            assert_eq!(run.stats.partition, None);
            assert_eq!(run.stats.execution, Execution::HostDriven);
            assert_round_trips(&run, graph.name());
        }
    }
}

/// CUDA (`GROUTE_TEST_CUDA=1`): device-driven CC is label propagation in persistent kernels,
/// with hook and compress's labels, directed graphs taken both ways. (On the host backend
/// device-driven runs are an error: the test below.)
#[test]
fn device_driven_cc_gives_the_reference_labels() {
    if !cuda_required() {
        return;
    }
    let graphs = graphs();
    for (graph, devices) in with_device_counts(&graphs) {
        let expected = cc_reference(&graph.as_graph().csr);
        let label = format!("{} on {devices}", graph.name());
        let run = runner(devices)
            .execution(Execution::DeviceDriven)
            .cc(graph)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(run.labels, expected, "{label}");
        assert_eq!(run.stats.execution, Execution::DeviceDriven, "{label}");
        assert!(
            run.stats.engine.starts_with("label propagation"),
            "{label}: {}",
            run.stats.engine
        );
        assert_eq!(
            run.components,
            runner(devices).cc(graph).unwrap().components
        );
    }
    // File ids out of order (internal 0..4 carry 40, 10, 30, 20), renumbered by METIS: the
    // labels are still by input order, each its component's smallest vertex in that order.
    let base = Graph::from_undirected_edges(4, [(0, 1), (2, 3)]).unwrap();
    let ids = groute::graph::VertexIds::from_table(0, vec![40, 10, 30, 20]).unwrap();
    let gaps = Graph::from_graph(groute::graph::Graph {
        ids,
        ..base.as_graph().clone()
    });
    for devices in [1, 2] {
        let run = runner(devices)
            .execution(Execution::DeviceDriven)
            .partition(Partition::Metis)
            .cc(&gaps)
            .unwrap();
        assert_eq!(run.labels, [0, 1, 1, 0], "ids with gaps on {devices}");
    }
}

#[test]
fn the_sparse_grid_with_holes_has_several_components() {
    // Guards the CC test above: it must see more than one component somewhere.
    let graph = Graph::generate(SPECS[3]).unwrap();
    let run = runner(2).cc(&graph).unwrap();
    assert!(run.components > 1, "{}", run.components);
    let (a, b) = (0..graph.vertices() as u32)
        .flat_map(|a| (0..graph.vertices() as u32).map(move |b| (a, b)))
        .find(|&(a, b)| run.labels[a as usize] != run.labels[b as usize])
        .unwrap();
    assert!(!run.connected(a, b));
    assert!(run.connected(a, run.labels[a as usize]));
}

#[test]
fn a_one_based_file_is_solved_in_input_order_and_written_with_its_own_ids() {
    // Relative to the package root, where cargo runs the tests (and so does a staged binary
    // on a machine without the source tree's absolute path).
    let mtx = Graph::load("datasets/tiny-weighted.mtx").unwrap();
    assert_eq!((mtx.vertices(), mtx.arcs()), (6, 10));
    // File vertex 1 is vertex 0.
    assert_eq!(mtx.vertex(1), Some(0));
    assert_eq!(mtx.file_id(0), 1);
    let source = mtx.vertex(1).unwrap();
    let run = runner(2).sssp(&mtx, source).unwrap();
    // 1 -> 3 (2) -> 2 (1) -> 4 (5) -> 5 (3) -> 6 (1).
    assert_eq!(run.distances, [0, 3, 2, 8, 11, 12]);

    let out = std::env::temp_dir().join(format!("groute-api-sssp-{}.txt", std::process::id()));
    run.write_text(&out).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).ok();
    assert_eq!(text, "1 0\n2 3\n3 2\n4 8\n5 11\n6 12\n");

    // BFS from vertex 6 of the file: every vertex is reachable through 6 -> 1.
    let levels = runner(1).bfs(&mtx, mtx.vertex(6).unwrap()).unwrap();
    assert_eq!(levels.levels[0], 1);
}

#[test]
fn unreachable_vertices_are_written_as_inf() {
    let graph = Graph::from_edges(3, [(0, 1)]).unwrap();
    let run = runner(1).bfs(&graph, 0).unwrap();
    assert_eq!(run.level(2), None);
    let out = std::env::temp_dir().join(format!("groute-api-bfs-{}.txt", std::process::id()));
    run.write_text(&out).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).ok();
    assert_eq!(text, "0 0\n1 1\n2 inf\n");
}

#[test]
fn pagerank_and_cc_write_the_examples_formats() {
    let graph = Graph::from_undirected_edges(4, [(0, 1), (2, 3)]).unwrap();
    let dir = std::env::temp_dir();
    let labels = dir.join(format!("groute-api-cc-{}.txt", std::process::id()));
    runner(2).cc(&graph).unwrap().write_text(&labels).unwrap();
    let text = std::fs::read_to_string(&labels).unwrap();
    std::fs::remove_file(&labels).ok();
    assert_eq!(text, "0 0\n1 0\n2 2\n3 2\n");

    let ranks = dir.join(format!("groute-api-pr-{}.txt", std::process::id()));
    let run = runner(1).pagerank(&graph).unwrap();
    run.write_text(&ranks).unwrap();
    let text = std::fs::read_to_string(&ranks).unwrap();
    std::fs::remove_file(&ranks).ok();
    let parsed: HashMap<u64, f32> = text
        .lines()
        .map(|l| {
            let (id, r) = l.split_once(' ').unwrap();
            (id.parse().unwrap(), r.parse().unwrap())
        })
        .collect();
    assert_eq!(parsed.len(), 4);
    for v in 0..4u32 {
        assert_eq!(parsed[&u64::from(v)], run.ranks[v as usize]);
    }
}

#[test]
fn stats_record_what_auto_chose() {
    let graph = Graph::generate("random:n=300,m=900,seed=1").unwrap();
    let run = runner(2)
        .partition(Partition::Metis)
        .bfs(&graph, source_of(&graph))
        .unwrap();
    // A directed graph cannot go to METIS: blocks, and a note saying why.
    assert_eq!(run.stats.partition, Some(Partition::Block));
    assert!(
        run.stats
            .partition_note
            .as_deref()
            .is_some_and(|n| n.contains("directed")),
        "{:?}",
        run.stats.partition_note
    );
    assert_eq!(run.stats.backend, backend());
    if backend() == Backend::Host {
        assert_eq!(run.stats.execution, Execution::HostDriven);
        assert_eq!(run.stats.device_ms, None);
    }
    let stats = round_trip(&run.stats);
    assert_eq!(stats, run.stats);
    let json = serde_json::to_value(&run.stats).unwrap();
    assert_eq!(json["execution"], run.stats.execution.name());
    assert_eq!(json["backend"], backend().name());
    assert_eq!(json["partition"], "block");
}

#[test]
fn host_driven_execution_gives_the_same_levels_as_auto() {
    let graph = Graph::generate(SPECS[1]).unwrap();
    let auto = runner(2).bfs(&graph, 0).unwrap();
    let host = runner(2)
        .execution(Execution::HostDriven)
        .bfs(&graph, 0)
        .unwrap();
    assert_eq!(auto.levels, host.levels);
    assert_eq!(host.stats.execution, Execution::HostDriven);
}

#[test]
fn every_execution_gives_the_reference_results_and_says_which_ran() {
    let specs = [SPECS[0], SPECS[1]];
    let executions = [Execution::HostDriven, Execution::DeviceDriven];
    // Reduced inputs (sanitizers): every graph, device count and execution once.
    for [si, di, ei] in combinations([specs.len(), 2, executions.len()]) {
        let (spec, devices, execution) = (specs[si], [1, 3][di], executions[ei]);
        let graph = Graph::generate(spec).unwrap();
        let csr = &graph.as_graph().csr;
        let source = source_of(&graph);
        let levels = bfs_reference(csr, source);
        let distances = sssp_reference(csr, source);
        let labels = cc_reference(csr);
        let exact = pagerank_reference(csr, 0.85);
        let what = format!("{spec}, {devices} devices, {execution}");
        let r = runner(devices).execution(execution);
        let bfs = r
            .bfs(&graph, source)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(bfs.levels, levels, "{what}");
        let sssp = r
            .sssp(&graph, source)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(sssp.distances, distances, "{what}");
        let cc = r.cc(&graph).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(cc.labels, labels, "{what}");
        let pr = r.pagerank(&graph).unwrap_or_else(|e| panic!("{what}: {e}"));
        let l1 = l1_distance(&pr.ranks, &exact.ranks);
        let allowed = pr.error_bound() + 1e-5 * graph.vertices() as f64;
        assert!(l1 <= allowed, "{what}: PageRank L1 {l1} > {allowed}");
        for stats in [&bfs.stats, &sssp.stats, &cc.stats, &pr.stats] {
            assert_eq!(stats.execution, execution, "{what}: {}", stats.engine);
        }
    }
}

#[test]
fn bad_arguments_are_typed_errors() {
    let graph = Graph::generate("road:side=4").unwrap();
    let err = groute::bfs(&graph, 16).unwrap_err();
    assert!(
        matches!(
            err,
            Error::VertexOutOfRange {
                vertex: 16,
                vertices: 16,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(matches!(
        runner(0).sssp(&graph, 0).unwrap_err(),
        Error::NoDevices
    ));
    let err = runner(groute::core::MAX_DEVICES + 1)
        .bfs(&graph, 0)
        .unwrap_err();
    assert!(
        matches!(err, Error::TooManyDevices { devices, max } if devices == groute::core::MAX_DEVICES + 1 && max == groute::core::MAX_DEVICES),
        "{err:?}"
    );
    assert!(err.to_string().contains("devices(256) or fewer"), "{err}");
    let err = runner(1)
        .pagerank_with(
            &graph,
            groute::PageRankParams {
                alpha: 1.5,
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(matches!(err, Error::PageRank(_)), "{err:?}");
    let empty = Graph::from_edges(0, Vec::<(u32, u32)>::new()).unwrap();
    assert!(matches!(
        runner(1).cc(&empty).unwrap_err(),
        Error::EmptyGraph { .. }
    ));
    assert!(matches!(
        groute::bfs(&empty, 0).unwrap_err(),
        Error::EmptyGraph { .. }
    ));
    // More devices than vertices: the partitioner's error, kept as the source.
    let err = runner(3)
        .bfs(&Graph::from_edges(2, [(0, 1)]).unwrap(), 0)
        .unwrap_err();
    assert!(matches!(err, Error::Graph(_)), "{err:?}");
    let err = Graph::generate("kron:scale=").unwrap_err();
    assert!(matches!(err, Error::Graph(_)), "{err:?}");
    let err = Graph::load("no/such/graph.mtx").unwrap_err();
    assert!(err.to_string().contains("graph.mtx"), "{err}");
}

#[test]
fn async_runs_give_the_blocking_results_under_tokio() {
    let graph = Graph::generate(SPECS[0]).unwrap();
    let runner = runner(2);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (bfs, sssp, pr, cc) = rt.block_on(async {
        tokio::join!(
            runner.bfs_async(&graph, 3),
            runner.sssp_async(&graph, 3),
            runner.pagerank_async(&graph),
            runner.cc_async(&graph),
        )
    });
    let csr = &graph.as_graph().csr;
    assert_eq!(bfs.unwrap().levels, bfs_reference(csr, 3));
    assert_eq!(sssp.unwrap().distances, sssp_reference(csr, 3));
    assert_eq!(pr.unwrap().ranks.len(), graph.vertices());
    assert_eq!(cc.unwrap().labels, cc_reference(csr));
    // Errors come back through the future too.
    let err = rt
        .block_on(groute::bfs_async(&graph, u32::MAX))
        .unwrap_err();
    assert!(matches!(err, Error::VertexOutOfRange { .. }), "{err:?}");
}

#[test]
fn runner_settings_round_trip_through_serde() {
    let r = Runner::new()
        .devices(3)
        .backend(Backend::Cuda)
        .execution(Execution::DeviceDriven)
        .partition(Partition::Block);
    let json = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<Runner>(&json).unwrap(), r);
    // Missing fields take the defaults.
    let partial: Runner = serde_json::from_str(r#"{"devices": 2}"#).unwrap();
    assert_eq!(partial, Runner::new().devices(2));
}

#[test]
fn the_api_types_can_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Graph>();
    send_sync::<Runner>();
    send_sync::<Error>();
    send_sync::<groute::BfsRun>();
    send_sync::<groute::SsspRun>();
    send_sync::<groute::PageRankRun>();
    send_sync::<groute::CcRun>();
    send::<groute::RunFuture<groute::BfsRun>>();
}

#[test]
fn jittered_schedules_give_the_reference_results() {
    let graph = Graph::generate(SPECS[2]).unwrap();
    let csr = &graph.as_graph().csr;
    let source = source_of(&graph);
    for seed in [1, 2, 3] {
        // Jitter reorders the host backend's executors (on every machine, the GPU one too).
        let r = Runner::new()
            .devices(3)
            .backend(Backend::Host)
            .jitter(Some(seed));
        assert_eq!(
            r.bfs(&graph, source).unwrap().levels,
            bfs_reference(csr, source)
        );
        assert_eq!(
            r.sssp(&graph, source).unwrap().distances,
            sssp_reference(csr, source)
        );
        assert_eq!(r.cc(&graph).unwrap().labels, cc_reference(csr));
    }
}

/// A [`Tuning`] changes how a run computes, never what: a BFS that never pulls, small fused
/// grids without the single-block mode, PageRank on worklist rounds alone, each on 1 and 2
/// devices, equal the references (PageRank within its bound), and the BFS that never pulls
/// expands each vertex it reaches exactly once where the default pulls. A tuning the
/// kernels cannot build is an error naming its flag.
#[test]
fn a_tuning_changes_how_a_run_computes_not_what() {
    let graph = Graph::generate("kron:scale=10,ef=16,sym,seed=3").unwrap();
    let csr = &graph.as_graph().csr;
    let source = source_of(&graph);
    let levels = bfs_reference(csr, source);
    let reached = levels.iter().filter(|&&l| l != UNREACHED).count() as u64;
    let tuning = Tuning {
        fused: FusedTuning {
            grid: Some(2),
            block: Some(64),
            solo_max: Some(0),
            ..FusedTuning::default()
        },
        bfs: BfsTuning {
            switch_rule: SwitchRule {
                alpha: 0,
                beta: 0,
                gamma: 0,
            },
            ..BfsTuning::default()
        },
        pagerank: PageRankTuning {
            sweep_divisor: Some(0),
            ..PageRankTuning::default()
        },
    };
    for devices in [1, 2] {
        let what = format!("{devices} devices");
        let plain = runner(devices);
        let tuned = runner(devices).tuning(tuning.clone());
        assert_eq!(tuned.tuning_choice(), &tuning, "{what}");
        let default_bfs = plain.bfs(&graph, source).unwrap();
        let pushed_bfs = tuned.bfs(&graph, source).unwrap();
        assert_eq!(default_bfs.levels, levels, "{what}");
        assert_eq!(pushed_bfs.levels, levels, "{what}");
        assert!(
            pushed_bfs.stats.engine.starts_with("direction-optimizing"),
            "{what}: {}",
            pushed_bfs.stats.engine
        );
        assert_eq!(pushed_bfs.stats.work_items, Some(reached), "{what}");
        assert_ne!(
            default_bfs.stats.work_items,
            Some(reached),
            "{what}: never pulled"
        );
        let sssp = tuned.sssp(&graph, source).unwrap();
        assert_eq!(sssp.distances, sssp_reference(csr, source), "{what}");
        let cc = tuned
            .clone()
            .execution(Execution::DeviceDriven)
            .cc(&graph)
            .unwrap();
        assert_eq!(cc.labels, cc_reference(csr), "{what}");
        let pr = tuned.pagerank(&graph).unwrap();
        let l1 = l1_distance(&pr.ranks, &pagerank_reference(csr, 0.85).ranks);
        let allowed = pr.error_bound() + 1e-5 * graph.vertices() as f64;
        assert!(l1 <= allowed, "{what}: PageRank L1 {l1} > {allowed}");
    }
    let unbuildable = Tuning {
        pagerank: PageRankTuning {
            fused_blocks_per_sm: 5,
            ..PageRankTuning::default()
        },
        ..Tuning::default()
    };
    let err = runner(1).tuning(unbuildable).pagerank(&graph).unwrap_err();
    assert!(
        matches!(err, Error::PageRank(_)) && err.to_string().contains("--fused-blocks-per-sm"),
        "{err}"
    );
}
