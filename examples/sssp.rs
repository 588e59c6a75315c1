//! Single-source shortest paths over groute's distributed worklist.
//!
//! ```sh
//! cargo run --release --example sssp                                 # shipped graph, validated
//! cargo run --release --example sssp -- --gen road-usa --gen-weights 1..1000 --devices 2 --check --json
//! cargo run --release --example sssp -- --graph datasets/tiny-weighted.gr --source 1 --output dist.txt
//! cargo run --release --example sssp -- --gen road:side=2048,p=0.6 --gen-weights 1..100:7 --no-fused
//! ```
//!
//! On one CUDA device the traversal runs as one fused persistent kernel (`--fused`, the
//! default there; `--no-fused`: one launch per round); `--json` says which mode ran.
//!
//! Arcs weigh what the file says; a graph without weights has every arc weigh 1, unless
//! `--gen-weights MIN..MAX[:SEED]` attaches uniform random weights (replacing any). With no
//! graph flag it runs the shipped `datasets/4elt.graph` on the best backend present and checks
//! the result against the sequential reference (Dijkstra).
//!
//! Soft priority (`--prio-delta D`, near-far scheduling by distance) works on distances
//! below a threshold first and raises it by bands of `D`; the default is 32 times the average
//! arc weight (narrower on dense graphs, 4 times wider in bounded fused rounds on several
//! GPUs, off with `--fused-async`: see `groute_sssp::default_prio_delta_on`), `--prio-delta 0`
//! turns it off. `--json` reports the work items processed, the
//! items deferred and the epochs (threshold advances).

mod common;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use common::{AnyError, Bar, FusedArgs, GraphArgs, RunArgs};
use groute::graph::{InputOrder, PartitionedGraph, WeightSpec, partition_graph};
use groute::sssp::{SsspOptions, SsspSolver, sssp_reference};
use serde::Serialize;

/// Single-source shortest paths on 1..N devices.
#[derive(Parser, Debug)]
#[command(name = "sssp", version, about)]
struct Cli {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    fused: FusedArgs,
    /// Attach uniform random arc weights MIN..MAX[:SEED] (replacing the file's); without it,
    /// the file's weights, or 1 per arc for unweighted graphs.
    #[arg(long, value_name = "MIN..MAX[:SEED]")]
    gen_weights: Option<WeightSpec>,
    /// Source vertex, in the input file's numbering (default: the first vertex with out-edges).
    #[arg(long)]
    source: Option<u64>,
    /// Write `<id> <distance>` per vertex (input numbering; `inf` when unreachable).
    #[arg(long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// Run the traversal this many times and report the median time.
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Items each device's local worklist holds (default: sized from the graph).
    #[arg(long, value_name = "ITEMS")]
    wl_capacity: Option<usize>,
    /// Items per ring packet.
    #[arg(long, value_name = "ITEMS")]
    packet_size: Option<usize>,
    /// Soft priority: width of a distance band (0: off; default: 32 x the average arc weight,
    /// narrower on dense graphs, 4x wider in bounded fused rounds on several GPUs).
    #[arg(long, value_name = "D")]
    prio_delta: Option<u32>,
}

#[derive(Serialize)]
struct Report {
    graph: String,
    vertices: usize,
    edges: u64,
    weights: String,
    source: u64,
    devices: usize,
    backend: String,
    gpu: String,
    partition: String,
    time_ms: f64,
    times_ms: Vec<f64>,
    mode: &'static str,
    fused: bool,
    device_ms: Option<f64>,
    edges_traversed: u64,
    gteps: f64,
    work_items: u64,
    items_sent: u64,
    prio_delta: u32,
    deferred: u64,
    epochs: u64,
    rounds: u64,
    solo_rounds: u64,
    solo_cluster_rounds: u64,
    reached: usize,
    max_distance: u32,
    load_s: f64,
    partition_s: f64,
    checked: Option<bool>,
}

fn main() -> ExitCode {
    common::exit_on_error(run)
}

fn run() -> Result<(), AnyError> {
    let cli = Cli::parse();
    if cli.repeat == 0 {
        return Err("--repeat must be at least 1".into());
    }
    let ctx = common::context(&cli.run)?;
    let gen_weights = cli.gen_weights.as_ref().map(WeightSpec::to_string);
    let (graph, load_s) = common::load(&cli.graph, gen_weights.as_deref(), cli.run.json)?;
    let weights = match (&cli.gen_weights, graph.csr.is_weighted()) {
        (Some(spec), _) => format!("uniform {spec} (MIN..MAX:SEED)"),
        (None, true) => "from the input".to_string(),
        (None, false) => "1 per arc (unweighted input)".to_string(),
    };
    let n = graph.num_vertices();
    let order = InputOrder::of(&graph);

    let source_rank = match cli.source {
        Some(ext) => order.rank_of_external(ext, n).ok_or_else(|| {
            format!(
                "--source {ext} is not a vertex of {} ({} vertices, ids from {}); pick an id from the file",
                graph.name,
                n,
                order.external_of_rank(0)
            )
        })?,
        None => common::first_vertex_with_out_edges(&graph, &order)
            .ok_or("the graph has no edges; SSSP needs a vertex with out-edges (pass --source)")?,
    };
    let source_ext = order.external_of_rank(source_rank);

    let method = common::partition_method(&cli.graph)?;
    let started = Instant::now();
    let bar = Bar::new(cli.run.json);
    let parted: PartitionedGraph = partition_graph(graph, ctx.num_devices(), method, &bar)?;
    bar.finish();
    let partition_s = started.elapsed().as_secs_f64();
    if let Some(why) = &parted.fallback {
        eprintln!("note: {why}");
    }
    // Partitioning renumbers the vertices but keeps their input ids, hence their ranks.
    let order = InputOrder::of(&parted.graph);

    let mut options = SsspOptions::default();
    options.worklist.wl_capacity = cli.wl_capacity;
    options.worklist.prio_delta = cli.prio_delta;
    if let Some(p) = cli.packet_size {
        options.worklist.packet_size = p;
    }
    cli.fused.apply(&mut options.worklist);

    // The graph is uploaded once; each run resets the distances and traverses. With
    // --repeat, one extra warm-up run (kernel compilation, first-touch) is not counted.
    let mut solver = SsspSolver::new(&ctx, &parted, &options)?;
    let runs = common::timed_runs(
        cli.repeat,
        || solver.run(source_rank),
        |r| (r.stats.elapsed, r.stats.device_time),
    )?;
    let (result, times, median, device_ms) =
        (runs.last, runs.times_ms, runs.median_ms, runs.device_ms);

    // With no graph flag this is the README's main job: always validate.
    let check = cli.run.check || (cli.graph.graph.is_none() && cli.graph.gen_spec.is_none());
    let checked = if check {
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
        Some(true)
    } else {
        None
    };

    if let Some(path) = &cli.output {
        common::write_values(path, &result.distances, &order)?;
    }

    // Edges traversed: the out-arcs of every reached vertex (the Graph500 convention).
    let edges_traversed = common::edges_of_reached(&parted.graph, &order, &result.distances);
    let report = Report {
        graph: parted.graph.name.clone(),
        vertices: n,
        edges: parted.graph.num_edges(),
        weights,
        source: source_ext,
        devices: ctx.num_devices(),
        backend: ctx.backend_kind().to_string(),
        gpu: common::device_name(&ctx),
        partition: parted.method.to_string(),
        time_ms: median,
        times_ms: times,
        mode: common::traversal_mode(result.stats.fused, cli.fused.mode()),
        fused: result.stats.fused,
        device_ms,
        edges_traversed,
        gteps: edges_traversed as f64 / (median * 1e-3) / 1e9,
        work_items: result.stats.work_items,
        items_sent: result.stats.items_sent,
        prio_delta: result.stats.prio_delta,
        deferred: result.stats.items_deferred,
        epochs: result.stats.epochs,
        rounds: result.stats.rounds,
        solo_rounds: result.stats.worklist.solo_rounds(),
        solo_cluster_rounds: result.stats.worklist.solo_cluster_rounds(),
        reached: result.reached(),
        max_distance: result.max_distance(),
        load_s,
        partition_s,
        checked,
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
    println!("weights     {}", r.weights);
    println!(
        "devices     {} on {} ({}), partition {}",
        r.devices, r.backend, r.gpu, r.partition
    );
    println!("source      {}", r.source);
    println!(
        "time        {:.3} ms (median of {}), {:.3} GTEPS",
        r.time_ms,
        r.times_ms.len(),
        r.gteps
    );
    match r.device_ms {
        Some(d) => println!(
            "mode        {} (algorithm {d:.3} ms by device events)",
            r.mode
        ),
        None => println!("mode        {}", r.mode),
    }
    println!(
        "reached     {} vertices, max distance {}, {} edges traversed",
        r.reached, r.max_distance, r.edges_traversed
    );
    println!(
        "work        {} items processed, {} sent over the ring, {} rounds",
        r.work_items, r.items_sent, r.rounds
    );
    if r.prio_delta == 0 {
        println!("priority    off (--prio-delta 0)");
    } else {
        println!(
            "priority    bands of {}: {} items deferred, {} epochs",
            r.prio_delta, r.deferred, r.epochs
        );
    }
    println!(
        "load        {:.2} s, partition {:.2} s",
        r.load_s, r.partition_s
    );
    match r.checked {
        Some(true) => println!("validated   OK (equal to the sequential reference)"),
        _ => println!("validated   not checked (pass --check)"),
    }
}
