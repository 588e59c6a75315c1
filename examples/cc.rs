//! Connected components on 1..N devices: each device links its own block of rows (each row's
//! arc 0 as its parent where its head is lower, one round of Afforest's sampling, then the rows
//! outside the largest tree), parent arrays merged up a reduction tree, on graphs of at least
//! 8 arcs per vertex. On sparser graphs, and with tuning `--storage stream`, the edge list
//! stays in pinned host memory and chunks of it are scattered to the devices (first available)
//! at every run, Groute's dataflow: each edge is linked once, and the devices' memory need not
//! hold the arcs.
//!
//! ```text
//! cargo run --release --example cc -- --gen kron21.sym --devices 2 --validate --repeat 5
//! cargo run --release --example cc -- --graph datasets/4elt.graph --output labels.txt
//! ```
//!
//! `--execution device-driven` runs label propagation instead (`groute::cc::LabelPropagation`,
//! the worklist algorithm whose labels are the same): one persistent kernel per device, the
//! devices exchanging labels over their peer links (on the host backend, the worklist's host
//! executor), the graph split into contiguous blocks of its own numbering. It needs as many
//! rounds as the components' diameter where hook and compress need one pass over the edges,
//! which is why `auto` and `host-driven` run the latter. Both split the graph into blocks of its
//! own numbering: `--partition metis` is refused.
//!
//! The reported time (`times.run_ms`) is the algorithm as the original Groute times it:
//! loading, uploading the rows (or staging the edge list in pinned memory), allocation and
//! (streaming, by default) the copies that prefill the devices' receive buffers are excluded;
//! it ends when the labels are final on device 0.
//! `times.device_ms` is the same span by device events (max over devices; GPUs only);
//! `algorithm_stats.to_host_ms` adds the copy of the labels to host memory. Tuning
//! `--no-prefill` starts the clock before the first chunk is sent instead. With `--repeat N`
//! the first run is a warm-up and the N runs after it are reported.

mod common;

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use groute::cc::{
    CcOptions, CcResult, CcSolver, CcStorage, LabelPropagation, cc_reference, component_stats,
};
use groute::graph::block_partition;
use groute::worklist::WorklistOptions;
use groute::worklist::traversal::{FusedDriver, FusedMode, MinTraversalSolver};
use serde_json::json;

use common::rank_graph::Needs;
use common::report::{ExecutionReport, GraphReport, Spread, Times};
use common::{AnyError, GraphArgs, Report, RunArgs};

/// Connected components (each device's rows linked, or edge chunks streamed; tree merge) on 1..N
/// devices.
#[derive(Parser, Debug)]
#[command(name = "cc", version, term_width = 0)]
struct Args {
    #[command(flatten)]
    graph: GraphArgs,
    #[command(flatten)]
    run: RunArgs,
    /// Edges per chunk sent to the devices (default: chosen from the graph).
    #[arg(long, value_name = "EDGES", hide = true)]
    chunk: Option<usize>,
    /// Receive buffers per device for the chunks (default: 88% of a fair share).
    #[arg(long, value_name = "N", hide = true)]
    input_buffers: Option<usize>,
    /// Also compress after every K-th chunk (default: only once, before merging).
    #[arg(long, value_name = "K", hide = true)]
    compress_every: Option<usize>,
    /// Start the clock before the first chunk is sent (time every copy).
    #[arg(long, hide = true)]
    no_prefill: bool,
    /// Where the edges are kept: `rows` on the devices, or `stream` from pinned host memory at
    /// every run (default `auto`: the rows on graphs of at least 8 arcs per vertex).
    #[arg(long, value_name = "WHERE", default_value = "auto", hide = true)]
    storage: StorageArg,
}

/// `--storage`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum StorageArg {
    Auto,
    Rows,
    Stream,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() -> ExitCode {
    common::exit_on_error(|| run(common::tuning::parse()))
}

/// Under mpirun: hook and compress on every rank's devices, the owned labels exchanged
/// between ranks (`groute::cc::CcRanks`, arcs taken both ways); rank 0 validates against
/// union-find and writes `--output` as one process does.
fn over_ranks(args: &Args, ranks: usize) -> Result<(), AnyError> {
    let mut held = common::rank_graph::load(&args.graph, None, &args.run, ranks, Needs::BothWays)?;
    let graph_report = GraphReport::of(&held.graph);
    let graph = &mut held.graph;
    // A rank that holds only its rows holds them of a graph its cache marks symmetric
    // (`Needs::BothWays`); a whole graph is checked.
    let symmetric = if held.whole {
        graph.csr.is_symmetric()
    } else {
        graph.symmetric
    };
    if !symmetric {
        graph.csr = graph.csr.symmetrized()?;
        graph.symmetric = true;
        // Every rank holds this graph whole (a directed one is never loaded by rows): blocks
        // of its arcs both ways balance better.
        held.repartition(ranks, args.run.devices)?;
    }
    let held = &held;
    let graph = &held.graph;
    let validate = args.run.validate || args.graph.is_default();
    let check = move |labels: &[u32]| {
        if cc_reference(&graph.csr) == labels {
            Ok(())
        } else {
            Err("labels differ from the sequential reference (union-find)".to_string())
        }
    };
    let job = common::ranks::RankJob {
        name: "cc",
        run: &args.run,
        graph: held,
        graph_report,
        sources: Vec::new(),
        options: groute::worklist::WorklistOptions::default().for_graph(graph.num_vertices()),
        validate: validate.then(|| Box::new(check) as Box<dyn Fn(&[u32]) -> Result<(), String>>),
        write: Box::new(move |path: &std::path::Path, labels: &[u32]| {
            write_labels(path, graph, labels)
        }),
        stats: Box::new(|labels: &[u32], _| {
            let components = labels
                .iter()
                .enumerate()
                .filter(|&(v, &l)| v as u32 == l)
                .count();
            json!({ "components": components })
        }),
    };
    common::ranks_cc::run(job)
}

/// `--execution device-driven` in one process: label propagation in the worklist's
/// device-driven executor (one persistent kernel per device), on the graph taken both ways,
/// split into contiguous blocks of its own numbering (so that its labels, each component's
/// smallest vertex, are hook and compress's).
fn device_driven(args: &Args, repeat: usize) -> Result<(), AnyError> {
    let ctx = args.run.context()?;
    let (mut graph, load_ms) = common::graph_args::load(&args.graph, None, args.run.quiet())?;
    let graph_report = GraphReport::of(&graph);
    let started = Instant::now();
    if !graph.csr.is_symmetric() {
        graph.csr = graph.csr.symmetrized()?;
    }
    let csr = &graph.csr;
    let partition = block_partition(csr, ctx.num_devices())?;
    let mut options = WorklistOptions::default().for_graph(csr.num_vertices());
    options.fused = FusedMode::On;
    options.fused_driver = FusedDriver::Device;
    let mut solver = MinTraversalSolver::new(&ctx, LabelPropagation, csr, &partition, &options)?;
    let stage_ms = ms(started.elapsed());
    let runs = common::timing::timed_runs(
        repeat,
        || solver.run(&[], &options),
        |r| (r.stats.elapsed, r.device_time),
    )?;
    let labels = &runs.last.values;
    let check = args.run.validate || args.graph.is_default();
    if check && cc_reference(csr) != *labels {
        return Err(
            "validation FAILED: labels differ from the sequential reference (union-find)".into(),
        );
    }
    if let Some(path) = &args.run.output {
        write_labels(path, &graph, labels)?;
    }
    // Label propagation labels each vertex with its component's least vertex id.
    let (components, largest) = component_stats(labels);
    let out = &runs.last;
    let stats = &out.stats;
    let device_driven = out.fused && (ctx.num_devices() == 1 || stats.device_driven);
    let mut report = Report::of_run("cc", &ctx, Some(graph_report));
    report.execution = Some(ExecutionReport::new(
        &ctx,
        &args.run,
        common::execution::mode_of(device_driven),
        &if device_driven {
            format!(
                "label propagation, {}",
                common::execution::persistent_form(&ctx)
            )
        } else {
            "label propagation, host-driven worklist rounds".to_owned()
        },
        Some("block".to_owned()),
        json!({ "fused": out.fused, "device_driven_members": stats.device_driven }),
    ));
    report.times = runs.times(load_ms, stage_ms);
    report.validated = check.then_some(true);
    report.comm = common::report::CommReport::of(stats, size_of::<groute::worklist::VertexValue>());
    report.algorithm_stats = json!({
        "components": components,
        "largest_component": largest,
        "work_items": stats.items_processed(),
        "rounds": stats.rounds(),
    });
    if let Some(path) = &args.run.json {
        report.write(path)?;
    }
    if !args.run.json_on_stdout() {
        common::report::print_header(&report);
        println!("components  {components}, largest {largest}");
        common::report::print_footer(&report);
    }
    Ok(())
}

/// `--output`: each vertex's id and its component's label, as file ids.
fn write_labels(
    path: &std::path::Path,
    graph: &groute::graph::Graph,
    labels: &[u32],
) -> Result<(), AnyError> {
    let file = std::fs::File::create(path)
        .map_err(|e| format!("cannot create --output {}: {e}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    for (v, &label) in labels.iter().enumerate() {
        writeln!(
            w,
            "{} {}",
            graph.external_id(v as u32),
            graph.external_id(label)
        )?;
    }
    w.flush()?;
    Ok(())
}

fn run(args: Args) -> Result<(), AnyError> {
    let repeat = args.run.repeats()?;
    args.graph.blocks_only("cc")?;
    if let Some(ranks) = common::ranks::job_size()? {
        common::execution::host_driven_only(args.run.execution, "cc across ranks")?;
        return over_ranks(&args, ranks);
    }
    if args.run.execution == groute::Execution::DeviceDriven {
        return device_driven(&args, repeat);
    }
    let (graph, load_ms) = common::graph_args::load(&args.graph, None, args.run.quiet())?;
    let graph_report = GraphReport::of(&graph);
    let ctx = args.run.context()?;
    let stage_start = Instant::now();
    let opts = CcOptions {
        chunk_edges: args.chunk,
        input_buffers: args.input_buffers,
        prefill: !args.no_prefill,
        storage: match args.storage {
            StorageArg::Auto => CcStorage::Auto,
            StorageArg::Rows => CcStorage::DeviceRows,
            StorageArg::Stream => CcStorage::HostStream,
        },
        ..CcOptions::default()
    };
    let opts = CcOptions {
        compress_every: args.compress_every.unwrap_or(opts.compress_every),
        ..opts
    };
    let mut solver = CcSolver::new(&ctx, &graph, &opts)?;
    let stage_ms = ms(stage_start.elapsed());
    let streamed = solver.storage() == CcStorage::HostStream;
    let warmup = usize::from(repeat > 1);
    let mut runs: Vec<CcResult> = Vec::with_capacity(repeat);
    let mut full_run_ms = Vec::with_capacity(repeat);
    for i in 0..warmup + repeat {
        let start = Instant::now();
        let r = solver.run()?;
        if i >= warmup {
            full_run_ms.push(ms(start.elapsed()));
            runs.push(r);
        }
    }
    let runs_ms: Vec<f64> = runs.iter().map(|r| ms(r.stats.elapsed)).collect();
    let device_ms: Option<Vec<f64>> = runs.iter().map(|r| r.stats.device_time.map(ms)).collect();
    let to_host: Vec<f64> = runs.iter().map(|r| ms(r.stats.elapsed_to_host)).collect();
    let Some(last) = runs.pop() else {
        return Err("no run completed".into());
    };
    // With no graph flag this is the README's job: always validate.
    let check = args.run.validate || args.graph.is_default();
    if check && cc_reference(&graph.csr) != last.labels {
        return Err(
            "validation FAILED: labels differ from the sequential reference (union-find)".into(),
        );
    }
    if let Some(path) = &args.run.output {
        write_labels(path, &graph, &last.labels)?;
    }
    let s = &last.stats;
    let mut report = Report::of_run("cc", &ctx, Some(graph_report));
    report.execution = Some(ExecutionReport::new(
        &ctx,
        &args.run,
        common::execution::mode_of(false),
        if streamed {
            "edge chunks routed to the devices, hook and compress, tree merge"
        } else {
            "each device's rows linked (sampled where dense), tree merge"
        },
        None,
        json!({
            "storage": format!("{:?}", solver.storage()),
            "prefill": !args.no_prefill,
            "chunk_edges": s.chunk_edges,
            "input_buffers": s.input_buffers,
            "compress_every": opts.compress_every,
        }),
    ));
    report.times = Times {
        load_ms,
        stage_ms,
        run_ms: Spread::of(&runs_ms),
        device_ms: device_ms.as_deref().and_then(Spread::of),
        full_run_ms: Spread::of(&full_run_ms),
    };
    report.validated = check.then_some(true);
    report.algorithm_stats = json!({
        "components": last.components,
        "largest_component": last.largest_component,
        "edges_staged": solver.staged().map(|s| s.num_edges()),
        "edges_linked": s.edges_per_device.iter().sum::<u64>(),
        "to_host_ms": Spread::of(&to_host),
        "prefill_ms": ms(s.prefill),
        "setup_ms": ms(s.setup),
        "chunks": s.chunks,
        "edges_per_device": s.edges_per_device,
        "chunks_per_device": s.chunks_per_device,
    });
    if let Some(path) = &args.run.json {
        report.write(path)?;
    }
    if !args.run.json_on_stdout() {
        common::report::print_header(&report);
        let st = &report.algorithm_stats;
        println!(
            "setup       {:.2} ms, prefill {:.2} ms; labels on host after {:.3} ms (median)",
            ms(s.setup),
            ms(s.prefill),
            st["to_host_ms"]["median"].as_f64().unwrap_or(0.0)
        );
        println!(
            "components  {}, largest {}",
            last.components, last.largest_component
        );
        if streamed {
            println!(
                "chunks      {} x {} edges, {} buffers/device; edges per device {:?}, chunks {:?}",
                s.chunks, s.chunk_edges, s.input_buffers, s.edges_per_device, s.chunks_per_device
            );
        } else {
            println!(
                "linked      {:?} arcs per device, of {}",
                s.edges_per_device,
                graph.csr.num_edges()
            );
        }
        common::report::print_footer(&report);
    }
    Ok(())
}
