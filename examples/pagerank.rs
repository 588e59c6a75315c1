//! Residual-push PageRank over groute's distributed worklist.
//!
//! ```sh
//! cargo run --release --example pagerank                                  # shipped graph, validated
//! cargo run --release --example pagerank -- --gen kron21.sym --devices 2 --validate --json
//! cargo run --release --example pagerank -- --gen road-usa --devices 2 --execution host-driven --json
//! cargo run --release --example pagerank -- --graph road.gr --epsilon 0.001 --top 10 --output ranks.txt
//! ```
//!
//! The default `--epsilon` ([`groute::pagerank::DEFAULT_EPSILON`], 2e-4) leaves the ranks
//! within 1e-3 relative L1 of the exact fixed point (the error grows about linearly with
//! epsilon). The benchmarks keep 0.01 to compare with published figures.
//!
//! With no graph flag it runs the shipped `datasets/4elt.graph` and validates the result
//! against the sequential reference: the L1 error must stay within `residual left / (1 -
//! alpha)` (and so within `n * epsilon / (1 - alpha)`; see the `groute-pagerank` crate docs).
//! `--execution` picks who drives the rounds on CUDA (device-driven: one persistent kernel
//! per device; host-driven: a launch per round over the worklist). Auto runs device-driven on
//! one GPU and where the partition cuts few arcs, but synchronous pull sweeps (host-driven,
//! the devices copying each other's shares every round) on several devices where the
//! partition cuts at least a tenth of the arcs and on one GPU holding a dense, skewed graph
//! whose shares (4 bytes per vertex) fit its L2 or that has at least 2^26 arcs, and
//! host-driven rounds on one GPU holding any other dense graph whose shares outgrow its L2;
//! tuning
//! `--driver auto|fused|host|sweeps` names a driver. The JSON
//! report says which ran.

mod common;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use common::rank_graph::Needs;
use common::report::{ExecutionReport, GraphReport};
use common::{AnyError, GraphArgs, Report, RunArgs};
use groute::graph::Graph;
use groute::pagerank::{
    DEFAULT_ALPHA, DEFAULT_EPSILON, Driver, PageRankOptions, PageRankSolver, PageRankTuning,
    SweepMode, l1_error_bound, pagerank_reference,
};
use serde::Serialize;
use serde_json::json;

/// Residual-push PageRank on 1..N devices.
#[derive(Parser, Debug)]
#[command(name = "pagerank", version, term_width = 0)]
struct Cli {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    run: RunArgs,
    /// Damping factor.
    #[arg(long, default_value_t = DEFAULT_ALPHA)]
    alpha: f32,
    /// Push a vertex once its residual exceeds this (default: ranks within 1e-3 relative L1).
    #[arg(long, default_value_t = DEFAULT_EPSILON)]
    epsilon: f32,
    /// Print the K highest-ranked vertices.
    #[arg(long, value_name = "K")]
    top: Option<usize>,
    /// CUDA: sweep the owned range instead of a worklist round once the pending items are at
    /// least the owned range over this (0: worklist rounds only, after the first sweep and its
    /// delivery; default: 64 on graphs of 8 or more arcs per vertex, 16 below).
    #[arg(long, hide = true)]
    sweep_divisor: Option<u32>,
    /// How sweeps move residuals: push (atomics per arc) or pull (take, then gather over the
    /// in-arcs; atomics only on arcs to other devices).
    #[arg(long, default_value_t = SweepMode::default(), hide = true)]
    sweep: SweepMode,
    /// CUDA: a receive reads nothing back; its counts go with the next round's read-back.
    #[arg(long, hide = true)]
    lazy_receive: bool,
    /// Renumber each part's vertices by decreasing degree before the upload (`true`), or
    /// not (`false`); by default the solver decides (`PageRankTuning::degree_order`).
    #[arg(long, hide = true)]
    degree_order: Option<bool>,
    /// CUDA: the sweeps' gather deals its vertices out over the blocks thread by thread
    /// (`true`) or warp by warp (`false`; the fused driver's: each block consecutive ones);
    /// by default the solver decides (`PageRankTuning::gather_interleave`).
    #[arg(long, hide = true)]
    gather_interleave: Option<bool>,
    /// CUDA, the synchronous sweeps (`--driver sweeps`, Auto's pick on several devices
    /// whose partition cuts many arcs, and every run across MPI ranks): a round's gather
    /// reads only the shares of the vertices it took where it took at most the vertices over
    /// this (0: never; default: 16 where a share per vertex outgrows the L2, else never).
    /// The other drivers read every share.
    #[arg(long, hide = true, value_name = "DIVISOR")]
    sparse_gather_divisor: Option<u32>,
    /// CUDA and host, the synchronous sweeps in one process: a round pushes the shares of
    /// the vertices it takes along their out-arcs instead of gathering where it is expected
    /// to take at most the graph's arcs over this (0: never; default 8). Across MPI ranks the
    /// sweeps always gather.
    #[arg(long, hide = true, value_name = "DIVISOR")]
    sweep_push_divisor: Option<u32>,
    /// CUDA and host, the synchronous sweeps: each device splits its vertices into this
    /// many ranges, and a round gathers and takes them one after the other, each range's
    /// take seeing the shares the earlier ones took, until a round takes few (1: the whole
    /// graph at once; default, in one process on GPUs holding a graph in degree order of at
    /// least 2^26 arcs, 4 where its shares fit the L2 and 8 where they outgrow it, else 1;
    /// across MPI ranks 1 unless given, the same on every rank).
    #[arg(long, hide = true, value_name = "RANGES")]
    sweep_ranges: Option<u32>,
    /// CUDA, the synchronous sweeps' rounds by vertex ranges: each range's gather sums
    /// tiles of its in-arcs sorted by source in shared memory (`true`) or each vertex its
    /// in-list (`false`); by default by tiles (`PageRankTuning::gather_tiles`).
    #[arg(long, hide = true)]
    gather_tiles: Option<bool>,
    /// CUDA, the gather tiles: a tile whose destinations have at least this many of its arcs
    /// each keeps them by destination (default: `GATHER_TILE_BY_DESTINATION`, in practice the
    /// tiles of a vertex split over tiles of its own).
    #[arg(long, hide = true, value_name = "ARCS")]
    gather_tile_by_destination: Option<u64>,
    /// CUDA, the gather tiles: the in-arcs a tile takes about (default: the shortest length
    /// at which a range's tiles fit one wave of the multiprocessors, a tile each).
    #[arg(long, hide = true, value_name = "ARCS")]
    gather_tile_arcs: Option<u64>,
    /// One process's synchronous sweeps by vertex ranges: enqueue the next round before
    /// reading this one's counts where the rounds before say it will be ranged too.
    #[arg(long, hide = true, default_value_t = true, action = clap::ArgAction::Set)]
    sweep_run_ahead: bool,
    /// Who drives the rounds (overrides --execution): host (a launch and a read-back per
    /// round over the worklist), fused (one persistent kernel per device runs every round;
    /// more devices than GPUs run as members splitting a GPU), sweeps (a pull sweep of the
    /// whole graph every round, the devices copying each other's shares), or auto (sweeps
    /// on several CUDA devices whose partition cuts at least a tenth of the arcs, and on one
    /// holding a dense graph in degree order whose shares fit its L2 or that has at least
    /// 2^26 arcs; host on one CUDA device holding another dense graph whose shares outgrow
    /// its L2; else fused where the devices can run it, else host; host on the host
    /// backend).
    #[arg(long, hide = true)]
    driver: Option<Driver>,
    /// CUDA, fused driver on several GPUs: one system fence per thread and round instead of
    /// one after every add to a peer's halo.
    #[arg(long, hide = true)]
    fused_fence_per_round: bool,
    /// CUDA, fused driver: blocks of 256 threads per SM the kernel is compiled for: 8 or 6 cap
    /// its registers (more threads in flight), 0 lets the compiler choose (5 fit).
    #[arg(long, default_value_t = groute_pagerank::DEFAULT_FUSED_BLOCKS_PER_SM, value_name = "N", hide = true)]
    fused_blocks_per_sm: u32,
    /// Items each device's local worklist holds (default: sized from the graph).
    #[arg(long, value_name = "ITEMS", hide = true)]
    wl_capacity: Option<usize>,
    /// Items one device may send around the ring per round (default: no cap on the host).
    #[arg(long, value_name = "ITEMS", hide = true)]
    send_capacity: Option<usize>,
    /// Items per ring packet.
    #[arg(long, value_name = "ITEMS", hide = true)]
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
    /// Device-driven runs on several devices: share values the sweeps posted to the peers.
    mirror_values_sent: u64,
}

/// [`groute_pagerank::FusedPhaseTimes`] in ms.
#[derive(Serialize)]
struct PhaseReport {
    sweep_take: f64,
    mirror: f64,
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
                mirror: ms(t.mirror),
                hubs: ms(t.hubs),
                gather: ms(t.gather),
                worklist: ms(t.worklist),
                exchange: ms(t.exchange),
                drain: ms(t.drain),
                total: ms(t.total()),
            }),
            fused_grid: p.fused_grid,
            mirror_values_sent: p.mirror_values_sent,
        })
        .collect()
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

/// Under mpirun: synchronous pull sweeps over every rank's devices, the ranks' shares
/// gathered each round (`groute::pagerank::PageRankRanks`; a directed graph is loaded whole
/// on every rank, for its in-arcs); rank 0 validates against the reference (L1, within the
/// a-priori bound) and writes `--output`.
fn over_ranks(cli: &Cli, ranks: usize, tuning: PageRankTuning) -> Result<(), AnyError> {
    let held = common::rank_graph::load(&cli.graph, None, &cli.run, ranks, Needs::BothWays)?;
    let graph_report = GraphReport::of(&held.graph);
    let graph = &held.graph;
    let (alpha, epsilon) = (cli.alpha, cli.epsilon);
    let n = graph.num_vertices();
    let order = groute::graph::InputOrder::of(graph);
    let validate = cli.run.validate || cli.graph.is_default();
    let check = move |values: &[f32]| {
        let exact = pagerank_reference(&graph.csr, f64::from(alpha));
        let err: f64 = values
            .iter()
            .zip(&exact.ranks)
            .map(|(&a, &b)| (f64::from(a) - b).abs())
            .sum();
        let norm: f64 = exact.ranks.iter().sum();
        let allowed = groute::pagerank::l1_error_bound(n, f64::from(alpha), f64::from(epsilon))
            + 1e-4 * norm
            + exact.error_bound;
        if err > allowed {
            return Err(format!("L1 error {err:.6} exceeds the bound {allowed:.6}"));
        }
        Ok(())
    };
    let write_order = order.clone();
    let job = common::ranks::RankJob {
        name: "pagerank",
        run: &cli.run,
        graph: &held,
        graph_report,
        sources: Vec::new(),
        options: groute::worklist::WorklistOptions::default(),
        validate: validate.then(|| Box::new(check) as Box<dyn Fn(&[f32]) -> Result<(), String>>),
        write: Box::new(move |path: &std::path::Path, values: &[f32]| {
            let file =
                File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            let mut out = BufWriter::new(file);
            for (rank, r) in write_order
                .to_rank_order(values.to_vec())
                .iter()
                .enumerate()
            {
                writeln!(out, "{} {r}", write_order.external_of_rank(rank as u32))?;
            }
            out.flush()?;
            Ok(())
        }),
        stats: Box::new(move |values: &[f32], _| {
            json!({
                "alpha": alpha,
                "epsilon": epsilon,
                "rank_sum": values.iter().map(|&r| f64::from(r)).sum::<f64>(),
            })
        }),
    };
    common::ranks_pagerank::run(job, groute::pagerank::PageRank { alpha, epsilon }, tuning)
}

fn run() -> Result<(), AnyError> {
    let cli: Cli = common::tuning::parse();
    let repeat = cli.run.repeats()?;
    let mut options = PageRankOptions {
        alpha: cli.alpha,
        epsilon: cli.epsilon,
        driver: cli.driver.unwrap_or(cli.run.execution.pagerank_driver()),
        tuning: PageRankTuning {
            sweep_divisor: cli.sweep_divisor,
            sweep: cli.sweep,
            lazy_receive: cli.lazy_receive,
            fused_fence_per_round: cli.fused_fence_per_round,
            fused_blocks_per_sm: cli.fused_blocks_per_sm,
            degree_order: cli.degree_order,
            sparse_gather_divisor: cli.sparse_gather_divisor,
            sweep_push_divisor: cli.sweep_push_divisor,
            gather_interleave: cli.gather_interleave,
            sweep_ranges: cli.sweep_ranges,
            gather_tiles: cli.gather_tiles,
            gather_tile_by_destination: cli.gather_tile_by_destination,
            gather_tile_arcs: cli.gather_tile_arcs,
            sweep_run_ahead: cli.sweep_run_ahead,
        },
        ..PageRankOptions::default()
    };
    options.validate()?;
    options.worklist.wl_capacity = cli.wl_capacity;
    options.worklist.send_capacity = cli.send_capacity;
    if let Some(p) = cli.packet_size {
        options.worklist.packet_size = p;
    }
    if let Some(ranks) = common::ranks::job_size()? {
        // The degree order, the sparse gathers, the gather's interleaving and the vertex
        // ranges and their tiles apply to the sweeps across ranks too.
        let across_ranks = PageRankTuning {
            degree_order: options.tuning.degree_order,
            sparse_gather_divisor: options.tuning.sparse_gather_divisor,
            gather_interleave: options.tuning.gather_interleave,
            sweep_ranges: options.tuning.sweep_ranges,
            gather_tiles: options.tuning.gather_tiles,
            gather_tile_by_destination: options.tuning.gather_tile_by_destination,
            gather_tile_arcs: options.tuning.gather_tile_arcs,
            ..PageRankTuning::default()
        };
        if cli.driver.is_some() || options.driver == Driver::Fused || options.tuning != across_ranks
        {
            return Err(
                "--driver, --execution device-driven, --sweep, --sweep-divisor, \
                        --sweep-push-divisor, --lazy-receive and the fused settings tune \
                        one process's run; across \
                        MPI ranks PageRank runs synchronous pull sweeps: leave them out"
                    .into(),
            );
        }
        if cli.wl_capacity.is_some() || cli.send_capacity.is_some() || cli.packet_size.is_some() {
            return Err(
                "--wl-capacity, --send-capacity and --packet-size size one process's \
                        worklist; across MPI ranks PageRank runs synchronous pull sweeps, \
                        which need none: leave them out"
                    .into(),
            );
        }
        return over_ranks(&cli, ranks, across_ranks);
    }
    let ctx = cli.run.context()?;
    let (graph, load_ms) = common::graph_args::load(&cli.graph, None, cli.run.quiet())?;
    let graph_report = GraphReport::of(&graph);
    let n = graph.num_vertices();
    let average_degree = graph.csr.num_edges() as f64 / n.max(1) as f64;

    let started = Instant::now();
    let parted = cli
        .graph
        .partition(graph, ctx.num_devices(), cli.run.quiet())?;
    let ext = external_ids(&parted.graph);

    // The graph is uploaded once; each run resets the residuals and ranks. With --repeat,
    // one extra warm-up run (kernel compilation, first touch) is not counted.
    let mut solver = PageRankSolver::new(&ctx, &parted, &options)?;
    let stage_ms = started.elapsed().as_secs_f64() * 1e3;
    let runs = common::timing::timed_runs(
        repeat,
        || solver.run(),
        |r| (r.stats.elapsed, r.stats.device_time),
    )?;
    let result = &runs.last;
    let alpha = f64::from(cli.alpha);

    // With no graph flag this is the README's job: always validate.
    let check = cli.run.validate || cli.graph.is_default();
    let relative = if check {
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
        Some(err / norm)
    } else {
        None
    };

    if let Some(path) = &cli.run.output {
        let file =
            File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let mut out = BufWriter::new(file);
        for (rank, r) in result.ranks.iter().enumerate() {
            writeln!(out, "{} {r}", ext[rank])?;
        }
        out.flush()?;
    }

    let top: Vec<TopVertex> = result
        .top(cli.top.unwrap_or(0))
        .into_iter()
        .map(|(rank, r)| TopVertex {
            id: ext[rank as usize],
            rank: r,
        })
        .collect();
    let s = &result.stats;
    let fused = s.driver == Driver::Fused;
    let mut report = Report::of_run("pagerank", &ctx, Some(graph_report));
    report.execution = Some(ExecutionReport::new(
        &ctx,
        &cli.run,
        common::execution::mode_of(fused),
        match s.driver {
            Driver::Fused => common::execution::persistent_form(&ctx),
            Driver::Sweeps => "synchronous pull sweeps",
            _ => "host-driven rounds",
        },
        Some(parted.method.to_string()),
        json!({
            "driver_requested": options.driver.to_string(),
            "driver": s.driver.to_string(),
            "alpha": cli.alpha,
            "epsilon": cli.epsilon,
            "sweep": cli.sweep.to_string(),
            "sweep_divisor_requested": cli.sweep_divisor,
            "sweep_divisor": options.tuning.sweep_divisor_for(average_degree),
            "lazy_receive": cli.lazy_receive,
            "fused_fence_per_round": cli.fused_fence_per_round,
            "fused_blocks_per_sm": cli.fused_blocks_per_sm,
            "degree_order": solver.degree_ordered(),
            "gather_interleave": solver.gather_interleaved(),
            "sparse_gather_divisor_requested": cli.sparse_gather_divisor,
            "sweep_push_divisor_requested": cli.sweep_push_divisor,
            "sweep_ranges_requested": cli.sweep_ranges,
            "sweep_ranges": solver.sweep_ranges(),
            "gather_tiles_requested": cli.gather_tiles,
            "gather_tiles": solver.gathers_by_tiles(),
            "gather_tile_by_destination_requested": cli.gather_tile_by_destination,
            "gather_tile_arcs_requested": cli.gather_tile_arcs,
            "sweep_run_ahead": cli.sweep_run_ahead,
        }),
    ));
    report.times = runs.times(load_ms, stage_ms);
    report.validated = check.then_some(true);
    // One definition of the traffic (PageRankStats): ring items when host-driven; halo adds
    // and mirror values stored straight into the peers' memory when fused (no message).
    report.comm = Some(common::report::CommReport {
        bytes: s.bytes_sent(),
        messages: s.worklist.segments_sent(),
        remote_updates: s.remote_updates(),
        // Neither the device-driven loop nor the sweeps count the arcs they pull or push
        // across parts.
        cut_arcs_traversed: if fused || s.driver == Driver::Sweeps {
            None
        } else {
            s.worklist.cut_arcs_traversed()
        },
    });
    report.algorithm_stats = json!({
        "work_items": s.work_items,
        "items_sent": s.items_sent,
        "rounds": s.rounds,
        "sparse_gather_rounds": s.sparse_gather_rounds,
        "push_rounds": s.push_rounds,
        "ranged_rounds": s.ranged_rounds,
        "ranged_rounds_ahead": s.ranged_rounds_ahead,
        "sweep_round_ms": sweep_round_ms(&s.sweep_round_times),
        "rank_sum": result.rank_sum(),
        "residual_left": s.residual_left,
        "error_bound_l1": l1_error_bound(n, alpha, f64::from(cli.epsilon)),
        "relative_l1_error": relative,
        "top": top,
        "per_device": device_reports(s),
    });
    if let Some(path) = &cli.run.json {
        report.write(path)?;
    }
    if !cli.run.json_on_stdout() {
        print_human(&report, alpha, &top, &device_reports(s));
    }
    Ok(())
}

/// The sweeps' host time by round kind, in ms (zero for the other drivers).
fn sweep_round_ms(t: &groute_pagerank::SweepRoundTimes) -> serde_json::Value {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    json!({
        "gather": ms(t.gather),
        "sparse_gather": ms(t.sparse_gather),
        "push": ms(t.push),
    })
}

fn print_human(r: &Report, alpha: f64, top: &[TopVertex], per_device: &[DeviceReport]) {
    common::report::print_header(r);
    let st = &r.algorithm_stats;
    if let Some(e) = &r.execution {
        let d = &e.detail;
        let f32_of = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0) as f32;
        println!(
            "settings    alpha {}, epsilon {}, {} sweeps (divisor {}), {} driver",
            f32_of(&d["alpha"]),
            f32_of(&d["epsilon"]),
            d["sweep"].as_str().unwrap_or(""),
            d["sweep_divisor"],
            d["driver"].as_str().unwrap_or("")
        );
    }
    println!(
        "work        {} items, {} sent over the ring, {} rounds",
        st["work_items"], st["items_sent"], st["rounds"]
    );
    let sweeps = r
        .execution
        .as_ref()
        .is_some_and(|e| e.detail["driver"] == "sweeps");
    if sweeps {
        let ms = &st["sweep_round_ms"];
        println!(
            "rounds      {} by vertex ranges ({} enqueued ahead), {} sparse gathers, {} pushes; \
             host ms: gathers {:.3}, sparse gathers {:.3}, pushes {:.3}",
            st["ranged_rounds"],
            st["ranged_rounds_ahead"],
            st["sparse_gather_rounds"],
            st["push_rounds"],
            ms["gather"].as_f64().unwrap_or(0.0),
            ms["sparse_gather"].as_f64().unwrap_or(0.0),
            ms["push"].as_f64().unwrap_or(0.0)
        );
    }
    let residual = st["residual_left"].as_f64().unwrap_or(0.0);
    println!(
        "ranks       sum {:.4}, residual left {residual:.4} (L1 error <= {:.4}; a priori <= {:.4})",
        st["rank_sum"].as_f64().unwrap_or(0.0),
        residual / (1.0 - alpha),
        st["error_bound_l1"].as_f64().unwrap_or(0.0)
    );
    for (d, p) in per_device.iter().enumerate() {
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
    for (i, t) in top.iter().enumerate() {
        println!("top {:<7} {} {:.6}", i + 1, t.id, t.rank);
    }
    if let Some(e) = st["relative_l1_error"].as_f64() {
        println!("accuracy    relative L1 error {e:.2e} vs the power-iteration reference");
    }
    common::report::print_footer(r);
}
