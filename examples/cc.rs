//! Connected components on 1..N devices: edge chunks scattered to the devices (first
//! available), hook and compress on each, parent arrays merged up a reduction tree.
//!
//! ```text
//! cargo run --release --example cc -- --gen kron21.sym --devices 2 --check --repeat 5
//! cargo run --release --example cc -- --graph datasets/4elt.graph --output labels.txt
//! ```
//!
//! The reported time is the algorithm as the original Groute times it: loading, staging the
//! edge list in pinned memory, allocation and (by default) the copies that prefill the
//! devices' receive buffers are excluded; it ends when the labels are final on device 0.
//! `device` is the same span by device events (max over devices; GPUs only). `to host` adds
//! the copy of the labels to host memory. `--no-prefill` starts the clock
//! before the first chunk is sent instead. With `--repeat N` the first run is a warm-up and
//! the medians of the N runs after it are reported.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use groute::cc::{
    CcOptions, CcResult, HookKernel, StagedEdges, cc_reference, connected_components,
};
use serde::Serialize;

use common::{AnyError, GraphArgs, RunArgs};

/// Connected components (hook and compress over routed edge chunks).
#[derive(Parser, Debug)]
#[command(name = "cc")]
struct Args {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    run: RunArgs,
    /// Edges per chunk sent to the devices (default: chosen from the graph).
    #[arg(long, value_name = "EDGES")]
    chunk: Option<usize>,
    /// Receive buffers per device for the chunks (default: 88% of a fair share).
    #[arg(long, value_name = "N")]
    input_buffers: Option<usize>,
    /// Also compress after every K-th chunk (default: only once, before merging).
    #[arg(long, value_name = "K")]
    compress_every: Option<usize>,
    /// Start the clock before the first chunk is sent (time every copy).
    #[arg(long)]
    no_prefill: bool,
    /// CUDA hook kernel: plain (a thread per edge), batched (a thread per edge, 4 edges' loads
    /// in flight), warp (warp-cooperative, grid-stride) or warp-range (warp-cooperative, a
    /// contiguous range per warp).
    #[arg(long, value_name = "KERNEL", default_value_t = HookKernel::default())]
    hook: HookKernel,
    /// Timed runs after one warm-up run (1: a single run, no warm-up).
    #[arg(long, value_name = "N", default_value_t = 1)]
    repeat: usize,
    /// Write `<id> <component label>` per vertex (the input's numbering) to this file.
    #[arg(long, value_name = "PATH")]
    output: Option<PathBuf>,
}

#[derive(Serialize)]
struct Report {
    graph: String,
    vertices: usize,
    edges_staged: usize,
    backend: String,
    device: String,
    devices: usize,
    /// The CUDA hook kernel (`--hook`).
    hook: String,
    /// Median of the timed runs: devices start -> labels final on device 0.
    ms: f64,
    /// The same span by device events (max over devices; `None` on the host backend).
    device_ms: Option<f64>,
    /// Median: devices start -> labels in host memory.
    ms_to_host: f64,
    /// Every timed run's `ms`.
    runs_ms: Vec<f64>,
    prefill_ms: f64,
    setup_ms: f64,
    load_s: f64,
    stage_ms: f64,
    components: usize,
    largest_component: usize,
    chunk_edges: usize,
    chunks: usize,
    input_buffers: usize,
    edges_per_device: Vec<u64>,
    chunks_per_device: Vec<u64>,
    check: Option<bool>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() -> ExitCode {
    common::exit_on_error(|| run(Args::parse()))
}

fn run(args: Args) -> Result<(), AnyError> {
    if args.repeat == 0 {
        return Err("--repeat must be at least 1".into());
    }
    let (graph, load_s) = common::load(&args.graph, None, args.run.json)?;
    let ctx = common::context(&args.run)?;
    let stage_start = Instant::now();
    let staged = StagedEdges::new(&ctx, &graph)?;
    let stage_ms = ms(stage_start.elapsed());
    let opts = CcOptions {
        chunk_edges: args.chunk,
        input_buffers: args.input_buffers,
        prefill: !args.no_prefill,
        hook: args.hook,
        ..CcOptions::default()
    };
    let opts = CcOptions {
        compress_every: args.compress_every.unwrap_or(opts.compress_every),
        ..opts
    };
    let warmup = usize::from(args.repeat > 1);
    let mut runs: Vec<CcResult> = Vec::with_capacity(args.repeat);
    for i in 0..warmup + args.repeat {
        let r = connected_components(&ctx, &staged, &opts)?;
        if i >= warmup {
            runs.push(r);
        }
    }
    let runs_ms: Vec<f64> = runs.iter().map(|r| ms(r.stats.elapsed)).collect();
    let device_times: Vec<_> = runs.iter().map(|r| r.stats.device_time).collect();
    let to_host: Vec<f64> = runs.iter().map(|r| ms(r.stats.elapsed_to_host)).collect();
    let Some(last) = runs.pop() else {
        return Err("no run completed".into());
    };
    let check = if args.run.check {
        let expected = cc_reference(&graph.csr);
        Some(expected == last.labels)
    } else {
        None
    };
    if let Some(path) = &args.output {
        let file = std::fs::File::create(path)
            .map_err(|e| format!("cannot create --output {}: {e}", path.display()))?;
        let mut w = std::io::BufWriter::new(file);
        for (v, &label) in last.labels.iter().enumerate() {
            writeln!(
                w,
                "{} {}",
                graph.external_id(v as u32),
                graph.external_id(label)
            )?;
        }
        w.flush()?;
    }
    let s = &last.stats;
    let report = Report {
        graph: graph.name.clone(),
        vertices: graph.num_vertices(),
        edges_staged: staged.num_edges(),
        backend: ctx.backend_kind().to_string(),
        device: common::device_name(&ctx),
        devices: ctx.num_devices(),
        hook: args.hook.to_string(),
        ms: median(runs_ms.clone()),
        device_ms: common::median_device_ms(device_times),
        ms_to_host: median(to_host),
        runs_ms,
        prefill_ms: ms(s.prefill),
        setup_ms: ms(s.setup),
        load_s,
        stage_ms,
        components: last.components,
        largest_component: last.largest_component,
        chunk_edges: s.chunk_edges,
        chunks: s.chunks,
        input_buffers: s.input_buffers,
        edges_per_device: s.edges_per_device.clone(),
        chunks_per_device: s.chunks_per_device.clone(),
        check,
    };
    if args.run.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "cc on {} ({} vertices, {} edges staged)",
            report.graph, report.vertices, report.edges_staged
        );
        println!(
            "  backend {} ({}), {} device(s), hook kernel {}",
            report.backend, report.device, report.devices, report.hook
        );
        println!(
            "  load {:.2} s, stage {:.1} ms, setup {:.2} ms, prefill {:.2} ms",
            load_s, stage_ms, report.setup_ms, report.prefill_ms
        );
        println!(
            "  time {:.3} ms (labels on device 0), {:.3} ms (labels on host); median of {} run(s)",
            report.ms,
            report.ms_to_host,
            report.runs_ms.len()
        );
        if let Some(d) = report.device_ms {
            println!("  device {d:.3} ms (algorithm, by device events)");
        }
        println!(
            "  components {}, largest {}",
            report.components, report.largest_component
        );
        println!(
            "  chunks {} x {} edges, {} buffers/device; edges per device {:?}, chunks {:?}",
            report.chunks,
            report.chunk_edges,
            report.input_buffers,
            report.edges_per_device,
            report.chunks_per_device
        );
        if let Some(ok) = check {
            println!(
                "  check vs union-find: {}",
                if ok { "ok" } else { "MISMATCH" }
            );
        }
    }
    if check == Some(false) {
        return Err("labels differ from the sequential reference".into());
    }
    Ok(())
}
