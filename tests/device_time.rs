//! Every solver reports the algorithm's device time: `None` on the host backend; on CUDA
//! (`GROUTE_TEST_CUDA=1`) a positive time no longer than the host clock around the run
//! (which also covers the reset and the download), on 1 device (BFS and SSSP fused) and 2
//! (the ring). Each run's result is checked against the reference too, so a timing hook
//! that broke the algorithm fails here.

use std::time::{Duration, Instant};

use groute::bfs::{BfsOptions, BfsSolver, bfs_reference};
use groute::cc::{CcOptions, CcSolver, cc_reference};
use groute::core::testing::test_contexts;
use groute::graph::{Graph, NoProgress, PartitionMethod, generate, partition_graph};
use groute::pagerank::{PageRankOptions, PageRankSolver, l1_distance, pagerank_reference};
use groute::prelude::*;
use groute::sssp::{SsspOptions, SsspSolver, sssp_reference};

fn graph() -> Graph {
    let spec = "road:side=24,p=0.6,seed=5,weights=1..50"
        .parse()
        .expect("graph spec");
    generate(&spec, &NoProgress).expect("generated graph")
}

/// Runs `body` and checks the device time it reports against the host clock around it.
fn timed(what: &str, ctx: &Context, body: impl FnOnce() -> Option<Duration>) {
    let started = Instant::now();
    let device_time = body();
    let wall = started.elapsed();
    if ctx.backend_kind() == BackendKind::Host {
        assert_eq!(
            device_time, None,
            "{what}: the host backend has no device clock"
        );
    } else {
        let t = device_time.unwrap_or_else(|| panic!("{what}: no device time on a GPU"));
        assert!(t > Duration::ZERO, "{what}: {t:?}");
        assert!(t <= wall, "{what}: device {t:?} > host clock {wall:?}");
    }
}

#[test]
fn every_solver_reports_its_device_time() {
    let g = graph();
    let (bfs_levels, distances, labels) = (
        bfs_reference(&g.csr, 0),
        sssp_reference(&g.csr, 0),
        cc_reference(&g.csr),
    );
    let exact = pagerank_reference(&g.csr, f64::from(PageRankOptions::default().alpha));
    for devices in [1, 2] {
        let parted = partition_graph(g.clone(), devices, PartitionMethod::Metis, &NoProgress)
            .expect("partition");
        for tc in test_contexts(devices, &[]) {
            let ctx = &tc.context;
            let what = |algo: &str| format!("{algo} on {} x{devices}", tc.label);

            let mut bfs = BfsSolver::new(ctx, &parted, &BfsOptions::default()).expect("bfs");
            timed(&what("bfs"), ctx, || {
                let r = bfs.run(0).expect("bfs run");
                assert_eq!(r.levels, bfs_levels, "{}", what("bfs"));
                r.stats.device_time
            });

            let mut sssp = SsspSolver::new(ctx, &parted, &SsspOptions::default()).expect("sssp");
            timed(&what("sssp"), ctx, || {
                let r = sssp.run(0).expect("sssp run");
                assert_eq!(r.distances, distances, "{}", what("sssp"));
                r.stats.device_time
            });

            let options = PageRankOptions::default();
            let mut pr = PageRankSolver::new(ctx, &parted, &options).expect("pagerank");
            timed(&what("pagerank"), ctx, || {
                let r = pr.run().expect("pagerank run");
                let l1 = l1_distance(&r.ranks, &exact.ranks);
                let bound = r.stats.residual_left / (1.0 - f64::from(options.alpha)) + 1e-3;
                assert!(l1 <= bound, "{}: L1 error {l1} > {bound}", what("pagerank"));
                r.stats.device_time
            });

            let mut cc =
                CcSolver::new(ctx, &g, &CcOptions::default().with_chunk_edges(256)).expect("cc");
            timed(&what("cc"), ctx, || {
                let r = cc.run().expect("cc run");
                assert_eq!(r.labels, labels, "{}", what("cc"));
                r.stats.device_time
            });
        }
    }
}
