//! Residual-push PageRank over groute's distributed worklist.
//!
//! ```sh
//! cargo run --release --example pagerank                                  # shipped graph, validated
//! cargo run --release --example pagerank -- --gen kron21.sym --devices 2 --check --json
//! cargo run --release --example pagerank -- --gen road-usa --devices 2 --driver host --json
//! cargo run --release --example pagerank -- --graph road.gr --epsilon 0.001 --top 10 --output ranks.txt
//! ```
//!
//! With no graph flag it runs the shipped `datasets/4elt.graph` and checks the result against
//! the sequential reference: the L1 error must stay within `residual left / (1 - alpha)`
//! (and so within `n * epsilon / (1 - alpha)`; see the `groute-pagerank` crate docs).
//! `--driver` picks who drives the rounds on CUDA (`--driver fused` runs one persistent kernel
//! per device, faster on road-like graphs, far slower where many arcs are cut; the default,
//! auto, runs it where at most 1% of the arcs are cut, host-driven otherwise); `--json` says
//! which ran.

mod common;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use common::{AnyError, Bar, GraphArgs, RunArgs};
use groute::graph::{Graph, partition_graph};
use groute::pagerank::{
    DEFAULT_ALPHA, DEFAULT_EPSILON, DEFAULT_SWEEP_DIVISOR, Driver, PageRankOptions, PageRankSolver,
    SweepMode, l1_error_bound, pagerank_reference,
};
use serde::Serialize;

/// Residual-push PageRank on 1..N devices.
#[derive(Parser, Debug)]
#[command(name = "pagerank", version, about)]
struct Cli {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    run: RunArgs,
    /// Damping factor.
    #[arg(long, default_value_t = DEFAULT_ALPHA)]
    alpha: f32,
    /// A vertex is pushed once its residual exceeds this.
    #[arg(long, default_value_t = DEFAULT_EPSILON)]
    epsilon: f32,
    /// CUDA: sweep the owned range instead of a worklist round once the pending items are at
    /// least the owned range over this (0: worklist rounds only).
    #[arg(long, default_value_t = DEFAULT_SWEEP_DIVISOR)]
    sweep_divisor: u32,
    /// How sweeps move residuals: push (atomics per arc) or pull (take, then gather over the
    /// in-arcs; atomics only on arcs to other devices).
    #[arg(long, default_value_t = SweepMode::default())]
    sweep: SweepMode,
    /// CUDA: a receive reads nothing back; its counts go with the next round's read-back.
    #[arg(long)]
    lazy_receive: bool,
    /// CUDA: who drives the rounds: host (a launch and a read-back per round), fused (one
    /// persistent kernel per device runs every round; devices exchange over NVLink: faster on
    /// road-like graphs, far slower where many arcs are cut; more devices than GPUs run as
    /// members splitting a GPU, for tests), or auto (fused where at most 1% of the arcs are
    /// cut and the devices are distinct GPUs with peer access, else host).
    #[arg(long, default_value_t = Driver::default())]
    driver: Driver,
    /// CUDA, fused driver on several GPUs: one system fence per thread and round instead of
    /// one after every add to a peer's halo.
    #[arg(long)]
    fused_fence_per_round: bool,
    /// CUDA, fused driver: blocks of 256 threads per SM the kernel is compiled for: 8 or 6 cap
    /// its registers (more threads in flight), 0 lets the compiler choose (5 fit).
    #[arg(long, default_value_t = groute_pagerank::DEFAULT_FUSED_BLOCKS_PER_SM, value_name = "N")]
    fused_blocks_per_sm: u32,
    /// Print the K highest-ranked vertices.
    #[arg(long, value_name = "K")]
    top: Option<usize>,
    /// Write `<id> <rank>` per vertex (input numbering).
    #[arg(long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// Run this many times and report the median time.
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Items each device's local worklist holds (default: sized from the graph).
    #[arg(long, value_name = "ITEMS")]
    wl_capacity: Option<usize>,
    /// Items one device may send around the ring per round (default: no cap on the host).
    #[arg(long, value_name = "ITEMS")]
    send_capacity: Option<usize>,
    /// Items per ring packet.
    #[arg(long, value_name = "ITEMS")]
    packet_size: Option<usize>,
}

#[derive(Serialize)]
struct TopVertex {
    id: u64,
    rank: f32,
}

/// One device's profile of the last run (CUDA; host times in ms).
#[derive(Serialize)]
struct DeviceReport {
    rounds: u64,
    sweep_rounds: u64,
    worklist_rounds: u64,
    settle_rounds: u64,
    receives: u64,
    lazy_receives: u64,
    packets: u64,
    items_sent: u64,
    items_received: u64,
    syncs: u64,
    /// Device-driven runs: cross-device exchanges.
    exchanges: u64,
    buffer_growths: u64,
    sync_wait_ms: f64,
    round_ms: f64,
    receive_ms: f64,
    send_ms: f64,
    finish_ms: f64,
    /// The run's wall time minus the worker's calls: the driver's ring and termination work
    /// and its waits for packets.
    driver_idle_ms: f64,
    /// Device-driven runs: device time by phase (ms; `null` for host-driven runs).
    fused_phases_ms: Option<PhaseReport>,
    /// Device-driven runs: blocks of the persistent kernel's grid (`null` for host-driven).
    fused_grid: Option<u32>,
    /// Device-driven runs: cut arcs the sweeps pushed (unlisted) and in-cut slots drained.
    cut_arcs_sent: u64,
    cut_slots_drained: u64,
}

/// [`groute_pagerank::FusedPhaseTimes`] in ms.
#[derive(Serialize)]
struct PhaseReport {
    sweep_take: f64,
    hubs: f64,
    gather: f64,
    worklist: f64,
    exchange: f64,
    drain: f64,
    total: f64,
}

fn device_reports(s: &groute_pagerank::PageRankStats) -> Vec<DeviceReport> {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    s.devices
        .iter()
        .zip(&s.worklist.devices)
        .map(|(p, w)| DeviceReport {
            rounds: p.rounds,
            sweep_rounds: p.sweep_rounds,
            worklist_rounds: p.worklist_rounds,
            settle_rounds: p.settle_rounds,
            receives: p.receives,
            lazy_receives: p.lazy_receives,
            packets: p.packets,
            items_sent: w.items_sent,
            items_received: p.items_received,
            syncs: p.syncs,
            exchanges: p.exchanges,
            buffer_growths: p.buffer_growths,
            sync_wait_ms: ms(p.sync_wait),
            round_ms: ms(p.round_time),
            receive_ms: ms(p.receive_time),
            send_ms: ms(p.send_time),
            finish_ms: ms(p.finish_time),
            driver_idle_ms: ms(s.elapsed.saturating_sub(p.busy())),
            fused_phases_ms: p.phases.map(|t| PhaseReport {
                sweep_take: ms(t.sweep_take),
                hubs: ms(t.hubs),
                gather: ms(t.gather),
                worklist: ms(t.worklist),
                exchange: ms(t.exchange),
                drain: ms(t.drain),
                total: ms(t.total()),
            }),
            fused_grid: p.fused_grid,
            cut_arcs_sent: p.cut_arcs_sent,
            cut_slots_drained: p.cut_slots_drained,
        })
        .collect()
}

#[derive(Serialize)]
struct Report {
    graph: String,
    vertices: usize,
    edges: u64,
    devices: usize,
    backend: String,
    gpu: String,
    partition: String,
    alpha: f32,
    epsilon: f32,
    sweep: String,
    sweep_divisor: u32,
    lazy_receive: bool,
    /// `--fused-fence-per-round`.
    fused_fence_per_round: bool,
    /// `--fused-blocks-per-sm`.
    fused_blocks_per_sm: u32,
    /// The `--driver` asked for.
    driver_requested: String,
    /// The driver that ran: host or fused (auto's pick, or the one asked for).
    driver: String,
    time_ms: f64,
    /// The algorithm's median time by device events (`None` on the host backend).
    device_ms: Option<f64>,
    times_ms: Vec<f64>,
    work_items: u64,
    items_sent: u64,
    rounds: u64,
    rank_sum: f64,
    residual_left: f64,
    error_bound_l1: f64,
    top: Vec<TopVertex>,
    load_s: f64,
    partition_s: f64,
    checked: Option<bool>,
    relative_l1_error: Option<f64>,
    /// CUDA: where each device's time went in the last run (empty on the host backend).
    per_device: Vec<DeviceReport>,
}

fn main() -> ExitCode {
    common::exit_on_error(run)
}

/// External id of each input-order rank: vertices sorted by external id.
fn external_ids(graph: &Graph) -> Vec<u64> {
    let mut ext: Vec<u64> = (0..graph.num_vertices() as u32)
        .map(|v| graph.external_id(v))
        .collect();
    ext.sort_unstable();
    ext
}

fn run() -> Result<(), AnyError> {
    let cli = Cli::parse();
    if cli.repeat == 0 {
        return Err("--repeat must be at least 1".into());
    }
    let mut options = PageRankOptions {
        alpha: cli.alpha,
        epsilon: cli.epsilon,
        sweep_divisor: cli.sweep_divisor,
        sweep: cli.sweep,
        lazy_receive: cli.lazy_receive,
        fused_fence_per_round: cli.fused_fence_per_round,
        fused_blocks_per_sm: cli.fused_blocks_per_sm,
        driver: cli.driver,
        ..PageRankOptions::default()
    };
    options.validate()?;
    options.worklist.wl_capacity = cli.wl_capacity;
    options.worklist.send_capacity = cli.send_capacity;
    if let Some(p) = cli.packet_size {
        options.worklist.packet_size = p;
    }
    let ctx = common::context(&cli.run)?;
    let (graph, load_s) = common::load(&cli.graph, None, cli.run.json)?;
    let n = graph.num_vertices();

    let method = common::partition_method(&cli.graph)?;
    let started = Instant::now();
    let bar = Bar::new(cli.run.json);
    let parted = partition_graph(graph, ctx.num_devices(), method, &bar)?;
    bar.finish();
    let partition_s = started.elapsed().as_secs_f64();
    if let Some(why) = &parted.fallback {
        eprintln!("note: {why}");
    }
    let ext = external_ids(&parted.graph);

    // The graph is uploaded once; each run resets the residuals and ranks. With --repeat,
    // one extra warm-up run (kernel compilation, first touch) is not counted.
    let mut solver = PageRankSolver::new(&ctx, &parted, &options)?;
    let runs = common::timed_runs(
        cli.repeat,
        || solver.run(),
        |r| (r.stats.elapsed, r.stats.device_time),
    )?;
    let (result, times, median, device_ms) =
        (runs.last, runs.times_ms, runs.median_ms, runs.device_ms);
    let alpha = f64::from(cli.alpha);

    // With no graph flag this is the README's job: always validate.
    let check = cli.run.check || (cli.graph.graph.is_none() && cli.graph.gen_spec.is_none());
    let (checked, relative) = if check {
        let exact = pagerank_reference(&parted.graph.csr, alpha);
        let mut err = 0f64;
        let mut norm = 0f64;
        for (rank, &id) in ext.iter().enumerate() {
            let v = parted
                .graph
                .internal_id(id)
                .ok_or("vertex numbering is inconsistent")?;
            let x = exact.ranks[v as usize];
            err += (f64::from(result.ranks[rank]) - x).abs();
            norm += x;
        }
        let allowed = result.stats.residual_left / (1.0 - alpha) + 1e-4 * norm + exact.error_bound;
        if err > allowed {
            return Err(format!(
                "validation FAILED: L1 error {err:.6} exceeds the bound {allowed:.6} \
                 (residual left / (1 - alpha) plus f32 rounding)"
            )
            .into());
        }
        (Some(true), Some(err / norm))
    } else {
        (None, None)
    };

    if let Some(path) = &cli.output {
        let file =
            File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let mut out = BufWriter::new(file);
        for (rank, r) in result.ranks.iter().enumerate() {
            writeln!(out, "{} {r}", ext[rank])?;
        }
        out.flush()?;
    }

    let top = result
        .top(cli.top.unwrap_or(0))
        .into_iter()
        .map(|(rank, r)| TopVertex {
            id: ext[rank as usize],
            rank: r,
        })
        .collect();
    let s = &result.stats;
    let report = Report {
        graph: parted.graph.name.clone(),
        vertices: n,
        edges: parted.graph.num_edges(),
        devices: ctx.num_devices(),
        backend: ctx.backend_kind().to_string(),
        gpu: common::device_name(&ctx),
        partition: parted.method.to_string(),
        alpha: cli.alpha,
        epsilon: cli.epsilon,
        sweep: cli.sweep.to_string(),
        sweep_divisor: cli.sweep_divisor,
        lazy_receive: cli.lazy_receive,
        fused_fence_per_round: cli.fused_fence_per_round,
        fused_blocks_per_sm: cli.fused_blocks_per_sm,
        driver_requested: cli.driver.to_string(),
        driver: s.driver.to_string(),
        time_ms: median,
        device_ms,
        times_ms: times,
        work_items: s.work_items,
        items_sent: s.items_sent,
        rounds: s.rounds,
        rank_sum: result.rank_sum(),
        residual_left: s.residual_left,
        error_bound_l1: l1_error_bound(n, alpha, f64::from(cli.epsilon)),
        top,
        load_s,
        partition_s,
        checked,
        relative_l1_error: relative,
        per_device: device_reports(s),
    };
    if cli.run.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_human(&report);
    }
    Ok(())
}

fn print_human(r: &Report) {
    println!(
        "graph       {} ({} vertices, {} arcs)",
        r.graph, r.vertices, r.edges
    );
    println!(
        "devices     {} on {} ({}), partition {}",
        r.devices, r.backend, r.gpu, r.partition
    );
    println!(
        "settings    alpha {}, epsilon {}, {} sweeps (divisor {}), {} driver",
        r.alpha, r.epsilon, r.sweep, r.sweep_divisor, r.driver
    );
    println!(
        "time        {:.3} ms (median of {})",
        r.time_ms,
        r.times_ms.len()
    );
    if let Some(d) = r.device_ms {
        println!("device      {d:.3} ms (algorithm, by device events)");
    }
    println!(
        "work        {} items, {} sent over the ring, {} rounds",
        r.work_items, r.items_sent, r.rounds
    );
    println!(
        "ranks       sum {:.4}, residual left {:.4} (L1 error <= {:.4}; a priori <= {:.4})",
        r.rank_sum,
        r.residual_left,
        r.residual_left / (1.0 - f64::from(r.alpha)),
        r.error_bound_l1
    );
    for (d, p) in r.per_device.iter().enumerate() {
        println!(
            "device {d}    {} rounds ({} sweeps, {} worklist), {} receives, {} syncs: \
             wait {:.3} ms, rounds {:.3} ms, receives {:.3} ms, idle {:.3} ms",
            p.rounds,
            p.sweep_rounds,
            p.worklist_rounds,
            p.receives,
            p.syncs,
            p.sync_wait_ms,
            p.round_ms,
            p.receive_ms,
            p.driver_idle_ms
        );
    }
    for (i, t) in r.top.iter().enumerate() {
        println!("top {:<7} {} {:.6}", i + 1, t.id, t.rank);
    }
    println!(
        "load        {:.2} s, partition {:.2} s",
        r.load_s, r.partition_s
    );
    match (r.checked, r.relative_l1_error) {
        (Some(true), Some(e)) => {
            println!("validated   OK (relative L1 error {e:.2e} vs the power-iteration reference)")
        }
        _ => println!("validated   not checked (pass --check)"),
    }
}
