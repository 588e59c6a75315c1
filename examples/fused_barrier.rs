//! Times the fused kernel's grid barrier alone (`kernels/runtime/fused_barrier.cu`): for every
//! combination of ordering (acquire/release or fenced), polling (the generation word, or the
//! tagged release record), sleep between polls, block size and grid, one cooperative launch of `--barriers` barriers, printed as microseconds per barrier.
//! That is the floor of one level of the fused BFS/SSSP kernel (its synchronisation alone).
//!
//! ```text
//! cargo run --release --example fused_barrier
//! cargo run --release --example fused_barrier -- --blocks 256,1024 --spins 0,20 --grids 1,66,132 --json
//! ```
//!
//! Grids default to 1, half the multiprocessors and one block per multiprocessor (the fused
//! kernel's default). Every block checks after each barrier that it saw exactly the barriers it
//! passed; a run with errors is reported and the example exits with status 1. On a machine
//! without CUDA it prints why and exits with status 2. `--json` writes the report of
//! `docs/report.schema.json`, the rows in `algorithm_stats.rows`.

mod common;

use std::process::ExitCode;

use clap::Parser;
use groute::core::{BackendChoice, Context, Error};
use groute::worklist::traversal::{BarrierTiming, FusedBarrier, time_fused_barrier};
use serde_json::json;

/// Microseconds per grid barrier of the fused traversal kernel.
#[derive(Parser, Debug)]
#[command(name = "fused_barrier", version, term_width = 0)]
struct Args {
    /// Barriers per timed launch.
    #[arg(long, default_value_t = 20_000)]
    barriers: u32,
    /// Threads per block to try (multiples of 32 up to 1024).
    #[arg(long, value_delimiter = ',', default_values_t = [256u32, 1024])]
    blocks: Vec<u32>,
    /// Grids to try (blocks; default: 1, half the multiprocessors, one per multiprocessor).
    #[arg(long, value_delimiter = ',')]
    grids: Vec<u32>,
    /// Nanosleep between polls to try (0: poll without sleeping).
    #[arg(long, value_delimiter = ',', default_values_t = [0u32, 20, 100])]
    spins: Vec<u32>,
    /// Write the JSON report (docs/report.schema.json) to PATH, or to stdout without PATH.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "-")]
    json: Option<std::path::PathBuf>,
    /// List the tuning flags (also read from the GROUTE_TUNING environment variable) and exit.
    #[arg(long)]
    help_tuning: bool,
}

fn run(args: &Args) -> Result<(String, Vec<(FusedBarrier, BarrierTiming)>), Error> {
    let ctx = Context::builder()
        .devices(1)
        .backend(BackendChoice::Cuda)
        .build()?;
    let device = &ctx.devices()[0];
    let sms = device.properties().multiprocessors.max(1);
    let grids = if args.grids.is_empty() {
        let mut g = vec![1, (sms / 2).max(1), sms];
        g.dedup();
        g
    } else {
        args.grids.clone()
    };
    let mut out = Vec::new();
    // Warm-up: compiles and loads the kernel outside the timings.
    time_fused_barrier(device, Some(1), 32, FusedBarrier::default(), 1)?;
    for (fenced, tagged) in [(false, false), (false, true), (true, false), (true, true)] {
        for &spin_ns in &args.spins {
            for &block in &args.blocks {
                for &grid in &grids {
                    let barrier = FusedBarrier {
                        spin_ns,
                        fenced,
                        tagged,
                    };
                    let t = time_fused_barrier(device, Some(grid), block, barrier, args.barriers)?;
                    out.push((barrier, t));
                }
            }
        }
    }
    Ok((device.properties().name.clone(), out))
}

fn main() -> ExitCode {
    let args: Args = common::tuning::parse();
    let (device, rows) = match run(&args) {
        Ok(rows) => rows,
        Err(e) => {
            eprintln!("fused_barrier: {e}");
            if matches!(e, Error::CudaUnavailable { .. }) {
                eprintln!(
                    "fused_barrier: the grid barrier runs on CUDA only; nothing to measure on \
                     this machine"
                );
                return ExitCode::from(2);
            }
            return ExitCode::FAILURE;
        }
    };
    let broken = rows
        .iter()
        .filter(|(_, t)| t.errors != 0 || t.passed != t.barriers)
        .count();
    if let Some(path) = &args.json {
        let list: Vec<_> = rows
            .iter()
            .map(|(b, t)| {
                json!({
                    "fenced": b.fenced,
                    "tagged": b.tagged,
                    "spin_ns": b.spin_ns,
                    "block": t.block,
                    "grid": t.grid,
                    "barriers": t.barriers,
                    "us_per_barrier": t.micros_per_barrier(),
                    "errors": t.errors,
                    "passed": t.passed,
                })
            })
            .collect();
        let mut report = common::Report::new("fused_barrier");
        report.devices = vec![common::report::DeviceReport {
            index: 0,
            name: device,
            kind: "cuda".into(),
        }];
        report.validated = Some(broken == 0);
        report.algorithm_stats = json!({ "rows": list });
        if let Err(e) = report.write(path) {
            eprintln!("fused_barrier: {e}");
            return ExitCode::FAILURE;
        }
    }
    if args.json.as_deref() != Some(std::path::Path::new("-")) {
        println!(
            "{:>8} {:>6} {:>8} {:>6} {:>6} {:>12} {:>7}",
            "order", "poll", "spin_ns", "block", "grid", "us/barrier", "errors"
        );
        for (b, t) in &rows {
            let order = if b.fenced { "fenced" } else { "acq/rel" };
            let poll = if b.tagged { "record" } else { "gen" };
            println!(
                "{order:>8} {poll:>6} {:>8} {:>6} {:>6} {:>12.3} {:>7}",
                b.spin_ns,
                t.block,
                t.grid,
                t.micros_per_barrier(),
                t.errors + (t.barriers - t.passed.min(t.barriers))
            );
        }
    }
    if broken != 0 {
        eprintln!("fused_barrier: {broken} runs saw a broken barrier");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
