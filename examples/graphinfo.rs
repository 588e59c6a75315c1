//! Prints what a graph is: vertices, arcs, degrees, self-loops, and optionally how it
//! partitions.
//!
//! ```text
//! cargo run --release --example graphinfo                        # the shipped datasets/4elt.graph
//! cargo run --release --example graphinfo -- --graph datasets/4elt.graph
//! cargo run --release --example graphinfo -- --gen kron21.sym --json
//! cargo run --release --example graphinfo -- --gen road:side=1024,p=0.6 --partition metis --parts 4
//! cargo run --release --example graphinfo -- --graph soc.txt --write soc.grc   # build a cache
//! ```
//!
//! The JSON report (`docs/report.schema.json`) carries the graph's statistics in
//! `algorithm_stats` (degrees, self-loops, and the partition with `--parts N`).

mod common;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use common::report::GraphReport;
use common::{AnyError, GraphArgs, Report};
use groute_graph::{
    GenSpec, Graph, GraphFormat, LoadOptions, Progress, WeightSpec, generate, halo_info,
    load_graph_with, partition_graph, write_graph,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Statistics of a graph file or a generated graph (default: the shipped datasets/4elt.graph).
#[derive(Parser, Debug)]
#[command(name = "graphinfo", version, term_width = 0)]
struct Args {
    #[command(flatten)]
    graph: GraphArgs,
    /// Partition into this many parts (devices) with --partition and report the cut.
    #[arg(long, default_value_t = 1)]
    parts: usize,
    /// Attach uniform random weights MIN..MAX[:SEED] (replacing any).
    #[arg(long, value_name = "MIN..MAX[:SEED]")]
    gen_weights: Option<WeightSpec>,
    /// Also write the graph (format from the extension; .grc for a fast cache).
    #[arg(long, value_name = "PATH")]
    write: Option<PathBuf>,
    /// Write the JSON report (docs/report.schema.json) to PATH, or to stdout without PATH.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "-")]
    json: Option<PathBuf>,
    /// List the tuning flags (also read from the GROUTE_TUNING environment variable) and exit.
    #[arg(long)]
    help_tuning: bool,
    /// Drop the file's weights (e.g. real matrices with negative values).
    #[arg(long, hide = true)]
    no_weights: bool,
    /// Log each stage with its start time to stderr.
    #[arg(long, short, hide = true)]
    verbose: bool,
}

/// Progress on stderr, drawn only when stderr is a terminal; with `--verbose`, a log of stages.
struct Bar(ProgressBar, Option<Instant>);

impl Bar {
    fn new(verbose: bool) -> Bar {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        Bar(bar, verbose.then(Instant::now))
    }
}

impl Progress for Bar {
    fn stage(&self, name: &str, total: u64) {
        if let Some(t0) = self.1 {
            self.0
                .suspend(|| eprintln!("[{:8.3} s] {name}", t0.elapsed().as_secs_f64()));
        }
        if total > 0 {
            self.0.set_style(
                ProgressStyle::with_template("{msg:>18} [{bar:40}] {percent:>3}% {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            self.0.set_length(total);
            self.0.set_position(0);
        } else {
            self.0.set_style(
                ProgressStyle::with_template("{msg:>18} {spinner} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            self.0
                .enable_steady_tick(std::time::Duration::from_millis(120));
        }
        self.0.set_message(name.to_owned());
    }
    fn advance(&self, delta: u64) {
        self.0.inc(delta);
    }
}

fn run(args: Args) -> Result<(), AnyError> {
    let bar = Bar::new(args.verbose);
    let t0 = Instant::now();
    let mut graph: Graph = match (&args.graph.gen_spec, &args.graph.graph) {
        (Some(spec), _) => generate(&spec.parse::<GenSpec>()?, &bar)?,
        (None, path) => {
            let path = path
                .clone()
                .unwrap_or_else(common::graph_args::default_graph_path);
            let opts = if args.no_weights {
                LoadOptions::ignoring_weights()
            } else {
                LoadOptions::default()
            };
            let format = args
                .graph
                .format
                .as_deref()
                .map(str::parse::<GraphFormat>)
                .transpose()?;
            load_graph_with(&path, format, &opts, &bar)?
        }
    };
    if let Some(w) = &args.gen_weights {
        graph = w.apply(graph)?;
    }
    let load_s = t0.elapsed().as_secs_f64();
    if let Some(out) = &args.write {
        bar.stage("writing", 0);
        write_graph(&graph, out, None)?;
    }
    let mut part_json = serde_json::Value::Null;
    let mut part_text = String::new();
    let mut stage_ms = 0.0;
    if args.parts > 1 {
        let method = args.graph.partition_method()?;
        let t1 = Instant::now();
        let parted = partition_graph(graph, args.parts, method, &bar)?;
        let part_s = t1.elapsed().as_secs_f64();
        let p = &parted.partition;
        let halos = halo_info(&parted.graph.csr, p);
        let s = parted.stats;
        part_text = format!(
            "partition      {} into {} parts{} in {:.2} s\n  edge cut     {} arcs ({:.2}%)\n  balance      vertices {:.3}, arcs {:.3}\n",
            parted.method,
            p.num_parts(),
            parted
                .fallback
                .as_ref()
                .map(|f| format!(" (fallback: {f})"))
                .unwrap_or_default(),
            part_s,
            s.cut_arcs,
            100.0 * s.cut_fraction,
            s.vertex_balance,
            s.edge_balance,
        );
        for h in &halos {
            let r = p.range(h.part);
            part_text += &format!(
                "  part {:<3}    vertices {}..{} ({}), remote neighbours {}, cut arcs {}\n",
                h.part,
                r.start,
                r.end,
                r.len(),
                h.remote.len(),
                h.cut_arcs
            );
        }
        part_json = serde_json::json!({
            "method": parted.method.to_string(),
            "requested": method.to_string(),
            "fallback": parted.fallback.as_ref().map(|f| f.to_string()),
            "parts": p.num_parts(),
            "bounds": p.bounds(),
            "cut_arcs": s.cut_arcs,
            "cut_fraction": s.cut_fraction,
            "vertex_balance": s.vertex_balance,
            "edge_balance": s.edge_balance,
            "halo_vertices": halos.iter().map(|h| h.remote.len()).collect::<Vec<_>>(),
            "seconds": part_s,
        });
        stage_ms = part_s * 1e3;
        graph = parted.graph;
    }
    bar.stage("done", 0);
    bar.0.finish_and_clear();
    let d = graph.csr.degree_stats();
    if let Some(path) = &args.json {
        let mut report = Report::new("graphinfo");
        report.graph = Some(GraphReport::of(&graph));
        report.times.load_ms = load_s * 1e3;
        report.times.stage_ms = stage_ms;
        report.algorithm_stats = serde_json::json!({
            "weighted": graph.csr.is_weighted(),
            "symmetric": graph.symmetric,
            "id_base": graph.ids.base(),
            "degree": {
                "min": d.min,
                "max": d.max,
                "max_vertex": graph.external_id(d.argmax),
                "mean": d.mean,
                "zero_out_degree": d.zero_out_degree,
            },
            "self_loops": d.self_loops,
            "partition": part_json,
        });
        report.write(path)?;
    }
    if args.json.as_deref() != Some(std::path::Path::new("-")) {
        println!("graph          {}", graph.name);
        println!("vertices       {}", graph.num_vertices());
        println!("edges (arcs)   {}", graph.num_edges());
        println!("weighted       {}", graph.csr.is_weighted());
        println!(
            "symmetric      {}",
            if graph.symmetric { "yes" } else { "not known" }
        );
        println!(
            "out-degree     min {}, max {} (vertex {}), mean {:.2}, zero {}",
            d.min,
            d.max,
            graph.external_id(d.argmax),
            d.mean,
            d.zero_out_degree
        );
        println!("self-loops     {}", d.self_loops);
        println!("loaded in      {load_s:.2} s");
        print!("{part_text}");
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Args = common::tuning::parse();
    common::exit_on_error(|| run(args))
}
