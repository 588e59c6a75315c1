//! Injected faults end to end: BFS, SSSP, PageRank and CC on 2 and 3 host devices with a
//! device that stops, a device that panics and a link whose copies stall. Every run ends
//! with an error naming the faulty device, within a bound, instead of hanging.

use std::time::{Duration, Instant};

use groute::bfs::{BfsError, bfs_reference};
use groute::cc::{CcError, cc_reference};
use groute::core::{Error as CoreError, FaultPlan};
use groute::pagerank::{PageRankError, l1_distance, pagerank_reference};
use groute::sssp::{SsspError, sssp_reference};
use groute::worklist::WorklistError;
use groute::{Backend, Error, Graph, Runner};

/// The stall timeout the runs set.
const STALL: Duration = Duration::from_secs(1);
/// What one faulty run may take (set-up and teardown included).
const BOUND: Duration = Duration::from_secs(20);

/// The runtime error inside a run's error, if there is one.
fn core_error(e: &Error) -> Option<&CoreError> {
    fn worklist(w: &WorklistError) -> Option<&CoreError> {
        match w {
            WorklistError::Runtime(c) => Some(c),
            _ => None,
        }
    }
    match e {
        Error::Runtime(c) => Some(c),
        Error::Bfs(BfsError::Worklist(w)) => worklist(w),
        Error::Sssp(SsspError::Worklist(w)) => worklist(w),
        Error::PageRank(PageRankError::Worklist(w)) => worklist(w),
        Error::Cc(CcError::Core(c)) => Some(c),
        _ => None,
    }
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Stop,
    Panic,
    StallLink,
}

#[derive(Clone, Copy, Debug)]
enum Algo {
    Bfs,
    /// BFS on a symmetric graph: direction-optimizing.
    BfsDo,
    Sssp,
    PageRank,
    Cc,
}

/// Runs `algo` on `devices` host devices with `faults`. A run that fails must do so within
/// [`BOUND`] with the error `kind` causes, naming `device` (for a stalled link, `device` or
/// `other`, its two ends: the one issuing its copies); returns how long it took, or `None`
/// when the run succeeded (a fault after the run's last operation never fires).
fn fails(
    algo: Algo,
    devices: usize,
    faults: FaultPlan,
    kind: Kind,
    (device, other): (usize, usize),
) -> Option<Duration> {
    // Directed, so that BFS runs on the asynchronous worklist; symmetric for CC.
    let graph = Graph::generate(match algo {
        Algo::Cc | Algo::BfsDo => "kron:scale=8,ef=8,sym,seed=3",
        _ => "kron:scale=8,ef=8,seed=3",
    })
    .unwrap();
    let source = (0..graph.vertices() as u32)
        .max_by_key(|&v| graph.neighbors(v).count())
        .unwrap();
    let runner = Runner::new()
        .devices(devices)
        .backend(Backend::Host)
        .stall_timeout(Some(STALL))
        .faults(faults);
    let start = Instant::now();
    let csr = &graph.as_graph().csr;
    // A run that succeeds (the fault point lies past its end) must be right.
    let err = match algo {
        Algo::Bfs | Algo::BfsDo => runner
            .bfs(&graph, source)
            .map(|r| assert_eq!(r.levels, bfs_reference(csr, source), "{kind:?}")),
        Algo::Sssp => runner
            .sssp(&graph, source)
            .map(|r| assert_eq!(r.distances, sssp_reference(csr, source), "{kind:?}")),
        Algo::PageRank => runner.pagerank(&graph).map(|r| {
            let exact = pagerank_reference(csr, 0.85);
            let l1 = l1_distance(&r.ranks, &exact.ranks);
            let allowed = r.error_bound() + 1e-5 * graph.vertices() as f64;
            assert!(l1 <= allowed, "{kind:?}: L1 {l1} > {allowed}");
        }),
        Algo::Cc => runner
            .cc(&graph)
            .map(|r| assert_eq!(r.labels, cc_reference(csr), "{kind:?}")),
    }
    .err()?;
    let took = start.elapsed();
    assert!(took < BOUND, "{algo:?} {kind:?}: took {took:?} ({err})");
    let core = core_error(&err).unwrap_or_else(|| panic!("{algo:?} {kind:?}: {err}"));
    match kind {
        Kind::Stop => assert!(
            matches!(core, CoreError::DeviceStalled { device: d, .. } if *d == device),
            "{algo:?} {kind:?}: {err}"
        ),
        Kind::Panic => assert!(
            matches!(core, CoreError::DeviceFailed { device: d, .. } if *d == device),
            "{algo:?} {kind:?}: {err}"
        ),
        // The device issuing the link's copies: one of its two ends.
        Kind::StallLink => assert!(
            matches!(core, CoreError::DeviceStalled { device: d, .. } if *d == device || *d == other),
            "{algo:?} {kind:?}: {err}"
        ),
    }
    eprintln!("{algo:?} {kind:?} on {devices} devices: {took:?}: {err}");
    Some(took)
}

/// The operation counts after which a device stops: from set-up into the run, until the run
/// ends before the fault fires (each stop costs a stall timeout or two, so only a few).
const STOP_AFTER: &[u64] = &[1, 8, 40, 200, 1000];
/// The same for a panic (which ends the run at once: a finer sweep).
const PANIC_AFTER: &[u64] = &[1, 3, 8, 20, 50, 120, 300, 800, 2000, 5000];

fn every_fault(algo: Algo) {
    for (kind, devices, device, points) in [
        (Kind::Stop, 2, 1, STOP_AFTER),
        (Kind::Panic, 3, 2, PANIC_AFTER),
    ] {
        let mut fired = 0;
        for &after in points {
            let plan = match kind {
                Kind::Panic => FaultPlan::new().panic_device(device, after),
                _ => FaultPlan::new().stop_device(device, after),
            };
            if fails(algo, devices, plan, kind, (device, device)).is_none() {
                break;
            }
            fired += 1;
        }
        // At least the first two (a sweep that ends at once tests nothing of the run).
        assert!(
            fired >= 2,
            "{algo:?} {kind:?}: only {fired} fault points fired"
        );
        eprintln!("{algo:?} {kind:?}: {fired} fault points fired");
    }
    // A link the run uses: the ring 0 -> 1 -> 2 -> 0 of the worklist and PageRank, the
    // merge of device 1's components into device 0's of CC.
    let (from, to) = match algo {
        Algo::Cc => (1, 0),
        _ => (0, 1),
    };
    let stall = FaultPlan::new().stall_copies(from, to);
    assert!(
        fails(algo, 3, stall, Kind::StallLink, (from, to)).is_some(),
        "{algo:?}: a stalled link {from} -> {to} went unnoticed"
    );
}

#[test]
fn bfs_ends_with_an_error_naming_the_faulty_device() {
    every_fault(Algo::Bfs);
}

#[test]
fn direction_optimizing_bfs_ends_with_an_error_naming_the_faulty_device() {
    let graph = Graph::generate("kron:scale=8,ef=8,sym,seed=3").unwrap();
    let run = Runner::new()
        .devices(2)
        .backend(Backend::Host)
        .bfs(&graph, 0)
        .unwrap();
    assert!(
        run.stats.engine.starts_with("direction-optimizing"),
        "{}",
        run.stats.engine
    );
    every_fault(Algo::BfsDo);
}

#[test]
fn sssp_ends_with_an_error_naming_the_faulty_device() {
    every_fault(Algo::Sssp);
}

#[test]
fn pagerank_ends_with_an_error_naming_the_faulty_device() {
    every_fault(Algo::PageRank);
}

#[test]
fn cc_ends_with_an_error_naming_the_faulty_device() {
    every_fault(Algo::Cc);
}
