//! Breadth-first search over groute's distributed worklist.
//!
//! ```sh
//! cargo run --release --example bfs                                  # shipped graph, validated
//! cargo run --release --example bfs -- --gen kron21.sym --devices 2 --validate --json
//! cargo run --release --example bfs -- --graph road.gr --source 1 --output levels.txt
//! cargo run --release --example bfs -- --gen road:side=2048,p=0.6 --execution host-driven --repeat 5
//! cargo run --release --example bfs -- --gen kron21.sym --roots 16 --repeat 5 --validate
//! cargo run --release --example bfs -- --help-tuning                # the hidden tuning flags
//! ```
//!
//! The default source is the vertex of highest out-degree in the largest weakly connected
//! component (stderr names it); a `--source` in a component of under 1% of the vertices draws
//! a warning. `--roots N` searches from N random roots with out-edges, as Graph500 picks its
//! search keys (tuning: `--roots-seed`), and reports every root, the median over them and the
//! harmonic mean of their GTEPS.
//!
//! `--execution auto` runs a symmetric graph of at least 8 arcs per vertex
//! direction-optimizing (each level a top-down push or a bottom-up pull; tuning `--direction`,
//! `--do-alpha`, `--do-beta`, `--do-driver`) and everything else on the asynchronous worklist,
//! on one CUDA device as one fused persistent kernel. `device-driven` asks for the persistent
//! kernels (the fused kernel; the direction-optimizing members), `host-driven` for one launch
//! per round (a host thread per device for direction-optimizing runs). The JSON report
//! (`docs/report.schema.json`) says what ran: `execution.engine`, and `algorithm_stats`
//! `pull_levels`, `arcs_examined` (the arcs the run actually read; `edges_traversed`, behind
//! GTEPS, is the Graph500 count: the arcs of the reached vertices).
//!
//! With no graph flag it runs the shipped `datasets/4elt.graph` on the best backend present
//! and validates the result against the sequential reference. Tuning `--prio-delta D` sets
//! soft priority by level (bands of `D` levels; 0: off). By default it is off, except where
//! the worklist BFS runs device-driven on several CUDA devices (bands of
//! `groute_bfs::PRIO_DELTA_DEVICE_DRIVEN` levels).

mod common;

use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use common::rank_graph::Needs;
use common::report::{ExecutionReport, GraphReport};
use common::{AnyError, FusedArgs, GraphArgs, Report, RunArgs, WorklistArgs};
use groute::bfs::{
    BfsOptions, BfsSolver, BfsTuning, Direction, MultiDriver, PULL_ALPHA, PULL_GAMMA, PUSH_BETA,
    bfs_reference,
};
use groute::graph::{Graph, InputOrder};
use serde::Serialize;
use serde_json::json;

/// Breadth-first search on 1..N devices.
#[derive(Parser, Debug)]
#[command(name = "bfs", version, term_width = 0)]
struct Cli {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    fused: FusedArgs,
    /// Source vertex, input numbering (default: the top out-degree vertex of the largest component).
    #[arg(long, conflicts_with = "roots")]
    source: Option<u64>,
    /// Graph500-style: search from N random roots with out-edges; the report gives each root.
    #[arg(long, value_name = "N", conflicts_with = "output")]
    roots: Option<usize>,
    /// The seed of `--roots`' sample.
    #[arg(long, value_name = "SEED", default_value_t = 1, hide = true)]
    roots_seed: u64,
    #[command(flatten)]
    worklist: WorklistArgs,
    /// Soft priority: width of a level band (0: off; default: off, except device-driven runs
    /// on several CUDA devices: groute_bfs::PRIO_DELTA_DEVICE_DRIVEN).
    #[arg(long, hide = true, value_name = "D")]
    prio_delta: Option<u32>,
    /// auto, push (asynchronous worklist) or pull-push (direction-optimizing, any device
    /// count).
    #[arg(long, hide = true, value_name = "DIR", default_value_t = Direction::Auto)]
    direction: Direction,
    /// Direction-optimizing: pull once the frontier's out-arcs exceed the unvisited in-arcs /
    /// this (0: never pull).
    #[arg(long, hide = true, value_name = "ALPHA", default_value_t = PULL_ALPHA)]
    do_alpha: u64,
    /// Direction-optimizing: push again once the frontier stops growing and holds fewer
    /// than the vertices / this (0: push again as soon as the frontier stops growing).
    #[arg(long, hide = true, value_name = "BETA", default_value_t = PUSH_BETA)]
    do_beta: u64,
    /// Direction-optimizing: pull only once the frontier's out-arcs also reach the vertices
    /// / this (0: no such bound).
    #[arg(long, hide = true, value_name = "GAMMA", default_value_t = PULL_GAMMA)]
    do_gamma: u64,
    /// Direction-optimizing runs on CUDA (device-driven, or host-driven on several devices or
    /// across ranks): the pulls test in-neighbours against a bitmap of the frontier (true) or
    /// their levels (false); by the graph when absent.
    #[arg(long, hide = true, value_name = "BOOL")]
    do_pull_bitmap: Option<bool>,
    /// Direction-optimizing: what drives the levels: fused (the devices, one persistent
    /// kernel each; distinct GPUs with peer access, or with more devices than GPUs members
    /// sharing them, for testing), per-device (one host thread per device) or auto (fused
    /// where the devices can run it: one GPU, distinct GPUs with peer access, or members
    /// sharing a GPU; else per-device).
    #[arg(long, hide = true, value_name = "DRIVER")]
    do_driver: Option<MultiDriver>,
    /// Device-driven direction-optimizing runs: stamp every phase of every level on every
    /// device and report them (`--json`: `do_trace`, per device and step, microseconds);
    /// under mpirun, rank 0's device 0 per level (timing events on its stream).
    #[arg(long, hide = true)]
    do_trace: bool,
}

/// One root of a `--roots` run.
#[derive(Serialize)]
struct RootReport {
    source: u64,
    time_ms: f64,
    device_ms: Option<f64>,
    edges_traversed: u64,
    gteps: f64,
    reached: usize,
    depth: u32,
}

fn main() -> ExitCode {
    common::exit_on_error(run)
}

fn run() -> Result<(), AnyError> {
    let cli: Cli = common::tuning::parse();
    let repeat = cli.run.repeats()?;
    if let Some(ranks) = common::ranks::job_size()? {
        // Under mpirun: over every rank's devices, direction-optimizing where --direction
        // chooses it for the whole graph, else the worklist BFS.
        if cli.roots.is_some() {
            return Err("--roots runs one process; under mpirun give --source (or none)".into());
        }
        let held = common::rank_graph::load(&cli.graph, None, &cli.run, ranks, Needs::OwnRows)?;
        let validate = cli.run.validate || cli.graph.is_default();
        let job = common::ranks::traversal_job(
            "bfs",
            &cli.run,
            &held,
            GraphReport::of(&held.graph),
            cli.source,
            validate,
            bfs_reference,
        )?;
        return common::ranks_bfs::run(job, cli.direction, tuning(&cli));
    }
    let ctx = cli.run.context()?;
    let (graph, load_ms) = common::graph_args::load(&cli.graph, None, cli.run.quiet())?;
    let graph_report = GraphReport::of(&graph);
    let order = InputOrder::of(&graph);

    // `--roots` and `--source` exclude each other (clap), so a sampled run needs no source.
    let roots = match cli.roots {
        Some(count) => common::sample_roots(&graph, &order, count, cli.roots_seed)?,
        None => vec![common::source::pick(&graph, &order, cli.source)?],
    };

    let started = Instant::now();
    let parted = cli
        .graph
        .partition(graph, ctx.num_devices(), cli.run.quiet())?;

    let execution = cli.run.execution;
    let mut options = BfsOptions::default();
    cli.worklist.apply(&mut options.worklist);
    options.worklist.prio_delta = cli.prio_delta;
    cli.fused
        .apply(execution, ctx.num_devices(), &mut options.worklist);
    options.direction = cli.direction;
    options.multi_driver = cli.do_driver.unwrap_or(execution.multi_driver());
    options.tuning = tuning(&cli);

    // The graph is uploaded once; each run resets the levels and traverses. With --repeat,
    // one extra warm-up run (kernel compilation, first-touch) is not counted.
    let mut solver = BfsSolver::new(&ctx, &parted, &options)?;
    let stage_ms = started.elapsed().as_secs_f64() * 1e3;
    // With no graph flag this is the README's main job: always validate.
    let check = cli.run.validate || cli.graph.is_default();
    let ranks = InputOrder::of(&parted.graph);
    let mut per_root = Vec::with_capacity(roots.len());
    let mut last = None;
    let (mut run_ms, mut device_ms, mut full_ms) = (Vec::new(), Some(Vec::new()), Vec::new());
    for &root in &roots {
        let runs = common::timing::timed_runs(
            repeat,
            || solver.run(root),
            |r| (r.stats.elapsed, r.stats.device_time),
        )?;
        if check {
            validate(&parted.graph, &order, root, &runs.last.levels)?;
        }
        // Edges traversed: the out-arcs of every reached vertex (the Graph500 convention).
        let edges_traversed = common::edges_of_reached(&parted.graph, &ranks, &runs.last.levels);
        let median = runs.median_ms();
        per_root.push(RootReport {
            source: order.external_of_rank(root),
            time_ms: median,
            device_ms: runs.device_median_ms(),
            edges_traversed,
            gteps: edges_traversed as f64 / (median * 1e-3) / 1e9,
            reached: runs.last.reached(),
            depth: runs.last.depth(),
        });
        run_ms.extend_from_slice(&runs.run_ms);
        full_ms.extend_from_slice(&runs.full_run_ms);
        device_ms = match (device_ms, &runs.device_ms) {
            (Some(mut all), Some(these)) => {
                all.extend_from_slice(these);
                Some(all)
            }
            _ => None,
        };
        last = Some(runs);
    }
    let runs = last.ok_or("no root to search from")?;
    let result = runs.last;
    let summary = per_root.last().ok_or("no root to search from")?;
    let (source_ext, edges_traversed) = (summary.source, summary.edges_traversed);
    let gteps = if cli.roots.is_some() {
        // Graph500 reports the harmonic mean of the roots' TEPS.
        let inverse: f64 = per_root.iter().map(|r| 1.0 / r.gteps).sum();
        per_root.len() as f64 / inverse
    } else {
        summary.gteps
    };

    if let Some(path) = &cli.run.output {
        common::write_values(path, &result.levels, &order)?;
    }

    let stats = &result.stats;
    let (mode, engine) = engine(stats, &ctx);
    let detail = json!({
        "direction": if stats.direction_optimized { Direction::PullPush.name() } else { Direction::Push.name() },
        "fused": stats.fused,
        "device_driven_members": stats.worklist.device_driven,
        "do_driver": stats.do_driver.map(MultiDriver::name),
        "prio_delta": stats.prio_delta,
    });
    let mut report = Report::of_run("bfs", &ctx, Some(graph_report));
    report.execution = Some(ExecutionReport::new(
        &ctx,
        &cli.run,
        mode,
        engine,
        Some(parted.method.to_string()),
        detail,
    ));
    let timed = common::timing::TimedRuns {
        last: (),
        run_ms,
        device_ms,
        full_run_ms: full_ms,
    };
    report.times = timed.times(load_ms, stage_ms);
    report.validated = check.then_some(true);
    // The direction-optimizing BFS exchanges frontier words, which its worklist counters miss.
    // Worklist runs count their ring items, or device-driven members their inbox items: a
    // vertex and its value each (`CommReport::of` says which runs count their remote updates).
    report.comm = if stats.direction_optimized {
        None
    } else {
        common::report::CommReport::of(&stats.worklist, size_of::<groute::worklist::VertexValue>())
    };
    report.algorithm_stats = json!({
        "source": source_ext,
        "reached": result.reached(),
        "depth": result.depth(),
        "edges_traversed": edges_traversed,
        "gteps": gteps,
        "work_items": stats.work_items,
        "items_sent": stats.items_sent,
        "rounds": stats.rounds,
        "solo_rounds": stats.worklist.solo_rounds(),
        "solo_cluster_rounds": stats.worklist.solo_cluster_rounds(),
        "pull_levels": stats.pull_levels,
        "arcs_examined": stats.arcs_examined,
        "deferred": stats.items_deferred,
        "epochs": stats.epochs,
        "roots": cli.roots.is_some().then_some(&per_root),
        "do_trace": stats.do_trace.as_ref().map(common::do_trace::trace_json),
    });
    if let Some(path) = &cli.run.json {
        report.write(path)?;
    }
    if !cli.run.json_on_stdout() {
        print_human(&report, &per_root, cli.roots.is_some(), stats.prio_delta);
        if let Some(trace) = &stats.do_trace {
            common::do_trace::print_trace(trace);
        }
    }
    Ok(())
}

/// The direction-optimizing runs' tuning from the `--do-*` flags (one process or ranks).
fn tuning(cli: &Cli) -> BfsTuning {
    BfsTuning {
        switch_rule: groute::bfs::SwitchRule {
            alpha: cli.do_alpha,
            beta: cli.do_beta,
            gamma: cli.do_gamma,
        },
        trace: cli.do_trace,
        pull_bitmap: cli.do_pull_bitmap,
    }
}

/// The mode and engine a run's statistics show.
fn engine(stats: &groute::bfs::BfsStats, ctx: &groute::core::Context) -> (&'static str, String) {
    if stats.direction_optimized {
        let driver = stats.do_driver.unwrap_or(MultiDriver::Auto);
        let device_driven = driver == MultiDriver::Fused;
        return (
            common::execution::mode_of(device_driven),
            format!("direction-optimizing, {} driver", driver.name()),
        );
    }
    common::execution::worklist_engine(stats.fused, stats.worklist.device_driven, ctx)
}

/// Fails naming the root when `levels` (by rank) differ from the sequential reference's.
fn validate(graph: &Graph, order: &InputOrder, root: u32, levels: &[u32]) -> Result<(), AnyError> {
    let reference = reference_by_rank(graph, order, root)?;
    let mismatches = reference.iter().zip(levels).filter(|(a, b)| a != b).count();
    if mismatches > 0 {
        return Err(format!(
            "validation FAILED from source {}: {mismatches} of {} levels differ from the \
             sequential reference",
            order.external_of_rank(root),
            levels.len()
        )
        .into());
    }
    Ok(())
}

/// The reference levels, indexed by rank.
fn reference_by_rank(
    graph: &Graph,
    order: &InputOrder,
    source_rank: u32,
) -> Result<Vec<u32>, AnyError> {
    let n = graph.num_vertices();
    let internal = |rank: usize| {
        graph
            .internal_id(order.external_of_rank(rank as u32))
            .ok_or("vertex numbering is inconsistent")
    };
    let levels = bfs_reference(&graph.csr, internal(source_rank as usize)?);
    (0..n).map(|r| Ok(levels[internal(r)? as usize])).collect()
}

fn print_human(r: &Report, roots: &[RootReport], sampled: bool, prio_delta: u32) {
    common::report::print_header(r);
    let st = &r.algorithm_stats;
    if sampled {
        println!(
            "roots       {} (Graph500 sample; times are medians over them)",
            roots.len()
        );
        for root in roots {
            let device = root
                .device_ms
                .map_or(String::new(), |d| format!(", device {d:.3} ms"));
            println!(
                "  root {:>10}  {:.3} ms{device}, {:.3} GTEPS, depth {}, reached {}",
                root.source, root.time_ms, root.gteps, root.depth, root.reached
            );
        }
    } else {
        println!("source      {}", st["source"]);
    }
    let depth = format!("depth {}", st["depth"]);
    common::report::print_traversal_work(st, &depth, "items");
    if let Some(arcs) = st["arcs_examined"].as_u64() {
        println!(
            "direction   {} of {} levels pulled, {arcs} arcs examined",
            st["pull_levels"], st["rounds"]
        );
    }
    common::report::print_priority_bands(st, prio_delta);
    common::report::print_footer(r);
}
