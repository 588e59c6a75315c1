//! Times the host side of a run: what `run()` costs beyond the algorithm, a solver's
//! construction (the graph's upload), and one download of 16 MiB (docs/host-transfers.md).
//!
//! ```text
//! cargo run --release --example host_side                       # road 2048 x 2048 and kron21
//! cargo run --release --example host_side -- --gen road:side=1024,p=0.6 --runs 7
//! ```
//!
//! Every line gives medians over `--runs` runs after one warm-up run, host clock: `run()` is
//! the whole call (reset, algorithm, result in host memory); `algorithm` is the solver's own
//! time (device events on a GPU, its host clock on the host backend). `--json` writes the
//! report of `docs/report.schema.json`, the medians in `algorithm_stats`.

mod common;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use common::AnyError;
use groute::bfs::{BfsOptions, BfsSolver};
use groute::cc::{CcOptions, CcSolver};
use groute::graph::{GenSpec, NoProgress, PartitionMethod, generate, partition_graph};
use groute::pagerank::{PageRankOptions, PageRankSolver};
use groute::prelude::*;

/// The host side of BFS, PageRank and CC runs.
#[derive(Parser, Debug)]
#[command(name = "host_side", version, term_width = 0)]
struct Args {
    /// Graphs to generate (repeatable).
    #[arg(long = "gen", default_values = ["road:side=2048,p=0.6", "kron21.sym"])]
    graphs: Vec<GenSpec>,
    /// Timed runs of each solver (after one warm-up run).
    #[arg(long, default_value_t = 4)]
    runs: usize,
    /// Backend: auto, host or cuda.
    #[arg(long, default_value_t = BackendChoice::Auto)]
    backend: BackendChoice,
    /// Write the JSON report (docs/report.schema.json) to PATH, or to stdout without PATH.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "-")]
    json: Option<std::path::PathBuf>,
    /// List the tuning flags (also read from the GROUTE_TUNING environment variable) and exit.
    #[arg(long)]
    help_tuning: bool,
}

/// The median of `times`, in ms.
fn median_ms(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times
        .get(times.len() / 2)
        .map_or(0.0, |t| t.as_secs_f64() * 1e3)
}

/// Runs `run` once to warm up, then `runs` times; the medians of the whole call and of the
/// algorithm time it reports (`run` returns its device time, if any, and its own clock's).
fn time_runs(
    runs: usize,
    mut run: impl FnMut() -> Result<(Option<Duration>, Duration), AnyError>,
) -> Result<(f64, f64), AnyError> {
    run()?;
    let (mut whole, mut algorithm) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let start = Instant::now();
        let (device, clock) = run()?;
        whole.push(start.elapsed());
        algorithm.push(device.unwrap_or(clock));
    }
    Ok((median_ms(whole), median_ms(algorithm)))
}

/// Times `runs` runs of one solver ([`time_runs`]), prints the medians (unless `quiet`) and
/// returns them as JSON.
fn time_and_print(
    quiet: bool,
    spec: &GenSpec,
    what: &str,
    runs: usize,
    run: impl FnMut() -> Result<(Option<Duration>, Duration), AnyError>,
) -> Result<serde_json::Value, AnyError> {
    let (run, algorithm) = time_runs(runs, run)?;
    if !quiet {
        println!("{spec}: {what} run() {run:.3} ms, algorithm {algorithm:.3} ms");
    }
    Ok(serde_json::json!({ "run_ms": run, "algorithm_ms": algorithm }))
}

fn main() -> ExitCode {
    common::exit_on_error(|| {
        let args: Args = common::tuning::parse();
        let quiet = args.json.as_deref() == Some(std::path::Path::new("-"));
        let mut graphs = Vec::new();
        if args.runs == 0 {
            return Err::<(), AnyError>("--runs must be at least 1".into());
        }
        let ctx = Context::builder()
            .devices(1)
            .backend(args.backend)
            .build()?;
        let device = ctx.device(DeviceId(0))?;
        if !quiet {
            println!("device: {}", device.properties().name);
        }
        let buffer = device.upload(&vec![7u32; 4 << 20])?;
        let (download, _) = time_runs(args.runs, || {
            device.download(&buffer)?;
            Ok((None, Duration::ZERO))
        })?;
        if !quiet {
            println!("download of 16 MiB: {download:.3} ms");
        }
        for spec in &args.graphs {
            let graph = generate(spec, &NoProgress)?;
            // The first vertex of largest out-degree, as the scaling bench picks it (a
            // generated graph's input numbering is its own).
            let n = graph.num_vertices() as u32;
            let source = (0..n)
                .max_by_key(|&v| (graph.csr.out_degree(v), std::cmp::Reverse(v)))
                .unwrap_or(0);
            let parted = partition_graph(graph.clone(), 1, PartitionMethod::Block, &NoProgress)?;
            let start = Instant::now();
            let mut bfs = BfsSolver::new(&ctx, &parted, &BfsOptions::default())?;
            let built = start.elapsed().as_secs_f64() * 1e3;
            if !quiet {
                println!("{spec}: BfsSolver::new {built:.1} ms");
            }
            let bfs_times = time_and_print(
                quiet,
                spec,
                &format!("BFS from {source}:"),
                args.runs,
                || {
                    let r = bfs.run(source)?;
                    Ok((r.stats.device_time, r.stats.elapsed))
                },
            )?;
            let mut pagerank = PageRankSolver::new(&ctx, &parted, &PageRankOptions::default())?;
            let pagerank_times = time_and_print(quiet, spec, "PageRank", args.runs, || {
                let r = pagerank.run()?;
                Ok((r.stats.device_time, r.stats.elapsed))
            })?;
            let mut cc = CcSolver::new(&ctx, &graph, &CcOptions::default())?;
            let cc_times = time_and_print(quiet, spec, "CC", args.runs, || {
                let r = cc.run()?;
                Ok((r.stats.device_time, r.stats.elapsed))
            })?;
            graphs.push(serde_json::json!({
                "spec": spec.to_string(),
                "bfs_source": source,
                "bfs_solver_new_ms": built,
                "bfs": bfs_times,
                "pagerank": pagerank_times,
                "cc": cc_times,
            }));
        }
        if let Some(path) = &args.json {
            let mut report = common::Report::new("host_side");
            report.devices = common::report::devices_of(&ctx);
            report.algorithm_stats = serde_json::json!({
                "runs": args.runs,
                "download_16_mib_ms": download,
                "graphs": graphs,
            });
            report.write(path)?;
        }
        Ok(())
    })
}
