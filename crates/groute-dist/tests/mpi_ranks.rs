//! Runs spanning the ranks of an MPI job (feature `mpi`): BFS (the worklist's, and the
//! direction-optimizing one of `BfsRanks`), SSSP (with and without soft priority), connected
//! components (label propagation, and hook and compress across ranks: `CcRanks`) and
//! PageRank (the worklist's, and pull sweeps across ranks: `PageRankRanks`) over random
//! graphs on every rank's 1 or 2 host devices (jittered) equal their sequential references
//! on rank 0 (the direction-optimizing BFS's levels, the components of hook and compress
//! and the ranks of pull sweeps on every rank; PageRank within its error bound), and a rank whose options are bad ends the run on
//! every rank with an error. CI runs it under `mpirun -np 2`, `3` and `4`
//! (`.ci/mpi.sh`); started alone it is a job of one rank.

use std::process::ExitCode;
use std::time::Duration;

use groute_bfs::{Bfs, BfsRanks, BfsTuning, bfs_reference};
use groute_cc::{LabelPropagation, cc_reference};
use groute_core::{BackendChoice, Context, Jitter};
use groute_dist::{CommCollectives, DistError, DistSolver, RankComm};
use groute_graph::{Csr, HeldRows, Partition};
use groute_pagerank::PageRank;
use groute_sssp::{Sssp, sssp_reference};
use groute_worklist::{WorklistAlgorithm, WorklistOptions};
use support::graphs::random_graph;
use support::mpi_job::Job;
use support::pagerank_close;

mod support;

fn options() -> WorklistOptions {
    WorklistOptions {
        time_limit: Some(Duration::from_secs(120)),
        packet_size: 16,
        max_batch: 32,
        ..WorklistOptions::default()
    }
}

/// Equal ranges, one per part.
fn partition(n: u32, parts: usize) -> Partition {
    let bounds = (0..=parts as u64)
        .map(|p| (u64::from(n) * p / parts as u64) as u32)
        .collect();
    Partition::from_bounds(bounds).expect("bounds")
}

impl Job {
    /// Runs `algorithm` over every rank's `devices` devices; rank 0's values.
    fn run<A: WorklistAlgorithm>(
        &mut self,
        algorithm: A,
        csr: &Csr,
        devices: usize,
        sources: &[u32],
        options: &WorklistOptions,
    ) -> Result<Vec<A::Value>, DistError> {
        let ctx = Context::builder()
            .devices(devices)
            .backend(BackendChoice::Host)
            .jitter(Some(Jitter::seeded(self.rank() as u64 + 5)))
            .build()?;
        let part = partition(csr.num_vertices() as u32, self.size() * devices);
        let mut solver = DistSolver::new(&mut self.comm, &ctx, algorithm, csr, &part, options)?;
        Ok(solver.run(sources, options)?.values)
    }

    /// The direction-optimizing BFS across ranks from `source` over every rank's `devices`
    /// devices; this rank's levels (every rank holds them all).
    fn run_direction(
        &mut self,
        csr: &Csr,
        devices: usize,
        source: u32,
    ) -> Result<Vec<u32>, Box<dyn std::error::Error>> {
        let ctx = support::host_context(devices, Some(self.rank() as u64 + 11));
        let part = partition(csr.num_vertices() as u32, self.size() * devices);
        let mut collectives = CommCollectives::new(&mut self.comm, &ctx)?;
        let rows = HeldRows::whole(csr);
        let tuning = BfsTuning::default();
        let mut solver = BfsRanks::new(&ctx, (&rows, &part), &mut collectives, &tuning)?;
        let time_limit = Some(Duration::from_secs(120));
        Ok(solver.run(&mut collectives, source, time_limit)?.levels)
    }

    /// Connected components across ranks ([`CcRanks`]: hook and compress, labels exchanged)
    /// over every rank's `devices` devices, run twice; this rank's labels of each run (every
    /// rank holds them all).
    fn run_hooks(
        &mut self,
        csr: &Csr,
        devices: usize,
    ) -> Result<Vec<Vec<u32>>, Box<dyn std::error::Error>> {
        let ctx = support::host_context(devices, Some(self.rank() as u64 + 17));
        let part = partition(csr.num_vertices() as u32, self.size() * devices);
        self.hook_twice(&ctx, csr, &part)
    }

    /// PageRank across ranks ([`PageRankRanks`]: pull sweeps, shares gathered) over every
    /// rank's `devices` devices, each splitting its vertices into `sweep_ranges` ranges, run
    /// twice; this rank's ranks of each run (every rank holds them all).
    fn run_sweeps(
        &mut self,
        csr: &Csr,
        devices: usize,
        ranged: (PageRank, u32),
    ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error>> {
        let ctx = support::host_context(devices, Some(self.rank() as u64 + 23));
        let part = partition(csr.num_vertices() as u32, self.size() * devices);
        self.sweep_twice(&ctx, csr, &part, ranged)
    }

    /// Records the check `what` of a run's `values`: every rank's run ended well, and rank 0's
    /// values (the whole graph's) pass `right`.
    fn check_run<V>(
        &mut self,
        what: String,
        values: Result<Vec<V>, DistError>,
        right: impl FnOnce(&[V]) -> bool,
    ) {
        let root = self.rank() == 0;
        self.check_outcome(what, values, |v| !root || right(&v));
    }
}

fn main() -> ExitCode {
    let mut job = Job::init();
    let size = job.size();
    for (seed, devices) in [(1u64, 1usize), (2, 2), (3, 1)] {
        let label = format!("{size} ranks x {devices} devices, graph seed {seed}");
        let csr = random_graph(600, 2_400, seed, false);
        let source = (seed * 37 % 600) as u32;
        let levels = job.run(Bfs, &csr, devices, &[source], &options());
        job.check_run(format!("BFS, {label}"), levels, |l| {
            l == bfs_reference(&csr, source)
        });
        let dense = random_graph(600, 6_000, seed, seed != 2);
        let levels = job.run_direction(&dense, devices, source);
        job.check_outcome(format!("direction-optimizing BFS, {label}"), levels, |l| {
            l == bfs_reference(&dense, source)
        });
        let dist = job.run(Sssp, &csr, devices, &[source], &options());
        job.check_run(format!("SSSP, {label}"), dist, |d| {
            d == sssp_reference(&csr, source)
        });
        let prio = WorklistOptions {
            prio_delta: Some(20),
            ..options()
        };
        let dist = job.run(Sssp, &csr, devices, &[source], &prio);
        job.check_run(format!("SSSP with soft priority, {label}"), dist, |d| {
            d == sssp_reference(&csr, source)
        });
        let symmetric = random_graph(600, 900, seed, true);
        let labels = job.run(LabelPropagation, &symmetric, devices, &[], &options());
        job.check_run(format!("CC, {label}"), labels, |l| {
            l == cc_reference(&symmetric)
        });
        let expected = cc_reference(&symmetric);
        let runs = job.run_hooks(&symmetric, devices);
        job.check_outcome(format!("CC by hook and compress, {label}"), runs, |runs| {
            runs.iter().all(|l| *l == expected)
        });
        let (alpha, epsilon) = (0.85f32, 1e-3f32);
        let ranks = job.run(PageRank { alpha, epsilon }, &csr, devices, &[], &options());
        job.check_run(format!("PageRank, {label}"), ranks, |r| {
            pagerank_close(&csr, alpha, epsilon, r)
        });
        for sweep_ranges in [1, 3] {
            let runs = job.run_sweeps(&csr, devices, (PageRank { alpha, epsilon }, sweep_ranges));
            let what = format!("PageRank by pull sweeps, {sweep_ranges} vertex ranges, {label}");
            job.check_outcome(what, runs, |runs| {
                runs.iter().all(|r| pagerank_close(&csr, alpha, epsilon, r))
            });
        }
    }
    if size > 1 {
        // The last rank's options are bad: its drivers refuse to start, the others learn of
        // it from the next wave.
        let csr = random_graph(300, 1_200, 9, false);
        let last = job.rank() == size - 1;
        let options = WorklistOptions {
            max_batch: if last { 0 } else { 32 },
            ..options()
        };
        let out = job.run(Bfs, &csr, 1, &[0], &options);
        let ok = match &out {
            Err(DistError::PeerFailed { failed: 1, .. }) => !last,
            Err(e) => last && e.to_string().contains("max_batch"),
            Ok(_) => false,
        };
        if !ok {
            eprintln!("rank {}: {:?}", job.rank(), out.map(|v| v.len()));
        }
        let all_ok = job
            .comm
            .all_reduce(&[u64::from(!ok)], groute_dist::Reduction::Sum)
            .map(|v| v[0] == 0)
            .unwrap_or(false);
        job.check("a failing rank ends the run on every rank".into(), all_ok);
    }
    job.exit_code()
}
