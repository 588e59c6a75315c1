//! The asynchronous fused kernel (`--fused-async`): on one CUDA device it equals the
//! sequential reference on graphs of every shape, from several sources, on grids of one block
//! to every resident block, narrow and wide blocks, with and without the filtering load; it
//! fails clearly on overflow and past its time limit (stopping early), and is refused on
//! several devices and with soft priority. The CUDA tests run under `GROUTE_TEST_CUDA=1`; the
//! host backend ignores the mode.

mod common;

use std::time::Duration;

use common::{cuda, cuda_alone, from_pairs, fused_options, generated, graphs, hub_ladder, run};
use groute_bfs::{BfsError, BfsOptions, bfs_reference};
use groute_core::Context;
use groute_worklist::WorklistError;
use groute_worklist::traversal::FusedMode;

fn options() -> BfsOptions {
    fused_options(FusedMode::Async)
}

#[test]
fn asynchronous_bfs_equals_the_reference_on_every_graph() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    for g in graphs() {
        let n = g.num_vertices() as u32;
        for s in [0, n / 2, n - 1] {
            let expected = bfs_reference(&g.csr, s);
            let r =
                run(&ctx, &g, s, &options()).unwrap_or_else(|e| panic!("{} from {s}: {e}", g.name));
            assert_eq!(r.levels, expected, "{} from {s}", g.name);
            assert!(r.stats.fused, "{}", g.name);
            assert!(r.stats.device_time.is_some());
            // Every reached vertex is expanded at least once (label correcting: maybe more).
            assert!(r.stats.work_items >= r.reached() as u64, "{}", g.name);
            assert_eq!(r.stats.items_sent, 0);
        }
    }
}

#[test]
fn every_launch_shape_of_the_asynchronous_kernel_agrees() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let road = generated("road:side=64,p=0.6,seed=5");
    let kron = generated("kron:scale=12,ef=16,sym,seed=3");
    let hubs = hub_ladder();
    for g in [&road, &kron, &hubs] {
        let expected = bfs_reference(&g.csr, 0);
        for (grid, block) in [
            (Some(1), Some(32)),
            (Some(1), Some(1024)),
            (Some(3), Some(96)),
            (None, Some(256)),
            (None, None),
        ] {
            for direct in [false, true] {
                let mut o = options();
                o.worklist.fused_grid = grid;
                o.worklist.fused_block = block;
                o.worklist.fused_direct_min = direct;
                let label = format!(
                    "{}, grid {grid:?}, block {block:?}, direct {direct}",
                    g.name
                );
                let r = run(&ctx, g, 0, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
                assert_eq!(r.levels, expected, "{label}");
            }
        }
    }
}

#[test]
fn the_asynchronous_kernel_is_refused_where_it_does_not_apply() {
    let g = generated("road:side=16,p=0.6,seed=2");
    let expected = bfs_reference(&g.csr, 0);
    // The host backend ignores the mode.
    let host = Context::host(2).unwrap();
    assert_eq!(run(&host, &g, 0, &options()).unwrap().levels, expected);
    if let Some(ctx) = cuda(1) {
        let mut o = options();
        o.worklist.prio_delta = Some(3);
        let err = run(&ctx, &g, 0, &o).unwrap_err().to_string();
        assert!(err.contains("--prio-delta"), "{err}");
        assert!(err.contains("--fused-async"), "{err}");
        o.worklist.prio_delta = Some(0);
        assert_eq!(run(&ctx, &g, 0, &o).unwrap().levels, expected);
        let mut bad = options();
        bad.worklist.fused_grid = Some(1 << 24);
        let err = run(&ctx, &g, 0, &bad).unwrap_err().to_string();
        assert!(err.contains("--fused-grid"), "{err}");
    }
    if let Some(ctx) = cuda(2) {
        let err = run(&ctx, &g, 0, &options()).unwrap_err().to_string();
        assert!(err.contains("--fused-async"), "{err}");
    }
}

#[test]
fn an_asynchronous_worklist_overflow_fails_naming_the_setting() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    // The smallest worklist (1,024 positions) holds far fewer appends than this graph makes.
    let g = generated("kron:scale=12,ef=16,sym,seed=4");
    let mut o = options();
    o.worklist.wl_capacity = Some(1);
    let err = run(&ctx, &g, 0, &o).unwrap_err();
    assert!(err.to_string().contains("--wl-capacity"), "{err}");
    let r = run(&ctx, &g, 0, &options()).unwrap();
    assert_eq!(r.levels, bfs_reference(&g.csr, 0));
}

#[test]
fn the_asynchronous_kernel_stops_early_past_its_time_limit() {
    let Some(ctx) = cuda_alone() else {
        return;
    };
    // A directed path: one vertex at a time, 400,000 hops of memory round trips (tens of ms),
    // far longer than the host takes to set the abort word.
    const N: u32 = 400_000;
    let chain: Vec<(u32, u32)> = (0..N - 1).map(|i| (i, i + 1)).collect();
    let g = from_pairs(N as usize, &chain, "long path");
    for block in [Some(256), Some(1024)] {
        let mut o = options();
        o.worklist.fused_block = block;
        o.worklist.time_limit = Some(Duration::ZERO);
        match run(&ctx, &g, 0, &o) {
            Err(BfsError::Worklist(WorklistError::TimedOut { outstanding, .. })) => {
                assert!(
                    outstanding > 0,
                    "block {block:?}: the kernel ran to the end"
                );
            }
            Err(e) => panic!("block {block:?}: expected a time-out, got {e}"),
            Ok(r) => panic!(
                "block {block:?}: expected a time-out, the run completed (depth {})",
                r.depth()
            ),
        }
    }
    let r = run(&ctx, &g, 0, &options()).unwrap();
    assert_eq!(r.depth(), N - 1);
}
