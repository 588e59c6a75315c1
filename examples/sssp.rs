//! Single-source shortest paths over groute's distributed worklist.
//!
//! ```sh
//! cargo run --release --example sssp                                 # shipped graph, validated
//! cargo run --release --example sssp -- --gen road-usa --gen-weights 1..1000 --devices 2 --validate --json
//! cargo run --release --example sssp -- --graph datasets/tiny-weighted.gr --source 1 --output dist.txt
//! cargo run --release --example sssp -- --gen road:side=2048,p=0.6 --gen-weights 1..100:7 --execution host-driven
//! ```
//!
//! `--execution auto` runs one CUDA device as one fused persistent kernel, and several as
//! device-driven members wherever they can run (distinct GPUs with peer access, or virtual
//! devices sharing a GPU); `device-driven`
//! asks for the persistent kernels on any device count, `host-driven` for one launch per
//! round; the JSON report (`docs/report.schema.json`) says what ran (`execution.engine`).
//! The default source is the vertex of highest out-degree in the largest weakly connected
//! component (stderr names it).
//!
//! Arcs weigh what the file says; a graph without weights has every arc weigh 1, unless
//! `--gen-weights MIN..MAX[:SEED]` attaches uniform random weights (replacing any). With no
//! graph flag it runs the shipped `datasets/4elt.graph` on the best backend present and
//! validates the result against the sequential reference (Dijkstra).
//!
//! Soft priority (tuning `--prio-delta D`, near-far scheduling by distance) works on
//! distances below a threshold first and raises it by bands of `D`; the default is 32 times
//! the average arc weight (narrower on dense graphs, and on sparse ones 4 times wider where a
//! run on several GPUs may be fused or spans ranks: SSSP's `default_band`),
//! `--prio-delta 0` turns it off. `algorithm_stats` reports the work items processed, the
//! items deferred and the epochs (threshold advances).

mod common;

use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use common::rank_graph::Needs;
use common::report::{ExecutionReport, GraphReport};
use common::{AnyError, FusedArgs, GraphArgs, Report, RunArgs, WorklistArgs};
use groute::graph::{InputOrder, WeightSpec};
use groute::sssp::{SsspOptions, SsspSolver, sssp_reference};
use serde_json::json;

/// Single-source shortest paths on 1..N devices.
#[derive(Parser, Debug)]
#[command(name = "sssp", version, term_width = 0)]
struct Cli {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    fused: FusedArgs,
    /// Attach uniform random arc weights MIN..MAX[:SEED] (default: the file's, or 1 per arc).
    #[arg(long, value_name = "MIN..MAX[:SEED]")]
    gen_weights: Option<WeightSpec>,
    /// Source vertex, input numbering (default: the top out-degree vertex of the largest component).
    #[arg(long)]
    source: Option<u64>,
    #[command(flatten)]
    worklist: WorklistArgs,
    /// Soft priority: width of a distance band (0: off; default: 32 x the average arc weight,
    /// narrower on dense graphs; on sparse ones 4x wider where a run on several GPUs may be
    /// fused, device-driven or in bounded fused rounds, or spans ranks).
    #[arg(long, value_name = "D", hide = true)]
    prio_delta: Option<u32>,
}

fn main() -> ExitCode {
    common::exit_on_error(run)
}

fn run() -> Result<(), AnyError> {
    let cli: Cli = common::tuning::parse();
    let repeat = cli.run.repeats()?;
    let gen_weights = cli.gen_weights.as_ref().map(WeightSpec::to_string);
    if let Some(ranks) = common::ranks::job_size()? {
        // Under mpirun: the worklist SSSP over every rank's devices.
        let mut held = common::rank_graph::load(
            &cli.graph,
            gen_weights.as_deref(),
            &cli.run,
            ranks,
            Needs::OwnRows,
        )?;
        let graph_report = GraphReport::of(&held.graph);
        let validate = cli.run.validate || cli.graph.is_default();
        if !held.graph.csr.is_weighted() {
            let arcs = held.graph.csr.num_edges() as usize;
            held.graph.csr = held.graph.csr.with_weights(vec![1; arcs])?;
        }
        let mut job = common::ranks::traversal_job(
            "sssp",
            &cli.run,
            &held,
            graph_report,
            cli.source,
            validate,
            sssp_reference,
        )?;
        cli.worklist.apply(&mut job.options);
        // Left open, rank 0 picks SSSP's default band for a run over every rank's devices.
        job.options.prio_delta = cli.prio_delta;
        return common::ranks::run(job, groute::sssp::Sssp);
    }
    let ctx = cli.run.context()?;
    let (graph, load_ms) =
        common::graph_args::load(&cli.graph, gen_weights.as_deref(), cli.run.quiet())?;
    let graph_report = GraphReport::of(&graph);
    let weights = match (&cli.gen_weights, graph.csr.is_weighted()) {
        (Some(spec), _) => format!("uniform {spec} (MIN..MAX:SEED)"),
        (None, true) => "from the input".to_string(),
        (None, false) => "1 per arc (unweighted input)".to_string(),
    };
    let n = graph.num_vertices();
    let order = InputOrder::of(&graph);
    let source_rank = common::source::pick(&graph, &order, cli.source)?;
    let source_ext = order.external_of_rank(source_rank);

    let started = Instant::now();
    let parted = cli
        .graph
        .partition(graph, ctx.num_devices(), cli.run.quiet())?;
    // Partitioning renumbers the vertices but keeps their input ids, hence their ranks.
    let order = InputOrder::of(&parted.graph);

    let execution = cli.run.execution;
    let mut options = SsspOptions::default();
    cli.worklist.apply(&mut options.worklist);
    options.worklist.prio_delta = cli.prio_delta;
    cli.fused
        .apply(execution, ctx.num_devices(), &mut options.worklist);

    // The graph is uploaded once; each run resets the distances and traverses. With
    // --repeat, one extra warm-up run (kernel compilation, first-touch) is not counted.
    let mut solver = SsspSolver::new(&ctx, &parted, &options)?;
    let stage_ms = started.elapsed().as_secs_f64() * 1e3;
    let runs = common::timing::timed_runs(
        repeat,
        || solver.run(source_rank),
        |r| (r.stats.elapsed, r.stats.device_time),
    )?;
    let result = &runs.last;

    // With no graph flag this is the README's main job: always validate.
    let check = cli.run.validate || cli.graph.is_default();
    if check {
        let source = order.vertex_of_rank(source_rank);
        let reference = order.to_rank_order(sssp_reference(&parted.graph.csr, source));
        let mismatches = reference
            .iter()
            .zip(&result.distances)
            .filter(|(a, b)| a != b)
            .count();
        if mismatches > 0 {
            return Err(format!(
                "validation FAILED: {mismatches} of {n} distances differ from the sequential reference (Dijkstra)"
            )
            .into());
        }
    }

    if let Some(path) = &cli.run.output {
        common::write_values(path, &result.distances, &order)?;
    }

    // Edges traversed: the out-arcs of every reached vertex (the Graph500 convention).
    let edges_traversed = common::edges_of_reached(&parted.graph, &order, &result.distances);
    let stats = &result.stats;
    let (mode, engine) =
        common::execution::worklist_engine(stats.fused, stats.worklist.device_driven, &ctx);
    let mut report = Report::of_run("sssp", &ctx, Some(graph_report));
    report.execution = Some(ExecutionReport::new(
        &ctx,
        &cli.run,
        mode,
        engine,
        Some(parted.method.to_string()),
        json!({
            "fused": stats.fused,
            "device_driven_members": stats.worklist.device_driven,
            "prio_delta": stats.prio_delta,
            "weights": weights,
        }),
    ));
    report.times = runs.times(load_ms, stage_ms);
    report.validated = check.then_some(true);
    // Ring items and device-driven members' inbox items alike: a vertex and its value
    // (`CommReport::of` says which runs count their remote updates).
    report.comm =
        common::report::CommReport::of(&stats.worklist, size_of::<groute::worklist::VertexValue>());
    report.algorithm_stats = json!({
        "source": source_ext,
        "reached": result.reached(),
        "max_distance": result.max_distance(),
        "edges_traversed": edges_traversed,
        "gteps": edges_traversed as f64 / (runs.median_ms() * 1e-3) / 1e9,
        "work_items": stats.work_items,
        "items_sent": stats.items_sent,
        "rounds": stats.rounds,
        "solo_rounds": stats.worklist.solo_rounds(),
        "solo_cluster_rounds": stats.worklist.solo_cluster_rounds(),
        "deferred": stats.items_deferred,
        "epochs": stats.epochs,
    });
    if let Some(path) = &cli.run.json {
        report.write(path)?;
    }
    if !cli.run.json_on_stdout() {
        print_human(&report, &weights, stats.prio_delta);
    }
    Ok(())
}

fn print_human(r: &Report, weights: &str, prio_delta: u32) {
    common::report::print_header(r);
    let st = &r.algorithm_stats;
    println!("weights     {weights}");
    println!("source      {}", st["source"]);
    let max_distance = format!("max distance {}", st["max_distance"]);
    common::report::print_traversal_work(st, &max_distance, "items processed");
    if prio_delta == 0 {
        println!("priority    off (--prio-delta 0)");
    }
    common::report::print_priority_bands(st, prio_delta);
    common::report::print_footer(r);
}
