//! Shared helpers of the PageRank test suites: the checker against the power-iteration
//! reference (the bounds of the crate docs) and the test graphs.
#![allow(dead_code)]

use std::time::Duration;

use groute_core::Context;
use groute_core::cuda::PeerGroup;
use groute_core::testing::test_contexts;
use groute_graph::{Graph, NoProgress, PartitionMethod, partition_graph};
use groute_pagerank::{
    Driver, PageRankOptions, PageRankResult, PageRankStats, Reference, l1_error_bound, pagerank,
    pagerank_reference,
};

/// Test options: `epsilon`, small packets and batches, a time limit.
pub fn options(epsilon: f32) -> PageRankOptions {
    let mut o = PageRankOptions {
        epsilon,
        ..PageRankOptions::default()
    };
    o.worklist.time_limit = Some(groute_core::testing::scaled(Duration::from_secs(60)));
    o.worklist.packet_size = 64;
    o.worklist.max_batch = 256;
    o
}

/// Runs PageRank on `devices` devices (both partition methods, plain and jittered) and checks
/// it against the reference with the bounds of the crate docs.
pub fn check(graph: &Graph, devices: usize, epsilon: f32, jitter: &[u64]) {
    check_options(graph, devices, &options(epsilon), jitter);
}

/// [`check`] with explicit options.
pub fn check_options(graph: &Graph, devices: usize, o: &PageRankOptions, jitter: &[u64]) {
    if devices > graph.num_vertices() {
        return;
    }
    let exact = pagerank_reference(&graph.csr, f64::from(o.alpha));
    // Block partitions only on reduced inputs (`groute_core::testing::reduced`).
    let methods = groute_core::testing::first([PartitionMethod::Block, PartitionMethod::Metis], 1);
    for method in methods {
        let parted = partition_graph(graph.clone(), devices, method, &NoProgress).unwrap();
        let runs = test_contexts(devices, jitter)
            .into_iter()
            .flat_map(|tc| {
                drivers(&tc.label, &tc.context, o)
                    .into_iter()
                    .map(move |d| (tc.context.clone(), tc.label.clone(), d))
            })
            .collect::<Vec<_>>();
        for (context, label, driver) in runs {
            let what = format!(
                "{} on {devices} devices ({method}, {}, {driver} driver, eps {}, {} \
                 sweeps, divisor {:?})",
                graph.name, label, o.epsilon, o.tuning.sweep, o.tuning.sweep_divisor
            );
            let o = &PageRankOptions {
                driver,
                ..o.clone()
            };
            let got = pagerank(&context, &parted, o).unwrap_or_else(|e| panic!("{what}: {e}"));
            check_result(&exact, o, devices, &got, &what);
        }
    }
}

/// `got`, a run on `devices` devices with options `o`, against the reference `exact`
/// (`pagerank_reference` of the same graph and alpha) with the bounds of the crate docs, its
/// counters and profiles; `what` names the run in a failure.
pub fn check_result(
    exact: &Reference,
    o: &PageRankOptions,
    devices: usize,
    got: &PageRankResult,
    what: &str,
) {
    let n = exact.ranks.len();
    let epsilon = o.epsilon;
    let alpha = f64::from(o.alpha);
    let norm: f64 = exact.ranks.iter().sum();
    // f32 accumulation of ranks and residuals, plus the reference's own error.
    let slack = 1e-4 * norm + exact.error_bound;
    assert_eq!(got.ranks.len(), n, "{what}");
    let err = l1_distance(&got.ranks, &exact.ranks);
    let s = &got.stats;
    let a_posteriori = s.residual_left / (1.0 - alpha);
    let a_priori = l1_error_bound(n, alpha, f64::from(epsilon));
    assert!(
        err <= a_posteriori + slack,
        "{what}: L1 error {err} above residual/(1-alpha) = {a_posteriori} (+{slack})"
    );
    assert!(
        err <= a_priori + slack,
        "{what}: L1 error {err} above n eps/(1-alpha) = {a_priori}"
    );
    assert!(
        s.max_residual_left <= epsilon,
        "{what}: residual {} left above epsilon",
        s.max_residual_left
    );
    // Push PageRank never overshoots: r <= r* (up to rounding).
    let over = got
        .ranks
        .iter()
        .zip(&exact.ranks)
        .map(|(a, b)| f64::from(*a) - b)
        .fold(0f64, f64::max);
    assert!(
        over <= 1e-4 * (1.0 + norm / n as f64),
        "{what}: overshoot {over}"
    );
    assert!(
        s.work_items >= n as u64,
        "{what}: the first sweep pushes every vertex"
    );
    assert_eq!(s.worklist.late_items, 0, "{what}");
    if s.driver == Driver::Sweeps {
        check_sweeps_counts(s, n, devices, what);
    } else {
        check_profiles(s, what);
    }
    if devices == 1 {
        assert_eq!(s.items_sent, 0, "{what}: nothing to send on one device");
    }
}

pub use groute_pagerank::l1_distance;

/// The drivers to run on a test context: unless `o` names one, the host-driven one, the
/// device-driven one (on CUDA with pull sweeps where `PeerGroup` can run; on the host
/// backend always: its persistent members) and the synchronous sweeps (with pull sweeps);
/// else the one `o` asks for.
pub fn drivers(label: &str, context: &groute_core::Context, o: &PageRankOptions) -> Vec<Driver> {
    let pull = o.tuning.sweep == groute_pagerank::SweepMode::Pull;
    let fused = label != "cuda" || (pull && groute_core::cuda::PeerGroup::supported(context));
    match o.driver {
        Driver::Auto => [
            (true, Driver::Host),
            (fused, Driver::Fused),
            (pull, Driver::Sweeps),
        ]
        .into_iter()
        .filter_map(|(runs, d)| runs.then_some(d))
        .collect(),
        asked => vec![asked],
    }
}

/// The CUDA workers' profiles agree with the engine's counters, and a device synchronises
/// once per round, once per eager receive step and once at the end (an enlarged outgoing buffer's
/// wait is counted apart); the host backend reports none.
pub fn check_profiles(s: &PageRankStats, what: &str) {
    if s.device_time.is_none() {
        assert!(s.devices.is_empty(), "{what}: host runs report no profile");
        return;
    }
    assert_eq!(s.devices.len(), s.worklist.devices.len(), "{what}");
    if s.driver == Driver::Fused {
        check_fused_profiles(s, what);
        return;
    }
    for (d, (p, w)) in s.devices.iter().zip(&s.worklist.devices).enumerate() {
        assert_eq!(p.rounds, w.rounds, "{what}: device {d} rounds");
        assert_eq!(p.phases, None, "{what}: device {d}: no device phases");
        assert_eq!(
            p.rounds,
            p.sweep_rounds + p.worklist_rounds + p.settle_rounds,
            "{what}: device {d}"
        );
        assert!(p.packets >= p.receives, "{what}: device {d} packets");
        assert!(
            p.items_received >= w.items_received,
            "{what}: device {d} received"
        );
        assert_eq!(
            p.syncs,
            p.rounds + p.receives - p.lazy_receives + 1,
            "{what}: device {d}: one synchronisation per round and eager receive, one at the end"
        );
        assert!(p.busy() <= s.elapsed, "{what}: device {d} host time");
    }
}

/// A [`Driver::Sweeps`] run's counters on `devices` devices of an `n`-vertex graph: no
/// profile; every device sweeps in every round, and a round copies every device's owned
/// shares to every other device.
fn check_sweeps_counts(s: &PageRankStats, n: usize, devices: usize, what: &str) {
    assert!(s.devices.is_empty(), "{what}: sweeps report no profile");
    assert_eq!(s.items_sent, 0, "{what}: sweeps send no ring item");
    let per_device = &s.worklist.devices;
    assert_eq!(per_device.len(), devices, "{what}");
    assert!(
        per_device.iter().all(|d| d.rounds == s.rounds),
        "{what}: rounds"
    );
    let pushes: u64 = per_device.iter().map(|d| d.items_processed).sum();
    assert_eq!(s.work_items, pushes, "{what}: pushes");
    let received: u64 = per_device.iter().map(|d| d.items_received).sum();
    let expected = s.rounds * (devices as u64 - 1) * n as u64;
    assert_eq!(
        received, expected,
        "{what}: (D - 1) n shares copied a round"
    );
    assert_eq!(s.remote_updates(), received, "{what}");
    let copies = s.rounds * (devices * (devices - 1)) as u64;
    assert_eq!(
        s.worklist.segments_sent(),
        copies,
        "{what}: a copy per device pair a round"
    );
    assert_eq!(s.bytes_sent(), 4 * received, "{what}: 4 bytes a share");
}

/// What `Driver::Auto` runs with pull sweeps on several CUDA devices that can run
/// device-driven (the crate docs, "Choosing a driver"): the sweeps where the partition cuts
/// at least a tenth of the arcs, else the device-driven loop. Counted here from the arcs.
pub fn auto_on_several_devices(parted: &groute_graph::PartitionedGraph) -> Driver {
    let csr = &parted.graph.csr;
    let p = &parted.partition;
    let cut = (0..csr.num_vertices() as u32)
        .flat_map(|v| csr.neighbors(v).iter().map(move |&w| (v, w)))
        .filter(|&(v, w)| p.owner(v) != p.owner(w))
        .count();
    if cut as u64 * 10 >= csr.num_edges() {
        Driver::Sweeps
    } else {
        Driver::Fused
    }
}

pub use groute_graph::testing::{from_pairs, generated};

/// A CUDA context of 2 devices on 2 distinct GPUs with peer access, as the fused driver needs
/// on 2 devices; `None` when CUDA is not tested, and (with a note) where the GPUs lack it.
pub fn two_peer_gpus() -> Option<Context> {
    let two = groute_core::testing::cuda_context(2)?;
    if !PeerGroup::supported(&two) {
        eprintln!("note: the fused driver on 2 devices needs 2 GPUs with peer access");
        return None;
    }
    Some(two)
}

/// A kron graph plus two hubs above the CUDA hub degree (2048): arcs from vertex 0 to every
/// other vertex and from vertex 1 to two thirds of them (2 tiles each).
pub fn with_hubs() -> Graph {
    let kron = generated("kron:scale=12,ef=2,sym,seed=13");
    let n = kron.num_vertices();
    let offsets = kron.csr.offsets();
    let mut pairs: Vec<(u32, u32)> = (0..n)
        .flat_map(|u| {
            let range = offsets[u] as usize..offsets[u + 1] as usize;
            kron.csr.targets()[range]
                .iter()
                .map(move |&w| (u as u32, w))
        })
        .collect();
    // Few arcs into the hubs: they are pushed several times, but their mass is not
    // amplified (a two-way star makes the push count explode on the host backend).
    for v in 2..n as u32 {
        pairs.push((0, v));
        if v % 3 != 0 {
            pairs.push((1, v));
        }
        if v % 64 == 0 {
            pairs.extend([(v, 0), (v, 1)]);
        }
    }
    from_pairs(n, &pairs, "kron12+hubs")
}

/// A kron graph plus two vertices of in-degree above the pull hub degree (2048): arcs into
/// vertex 0 from every other vertex and into vertex 1 from two thirds of them (several hub
/// tiles each in the pull gather).
pub fn with_in_hubs() -> Graph {
    let kron = generated("kron:scale=12,ef=2,sym,seed=17");
    let n = kron.num_vertices();
    let mut pairs: Vec<(u32, u32)> = (0..n as u32)
        .flat_map(|u| kron.csr.neighbors(u).iter().map(move |&w| (u, w)))
        .collect();
    for v in 2..n as u32 {
        pairs.push((v, 0));
        if v % 3 != 0 {
            pairs.push((v, 1));
        }
    }
    from_pairs(n, &pairs, "kron12+in-hubs")
}

/// The sweep divisors to test: all of `cuda` under `GROUTE_TEST_CUDA=1`, else only the default
/// (the host backend runs worklist rounds whatever the divisor).
pub fn sweep_divisors(cuda: &[u32]) -> Vec<u32> {
    if groute_core::testing::cuda_required() {
        cuda.to_vec()
    } else {
        vec![groute_pagerank::SPARSE_SWEEP_DIVISOR]
    }
}

/// A device-driven run: every device ran the same rounds (sweeps and worklist rounds, read
/// from the device's counters) and one exchange per round on several devices (none on one),
/// with one synchronisation; what the devices sent to each other was all drained.
pub fn check_fused_profiles(s: &PageRankStats, what: &str) {
    let rounds = s.devices[0].rounds;
    let multi = s.devices.len() > 1;
    for (d, (p, w)) in s.devices.iter().zip(&s.worklist.devices).enumerate() {
        assert_eq!(
            p.rounds, rounds,
            "{what}: device {d}: every device runs every round"
        );
        assert_eq!(p.rounds, w.rounds, "{what}: device {d} rounds");
        assert_eq!(
            p.rounds,
            p.sweep_rounds + p.worklist_rounds,
            "{what}: device {d}"
        );
        assert!(
            p.sweep_rounds >= 1,
            "{what}: device {d}: the first round sweeps"
        );
        // One exchange per round, and one more per sweep (its mirror posts).
        let exchanges = if multi { p.rounds + p.sweep_rounds } else { 0 };
        assert_eq!(p.exchanges, exchanges, "{what}: device {d} exchanges");
        assert_eq!(
            p.syncs, 1,
            "{what}: device {d}: one synchronisation, at the end"
        );
        assert!(p.phases.is_some(), "{what}: device {d}: phase times");
    }
    let received: u64 = s.worklist.devices.iter().map(|w| w.items_received).sum();
    assert_eq!(
        received, s.items_sent,
        "{what}: every item listed was drained by its owner"
    );
    // Every sweep posts each device's whole mirror lists (0 included): the same count per
    // sweep, none on one device.
    for (d, p) in s.devices.iter().enumerate() {
        if !multi {
            assert_eq!(p.mirror_values_sent, 0, "{what}: no mirror on one device");
        } else if p.sweep_rounds > 0 {
            assert_eq!(
                p.mirror_values_sent % p.sweep_rounds,
                0,
                "{what}: device {d} posted {} mirror values over {} sweeps",
                p.mirror_values_sent,
                p.sweep_rounds
            );
        }
    }
}
