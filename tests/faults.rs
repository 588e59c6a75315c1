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
    Sssp,
    PageRank,
    Cc,
}

/// Runs `algo` on `devices` host devices with `faults`; checks that it fails within
/// [`BOUND`] with the error `kind` causes, naming `device` (for a stalled link, `device` or
/// `other`, its two ends: the one issuing its copies).
fn fails(
    algo: Algo,
    devices: usize,
    faults: FaultPlan,
    kind: Kind,
    (device, other): (usize, usize),
) {
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
        // The device issuing the link's copies: one of its two ends.
        Kind::StallLink => assert!(
            matches!(core, CoreError::DeviceStalled { device: d, .. } if *d == device || *d == other),
            "{algo:?} {kind:?}: {err}"
        ),
    }
    eprintln!("{algo:?} {kind:?} on {devices} devices: {took:?}: {err}");
}

fn every_fault(algo: Algo) {
    // Early (during set-up) and later (during the run).
    for after in [2, 8] {
        let stop = FaultPlan::new().stop_device(1, after);
        fails(algo, 2, stop, Kind::Stop, (1, 1));
        let panic = FaultPlan::new().panic_device(2, after);
        fails(algo, 3, panic, Kind::Panic, (2, 2));
    }
    // A link the run uses: the ring 0 -> 1 -> 2 -> 0 of the worklist and PageRank, the
    // merge of device 1's components into device 0's of CC.
    let (from, to) = match algo {
        Algo::Cc => (1, 0),
        _ => (0, 1),
    };
    let stall = FaultPlan::new().stall_copies(from, to);
    fails(algo, 3, stall, Kind::StallLink, (from, to));
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
