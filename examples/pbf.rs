//! Predicate-based filtering (the paper's Figures 5 and 6) over 1..N devices.
//!
//! ```text
//! cargo run --release --example pbf -- --size 10000000 --devices 4 --backend host
//! cargo run --release --example pbf -- --devices 8 --jitter 7 --json
//! ```
//!
//! The host scatters chunks (tuning `--chunk`) through a first-available router, the devices
//! filter, a gather router brings the kept elements back; every run is compared with the
//! sequential filter (`validated`), host-driven only.

mod common;

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use common::report::{ExecutionReport, Spread};
use common::{AnyError, Report, RunArgs};
use groute::pbf::{self, PbfConfig, Predicate};
use serde::Serialize;
use serde_json::json;

/// Filters a pseudo-random u32 array (keep x where x % modulus == residue) on 1..N devices.
#[derive(Parser, Debug)]
#[command(name = "pbf", version, term_width = 0)]
struct Args {
    #[command(flatten)]
    run: RunArgs,
    /// Elements in the input array.
    #[arg(long, default_value_t = 10_000_000)]
    size: usize,
    /// Keep x where x % modulus == residue.
    #[arg(long, default_value_t = 3)]
    modulus: u32,
    /// See --modulus.
    #[arg(long, default_value_t = 1)]
    residue: u32,
    /// Input seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Elements per chunk scattered to the devices.
    #[arg(long, default_value_t = 1 << 16, hide = true)]
    chunk: usize,
}

#[derive(Serialize)]
struct DeviceRow {
    device: usize,
    chunks: usize,
    elements: usize,
    kept: usize,
    share_percent: f64,
}

fn run(args: &Args) -> Result<(), AnyError> {
    let repeat = args.run.repeats()?;
    common::execution::host_driven_only(args.run.execution, "pbf")?;
    let config = PbfConfig {
        chunk: args.chunk,
        gather_packet: args.chunk,
        predicate: Predicate {
            modulus: args.modulus,
            residue: args.residue,
        },
        ..PbfConfig::default()
    };
    config.validate()?;
    let ctx = args.run.context()?;
    let load = Instant::now();
    let input = pbf::generate_input(args.size, args.seed)?;
    let load_ms = load.elapsed().as_secs_f64() * 1e3;
    let mut run_ms = Vec::with_capacity(repeat);
    let mut full_run_ms = Vec::with_capacity(repeat);
    let mut last = None;
    let warmup = usize::from(repeat > 1);
    for i in 0..warmup + repeat {
        let start = Instant::now();
        let outcome = pbf::run(&ctx, &input, &config)?;
        if i >= warmup {
            full_run_ms.push(start.elapsed().as_secs_f64() * 1e3);
            run_ms.push(outcome.elapsed.as_secs_f64() * 1e3);
        }
        last = Some(outcome);
    }
    let outcome = last.ok_or("--repeat 0: give at least 1")?;
    if !pbf::matches_reference(&input, &outcome.output, &config) {
        return Err(
            "validation FAILED: the filtered output differs from the sequential filter".into(),
        );
    }
    if let Some(path) = &args.run.output {
        let file = std::fs::File::create(path)
            .map_err(|e| format!("cannot create --output {}: {e}", path.display()))?;
        let mut w = std::io::BufWriter::new(file);
        for x in &outcome.output {
            writeln!(w, "{x}")?;
        }
        w.flush()?;
    }
    let total = args.size.max(1) as f64;
    let rows: Vec<DeviceRow> = outcome
        .per_device
        .iter()
        .map(|d| DeviceRow {
            device: d.device,
            chunks: d.chunks,
            elements: d.elements,
            kept: d.kept,
            share_percent: 100.0 * d.elements as f64 / total,
        })
        .collect();
    let run_spread = Spread::of(&run_ms);
    let median_s = run_spread.as_ref().map_or(0.0, |s| s.median) / 1e3;
    let mut report = Report::of_run("pbf", &ctx, None);
    report.execution = Some(ExecutionReport::new(
        &ctx,
        &args.run,
        common::execution::mode_of(false),
        "chunks scattered first-available, kept elements gathered",
        None,
        json!({ "chunk": args.chunk, "jitter": args.run.jitter }),
    ));
    report.times.load_ms = load_ms;
    report.times.run_ms = run_spread;
    report.times.full_run_ms = Spread::of(&full_run_ms);
    report.validated = Some(true);
    report.algorithm_stats = json!({
        "size": args.size,
        "modulus": args.modulus,
        "residue": args.residue,
        "seed": args.seed,
        "kept": outcome.output.len(),
        "throughput_melem_per_s": if median_s > 0.0 { args.size as f64 / median_s / 1e6 } else { 0.0 },
        "per_device": rows,
    });
    if let Some(path) = &args.run.json {
        report.write(path)?;
    }
    if !args.run.json_on_stdout() {
        common::report::print_header(&report);
        println!(
            "filter      {} elements, chunk {}, keep x % {} == {}",
            args.size, args.chunk, args.modulus, args.residue
        );
        println!(
            "{:>8} {:>8} {:>12} {:>12} {:>8}",
            "device", "chunks", "elements", "kept", "share"
        );
        for d in &rows {
            println!(
                "{:>8} {:>8} {:>12} {:>12} {:>7.1}%",
                d.device, d.chunks, d.elements, d.kept, d.share_percent
            );
        }
        println!(
            "kept        {} of {} elements",
            outcome.output.len(),
            args.size
        );
        common::report::print_footer(&report);
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Args = common::tuning::parse();
    common::exit_on_error(|| run(&args))
}
