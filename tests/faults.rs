//! Injected faults end to end: BFS, SSSP, PageRank and CC on 2 and 3 host devices with a
//! device that stops, a device that panics and a link whose copies stall. Every run ends
//! with an error naming the faulty device, within a bound, instead of hanging.

use std::time::{Duration, Instant};

use groute::bfs::BfsError;
use groute::cc::CcError;
use groute::core::{Error as CoreError, FaultPlan};
use groute::pagerank::PageRankError;
use groute::sssp::SsspError;
use groute::worklist::WorklistError;
use groute::{Backend, Error, Graph, Runner};

/// The stall timeout the runs set.
const STALL: Duration = Duration::from_secs(1);
/// What one faulty run may take (set-up and teardown included).
const BOUND: Duration = Duration::from_secs(20);

/// The runtime error inside a run's error, if there is one.
fn core_error(e: &Error) -> Option<&CoreError> {
    let worklist = |w: &WorklistError| match w {
        WorklistError::Runtime(c) => Some(c),
        _ => None,
    };
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
    Sssp,
    PageRank,
    Cc,
}

/// Runs `algo` on `devices` host devices with `faults`; checks that it fails within
/// [`BOUND`] with the error `kind` causes, naming `device` (any device for a stalled link:
/// the device issuing its copies). Returns the error's text.
fn fails(algo: Algo, devices: usize, faults: FaultPlan, kind: Kind, device: usize) -> String {
    // Directed, so that BFS runs on the asynchronous worklist; symmetric for CC.
    let graph = Graph::generate(match algo {
        Algo::Cc => "kron:scale=8,ef=8,sym,seed=3",
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
    let err = match algo {
        Algo::Bfs => runner.bfs(&graph, source).map(drop),
        Algo::Sssp => runner.sssp(&graph, source).map(drop),
        Algo::PageRank => runner.pagerank(&graph).map(drop),
        Algo::Cc => runner.cc(&graph).map(drop),
    }
    .expect_err("the faulty run must fail");
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
        Kind::StallLink => assert!(
            matches!(core, CoreError::DeviceStalled { device: d, .. } if *d < devices),
            "{algo:?} {kind:?}: {err}"
        ),
    }
    eprintln!("{algo:?} {kind:?} on {devices} devices: {took:?}: {err}");
    err.to_string()
}

fn every_fault(algo: Algo) {
    // Early (during set-up) and later (during the run).
    for after in [5, 60] {
        fails(
            algo,
            2,
            FaultPlan::new().stop_device(1, after),
            Kind::Stop,
            1,
        );
        fails(
            algo,
            3,
            FaultPlan::new().panic_device(2, after),
            Kind::Panic,
            2,
        );
    }
    fails(
        algo,
        3,
        FaultPlan::new().stall_copies(0, 1),
        Kind::StallLink,
        usize::MAX,
    );
}

#[test]
fn bfs_ends_with_an_error_naming_the_faulty_device() {
    every_fault(Algo::Bfs);
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
