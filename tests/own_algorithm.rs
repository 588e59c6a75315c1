//! Any `WorklistAlgorithm` through the facade (`Runner::run_algorithm`): connected components
//! by label propagation, BFS and PageRank's residual push, each one implementation of the
//! trait, run over 1 to 3 devices with block and METIS partitions, give the crates' results
//! in input order, on generated graphs and on shipped files whose ids are not 0-based (the
//! ids that `init` sees are in input order too); bad requests are typed errors.

use std::path::Path;

use groute::bfs::{Bfs, bfs_reference};
use groute::cc::LabelPropagation;
use groute::pagerank::{PageRank, l1_distance, pagerank_reference};
use groute::{Backend, Error, Execution, Graph, Partition, Runner};

/// Symmetric graphs of several shapes, and a shipped METIS file (1-based ids).
fn symmetric_graphs() -> Vec<Graph> {
    let mut graphs: Vec<Graph> = [
        "road:side=20,p=0.4,seed=9",
        "kron:scale=9,ef=8,sym,seed=2",
        "road:side=16,p=0.7,seed=1",
    ]
    .iter()
    .map(|spec| Graph::generate(spec).unwrap())
    .collect();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/4elt.graph");
    graphs.push(Graph::load(shipped).unwrap());
    graphs
}

#[test]
fn component_labels_equal_the_cc_runs_labels_in_input_order() {
    for graph in symmetric_graphs() {
        let expected = groute::cc(&graph).unwrap().labels;
        for devices in [1, 2, 3] {
            for partition in [Partition::Block, Partition::Metis] {
                for execution in [Execution::Auto, Execution::DeviceDriven] {
                    let runner = Runner::new()
                        .devices(devices)
                        .backend(Backend::Host)
                        .partition(partition)
                        .execution(execution);
                    let what = format!(
                        "{} on {devices} devices, {partition}, {execution}",
                        graph.name()
                    );
                    let run = runner
                        .run_algorithm(&graph, LabelPropagation, &[])
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(run.values, expected, "{what}");
                    assert!(run.left.is_empty());
                    // Auto drives the host backend's rounds from the host.
                    let ran = match execution {
                        Execution::Auto => Execution::HostDriven,
                        asked => asked,
                    };
                    assert_eq!(run.stats.execution, ran, "{what}");
                    assert_eq!(run.stats.backend, Backend::Host);
                    assert_eq!(run.stats.devices, devices);
                }
            }
        }
    }
}

#[test]
fn the_crates_algorithms_run_through_it_too() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/tiny-weighted.mtx");
    for graph in [
        Graph::generate("road:side=24,p=0.6,seed=5").unwrap(),
        Graph::load(shipped).unwrap(),
    ] {
        let source = graph.default_source().unwrap();
        for devices in [1, 3] {
            let runner = Runner::new().devices(devices).partition(Partition::Metis);
            // BFS levels, from the source in input order.
            let run = runner.run_algorithm(&graph, Bfs, &[source]).unwrap();
            let mut expected = bfs_reference(&graph.as_graph().csr, graph_vertex(&graph, source));
            expected = input_order(&graph, expected);
            assert_eq!(run.values, expected, "{} bfs, {devices}", graph.name());
            // PageRank's residual push: within the a-priori bound of the exact ranks.
            let (alpha, epsilon) = (0.85f32, 1e-4f32);
            let run = runner
                .run_algorithm(&graph, PageRank { alpha, epsilon }, &[])
                .unwrap();
            let exact = input_order(
                &graph,
                pagerank_reference(&graph.as_graph().csr, f64::from(alpha)).ranks,
            );
            let l1 = l1_distance(&run.values, &exact);
            let bound = graph.vertices() as f64 * f64::from(epsilon) / (1.0 - f64::from(alpha));
            assert!(l1 <= bound + 1e-3, "{}: l1 {l1} > {bound}", graph.name());
            assert_eq!(run.left.len(), graph.vertices());
        }
    }
}

/// The internal vertex of input-order vertex `v` (the references run on the loaded graph's
/// internal numbering).
fn graph_vertex(graph: &Graph, v: u32) -> u32 {
    groute::graph::InputOrder::of(graph.as_graph()).vertex_of_rank(v)
}

/// Values by internal vertex, in input order.
fn input_order<T: Copy + Send + Sync>(graph: &Graph, values: Vec<T>) -> Vec<T> {
    groute::graph::InputOrder::of(graph.as_graph()).to_rank_order(values)
}

#[test]
fn bad_requests_are_typed_errors() {
    let graph = Graph::from_undirected_edges(4, [(0, 1), (2, 3)]).unwrap();
    let err = Runner::new()
        .backend(Backend::Cuda)
        .run_algorithm(&graph, LabelPropagation, &[])
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::BackendUnavailable {
                instead: Backend::Host,
                ..
            }
        ),
        "{err}"
    );
    let err = Runner::new().run_algorithm(&graph, Bfs, &[9]).unwrap_err();
    assert!(
        matches!(err, Error::VertexOutOfRange { vertex: 9, .. }),
        "{err}"
    );
    let err = Runner::new()
        .run_algorithm(&graph, groute::sssp::Sssp, &[0])
        .unwrap_err();
    assert!(err.to_string().contains("weights"), "{err}");
}
