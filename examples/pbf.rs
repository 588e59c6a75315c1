//! Predicate-based filtering (the paper's Figures 5 and 6) over 1..N devices.
//!
//! ```text
//! cargo run --release --example pbf -- --size 10000000 --chunk 65536 --devices 4 --backend host
//! cargo run --release --example pbf -- --devices 8 --jitter 7 --json
//! ```

use std::process::ExitCode;

use clap::Parser;
use groute::pbf::{self, PbfConfig, Predicate};
use groute::prelude::*;
use serde::Serialize;

/// Filters a pseudo-random u32 array (keep x where x % modulus == residue) on 1..N devices:
/// the host scatters chunks through a first-available router, devices filter, a gather
/// router brings the kept elements back.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Elements in the input array.
    #[arg(long, default_value_t = 10_000_000)]
    size: usize,
    /// Elements per chunk scattered to the devices.
    #[arg(long, default_value_t = 1 << 16)]
    chunk: usize,
    /// Number of (virtual) devices.
    #[arg(long, default_value_t = 2)]
    devices: usize,
    /// Backend: auto, host or cuda.
    #[arg(long, default_value = "auto")]
    backend: String,
    /// Host-backend jitter seed (random delays and stream interleavings).
    #[arg(long)]
    jitter: Option<u64>,
    /// Input seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Keep x where x % modulus == residue.
    #[arg(long, default_value_t = 3)]
    modulus: u32,
    /// See --modulus.
    #[arg(long, default_value_t = 1)]
    residue: u32,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct DeviceRow {
    device: usize,
    chunks: usize,
    elements: usize,
    kept: usize,
    share_percent: f64,
}

#[derive(Serialize)]
struct Report {
    backend: String,
    devices: usize,
    size: usize,
    chunk: usize,
    modulus: u32,
    residue: u32,
    jitter: Option<u64>,
    kept: usize,
    time_ms: f64,
    throughput_melem_per_s: f64,
    validated: bool,
    per_device: Vec<DeviceRow>,
}

fn run(args: &Args) -> Result<Report> {
    let backend: BackendChoice = args.backend.parse()?;
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
    let ctx = Context::builder()
        .devices(args.devices)
        .backend(backend)
        .jitter(args.jitter.map(Jitter::seeded))
        .build()?;
    if let Some(note) = ctx.fallback_note() {
        eprintln!("note: {note}");
    }
    let input = pbf::generate_input(args.size, args.seed)?;
    let outcome = pbf::run(&ctx, &input, &config)?;
    let validated = pbf::matches_reference(&input, &outcome.output, &config);
    let secs = outcome.elapsed.as_secs_f64();
    let total = args.size.max(1) as f64;
    Ok(Report {
        backend: ctx.backend_kind().to_string(),
        devices: args.devices,
        size: args.size,
        chunk: args.chunk,
        modulus: args.modulus,
        residue: args.residue,
        jitter: args.jitter,
        kept: outcome.output.len(),
        time_ms: secs * 1e3,
        throughput_melem_per_s: if secs > 0.0 {
            args.size as f64 / secs / 1e6
        } else {
            0.0
        },
        validated,
        per_device: outcome
            .per_device
            .iter()
            .map(|d| DeviceRow {
                device: d.device,
                chunks: d.chunks,
                elements: d.elements,
                kept: d.kept,
                share_percent: 100.0 * d.elements as f64 / total,
            })
            .collect(),
    })
}

fn print_table(r: &Report) {
    println!(
        "PBF: {} elements, chunk {}, keep x % {} == {}, {} device(s) on the {} backend{}",
        r.size,
        r.chunk,
        r.modulus,
        r.residue,
        r.devices,
        r.backend,
        r.jitter
            .map(|s| format!(" (jitter seed {s})"))
            .unwrap_or_default()
    );
    println!(
        "{:>8} {:>8} {:>12} {:>12} {:>8}",
        "device", "chunks", "elements", "kept", "share"
    );
    for d in &r.per_device {
        println!(
            "{:>8} {:>8} {:>12} {:>12} {:>7.1}%",
            d.device, d.chunks, d.elements, d.kept, d.share_percent
        );
    }
    println!("kept {} of {} elements", r.kept, r.size);
    println!(
        "time {:.2} ms, throughput {:.1} M elements/s",
        r.time_ms, r.throughput_melem_per_s
    );
    println!("validated: {}", if r.validated { "OK" } else { "FAILED" });
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(report) => {
            if args.json {
                match serde_json::to_string(&report) {
                    Ok(s) => println!("{s}"),
                    Err(e) => {
                        eprintln!("error: could not write JSON: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            } else {
                print_table(&report);
            }
            if report.validated {
                ExitCode::SUCCESS
            } else {
                eprintln!("error: the filtered output differs from the sequential filter");
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
