//! Runs spanning the ranks of an MPI job on CUDA devices, items crossing between ranks over
//! NCCL (features `mpi` and `nccl`; run on a GPU machine with `GROUTE_TEST_CUDA=1`): BFS,
//! SSSP (with and without soft priority), CC by label propagation and PageRank (its own CUDA
//! executor, `PageRankShare`) over random graphs, an R-MAT graph and a road grid, and the
//! direction-optimizing BFS across ranks (`BfsRanks`, bitmaps gathered over NCCL) under
//! switch rules that pull early, by default and never, CC by hook and compress across
//! ranks (`CcRanks`, labels gathered over NCCL) and PageRank by pull sweeps across ranks
//! (`PageRankRanks`, shares gathered over NCCL),
//! on every rank's 1 or 2 devices, equal their sequential references on rank 0 (PageRank:
//! within its error bound), the same
//! solver serving two runs (a run whose default buffers overflow grows them and runs again
//! on every rank; the note counts them). Ranks may share one GPU: give each a distinct `NCCL_HOSTID` and
//! `NCCL_SOCKET_IFNAME=lo` (NCCL refuses two ranks of one communicator on one GPU of one
//! host). Without `GROUTE_TEST_CUDA=1` it prints a note and passes (no GPU is required).

use std::process::ExitCode;
use std::time::Duration;

use groute_bfs::{Bfs, BfsRanks, BfsTuning, bfs_reference};
use groute_cc::{LabelPropagation, cc_reference};
use groute_core::testing::cuda_required;
use groute_core::{BackendChoice, Context};
use groute_dist::{CommCollectives, DistError, DistSolver, launched_local_rank};
use groute_graph::{Csr, HeldRows, Partition, block_partition};
use groute_graph::{GenSpec, NoProgress, generate};
use groute_pagerank::{PageRank, PageRankShare};
use groute_sssp::{Sssp, sssp_reference};
use groute_worklist::traversal::MinTraversalSolver;
use groute_worklist::{ShareSolver, WorklistOptions};
use support::graphs::random_graph;
use support::mpi_job::Job;
use support::{pagerank_close, switch_rules};

mod support;

fn options() -> WorklistOptions {
    WorklistOptions {
        time_limit: Some(Duration::from_secs(120)),
        ..WorklistOptions::default()
    }
}

/// A generated graph with weights (the examples' `--gen` specs).
fn generated(spec: &str) -> Csr {
    let spec: GenSpec = spec.parse().expect("spec");
    generate(&spec, &NoProgress).expect("generate").csr
}

/// This rank's `devices` CUDA devices, device 0 on GPU `local rank`: the ranks' device 0s
/// form one NCCL communicator, which refuses two members on one GPU (unless each rank has its
/// own NCCL_HOSTID).
fn rank_devices(devices: usize) -> Result<Context, groute_core::Error> {
    Context::builder()
        .devices(devices)
        .backend(BackendChoice::Cuda)
        .first_physical_device(launched_local_rank().unwrap_or(0))
        .build()
}

/// Rank 0's values of each run of one solver, and the restarts of the last run.
type Runs<V> = (Vec<Vec<V>>, u64);

impl Job {
    /// Runs `algorithm` `runs` times on one solver (its CUDA executor `D`) over every
    /// rank's `devices` CUDA devices; rank 0's values of each run and the restarts of the
    /// last.
    fn run<D: ShareSolver>(
        &mut self,
        algorithm: D::Algorithm,
        csr: &Csr,
        devices: usize,
        sources: &[u32],
        options: &WorklistOptions,
        runs: usize,
    ) -> Result<Runs<groute_worklist::ShareValue<D>>, DistError> {
        let ctx = Context::builder()
            .devices(devices)
            .backend(BackendChoice::Cuda)
            .first_physical_device(launched_local_rank().unwrap_or(0) * devices)
            .build()?;
        let ranks = self.size();
        let part: Partition = block_partition(csr, ranks * devices).expect("partition");
        let mut solver = DistSolver::<_, _, D>::with_device_solver(
            &mut self.comm,
            &ctx,
            algorithm,
            csr,
            &part,
            options,
        )?;
        let mut all = Vec::new();
        let mut restarts = 0;
        for _ in 0..runs {
            let out = solver.run(sources, options)?;
            restarts = u64::from(out.stats.restarts);
            all.push(out.values);
        }
        Ok((all, restarts))
    }

    /// Runs the direction-optimizing BFS across ranks ([`BfsRanks`]) twice from `source`
    /// under `tuning` on every rank's `devices` CUDA devices; every rank's levels of each run.
    fn run_direction(
        &mut self,
        csr: &Csr,
        devices: usize,
        source: u32,
        tuning: &BfsTuning,
    ) -> Result<Vec<Vec<u32>>, Box<dyn std::error::Error>> {
        let ctx = rank_devices(devices)?;
        let part: Partition = block_partition(csr, self.size() * devices)?;
        let mut collectives = CommCollectives::new(&mut self.comm, &ctx)?;
        let rows = HeldRows::whole(csr);
        let mut solver = BfsRanks::new(&ctx, (&rows, &part), &mut collectives, tuning)?;
        let mut all = Vec::new();
        for _ in 0..2 {
            let out = solver.run(&mut collectives, source, Some(Duration::from_secs(120)))?;
            all.push(out.levels);
        }
        Ok(all)
    }

    /// Runs CC across ranks ([`CcRanks`], labels gathered over NCCL) twice on every rank's
    /// `devices` CUDA devices and checks every rank's labels of both runs.
    fn expect_hooks(&mut self, label: String, csr: &Csr, devices: usize) {
        let expected = cc_reference(csr);
        let runs = (|| {
            let ctx = rank_devices(devices)?;
            let part: Partition = block_partition(csr, self.size() * devices)?;
            self.hook_twice(&ctx, csr, &part)
        })();
        self.check_outcome(label, runs, |runs| {
            runs.iter().all(|labels| *labels == expected)
        });
    }

    /// Checks [`Job::run_direction`]'s levels against `expected` on every rank, under every
    /// switch rule, the pulls reading levels and reading frontier bitmaps and pull lists.
    fn expect_direction(&mut self, label: String, csr: &Csr, devices: usize, source: u32) {
        let expected = bfs_reference(csr, source);
        for switch_rule in switch_rules() {
            for bitmaps in [false, true] {
                let tuning = BfsTuning {
                    switch_rule,
                    pull_bitmap: Some(bitmaps),
                    ..BfsTuning::default()
                };
                let runs = self.run_direction(csr, devices, source, &tuning);
                let label = format!("{label} {switch_rule:?} bitmaps {bitmaps}");
                self.check_outcome(label, runs, |runs| {
                    runs.iter().all(|levels| *levels == expected)
                });
            }
        }
    }

    /// Runs PageRank by pull sweeps across the ranks ([`PageRankRanks`]), each device
    /// splitting its vertices into `sweep_ranges` ranges, twice and checks both runs' ranks
    /// on every rank (each holds them all).
    fn expect_sweeps(&mut self, label: String, csr: &Csr, devices: usize, sweep_ranges: u32) {
        let (alpha, epsilon) = (0.85f32, 1e-3f32);
        let runs = (|| {
            let ctx = rank_devices(devices)?;
            let part: Partition = block_partition(csr, self.size() * devices)?;
            self.sweep_twice(
                &ctx,
                csr,
                &part,
                (PageRank { alpha, epsilon }, sweep_ranges),
            )
        })();
        self.check_outcome(label, runs, |runs| {
            runs.iter().all(|r| pagerank_close(csr, alpha, epsilon, r))
        });
    }

    /// Runs PageRank ([`PageRankShare`]) twice and checks both runs' ranks on rank 0.
    fn expect_pagerank(&mut self, label: String, csr: &Csr, devices: usize) {
        let (alpha, epsilon) = (0.85f32, 1e-3f32);
        let algorithm = PageRank { alpha, epsilon };
        let out = self.run::<PageRankShare>(algorithm, csr, devices, &[], &options(), 2);
        let root = self.rank() == 0;
        self.check_outcome(label, out, |(runs, _)| {
            !root || runs.iter().all(|r| pagerank_close(csr, alpha, epsilon, r))
        });
    }

    /// Runs `algorithm` and checks every run's values against `expected` on rank 0.
    fn expect<A: groute_worklist::WorklistAlgorithm<Value = u32>>(
        &mut self,
        label: String,
        algorithm: A,
        (csr, devices, sources): (&Csr, usize, &[u32]),
        options: &WorklistOptions,
        expected: &[u32],
    ) -> u64 {
        let out = self.run::<MinTraversalSolver<A>>(algorithm, csr, devices, sources, options, 2);
        let restarts = out.as_ref().map_or(0, |o| o.1);
        let root = self.rank() == 0;
        self.check_outcome(label, out, |(runs, _)| {
            !root || runs.iter().all(|v| v == expected)
        });
        restarts
    }
}

fn main() -> ExitCode {
    let mut job = Job::init();
    if !cuda_required() {
        if job.rank() == 0 {
            println!("note: CUDA ranks not tested (set GROUTE_TEST_CUDA=1 on a GPU machine)");
        }
        return ExitCode::SUCCESS;
    }
    let size = job.size();
    let mut graphs: Vec<(String, Csr)> = (1..=3u64)
        .map(|seed| {
            (
                format!("random 600/2400 seed {seed}"),
                random_graph(600, 2_400, seed, seed == 2),
            )
        })
        .collect();
    graphs.push((
        "random 50k/400k".into(),
        random_graph(50_000, 400_000, 7, false),
    ));
    graphs.push((
        "kron14".into(),
        generated("kron:scale=14,ef=16,weights=1..100"),
    ));
    graphs.push(("road 300x300".into(), generated("road:side=300,p=0.6")));
    graphs.push((
        "kron14 symmetric".into(),
        generated("kron:scale=14,ef=16,sym,weights=1..100"),
    ));
    let mut restarts = 0;
    for (name, csr) in &graphs {
        for devices in [1usize, 2] {
            let label = format!("{size} ranks x {devices} CUDA devices, {name}");
            let source = (csr.num_vertices() as u32 / 3).min(csr.num_vertices() as u32 - 1);
            let levels = bfs_reference(csr, source);
            job.expect(
                format!("BFS, {label}"),
                Bfs,
                (csr, devices, &[source]),
                &options(),
                &levels,
            );
            let dist = sssp_reference(csr, source);
            restarts += job.expect(
                format!("SSSP, {label}"),
                Sssp,
                (csr, devices, &[source]),
                &options(),
                &dist,
            );
            let prio = WorklistOptions {
                prio_delta: Some(groute_sssp::default_prio_delta(csr)),
                ..options()
            };
            job.expect(
                format!("SSSP with soft priority, {label}"),
                Sssp,
                (csr, devices, &[source]),
                &prio,
                &dist,
            );
            job.expect_pagerank(format!("PageRank, {label}"), csr, devices);
            for ranges in [1, 3] {
                let what = format!("PageRank by pull sweeps, {ranges} vertex ranges, {label}");
                job.expect_sweeps(what, csr, devices, ranges);
            }
            job.expect_direction(
                format!("direction-optimizing BFS, {label}"),
                csr,
                devices,
                source,
            );
            if csr.is_symmetric() {
                let labels = cc_reference(csr);
                job.expect(
                    format!("CC, {label}"),
                    LabelPropagation,
                    (csr, devices, &[]),
                    &options(),
                    &labels,
                );
            }
            // Hook and compress hooks every arc at its own rows (a directed graph's weakly).
            job.expect_hooks(format!("CC by hook and compress, {label}"), csr, devices);
        }
    }
    if job.rank() == 0 {
        println!("note: {restarts} SSSP runs started again after a buffer overflowed");
    }
    job.exit_code()
}
