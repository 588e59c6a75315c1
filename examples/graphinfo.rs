//! Prints what a graph is: vertices, arcs, degrees, self-loops, and optionally how it partitions.
//!
//! ```text
//! cargo run --release --example graphinfo -- --graph datasets/4elt.graph
//! cargo run --release --example graphinfo -- --gen kron21.sym --json
//! cargo run --release --example graphinfo -- --gen road:side=1024,p=0.6 --partition metis --parts 4
//! cargo run --release --example graphinfo -- --graph soc.txt --write soc.grc   # build a cache
//! ```

mod common;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use groute_graph::{
    GenSpec, Graph, GraphError, GraphFormat, LoadOptions, PartitionMethod, Progress, WeightSpec,
    generate, halo_info, load_graph_with, partition_graph, write_graph,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Graph statistics for real and generated graphs.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Graph file (.mtx, .gr, .txt, .graph, .grc).
    #[arg(long, conflicts_with = "gen", required_unless_present = "gen")]
    graph: Option<PathBuf>,
    /// Format of --graph when the extension does not say (mtx, dimacs, snap, metis, galois, grc).
    #[arg(long)]
    format: Option<GraphFormat>,
    /// Generate instead: kron:scale=21,ef=48,sym | road:side=4096,p=0.6 | random:n=..,m=.. |
    /// kron21.sym | kron<scale> | road-usa.
    #[arg(long = "gen", id = "gen")]
    generator: Option<GenSpec>,
    /// Attach uniform random weights MIN..MAX[:SEED] (replacing any).
    #[arg(long)]
    gen_weights: Option<WeightSpec>,
    /// Drop the file's weights (e.g. real matrices with negative values).
    #[arg(long)]
    no_weights: bool,
    /// Partition method: metis or block.
    #[arg(long)]
    partition: Option<PartitionMethod>,
    /// Number of parts (devices).
    #[arg(long, default_value_t = 1)]
    parts: usize,
    /// Also write the graph (format from the extension; .grc for a fast cache).
    #[arg(long)]
    write: Option<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Log each stage with its start time to stderr.
    #[arg(long, short)]
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

fn run(args: Args) -> Result<(), GraphError> {
    let bar = Bar::new(args.verbose);
    let t0 = Instant::now();
    let mut graph: Graph = match (&args.graph, &args.generator) {
        (Some(path), _) => {
            let opts = if args.no_weights {
                LoadOptions::ignoring_weights()
            } else {
                LoadOptions::default()
            };
            load_graph_with(path, args.format, &opts, &bar)?
        }
        (None, Some(spec)) => generate(spec, &bar)?,
        (None, None) => unreachable!("clap requires --graph or --gen"),
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
    if args.partition.is_some() || args.parts > 1 {
        let method = args.partition.unwrap_or(PartitionMethod::Metis);
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
        graph = parted.graph;
    }
    bar.stage("done", 0);
    bar.0.finish_and_clear();
    let d = graph.csr.degree_stats();
    if args.json {
        let v = serde_json::json!({
            "name": graph.name,
            "vertices": graph.num_vertices(),
            "edges": graph.num_edges(),
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
            "load_seconds": load_s,
            "partition": part_json,
        });
        println!("{v}");
    } else {
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
    let args = Args::parse();
    common::exit_on_error(|| run(args))
}
