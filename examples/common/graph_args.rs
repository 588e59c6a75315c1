//! Where the graph comes from (`--graph`, `--gen`, `--partition`), and loading it.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use groute::graph::{
    GenSpec, Graph, GraphFormat, PartitionMethod, PartitionedGraph, WeightSpec, generate,
    load_graph, partition_graph,
};

use super::{AnyError, Bar};

/// The graph shipped in the repository that the examples run when given no graph.
pub const DEFAULT_GRAPH: &str = "datasets/4elt.graph";

/// Where the graph comes from and how it is split between devices.
#[derive(Args, Debug, Clone)]
pub struct GraphArgs {
    /// Graph file (.mtx, .gr, .txt/.el, .graph, .grc; default: the shipped datasets/4elt.graph).
    #[arg(long, value_name = "PATH", conflicts_with = "gen_spec")]
    pub graph: Option<PathBuf>,
    /// Generate the graph instead: kron21.sym, kron:scale=16, road:side=4096, road-usa, random:n=1000,m=5000.
    #[arg(long = "gen", value_name = "SPEC")]
    pub gen_spec: Option<String>,
    /// File format, when the extension does not say (mtx, dimacs, snap, metis, galois, grc).
    #[arg(long, value_name = "FMT", hide = true)]
    pub format: Option<String>,
    /// How vertices are split between devices: auto (METIS up to 2^24 arcs, else blocks), metis, block (cc and runs across MPI ranks: blocks only).
    #[arg(long, value_name = "METHOD", default_value = "auto")]
    pub partition: String,
}

impl GraphArgs {
    /// Whether neither `--graph` nor `--gen` was given (the shipped graph runs).
    pub fn is_default(&self) -> bool {
        self.graph.is_none() && self.gen_spec.is_none()
    }

    /// The partition method from `--partition`.
    pub fn partition_method(&self) -> Result<PartitionMethod, AnyError> {
        Ok(self.partition.parse::<PartitionMethod>()?)
    }

    /// Refuses `--partition metis` (and a misspelt method) for `what`, a run that splits the
    /// graph into blocks of its own numbering whatever `--partition` says.
    pub fn blocks_only(&self, what: &str) -> Result<(), AnyError> {
        match self.partition_method()? {
            PartitionMethod::Metis => Err(format!(
                "--partition metis does not apply to {what}, which splits the graph into blocks \
                 of its own numbering; leave --partition out"
            )
            .into()),
            PartitionMethod::Block | PartitionMethod::Auto => Ok(()),
        }
    }

    /// `graph` split between `devices` devices as `--partition` asks, with a progress bar
    /// (none when `quiet`); a note on stderr says why the method fell back, where it did.
    pub fn partition(
        &self,
        graph: Graph,
        devices: usize,
        quiet: bool,
    ) -> Result<PartitionedGraph, AnyError> {
        let method = self.partition_method()?;
        let bar = Bar::new(quiet);
        let parted = partition_graph(graph, devices, method, &bar)?;
        bar.finish();
        if let Some(why) = &parted.fallback {
            eprintln!("note: {why}");
        }
        Ok(parted)
    }
}

/// Loads or generates the graph; returns it with the milliseconds it took.
pub fn load(
    args: &GraphArgs,
    weights: Option<&str>,
    quiet: bool,
) -> Result<(Graph, f64), AnyError> {
    let start = Instant::now();
    let bar = Bar::new(quiet);
    let graph = match (&args.gen_spec, &args.graph) {
        (Some(spec), _) => {
            let spec: GenSpec = spec.parse()?;
            generate(&spec, &bar)?
        }
        (None, path) => {
            let path = path.clone().unwrap_or_else(default_graph_path);
            let format = args
                .format
                .as_deref()
                .map(str::parse::<GraphFormat>)
                .transpose()?;
            load_graph(&path, format)?
        }
    };
    let graph = match weights {
        Some(w) => w.parse::<WeightSpec>()?.apply(graph)?,
        None => graph,
    };
    bar.finish();
    if graph.num_vertices() == 0 {
        return Err(format!(
            "graph {} has no vertices; give a non-empty graph",
            graph.name
        )
        .into());
    }
    Ok((graph, start.elapsed().as_secs_f64() * 1e3))
}

/// The shipped default graph, found from the working directory or the crate root.
pub fn default_graph_path() -> PathBuf {
    let here = PathBuf::from(DEFAULT_GRAPH);
    if here.exists() {
        return here;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_GRAPH)
}
