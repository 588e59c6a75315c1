//! Partitioned storage of direction-optimizing BFS: each device holds only the rows of the
//! vertices it owns (on the host backend a read of another device's row panics and fails the
//! run), so its graph bytes shrink with the device count while the levels stay exact. Host
//! backend always; CUDA (every driver) under `GROUTE_TEST_CUDA=1`.

use groute_bfs::{BfsOptions, BfsSolver, Direction, MultiDriver, bfs_reference};
use groute_core::Context;
use groute_core::cuda::{GpuSharing, PeerGroup};
use groute_core::testing::{GpuHold, cuda_test};
use groute_graph::{Graph, NoProgress, PartitionMethod, partition_graph};

/// Levels from a few sources on every device of `ctx` under `driver`, checked against the
/// reference, and every device's peak graph bytes.
fn run(ctx: &Context, graph: &Graph, sources: &[u32], driver: MultiDriver) -> Vec<u64> {
    let devices = ctx.num_devices();
    let parted =
        partition_graph(graph.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
    let o = BfsOptions {
        direction: Direction::PullPush,
        multi_driver: driver,
        ..BfsOptions::default()
    };
    let mut solver = BfsSolver::new(ctx, &parted, &o).unwrap();
    for &source in sources {
        let result = solver.run(source).unwrap();
        assert!(result.stats.direction_optimized, "{devices} devices");
        assert!(
            result.stats.pull_levels > 0,
            "{devices} devices from {source}"
        );
        assert_eq!(
            result.levels,
            bfs_reference(&graph.csr, source),
            "{} on {devices} devices ({driver}) from {source}",
            graph.name
        );
    }
    ctx.memory_usage()
        .iter()
        .map(|usage| usage.peak_graph_bytes)
        .collect()
}

/// Checks that every device of `peaks` holds at most `bound` of `whole` (one device's graph
/// bytes) plus `extra` bytes.
fn check(peaks: &[u64], whole: u64, (bound, extra): (f64, u64), what: &str) {
    for (d, &peak) in peaks.iter().enumerate() {
        let limit = bound * whole as f64 + extra as f64;
        assert!(
            peak as f64 <= limit,
            "{what}, device {d}: {peak} graph bytes against one device's {whole} \
             (at most {bound} of it + {extra})"
        );
    }
}

/// The bounds of the tests: (devices, fraction of one device's graph bytes).
const BOUNDS: [(usize, f64); 2] = [(2, 0.60), (4, 0.40)];

#[test]
fn each_device_holds_only_its_rows_and_the_levels_are_exact() {
    let graph = Graph::generated("kron:scale=13,ef=16,sym,seed=7").unwrap();
    let sources = [0, 1, 4095];
    let one = run(
        &Context::host(1).unwrap(),
        &graph,
        &sources,
        MultiDriver::Auto,
    );
    assert_eq!(one.len(), 1);
    assert!(one[0] > 0, "the one device holds the graph");
    for (devices, bound) in BOUNDS {
        let ctx = Context::host(devices).unwrap();
        let peaks = run(&ctx, &graph, &sources, MultiDriver::PerDevice);
        assert_eq!(peaks.len(), devices);
        check(&peaks, one[0], (bound, 0), &format!("{devices} devices"));
    }
}

/// A directed graph pulls over its transpose: each device holds its rows of both.
#[test]
fn a_directed_graph_holds_its_rows_of_both_csrs() {
    let kron = Graph::generated("kron:scale=11,ef=16,seed=3").unwrap();
    // Searched as directed (whatever the generator found): the pull step reads the transpose.
    let graph = Graph::new(kron.csr, "kron11-directed", false);
    let sources = [0, 7];
    let one = run(
        &Context::host(1).unwrap(),
        &graph,
        &sources,
        MultiDriver::Auto,
    )[0];
    for (devices, bound) in BOUNDS {
        let peaks = run(
            &Context::host(devices).unwrap(),
            &graph,
            &sources,
            MultiDriver::Auto,
        );
        check(&peaks, one, (bound, 0), &format!("{devices} devices"));
    }
}

/// CUDA, every driver: the same bounds, but for the whole offset arrays (8 bytes per vertex)
/// of a device-driven run on several devices.
#[test]
fn cuda_devices_hold_only_their_rows() {
    let graph = Graph::generated("kron:scale=13,ef=16,sym,seed=7").unwrap();
    let sources = [0, 1, 4095];
    let Some(ctx) = cuda_test(1, None, GpuHold::Alone) else {
        return;
    };
    let one = run(&ctx, &graph, &sources, MultiDriver::Auto)[0];
    drop(ctx);
    let offsets = 8 * (graph.num_vertices() as u64 + 1);
    for (devices, bound) in BOUNDS {
        for driver in [MultiDriver::Fused, MultiDriver::PerDevice] {
            let Some(ctx) = cuda_test(devices, None, GpuHold::Alone) else {
                return;
            };
            if driver == MultiDriver::Fused
                && PeerGroup::check_sharing(&ctx, GpuSharing::Split).is_err()
            {
                continue;
            }
            let extra = if driver == MultiDriver::Fused {
                offsets
            } else {
                0
            };
            let peaks = run(&ctx, &graph, &sources, driver);
            check(
                &peaks,
                one,
                (bound, extra),
                &format!("CUDA, {devices} devices, {driver}"),
            );
        }
    }
}
