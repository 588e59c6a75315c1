//! Breadth-first search over groute's distributed worklist.
//!
//! ```sh
//! cargo run --release --example bfs                                  # shipped graph, validated
//! cargo run --release --example bfs -- --gen kron21.sym --devices 2 --check --json
//! cargo run --release --example bfs -- --graph road.gr --source 1 --output levels.txt
//! cargo run --release --example bfs -- --gen road:side=2048,p=0.6 --no-fused --repeat 5
//! cargo run --release --example bfs -- --gen kron21.sym --direction push --json
//! cargo run --release --example bfs -- --gen kron21.sym --roots 16 --repeat 5 --check
//! ```
//!
//! `--roots N` searches from N random roots with out-edges, as Graph500 picks its search keys
//! (`--roots-seed`), and reports every root, the median over them and the harmonic mean of
//! their GTEPS.
//!
//! `--direction auto` (the default) runs a symmetric graph of at least 8 arcs per vertex
//! direction-optimizing on any `--devices` count (level by level, each level a top-down push
//! or a bottom-up pull, each device stepping over its owned part and the level's discoveries
//! all-gathered between devices; `--do-alpha`, `--do-beta` tune the switch), and everything
//! else on the asynchronous worklist; `push` forces the worklist, `pull-push`
//! direction-optimizing (a directed graph pulls over its transpose). `--json` reports `direction`, `pull_levels` and
//! `arcs_examined` (the arcs the run actually read; `edges_traversed`, behind GTEPS, is the
//! Graph500 count: the arcs of the reached vertices).
//!
//! On one CUDA device the traversal runs as one fused persistent kernel (`--fused`, the
//! default there; `--no-fused`: one launch per round); `--json` says which mode ran.
//!
//! With no graph flag it runs the shipped `datasets/4elt.graph` on the best backend present
//! and checks the result against the sequential reference. `--prio-delta D` turns on soft
//! priority by level (bands of `D` levels; off by default); `--json` then reports the items
//! deferred and the epochs.

mod common;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use common::{AnyError, Bar, FusedArgs, GraphArgs, RunArgs};
use groute::bfs::{
    BfsOptions, BfsSolver, Direction, MultiDriver, PULL_ALPHA, PUSH_BETA, bfs_reference,
};
use groute::graph::{Graph, InputOrder, PartitionedGraph, partition_graph};
use serde::Serialize;

/// Breadth-first search on 1..N devices.
#[derive(Parser, Debug)]
#[command(name = "bfs", version, about)]
struct Cli {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    fused: FusedArgs,
    /// Source vertex, in the input file's numbering (default: the first vertex with out-edges).
    #[arg(long, conflicts_with = "roots")]
    source: Option<u64>,
    /// Graph500-style: search from this many random roots with out-edges (`--roots-seed`),
    /// each run `--repeat` times and validated with `--check`; the report gives every root and
    /// the median over roots (`--json`: `roots`; GTEPS the harmonic mean over roots).
    #[arg(long, value_name = "N", conflicts_with = "output")]
    roots: Option<usize>,
    /// The seed of `--roots`' sample.
    #[arg(long, value_name = "SEED", default_value_t = 1)]
    roots_seed: u64,
    /// Write `<id> <level>` per vertex (input numbering; `inf` when unreachable).
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
    /// Soft priority: width of a level band (0, the default: off).
    #[arg(long, value_name = "D", default_value_t = 0)]
    prio_delta: u32,
    /// auto, push (asynchronous worklist) or pull-push (direction-optimizing, any device
    /// count).
    #[arg(long, value_name = "DIR", default_value_t = Direction::Auto)]
    direction: Direction,
    /// Direction-optimizing: pull once the frontier's out-arcs exceed the unvisited in-arcs /
    /// this (0: never pull).
    #[arg(long, value_name = "ALPHA", default_value_t = PULL_ALPHA)]
    do_alpha: u64,
    /// Direction-optimizing: push again once the frontier stops growing and holds fewer
    /// than the vertices / this (0: push again as soon as the frontier stops growing).
    #[arg(long, value_name = "BETA", default_value_t = PUSH_BETA)]
    do_beta: u64,
    /// Direction-optimizing: what drives the levels: fused (the devices, one persistent
    /// kernel each; distinct GPUs with peer access, or with more devices than GPUs members
    /// sharing them, for testing), per-device (one host thread per device), shared (one host
    /// thread for all) or auto (fused on distinct GPUs with peer access, else per-device).
    #[arg(long, value_name = "DRIVER", default_value_t = MultiDriver::Auto)]
    do_driver: MultiDriver,
    /// Device-driven direction-optimizing runs: stamp every phase of every level on every
    /// device and report them (`--json`: `do_trace`, per device and step, microseconds).
    #[arg(long)]
    do_trace: bool,
    /// Device-driven direction-optimizing runs: a pull step builds the next frontier and
    /// stores its finds into the peers' inboxes itself (no send and scan passes after it).
    /// Default true (`FusedDirectionOptions::default`, the fastest measured).
    #[arg(long, value_name = "BOOL")]
    do_pull_frontier: Option<bool>,
    /// Device-driven direction-optimizing runs: the kernel's build capped at 32 registers
    /// (every thread slot of an SM resident; some registers spilled).
    /// Default false (`FusedDirectionOptions::default`, the fastest measured).
    #[arg(long, value_name = "BOOL")]
    do_full_occupancy: Option<bool>,
    /// Device-driven direction-optimizing runs: the passes that build a frontier reserve
    /// their worklist slots with one atomic per block (a second sweep appends).
    /// Default true (`FusedDirectionOptions::default`, the fastest measured).
    #[arg(long, value_name = "BOOL")]
    do_warp_reserve: Option<bool>,
    /// Device-driven direction-optimizing runs on several devices: exchanges post values into
    /// every peer's memory and poll their own (no remote atomic, no remote polling).
    /// Default true (`FusedDirectionOptions::default`, the fastest measured).
    #[arg(long, value_name = "BOOL")]
    do_post_exchange: Option<bool>,
    /// Device-driven direction-optimizing runs: the apply-and-scan pass keeps 2 words' loads
    /// in flight per warp.
    /// Default false (`FusedDirectionOptions::default`, the fastest measured).
    #[arg(long, value_name = "BOOL")]
    do_scan_batch: Option<bool>,
    /// Device-driven direction-optimizing runs on one device: a push step's appends are the
    /// next frontier (no scan over every vertex after it).
    /// Default true (`FusedDirectionOptions::default`, the fastest measured).
    #[arg(long, value_name = "BOOL")]
    do_push_frontier: Option<bool>,
    /// Device-driven direction-optimizing runs on several devices: push levels with few
    /// out-arcs send lists of their appends and build the next frontier from them.
    /// Default true (`FusedDirectionOptions::default`, the fastest measured).
    #[arg(long, value_name = "BOOL")]
    do_sparse_push: Option<bool>,
    /// Device-driven direction-optimizing runs on several devices: one exchange per pull level
    /// with `--do-pull-frontier` (the counters travel with the words) and per sparse push
    /// level with `--do-sparse-push` (every device counts the union of the lists).
    /// Default true (`FusedDirectionOptions::default`, the fastest measured).
    #[arg(long, value_name = "BOOL")]
    do_one_exchange: Option<bool>,
    /// Device-driven direction-optimizing runs: the hub phase relaxes 4 arcs per thread and
    /// step.
    /// Default true (`FusedDirectionOptions::default`, the fastest measured).
    #[arg(long, value_name = "BOOL")]
    do_hub_batch: Option<bool>,
    /// Device-driven direction-optimizing runs on several devices, with `--do-sparse-push`: a
    /// sparse push stores its lists into the peers' inboxes as it appends (no send pass, its
    /// exchange in the push's own grid barrier).
    /// Default true (`FusedDirectionOptions::default`, the fastest measured).
    #[arg(long, value_name = "BOOL")]
    do_listed_push: Option<bool>,
    /// Device-driven direction-optimizing runs on several devices: a dense push marks its
    /// discoveries in a bitmap, which its send pass reads instead of the level array.
    /// Default true (`FusedDirectionOptions::default`, the fastest measured).
    #[arg(long, value_name = "BOOL")]
    do_push_bitmap: Option<bool>,
    /// Device-driven direction-optimizing runs on several devices: push levels with few
    /// out-arcs whose frontier every device holds run whole on every device, with no
    /// exchange.
    /// Default true (`FusedDirectionOptions::default`, the fastest measured).
    #[arg(long, value_name = "BOOL")]
    do_replicate: Option<bool>,
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

#[derive(Serialize)]
struct Report {
    graph: String,
    vertices: usize,
    edges: u64,
    source: u64,
    devices: usize,
    backend: String,
    gpu: String,
    partition: String,
    time_ms: f64,
    times_ms: Vec<f64>,
    mode: &'static str,
    fused: bool,
    direction: &'static str,
    /// What drove a direction-optimizing run's levels (`--do-driver` resolved: fused,
    /// per-device or shared).
    do_driver: Option<&'static str>,
    /// Whether a pull step built the next frontier itself (`--do-pull-frontier`).
    do_pull_frontier: bool,
    /// Whether the kernel's 32-register build ran (`--do-full-occupancy`).
    do_full_occupancy: bool,
    /// Whether frontier passes reserved slots per warp (`--do-warp-reserve`).
    do_warp_reserve: bool,
    /// Whether the exchanges were posted (`--do-post-exchange`).
    do_post_exchange: bool,
    /// Whether the scans were batched (`--do-scan-batch`).
    do_scan_batch: bool,
    /// Whether a push built the next frontier on one device (`--do-push-frontier`).
    do_push_frontier: bool,
    /// Whether sparse push levels sent lists (`--do-sparse-push`).
    do_sparse_push: bool,
    /// Whether pull and sparse push levels made one exchange (`--do-one-exchange`).
    do_one_exchange: bool,
    /// Whether the hub phase was batched (`--do-hub-batch`).
    do_hub_batch: bool,
    /// Whether sparse pushes stored their lists as they appended (`--do-listed-push`).
    do_listed_push: bool,
    /// Whether dense pushes marked their discoveries in a bitmap (`--do-push-bitmap`).
    do_push_bitmap: bool,
    /// Whether small push levels ran whole on every device (`--do-replicate`).
    do_replicate: bool,
    /// Every root of a `--roots` run (the other fields then describe all of them: times are
    /// medians over the roots, GTEPS their harmonic mean, the rest the last root's run).
    roots: Option<Vec<RootReport>>,
    /// The per-phase trace of the last run (`--do-trace`, device-driven runs).
    do_trace: Option<Vec<common::do_trace::DeviceTraceJson>>,
    pull_levels: u64,
    arcs_examined: Option<u64>,
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
    depth: u32,
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
    let (graph, load_s) = common::load(&cli.graph, None, cli.run.json)?;
    let n = graph.num_vertices();
    let order = InputOrder::of(&graph);

    // `--roots` and `--source` exclude each other (clap), so a sampled run needs no source.
    let roots = match (cli.roots, cli.source) {
        (Some(count), _) => common::sample_roots(&graph, &order, count, cli.roots_seed)?,
        (None, Some(ext)) => vec![order.rank_of_external(ext, n).ok_or_else(|| {
            format!(
                "--source {ext} is not a vertex of {} ({} vertices, ids from {}); pick an id from the file",
                graph.name,
                n,
                order.external_of_rank(0)
            )
        })?],
        (None, None) => vec![
            common::first_vertex_with_out_edges(&graph, &order)
                .ok_or("the graph has no edges; BFS needs a vertex with out-edges (pass --source)")?,
        ],
    };

    let method = common::partition_method(&cli.graph)?;
    let started = Instant::now();
    let bar = Bar::new(cli.run.json);
    let parted: PartitionedGraph = partition_graph(graph, ctx.num_devices(), method, &bar)?;
    bar.finish();
    let partition_s = started.elapsed().as_secs_f64();
    if let Some(why) = &parted.fallback {
        eprintln!("note: {why}");
    }

    let mut options = BfsOptions::default();
    options.worklist.wl_capacity = cli.wl_capacity;
    options.worklist.prio_delta = Some(cli.prio_delta);
    if let Some(p) = cli.packet_size {
        options.worklist.packet_size = p;
    }
    cli.fused.apply(&mut options.worklist);
    options.direction = cli.direction;
    options.switch_rule.alpha = cli.do_alpha;
    options.switch_rule.beta = cli.do_beta;
    options.multi_driver = cli.do_driver;
    options.fused_direction.trace = cli.do_trace;
    let fd = &mut options.fused_direction;
    let set = |field: &mut bool, value: Option<bool>| {
        if let Some(v) = value {
            *field = v;
        }
    };
    set(&mut fd.pull_builds_frontier, cli.do_pull_frontier);
    set(&mut fd.full_occupancy, cli.do_full_occupancy);
    set(&mut fd.warp_reserve, cli.do_warp_reserve);
    set(&mut fd.scan_batch, cli.do_scan_batch);
    set(&mut fd.push_builds_frontier, cli.do_push_frontier);
    set(&mut fd.sparse_push, cli.do_sparse_push);
    set(&mut fd.one_exchange, cli.do_one_exchange);
    set(&mut fd.hub_batch, cli.do_hub_batch);
    set(&mut fd.listed_push, cli.do_listed_push);
    set(&mut fd.push_bitmap, cli.do_push_bitmap);
    set(&mut fd.replicate, cli.do_replicate);
    if let Some(posted) = cli.do_post_exchange {
        fd.exchange = if posted {
            groute::core::cuda::PeerExchange::Posted
        } else {
            groute::core::cuda::PeerExchange::Mailbox
        };
    }

    // The graph is uploaded once; each run resets the levels and traverses. With --repeat,
    // one extra warm-up run (kernel compilation, first-touch) is not counted.
    let mut solver = BfsSolver::new(&ctx, &parted, &options)?;
    // With no graph flag this is the README's main job: always validate.
    let check = cli.run.check || (cli.graph.graph.is_none() && cli.graph.gen_spec.is_none());
    let ranks = InputOrder::of(&parted.graph);
    let mut per_root = Vec::with_capacity(roots.len());
    let mut last = None;
    for &root in &roots {
        let runs = common::timed_runs(
            cli.repeat,
            || solver.run(root),
            |r| (r.stats.elapsed, r.stats.device_time),
        )?;
        if check {
            validate(&parted.graph, &order, root, &runs.last.levels)?;
        }
        // Edges traversed: the out-arcs of every reached vertex (the Graph500 convention).
        let edges_traversed = common::edges_of_reached(&parted.graph, &ranks, &runs.last.levels);
        per_root.push(RootReport {
            source: order.external_of_rank(root),
            time_ms: runs.median_ms,
            device_ms: runs.device_ms,
            edges_traversed,
            gteps: edges_traversed as f64 / (runs.median_ms * 1e-3) / 1e9,
            reached: runs.last.reached(),
            depth: runs.last.depth(),
        });
        last = Some(runs);
    }
    let runs = last.ok_or("no root to search from")?;
    let (result, times) = (runs.last, runs.times_ms);
    let checked = check.then_some(true);
    let summary = per_root.last().ok_or("no root to search from")?;
    let (source_ext, edges_traversed) = (summary.source, summary.edges_traversed);
    let (median, device_ms, gteps) = if cli.roots.is_some() {
        let mut wall: Vec<f64> = per_root.iter().map(|r| r.time_ms).collect();
        let device = per_root
            .iter()
            .map(|r| r.device_ms)
            .collect::<Option<Vec<f64>>>()
            .map(|mut ms| common::median(&mut ms));
        // Graph500 reports the harmonic mean of the roots' TEPS.
        let inverse: f64 = per_root.iter().map(|r| 1.0 / r.gteps).sum();
        (
            common::median(&mut wall),
            device,
            per_root.len() as f64 / inverse,
        )
    } else {
        (runs.median_ms, runs.device_ms, summary.gteps)
    };

    if let Some(path) = &cli.output {
        common::write_values(path, &result.levels, &order)?;
    }

    let report = Report {
        graph: parted.graph.name.clone(),
        vertices: n,
        edges: parted.graph.num_edges(),
        source: source_ext,
        devices: ctx.num_devices(),
        backend: ctx.backend_kind().to_string(),
        gpu: common::device_name(&ctx),
        partition: parted.method.to_string(),
        time_ms: median,
        times_ms: times,
        mode: if result.stats.direction_optimized {
            "direction-optimizing"
        } else {
            common::traversal_mode(result.stats.fused, cli.fused.mode())
        },
        fused: result.stats.fused,
        direction: if result.stats.direction_optimized {
            Direction::PullPush.as_str()
        } else {
            Direction::Push.as_str()
        },
        do_driver: result.stats.do_driver.map(MultiDriver::as_str),
        do_pull_frontier: options.fused_direction.pull_builds_frontier,
        do_full_occupancy: options.fused_direction.full_occupancy,
        do_warp_reserve: options.fused_direction.warp_reserve,
        do_post_exchange: options.fused_direction.exchange
            == groute::core::cuda::PeerExchange::Posted,
        do_scan_batch: options.fused_direction.scan_batch,
        do_push_frontier: options.fused_direction.push_builds_frontier,
        do_sparse_push: options.fused_direction.sparse_push,
        do_one_exchange: options.fused_direction.one_exchange,
        do_hub_batch: options.fused_direction.hub_batch,
        do_listed_push: options.fused_direction.listed_push,
        do_push_bitmap: options.fused_direction.push_bitmap,
        do_replicate: options.fused_direction.replicate,
        roots: cli.roots.is_some().then_some(per_root),
        do_trace: result
            .stats
            .do_trace
            .as_ref()
            .map(common::do_trace::trace_json),
        pull_levels: result.stats.pull_levels,
        arcs_examined: result.stats.arcs_examined,
        device_ms,
        edges_traversed,
        gteps,
        work_items: result.stats.work_items,
        items_sent: result.stats.items_sent,
        prio_delta: cli.prio_delta,
        deferred: result.stats.items_deferred,
        epochs: result.stats.epochs,
        rounds: result.stats.rounds,
        solo_rounds: result.stats.worklist.solo_rounds(),
        solo_cluster_rounds: result.stats.worklist.solo_cluster_rounds(),
        reached: result.reached(),
        depth: result.depth(),
        load_s,
        partition_s,
        checked,
    };
    if cli.run.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_human(&report);
        if let Some(trace) = &result.stats.do_trace {
            common::do_trace::print_trace(trace);
        }
    }
    Ok(())
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

fn print_human(r: &Report) {
    println!(
        "graph       {} ({} vertices, {} arcs)",
        r.graph, r.vertices, r.edges
    );
    println!(
        "devices     {} on {} ({}), partition {}",
        r.devices, r.backend, r.gpu, r.partition
    );
    match &r.roots {
        Some(roots) => {
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
        }
        None => println!("source      {}", r.source),
    }
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
        "reached     {} vertices, depth {}, {} edges traversed",
        r.reached, r.depth, r.edges_traversed
    );
    println!(
        "work        {} items, {} sent over the ring, {} rounds",
        r.work_items, r.items_sent, r.rounds
    );
    if let Some(arcs) = r.arcs_examined {
        println!(
            "direction   {}: {} of {} levels pulled, {arcs} arcs examined",
            r.direction, r.pull_levels, r.rounds
        );
    }
    if r.prio_delta > 0 {
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
