//! New algorithms are one `WorklistAlgorithm` implementation each: the largest id reaching
//! each vertex of a directed graph (min-combined over `u32::MAX - id`, started from every
//! vertex), widest paths (min-combined over `u32::MAX - width`, weighted, from sources) and
//! path counts in a DAG (sum-combined integers, from sources). Each equals a sequential
//! reference on 1 to 4 devices, plain and jittered, over random graphs and random
//! partitions, host-driven and device-driven (the host backend's persistent members). The
//! CUDA executors refuse them (they run min traversals with kernels of their own), with an
//! error that says so.

use std::time::Duration;

use groute_core::testing::{scaled, test_contexts};
use groute_core::{BackendKind, Error};
use groute_graph::testing::{from_random_pairs, partition_at_cuts};
use groute_graph::{Csr, EdgeList, Graph, Partition};
use groute_worklist::algorithm::HostSolver;
use groute_worklist::traversal::{FusedMode, MinTraversalSolver, UNREACHED};
use groute_worklist::{WorklistAlgorithm, WorklistError, WorklistOptions};
use proptest::prelude::*;

#[path = "common/test_algorithms.rs"]
mod test_algorithms;
use test_algorithms::{LargestReachingId, PathCount, WIDEST_PATH};

fn largest_reaching_reference(csr: &Csr) -> Vec<u32> {
    // From the largest id down, mark everything it reaches that no larger id reached.
    let n = csr.num_vertices();
    let mut value = vec![0u32; n];
    let mut seen = vec![false; n];
    for root in (0..n as u32).rev() {
        if seen[root as usize] {
            continue;
        }
        seen[root as usize] = true;
        let mut stack = vec![root];
        while let Some(v) = stack.pop() {
            value[v as usize] = u32::MAX - root;
            for &u in csr.neighbors(v) {
                if !seen[u as usize] {
                    seen[u as usize] = true;
                    stack.push(u);
                }
            }
        }
    }
    value
}

fn widest_reference(csr: &Csr, sources: &[u32]) -> Vec<u32> {
    let n = csr.num_vertices();
    let weights = csr.weights().expect("weighted graph");
    let mut value = vec![UNREACHED; n];
    for &s in sources {
        value[s as usize] = 0;
    }
    // Bellman-Ford on (max, min) until nothing changes.
    let mut changed = true;
    while changed {
        changed = false;
        for v in 0..n as u32 {
            if value[v as usize] == UNREACHED {
                continue;
            }
            let first = csr.edge_range(v).start;
            for (i, &u) in csr.neighbors(v).iter().enumerate() {
                let cand = value[v as usize].max(u32::MAX - weights[first + i]);
                if cand < value[u as usize] {
                    value[u as usize] = cand;
                    changed = true;
                }
            }
        }
    }
    value
}

/// Path counts over a DAG whose arcs all go from a lower id to a higher one.
fn path_count_reference(csr: &Csr, sources: &[u32]) -> Vec<u32> {
    let n = csr.num_vertices();
    let mut count = vec![0u32; n];
    for &s in sources {
        count[s as usize] = 1;
    }
    for v in 0..n as u32 {
        for &u in csr.neighbors(v) {
            assert!(u > v, "not a forward DAG");
            count[u as usize] += count[v as usize];
        }
    }
    count
}

fn options() -> WorklistOptions {
    WorklistOptions {
        time_limit: Some(scaled(Duration::from_secs(60))),
        packet_size: 16,
        max_batch: 32,
        ..WorklistOptions::default()
    }
}

/// [`options`] for each execution mode the host backend runs: host-driven rounds, and
/// device-driven persistent members (the fused mode on).
fn executions() -> [(&'static str, WorklistOptions); 2] {
    let device = WorklistOptions {
        fused: FusedMode::On,
        ..options()
    };
    [("host-driven", options()), ("device-driven", device)]
}

/// Cuts `0..n` into `parts` ranges at the given cut points (sorted, clamped).
/// Runs `algorithm` on 1..=4 devices, plain and jittered, through the solver that runs every
/// algorithm on the host backend, and checks the values against `expected`; on CUDA contexts,
/// checks that the run is refused as unsupported.
fn check<A: WorklistAlgorithm<Value = u32> + Clone>(
    algorithm: &A,
    csr: &Csr,
    sources: &[u32],
    cuts: &[u32],
    expected: &[u32],
) {
    let n = csr.num_vertices();
    for devices in 1..=4usize.min(n.max(1)) {
        let part = partition_at_cuts(n, devices, cuts);
        for tc in test_contexts(devices, &[7]) {
            let label = format!(
                "{devices} devices, {}, bounds {:?}",
                tc.label,
                part.bounds()
            );
            let solver =
                MinTraversalSolver::new(&tc.context, algorithm.clone(), csr, &part, &options());
            if tc.context.backend_kind() == BackendKind::Cuda {
                let err = solver.map(|_| ()).unwrap_err();
                assert!(
                    matches!(err, WorklistError::Runtime(Error::Unsupported { .. })),
                    "{label}: {err}"
                );
                continue;
            }
            let mut solver = solver.unwrap_or_else(|e| panic!("{label}: {e}"));
            for (execution, options) in executions() {
                let out = solver
                    .run(sources, &options)
                    .unwrap_or_else(|e| panic!("{label}, {execution}: {e}"));
                assert_eq!(out.values, expected, "{label}, {execution}");
                assert_eq!(out.stats.late_items, 0, "{label}, {execution}");
                assert_eq!(out.stats.device_driven, execution == "device-driven");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn the_largest_reaching_ids_match_the_reference(
        n in 1u32..120,
        pairs in prop::collection::vec((any::<u32>(), any::<u32>()), 0..200),
        cuts in prop::collection::vec(any::<u32>(), 3),
    ) {
        let g = from_random_pairs(n, &pairs, false);
        let expected = largest_reaching_reference(&g.csr);
        check(&LargestReachingId, &g.csr, &[], &cuts, &expected);
    }

    #[test]
    fn widest_paths_match_the_reference(
        n in 1u32..100,
        arcs in prop::collection::vec((any::<u32>(), any::<u32>(), 1u32..1000), 0..300),
        sources in prop::collection::vec(any::<u32>(), 1..3),
        cuts in prop::collection::vec(any::<u32>(), 3),
    ) {
        let triples: Vec<(u32, u32, u32)> = arcs.iter().map(|&(a, b, w)| (a % n, b % n, w)).collect();
        let g = Graph::from_edges(n as usize, &EdgeList::from_triples(&triples), "random", false).unwrap();
        let sources: Vec<u32> = sources.iter().map(|s| s % n).collect();
        let expected = widest_reference(&g.csr, &sources);
        check(&WIDEST_PATH, &g.csr, &sources, &cuts, &expected);
    }

    #[test]
    fn path_counts_in_a_dag_match_the_reference(
        n in 2u32..40,
        arcs in prop::collection::vec((any::<u32>(), 1u32..4), 0..60),
        cuts in prop::collection::vec(any::<u32>(), 3),
    ) {
        // Forward arcs of length 1 to 3: the counts stay far below u32::MAX.
        let pairs: Vec<(u32, u32)> = arcs
            .iter()
            .map(|&(a, len)| (a % n, a % n + len))
            .filter(|&(_, b)| b < n)
            .collect();
        let g = Graph::from_edges(n as usize, &EdgeList::from_pairs(&pairs), "dag", false).unwrap();
        let expected = path_count_reference(&g.csr, &[0]);
        let n = n as usize;
        for devices in 1..=4usize.min(n) {
            let part = partition_at_cuts(n, devices, &cuts);
            for tc in test_contexts(devices, &[3]) {
                let label = format!("{devices} devices, {}, bounds {:?}", tc.label, part.bounds());
                let solver = HostSolver::new(&tc.context, PathCount, &g.csr, &part, &options());
                if tc.context.backend_kind() == BackendKind::Cuda {
                    let refused = matches!(solver, Err(WorklistError::Runtime(Error::Unsupported { .. })));
                    prop_assert!(refused, "{}", label);
                    continue;
                }
                let mut solver = solver.unwrap_or_else(|e| panic!("{label}: {e}"));
                for (execution, options) in executions() {
                    let out = solver.run(&[0], &options).unwrap_or_else(|e| panic!("{label}, {execution}: {e}"));
                    prop_assert_eq!(&out.values, &expected, "{}, {}", label, execution);
                    // Every unit of mass was processed: nothing is left on any vertex.
                    prop_assert!(out.left.iter().all(|&x| x == 0), "{}, {}: {:?}", label, execution, out.left);
                }
            }
        }
    }
}

#[test]
fn shipped_shapes_of_graph_match_the_references() {
    let road = Graph::generated("road:side=24,p=0.6,seed=3").unwrap();
    check(
        &LargestReachingId,
        &road.csr,
        &[],
        &[100, 300, 450],
        &largest_reaching_reference(&road.csr),
    );
    let kron = Graph::generated("kron:scale=9,ef=8,sym,seed=5,weights=1..200").unwrap();
    check(
        &WIDEST_PATH,
        &kron.csr,
        &[0, 17],
        &[64, 200, 400],
        &widest_reference(&kron.csr, &[0, 17]),
    );
}

/// The unweighted path 0 -> 1 -> 2, a host context of one device, and its one part.
fn unweighted_path_on_one_device() -> (Graph, groute_core::Context, Partition) {
    let g = Graph::from_edges(3, &EdgeList::from_pairs(&[(0, 1), (1, 2)]), "path", false).unwrap();
    let ctx = groute_core::Context::host(1).unwrap();
    (g, ctx, partition_at_cuts(3, 1, &[]))
}

#[test]
fn a_weighted_algorithm_on_a_graph_without_weights_is_an_error_naming_them() {
    let (g, ctx, part) = unweighted_path_on_one_device();
    let err = HostSolver::new(&ctx, WIDEST_PATH, &g.csr, &part, &options()).unwrap_err();
    assert!(err.to_string().contains("weights"), "{err}");
}

/// A skewed partition on three devices: the middle device owns one vertex, so almost
/// everything the first device sends is passed on by a device whose own worklist is tiny
/// (its sends must not be capped by that worklist's size).
#[test]
fn a_skewed_partition_passes_more_than_a_small_devices_worklist_holds() {
    let n = 10_001u32;
    // Every vertex of the first part has an arc into the last part.
    let triples: Vec<(u32, u32, u32)> = (0..5_000).map(|v| (v, 5_001 + v, 1 + v % 97)).collect();
    let g = Graph::from_edges(
        n as usize,
        &EdgeList::from_triples(&triples),
        "skewed",
        false,
    )
    .unwrap();
    let part = Partition::from_bounds(vec![0, 5_000, 5_001, n]).unwrap();
    let sources: Vec<u32> = (0..5_000).collect();
    // Whole segments in one packet: a device receives its predecessor's send at once.
    let options = || WorklistOptions {
        time_limit: Some(scaled(Duration::from_secs(60))),
        ..WorklistOptions::default()
    };
    let ctx = groute_core::Context::host(3).unwrap();
    let mut widest = HostSolver::new(&ctx, WIDEST_PATH, &g.csr, &part, &options()).unwrap();
    let out = widest.run(&sources, &options()).unwrap();
    assert_eq!(out.values, widest_reference(&g.csr, &sources));
    assert!(out.stats.items_sent() >= 5_000, "{:?}", out.stats);
    let mut counts = HostSolver::new(&ctx, PathCount, &g.csr, &part, &options()).unwrap();
    let out = counts.run(&sources, &options()).unwrap();
    assert_eq!(out.values, path_count_reference(&g.csr, &sources));
    // A cap the caller sets is kept, and named when it overflows.
    let capped = WorklistOptions {
        send_capacity: Some(16),
        ..options()
    };
    let err = widest.run(&sources, &capped).unwrap_err();
    assert!(err.to_string().contains("--send-capacity"), "{err}");
}

/// Soft priority over a min-combined algorithm of the trait: deferred items whose vertex
/// improved since are dropped (a newer copy was queued), and the result is unchanged.
#[test]
fn widest_paths_under_soft_priority_match_the_reference() {
    let g = Graph::generated("road:side=20,p=0.7,seed=8,weights=1..1000").unwrap();
    let expected = widest_reference(&g.csr, &[0]);
    for devices in [1, 2, 3] {
        let part = partition_at_cuts(g.num_vertices(), devices, &[150, 260]);
        for tc in test_contexts(devices, &[5]) {
            if tc.context.backend_kind() == BackendKind::Cuda {
                continue;
            }
            let mut solver =
                MinTraversalSolver::new(&tc.context, WIDEST_PATH, &g.csr, &part, &options())
                    .unwrap();
            for ((execution, options), delta) in executions()
                .into_iter()
                .flat_map(|e| [(e.clone(), 1), (e, u32::MAX / 4)])
            {
                let o = WorklistOptions {
                    prio_delta: Some(delta),
                    ..options
                };
                let out = solver.run(&[0], &o).unwrap();
                assert_eq!(
                    out.values, expected,
                    "{devices} devices, {}, {execution}, delta {delta}",
                    tc.label
                );
            }
        }
    }
}

#[test]
fn the_min_traversal_solver_refuses_a_sum_combined_algorithm() {
    let (g, ctx, part) = unweighted_path_on_one_device();
    let err = MinTraversalSolver::new(&ctx, PathCount, &g.csr, &part, &options()).unwrap_err();
    assert!(err.to_string().contains("HostSolver"), "{err}");
}
