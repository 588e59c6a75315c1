//! Device-driven runs on two GPUs while other threads of the process run host-driven runs on
//! the same GPUs (as the test harness does), where a member can wait for its peer's launch
//! behind the host-driven runs' cross-device waits until the exchange times out. Its own test
//! binary, so that its first fused run is the process's first (the kernel not loaded yet).
//! Needs `GROUTE_TEST_CUDA=1` and two GPUs with peer access.
//!
//! Without the start gate (`groute_core::cuda::PeerGroup`: a run's first exchange completes
//! only once every member runs, else the start is cancelled and relaunched), device-driven
//! runs on two GPUs would stall here whenever other test threads make driver calls that wait
//! for a busy GPU (issue #7).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use common::{check_options, generated, options, two_peer_gpus};
use groute_graph::{NoProgress, PartitionMethod, partition_graph};
use groute_pagerank::{Driver, PageRankOptions, PageRankTuning, SweepMode, pagerank};

/// Sets the flag when dropped (on unwinding too).
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[test]
fn fused_runs_on_two_gpus_finish_beside_host_driven_runs() {
    let Some(two) = two_peer_gpus() else {
        return;
    };
    let busy = generated("kron:scale=9,ef=8,sym,seed=3");
    let busy = partition_graph(busy, 2, PartitionMethod::Block, &NoProgress).unwrap();
    let stop = AtomicBool::new(false);
    let host = PageRankOptions {
        driver: Driver::Host,
        ..options(0.0001)
    };
    thread::scope(|s| {
        let workers: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    let mut runs = 0u32;
                    while !stop.load(Ordering::Relaxed) || runs == 0 {
                        let got = pagerank(&two, &busy, &host).unwrap();
                        assert_eq!(got.stats.driver, Driver::Host);
                        runs += 1;
                    }
                    runs
                })
            })
            .collect();
        // Stops the workers however this thread leaves the scope: a failed check below must
        // fail the test, not leave the scope waiting for workers that never stop.
        let stopper = StopOnDrop(&stop);
        let fused = |epsilon: f32, sweep_divisor: u32| PageRankOptions {
            driver: Driver::Fused,
            tuning: PageRankTuning {
                sweep: SweepMode::Pull,
                sweep_divisor: Some(sweep_divisor),
                ..options(epsilon).tuning
            },
            ..options(epsilon)
        };
        // The two runs that timed out, checked against the reference.
        check_options(
            &generated("random:n=600,m=1800,seed=7"),
            2,
            &fused(0.01, 0),
            &[],
        );
        check_options(
            &generated("kron:scale=9,ef=8,sym,seed=3"),
            2,
            &fused(0.0001, groute_pagerank::SPARSE_SWEEP_DIVISOR),
            &[],
        );
        drop(stopper);
        for w in workers {
            assert!(w.join().unwrap() >= 1, "the host-driven runs ran");
        }
    });
}
