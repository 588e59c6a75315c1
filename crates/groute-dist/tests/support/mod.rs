//! What the tests of ranks share: ranks as threads of this process and the checks of every
//! rank's outcome, PageRank's check, and the record of a multi-process job's checks; their
//! graphs are in `graphs`, a solver on every rank in `solve_on_ranks`.

// Each test binary uses some of it.
#![allow(dead_code)]

use groute_bfs::SwitchRule;
use groute_core::{BackendChoice, Context, Jitter};
use groute_dist::{CommCollectives, LocalRanks, RankComm};
use groute_graph::testing::generated;
use groute_graph::{Csr, HeldRows, Partition};
use groute_pagerank::{l1_error_bound, pagerank_reference};

use graphs::{in_blocks, random_graph};

pub mod graphs;
#[cfg(feature = "mpi")]
pub mod mpi_job;
#[cfg(feature = "mpi")]
pub mod mpi_runs;
pub mod rank_rows;
pub mod solve_on_ranks;

/// A host-backend context of `devices` devices, jittered by `jitter`'s seed.
pub fn host_context(devices: usize, jitter: Option<u64>) -> Context {
    Context::builder()
        .devices(devices)
        .backend(BackendChoice::Host)
        .jitter(jitter.map(Jitter::seeded))
        .build()
        .expect("host backend")
}

/// Direction-optimizing BFS switch rules that pull at the first chance, by Beamer's default,
/// and never.
pub fn switch_rules() -> [SwitchRule; 3] {
    [
        SwitchRule {
            alpha: u64::MAX,
            beta: u64::MAX,
            gamma: 0,
        },
        SwitchRule::default(),
        SwitchRule {
            alpha: 0,
            beta: 0,
            gamma: 0,
        },
    ]
}

/// How long the ranks of one [`on_every_rank`] call may take before the test binary is
/// stopped as deadlocked (a rank left waiting in a collective would otherwise hang the test
/// run until CI's own limit).
const RANKS_DEADLINE: std::time::Duration = std::time::Duration::from_secs(600);

/// What `body` returns on each of `comms`' ranks, every rank on a thread of its own, in rank
/// order. Ranks still running after [`RANKS_DEADLINE`] are a deadlock: the process exits
/// with an error naming it.
pub fn on_every_rank<T: Send>(
    comms: Vec<LocalRanks>,
    body: impl Fn(LocalRanks) -> T + Sync,
) -> Vec<T> {
    let ranks = comms.len();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|scope| {
        // Owned here, so that a rank's panic drops it while unwinding: the watchdog then
        // ends at once instead of waiting out the deadline.
        let done = done;
        scope.spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                finished.recv_timeout(RANKS_DEADLINE)
            {
                // Straight to stderr: the test harness's capture of `eprintln!` would be
                // lost with the process.
                use std::io::Write as _;
                let _ = writeln!(
                    std::io::stderr(),
                    "{ranks} ranks still running after {RANKS_DEADLINE:?}: a rank waits in a \
                     collective that another never joins (deadlock)"
                );
                std::process::exit(101);
            }
        });
        let body = &body;
        let handles: Vec<_> = comms
            .into_iter()
            .map(|comm| scope.spawn(move || body(comm)))
            .collect();
        let outs = handles
            .into_iter()
            .map(|h| h.join().expect("rank thread"))
            .collect();
        // The watchdog is still waiting (it exits the process at the deadline instead).
        let _ = done.send(());
        outs
    })
}

/// A job's checks on one rank: rank 0 prints each, every rank keeps its failures.
#[derive(Default)]
pub struct Checks {
    failures: Vec<String>,
}

impl Checks {
    /// Records the check `what` on `rank`.
    pub fn check(&mut self, rank: usize, what: String, ok: bool) {
        if rank == 0 {
            println!("{} {what}", if ok { "ok  " } else { "FAIL" });
        }
        if !ok {
            self.failures.push(what);
        }
    }

    /// The process's exit status: failure if any check failed on this rank.
    pub fn exit_code(&self, rank: usize) -> std::process::ExitCode {
        if self.failures.is_empty() {
            return std::process::ExitCode::SUCCESS;
        }
        eprintln!("rank {rank}: {} checks failed", self.failures.len());
        std::process::ExitCode::FAILURE
    }
}

/// Whether `ranks` (one per vertex of `csr`) are PageRank's with damping `alpha` within the
/// L1 bound of a run to `epsilon` (plus the reference's own error and 1e-3 of the rank sum).
pub fn pagerank_close(csr: &Csr, alpha: f32, epsilon: f32, ranks: &[f32]) -> bool {
    let reference = pagerank_reference(csr, f64::from(alpha));
    let tolerance = l1_error_bound(csr.num_vertices(), f64::from(alpha), f64::from(epsilon))
        + reference.error_bound
        + 1e-3 * reference.ranks.iter().sum::<f64>();
    let l1: f64 = ranks
        .iter()
        .zip(&reference.ranks)
        .map(|(&a, &b)| (f64::from(a) - b).abs())
        .sum();
    ranks.len() == reference.ranks.len() && l1 <= tolerance
}

/// Checks what `make` (a solver of a run spanning processes, made on every rank) says on each
/// of 3 ranks given graphs of 100, 200 and 300 vertices, each consistent on its own (its
/// partition has a part per rank): every rank must refuse, naming the processes, the middle
/// one too, whose vertex count is the mean (a check of each rank against the sum alone would
/// let it go on and wait). `make` gives `None` where a rank's solver was made.
pub fn expect_different_graphs_refused_on_every_rank(
    make: impl Fn(
        &Context,
        (&HeldRows<'_>, &Partition),
        &mut CommCollectives<'_, LocalRanks>,
    ) -> Option<String>
    + Sync,
) {
    let graphs: Vec<Csr> = (1..=3u32)
        .map(|k| random_graph(100 * k, 400 * k, u64::from(k), true))
        .collect();
    let partitions: Vec<Partition> = graphs.iter().map(|g| in_blocks(g, 3)).collect();
    let errors = on_every_rank(LocalRanks::new(3, None), |mut comm| {
        let r = comm.rank();
        let ctx = host_context(1, None);
        let mut collectives = CommCollectives::new(&mut comm, &ctx).expect("collectives");
        make(
            &ctx,
            (&HeldRows::whole(&graphs[r]), &partitions[r]),
            &mut collectives,
        )
    });
    for e in &errors {
        assert!(e.as_ref().is_some_and(|e| e.contains("processes")), "{e:?}");
    }
}

/// Every rank's output of `outs`, in rank order, where every rank ended well: a rank's error
/// fails the test, naming `label` and the rank.
pub fn expect_ok_on_every_rank<T, E: std::fmt::Display>(
    outs: Vec<Result<T, E>>,
    label: &str,
) -> Vec<T> {
    outs.into_iter()
        .enumerate()
        .map(|(r, o)| o.unwrap_or_else(|e| panic!("{label}: rank {r}: {e}")))
        .collect()
}

/// Checks that every rank's `outs` is an error, and that rank 0's message names every one of
/// `fix` (every rank refuses alike; the message names the fix).
pub fn expect_refused_on_every_rank<T: std::fmt::Debug>(
    outs: Vec<Result<T, String>>,
    fix: &[&str],
) {
    for (r, out) in outs.into_iter().enumerate() {
        let e = out.expect_err("refused");
        if r == 0 {
            assert!(fix.iter().all(|f| e.contains(f)), "{e}");
        }
    }
}

/// Each run of every rank's runs `outs`, with the rank and the run's index.
pub fn runs_of_every_rank<T>(outs: &[Vec<T>]) -> impl Iterator<Item = (usize, usize, &T)> {
    outs.iter()
        .enumerate()
        .flat_map(|(r, runs)| runs.iter().enumerate().map(move |(i, run)| (r, i, run)))
}

/// Runs `solve` over a Kronecker graph of scale 9 on 2 and 3 ranks of one device and on 2
/// ranks of two (threads, host backend), once per fault: rank 1's last device crashes (a
/// panic on its stream) after `after_ops[i]` of its stream operations, while the solver is
/// made or in one of its runs. Every rank must then end with an error, none left waiting in a
/// collective (or every rank succeed, where the fault lies past the ops of the runs), and at
/// least `min_fired` of the faults must fire for each shape.
pub fn expect_a_crash_to_end_every_rank(
    after_ops: &[u64],
    min_fired: usize,
    solve: impl Fn(
        &Context,
        (&HeldRows<'_>, &Partition),
        &mut CommCollectives<'_, LocalRanks>,
    ) -> Result<(), String>
    + Sync,
) {
    let g = generated("kron:scale=9,ef=8,sym,seed=2");
    let rows = HeldRows::whole(&g.csr);
    for (ranks, devices) in [(2, 1), (3, 1), (2, 2)] {
        let partition = in_blocks(&g.csr, ranks * devices);
        let crashing = devices - 1;
        let mut fired = 0;
        for &after in after_ops {
            let outs = on_every_rank(LocalRanks::new(ranks, None), |mut comm| {
                let mut faults = groute_core::FaultPlan::new();
                if comm.rank() == 1 {
                    faults = faults.panic_device(crashing, after);
                }
                let ctx = Context::builder()
                    .devices(devices)
                    .backend(BackendChoice::Host)
                    .faults(faults)
                    .build()
                    .expect("host backend");
                let mut collectives = CommCollectives::new(&mut comm, &ctx).expect("collectives");
                solve(&ctx, (&rows, &partition), &mut collectives)
            });
            let failed = outs.iter().filter(|o| o.is_err()).count();
            assert!(
                failed == 0 || failed == ranks,
                "{ranks} ranks x {devices} devices, device {crashing} after {after} ops: {outs:?}"
            );
            fired += usize::from(failed > 0);
        }
        assert!(
            fired >= min_fired,
            "{ranks} ranks x {devices} devices: {fired} of the faults fired"
        );
    }
}
