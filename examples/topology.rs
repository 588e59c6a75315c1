//! Prints the machine's CUDA topology: devices, the peer-access matrix, measured copy bandwidth
//! for every device pair and host<->device, and small-message latency.
//!
//! ```text
//! cargo run --release --example topology            # human table
//! cargo run --release --example topology -- --json  # machine-readable
//! ```
//!
//! Bandwidth: `--size-mib` (64) MiB copies on a stream of the source device, timed with timing
//! events, after `--warmup` copies, median of `--runs` (5). Device pairs without peer access are
//! measured through the backend's host-staged path. Latency: a 4 KiB copy issued and waited
//! for from the host (stream synchronize, and event notification), median of `--iters`.
//! On a machine without CUDA it prints why and exits with status 2. `--json` writes the
//! report of `docs/report.schema.json`, the measurements in `algorithm_stats`.

mod common;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::Parser;
use groute_core::Result;
use groute_core::backend::cuda::{CudaBackend, CudaOptions};
use groute_core::backend::{
    Backend, EventKind, MemoryLocation, RawMemory, RawSlice, StreamPriority,
};
use serde_json::json;

/// CUDA devices, peer access, copy bandwidth and latency.
#[derive(Parser, Debug)]
#[command(name = "topology", version, term_width = 0)]
struct Args {
    /// Write the JSON report (docs/report.schema.json) to PATH, or to stdout without PATH.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "-")]
    json: Option<std::path::PathBuf>,
    /// Timed copies per pair (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// List the tuning flags (also read from the GROUTE_TUNING environment variable) and exit.
    #[arg(long)]
    help_tuning: bool,
    /// Size of each bandwidth copy in MiB.
    #[arg(long, default_value_t = 64, hide = true)]
    size_mib: usize,
    /// Untimed copies before timing.
    #[arg(long, default_value_t = 2, hide = true)]
    warmup: usize,
    /// Iterations of the latency measurement.
    #[arg(long, default_value_t = 200, hide = true)]
    iters: usize,
    /// Do not enable peer access (measure the host-staged path between devices).
    #[arg(long, hide = true)]
    no_peer: bool,
}

/// One end of a copy.
#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    Host,
    Dev(usize),
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            End::Host => f.write_str("host"),
            End::Dev(d) => write!(f, "gpu{d}"),
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

fn alloc(b: &CudaBackend, end: End, bytes: usize) -> Result<Arc<dyn RawMemory>> {
    b.allocate(
        match end {
            End::Host => MemoryLocation::PinnedHost,
            End::Dev(d) => MemoryLocation::Device(d),
        },
        bytes,
    )
}

/// Median GB/s of `bytes` copies from `src` to `dst` on a stream of `on`.
fn bandwidth(
    b: &CudaBackend,
    src: End,
    dst: End,
    on: usize,
    bytes: usize,
    a: &Args,
) -> Result<f64> {
    let s = b.create_stream(on, StreamPriority::Normal)?;
    let (from, to) = (alloc(b, src, bytes)?, alloc(b, dst, bytes)?);
    let (from, to) = (RawSlice::whole(from), RawSlice::whole(to));
    let t0 = b.create_event(on, EventKind::Timing)?;
    let t1 = b.create_event(on, EventKind::Timing)?;
    for _ in 0..a.warmup {
        s.copy(&to, &from)?;
    }
    s.synchronize()?;
    let mut gbps = Vec::new();
    for _ in 0..a.runs.max(1) {
        s.record(&*t0)?;
        s.copy(&to, &from)?;
        s.record(&*t1)?;
        t1.synchronize()?;
        let ms = t1.elapsed_ms_since(&*t0)? as f64;
        gbps.push(bytes as f64 / (ms * 1e6));
    }
    Ok(median(gbps))
}

/// Median microseconds of a 4 KiB copy issued and waited for from the host:
/// `(stream synchronize, event notification)`.
fn latency(b: &CudaBackend, src: End, dst: End, on: usize, iters: usize) -> Result<(f64, f64)> {
    let s = b.create_stream(on, StreamPriority::High)?;
    let (from, to) = (
        RawSlice::whole(alloc(b, src, 4096)?),
        RawSlice::whole(alloc(b, dst, 4096)?),
    );
    let e = b.create_event(on, EventKind::Sync)?;
    let (mut sync, mut notify) = (Vec::new(), Vec::new());
    for i in 0..iters + 20 {
        let t = Instant::now();
        s.copy(&to, &from)?;
        s.synchronize()?;
        let t_sync = t.elapsed();
        let t = Instant::now();
        s.copy(&to, &from)?;
        s.record(&*e)?;
        let (tx, rx) = mpsc::channel();
        e.notify(Box::new(move || {
            let _ = tx.send(Instant::now());
        }))?;
        let done = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| Instant::now());
        if i >= 20 {
            sync.push(t_sync.as_secs_f64() * 1e6);
            notify.push((done - t).as_secs_f64() * 1e6);
        }
    }
    Ok((median(sync), median(notify)))
}

fn run(a: &Args) -> Result<()> {
    let b = CudaBackend::with_options(CudaOptions {
        peer_access: !a.no_peer,
    })?;
    let g = b.physical_devices();
    let bytes = a.size_mib.max(1) << 20;
    let mut devices = Vec::new();
    for d in 0..g {
        devices.push(b.properties(d)?);
    }
    let peer: Vec<Vec<bool>> = (0..g)
        .map(|x| (0..g).map(|y| b.can_access_peer(x, y)).collect())
        .collect();

    let mut pairs: Vec<(End, End, usize)> = Vec::new();
    for d in 0..g {
        pairs.push((End::Host, End::Dev(d), d));
        pairs.push((End::Dev(d), End::Host, d));
    }
    for x in 0..g {
        for y in 0..g {
            pairs.push((End::Dev(x), End::Dev(y), x));
        }
    }
    let mut rows = Vec::new();
    for &(src, dst, on) in &pairs {
        let gbps = bandwidth(&b, src, dst, on, bytes, a)?;
        let (sync_us, notify_us) = latency(&b, src, dst, on, a.iters)?;
        rows.push((src, dst, gbps, sync_us, notify_us));
    }

    if let Some(path) = &a.json {
        let mut report = common::Report::new("topology");
        report.devices = devices
            .iter()
            .enumerate()
            .map(|(index, p)| common::report::DeviceReport {
                index,
                name: p.name.clone(),
                kind: "cuda".into(),
            })
            .collect();
        report.algorithm_stats = json!({
            "devices": devices.iter().enumerate().map(|(i, p)| json!({
                "index": i, "name": p.name, "memory_bytes": p.total_memory,
                "multiprocessors": p.multiprocessors,
                "compute_capability": format!("{}.{}", p.compute_capability.0, p.compute_capability.1),
            })).collect::<Vec<_>>(),
            "peer_access": peer,
            "copy_bytes": bytes, "runs": a.runs, "warmup": a.warmup,
            "copies": rows.iter().map(|(s, d, gbps, sy, no)| json!({
                "src": s.to_string(), "dst": d.to_string(), "bandwidth_gb_per_s": gbps,
                "latency_4k_sync_us": sy, "latency_4k_notify_us": no,
            })).collect::<Vec<_>>(),
        });
        if let Err(e) = report.write(path) {
            eprintln!("topology: {e}");
        }
        if path.as_os_str() == "-" {
            return Ok(());
        }
    }
    println!("CUDA devices: {g}");
    for (i, p) in devices.iter().enumerate() {
        println!(
            "  gpu{i}: {}  {:.1} GiB  {} SMs  cc {}.{}",
            p.name,
            p.total_memory as f64 / (1u64 << 30) as f64,
            p.multiprocessors,
            p.compute_capability.0,
            p.compute_capability.1
        );
    }
    println!("\npeer access (row can access column):");
    print!("      ");
    for y in 0..g {
        print!(" gpu{y:<2}");
    }
    println!();
    for (x, row) in peer.iter().enumerate() {
        print!("  gpu{x:<2}");
        for (y, &p) in row.iter().enumerate() {
            print!(
                " {:>5}",
                if x == y {
                    "-"
                } else if p {
                    "yes"
                } else {
                    "no"
                }
            );
        }
        println!();
    }
    println!(
        "\ncopies: {} MiB, median of {} after {} warm-up (device events); 4 KiB latency median of {} (host clock)",
        a.size_mib, a.runs, a.warmup, a.iters
    );
    println!(
        "  {:<6} {:<6} {:>12} {:>16} {:>18}",
        "src", "dst", "GB/s", "4KiB+sync us", "4KiB+notify us"
    );
    for (s, d, gbps, sy, no) in &rows {
        println!(
            "  {:<6} {:<6} {:>12.1} {:>16.1} {:>18.1}",
            s.to_string(),
            d.to_string(),
            gbps,
            sy,
            no
        );
    }
    println!("  (gpuX -> gpuX is a copy inside one device: bytes copied, not read + written)");
    Ok(())
}

fn main() -> ExitCode {
    let a: Args = common::tuning::parse();
    match run(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("topology: {e}");
            if matches!(e, groute_core::Error::CudaUnavailable { .. }) {
                eprintln!(
                    "topology: this example needs an NVIDIA GPU and driver; nothing to measure here"
                );
            }
            ExitCode::from(2)
        }
    }
}
