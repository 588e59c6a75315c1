//! Device-driven execution on the host backend (`HostSolver` with the fused mode on): one
//! persistent member per device. Its counters, its failures (a capacity, the time limit, a
//! panicking algorithm: errors, never a hang) and its bounded inboxes (a sender waits for
//! room). The results of every algorithm of the crate's tests under it are checked in
//! `algorithms.rs`, beside the host-driven ones.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use groute_core::testing::scaled;
use groute_core::{Context, Error};
use groute_graph::{Csr, EdgeList, Graph, block_partition};
use groute_worklist::algorithm::HostSolver;
use groute_worklist::traversal::{FusedDriver, FusedMode, UNREACHED};
use groute_worklist::{WorklistError, WorklistOptions};

#[path = "common/test_algorithms.rs"]
mod test_algorithms;
use test_algorithms::{DISTANCES, FromSources, Panicking};

fn dijkstra(csr: &Csr, source: u32) -> Vec<u32> {
    let weights = csr.weights().expect("weighted graph");
    let mut dist = vec![UNREACHED; csr.num_vertices()];
    let mut heap = BinaryHeap::from([Reverse((0u32, source))]);
    dist[source as usize] = 0;
    while let Some(Reverse((d, v))) = heap.pop() {
        if d > dist[v as usize] {
            continue;
        }
        let first = csr.edge_range(v).start;
        for (i, &u) in csr.neighbors(v).iter().enumerate() {
            let cand = d.saturating_add(weights[first + i]);
            if cand < dist[u as usize] {
                dist[u as usize] = cand;
                heap.push(Reverse((cand, u)));
            }
        }
    }
    dist
}

fn device_driven() -> WorklistOptions {
    WorklistOptions {
        fused: FusedMode::On,
        time_limit: Some(scaled(Duration::from_secs(60))),
        ..WorklistOptions::default()
    }
}

fn road() -> Graph {
    Graph::generated("road:side=40,p=0.7,seed=2,weights=1..100:5").unwrap()
}

fn solver(devices: usize, graph: &Graph) -> HostSolver<FromSources> {
    let ctx = Context::host(devices).unwrap();
    let part = block_partition(&graph.csr, devices).unwrap();
    HostSolver::new(&ctx, DISTANCES, &graph.csr, &part, &device_driven()).unwrap()
}

#[test]
fn the_driver_or_the_fused_mode_asks_for_the_members() {
    let asks = |fused, fused_driver| {
        WorklistOptions {
            fused,
            fused_driver,
            ..WorklistOptions::default()
        }
        .device_driven_on_host()
    };
    assert!(asks(FusedMode::On, FusedDriver::Auto));
    assert!(asks(FusedMode::On, FusedDriver::Device));
    assert!(asks(FusedMode::Auto, FusedDriver::Device));
    assert!(!asks(FusedMode::On, FusedDriver::Host));
    assert!(!asks(FusedMode::Auto, FusedDriver::Auto));
    assert!(!asks(FusedMode::Off, FusedDriver::Device));
}

#[test]
fn members_count_what_crosses_and_nothing_arrives_late() {
    let g = road();
    let expected = dijkstra(&g.csr, 0);
    for devices in [1, 2, 3, 5] {
        let out = solver(devices, &g).run(&[0], &device_driven()).unwrap();
        let s = &out.stats;
        assert_eq!(out.values, expected, "{devices} devices");
        assert!(s.device_driven);
        assert_eq!(s.late_items, 0);
        assert_eq!(s.devices.len(), devices);
        // Every published item was taken by its receiver.
        assert_eq!(s.items_sent(), s.items_received(), "{devices} devices");
        let cut = s.cut_arcs_traversed().expect("host members count cut arcs");
        assert!(s.remote_updates() <= cut, "{devices} devices: {s:?}");
        if devices == 1 {
            assert_eq!(s.items_sent(), 0);
        } else {
            assert!(s.remote_updates() > 0 && s.segments_sent() > 0, "{s:?}");
            // What is sent is what the rounds originated plus what receivers passed on.
            let passed: u64 = s.devices.iter().map(|d| d.items_passed).sum();
            assert_eq!(s.items_sent(), s.remote_updates() + passed, "{s:?}");
        }
    }
}

#[test]
fn soft_priority_defers_per_member_and_keeps_the_distances() {
    let g = road();
    let expected = dijkstra(&g.csr, 0);
    for devices in [1, 3] {
        let mut solver = solver(devices, &g);
        for delta in [1, 40, 1_000] {
            let options = WorklistOptions {
                prio_delta: Some(delta),
                ..device_driven()
            };
            let out = solver.run(&[0], &options).unwrap();
            assert_eq!(out.values, expected, "{devices} devices, delta {delta}");
            if delta == 40 {
                assert!(out.stats.items_deferred() > 0, "{:?}", out.stats);
                assert!(out.stats.epochs > 0, "{:?}", out.stats);
            }
        }
    }
}

#[test]
fn an_inbox_of_one_item_delays_the_senders_and_loses_nothing() {
    let g = road();
    let options = WorklistOptions {
        send_capacity: Some(1),
        max_batch: 7,
        ..device_driven()
    };
    for devices in [2, 4] {
        let out = solver(devices, &g).run(&[0], &options).unwrap();
        assert_eq!(out.values, dijkstra(&g.csr, 0), "{devices} devices");
        assert_eq!(out.stats.late_items, 0);
    }
}

#[test]
fn a_worklist_that_would_overflow_fails_naming_the_setting() {
    let g = road();
    let options = WorklistOptions {
        wl_capacity: Some(2),
        ..device_driven()
    };
    for devices in [1, 3] {
        let err = solver(devices, &g).run(&[0], &options).unwrap_err();
        assert!(
            matches!(
                err,
                WorklistError::Runtime(Error::CapacityExceeded { capacity: 2, .. })
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("--wl-capacity"), "{err}");
    }
}

#[test]
fn a_run_past_its_time_limit_is_a_timeout_error() {
    let g = road();
    let options = WorklistOptions {
        time_limit: Some(Duration::from_nanos(1)),
        ..device_driven()
    };
    for devices in [1, 2] {
        let err = solver(devices, &g).run(&[0], &options).unwrap_err();
        assert!(matches!(err, WorklistError::TimedOut { .. }), "{err:?}");
    }
}

#[test]
fn a_panicking_algorithm_fails_the_run_and_every_member_leaves() {
    // Arcs from each vertex to the one below: vertex 5 relaxes with its own label.
    let pairs: Vec<(u32, u32)> = (0..63).map(|v| (v + 1, v)).collect();
    let g = Graph::from_edges(64, &EdgeList::from_pairs(&pairs), "path", false).unwrap();
    for devices in [1, 2, 4] {
        let ctx = Context::host(devices).unwrap();
        let part = block_partition(&g.csr, devices).unwrap();
        let mut solver = HostSolver::new(&ctx, Panicking, &g.csr, &part, &device_driven()).unwrap();
        let err = solver.run(&[], &device_driven()).unwrap_err();
        assert!(
            matches!(err, WorklistError::Runtime(Error::DeviceFailed { .. })),
            "{devices} devices: {err:?}"
        );
        assert!(err.to_string().contains("panicked"), "{err}");
    }
}
