//! Command-line pieces shared by the graph examples: graph selection, device and backend
//! flags, progress bars and error reporting.
//!
//! Each example includes this module with `mod common;`.

#![allow(dead_code)]

pub mod do_trace;

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use groute::core::{BackendChoice, Context, Jitter};
use groute::graph::{
    GenSpec, Graph, GraphFormat, InputOrder, PartitionMethod, Progress, WeightSpec, generate,
    load_graph,
};
use groute::worklist::WorklistOptions;
use groute::worklist::traversal::{FUSED_SPIN_NS, FusedBarrier, FusedDriver, FusedMode};
use indicatif::{ProgressBar, ProgressStyle};

/// The graph shipped in the repository that the examples run when given no graph.
pub const DEFAULT_GRAPH: &str = "datasets/4elt.graph";

/// Where the graph comes from.
#[derive(Args, Debug, Clone)]
pub struct GraphArgs {
    /// Graph file (Matrix Market .mtx, DIMACS .gr, SNAP .txt/.el, METIS .graph, Galois .gr,
    /// groute cache .grc). Default: the shipped `datasets/4elt.graph`.
    #[arg(long, value_name = "PATH", conflicts_with = "gen_spec")]
    pub graph: Option<PathBuf>,
    /// Generate a graph instead: `kron:scale=21,ef=48,sym`, `kron21.sym`, `road:side=4096,p=0.6`,
    /// `road-usa`, `random:n=1000,m=5000`.
    #[arg(long = "gen", value_name = "SPEC")]
    pub gen_spec: Option<String>,
    /// File format, when the extension does not say (mtx, dimacs, snap, metis, galois, grc).
    #[arg(long, value_name = "FMT")]
    pub format: Option<String>,
    /// How vertices are split between devices: auto (METIS up to 2^24 arcs, contiguous
    /// blocks above, where METIS would take a minute or more), metis or block.
    #[arg(long, value_name = "auto|metis|block", default_value = "auto")]
    pub partition: String,
}

/// Devices, backend and output.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Number of (virtual) devices; they map round-robin onto the GPUs present.
    #[arg(long, default_value_t = 1)]
    pub devices: usize,
    /// auto (CUDA when a GPU is usable, else host), host or cuda.
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Host backend only: randomise the schedule with this seed (testing).
    #[arg(long, value_name = "SEED")]
    pub jitter: Option<u64>,
    /// Compare the result with the sequential reference.
    #[arg(long)]
    pub check: bool,
    /// Print one JSON object instead of the human table.
    #[arg(long)]
    pub json: bool,
}

/// Fused persistent kernels of the traversals (BFS, SSSP).
#[derive(Args, Debug, Clone)]
pub struct FusedArgs {
    /// Run the whole traversal as one persistent kernel (CUDA, one device; the default there;
    /// soft priority, --prio-delta, runs inside it); on several devices, run each device's
    /// levels in bounded fused launches between exchanges (--fused-round-levels). The host
    /// backend ignores it.
    #[arg(long, conflicts_with = "no_fused")]
    pub fused: bool,
    /// One kernel launch per level (the default of runs on several devices over dense graphs).
    #[arg(long, conflicts_with = "fused_async")]
    pub no_fused: bool,
    /// Run the whole traversal as one persistent kernel without barriers: warps expand
    /// vertices as soon as they are appended, no levels (CUDA, one device; no soft priority:
    /// --prio-delta 0, the SSSP default then).
    #[arg(long, conflicts_with = "fused")]
    pub fused_async: bool,
    /// Bounded fused rounds on several devices (sparse graphs, or --fused): levels of one
    /// launch, after which a device returns to its host to exchange updates (default 64).
    #[arg(long, value_name = "LEVELS")]
    pub fused_round_levels: Option<u32>,
    /// How fused runs on several devices are driven: `device` (one persistent kernel per
    /// device for the whole run, the devices exchanging items over their peer links and
    /// detecting termination themselves), `host` (bounded fused rounds between the host's
    /// exchanges, --fused-round-levels) or `auto` (device where every pair of GPUs has peer
    /// access, the default). On one GPU, `device` runs the members' kernel in a group of one
    /// (to measure what the device-driven build costs); with more devices than GPUs, members
    /// share GPUs, each on its share of one (to test the members' protocol, not for speed).
    #[arg(long, value_name = "DRIVER", default_value = "auto", value_parser = parse_fused_driver)]
    pub fused_driver: FusedDriver,
    /// Blocks of the fused kernel (default: one per multiprocessor on graphs of at most 8 arcs
    /// per vertex, else every block that fits resident at once, the most allowed; members of
    /// `--fused-driver device` sharing a GPU get their share of the GPU).
    #[arg(long, value_name = "BLOCKS")]
    pub fused_grid: Option<u32>,
    /// Batches of at most this many items run in the fused kernel's single-block mode (levels
    /// back to back in one block, no grid barrier; 0: off; default: the threads of a block on
    /// graphs of at most 8 arcs per vertex, else off).
    #[arg(long, value_name = "ITEMS")]
    pub fused_solo_max: Option<u32>,
    /// Threads per block of the fused kernel (a multiple of 32 up to 1024; default 1024 on
    /// graphs of at most 8 arcs per vertex, else 256).
    #[arg(long, value_name = "THREADS")]
    pub fused_block: Option<u32>,
    /// Nanoseconds a block waiting at the fused kernel's grid barrier sleeps between polls
    /// (0: poll without sleeping; default 20).
    #[arg(long, value_name = "NS")]
    pub fused_spin_ns: Option<u32>,
    /// Order the fused kernel's grid barrier with __threadfence() around relaxed atomics
    /// instead of PTX acquire/release operations.
    #[arg(long)]
    pub fused_fenced_barrier: bool,
    /// Blocks waiting at the fused kernel's grid barrier poll its release record (tagged with
    /// the barrier's generation) instead of the generation word and then the record.
    #[arg(long)]
    pub fused_tagged_barrier: bool,
    /// The fused kernel relaxes low-degree lists with atomicMin at once, without first reading
    /// the head's value (one memory round trip less per level; more atomics).
    #[arg(long)]
    pub fused_direct_min: bool,
    /// The fused kernel's single-block mode keeps the next level's items and their adjacency
    /// ranges in shared memory (true, the default) or reads them from the worklist (false).
    #[arg(long, value_name = "BOOL")]
    pub fused_solo_shared: Option<bool>,
    /// --fused-direct-min for the single-block mode's levels only.
    #[arg(long)]
    pub fused_solo_direct_min: bool,
    /// The fused kernel's single-block mode runs a barrier-free work queue in shared memory
    /// (SOLO-ASYNC) instead of levels separated by __syncthreads (one device, no soft
    /// priority, blocks over 256 threads).
    #[arg(long)]
    pub fused_solo_async: bool,
    /// The fused kernel's single-block mode runs on a cluster of 4 blocks (true) or on one
    /// block (false), where the GPU and the graph allow it (compute capability 9.0, one device
    /// or the members of a device-driven run, adjacency lists under 32 arcs; members sharing
    /// a GPU run it only if all of them can). Default: on (measured faster for BFS and SSSP).
    #[arg(long, value_name = "BOOL")]
    pub fused_cluster: Option<bool>,
}

impl FusedArgs {
    /// The mode these flags ask for (neither flag: auto).
    pub fn mode(&self) -> FusedMode {
        match (self.fused, self.no_fused, self.fused_async) {
            (true, _, _) => FusedMode::On,
            (false, true, _) => FusedMode::Off,
            (false, false, true) => FusedMode::Async,
            (false, false, false) => FusedMode::Auto,
        }
    }

    /// Writes the mode and grid into worklist options.
    pub fn apply(&self, options: &mut WorklistOptions) {
        options.fused = self.mode();
        options.fused_grid = self.fused_grid;
        options.fused_round_levels = self.fused_round_levels;
        options.fused_driver = self.fused_driver;
        options.fused_solo_max = self.fused_solo_max;
        options.fused_block = self.fused_block;
        options.fused_barrier = FusedBarrier {
            spin_ns: self.fused_spin_ns.unwrap_or(FUSED_SPIN_NS),
            fenced: self.fused_fenced_barrier,
            tagged: self.fused_tagged_barrier,
        };
        options.fused_direct_min = self.fused_direct_min;
        if let Some(shared) = self.fused_solo_shared {
            options.fused_solo_shared = shared;
        }
        options.fused_solo_direct_min = self.fused_solo_direct_min;
        options.fused_solo_async = self.fused_solo_async;
        options.fused_cluster = self.fused_cluster;
    }
}

/// `--fused-driver auto|device|host`.
fn parse_fused_driver(s: &str) -> Result<FusedDriver, String> {
    match s {
        "auto" => Ok(FusedDriver::Auto),
        "device" => Ok(FusedDriver::Device),
        "host" => Ok(FusedDriver::Host),
        other => Err(format!("`{other}`: give auto, device or host")),
    }
}

/// The mode a traversal ran in, for reports.
pub fn traversal_mode(fused: bool, mode: FusedMode) -> &'static str {
    match (fused, mode) {
        (true, FusedMode::Async) => "fused asynchronous",
        (true, _) => "fused",
        (false, _) => "one launch per round",
    }
}

/// A boxed error for `main`.
pub type AnyError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Runs `body`, printing an error (with its causes) and exiting non-zero on failure.
pub fn exit_on_error<E: Into<AnyError>>(body: impl FnOnce() -> Result<(), E>) -> ExitCode {
    match body() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report_error(&*e.into());
            ExitCode::FAILURE
        }
    }
}

/// Prints `e` and the causes under it, each one that its message does not already quote
/// (an I/O error's message names its cause, for one).
pub fn report_error(e: &(dyn std::error::Error + 'static)) {
    let mut printed = e.to_string();
    eprintln!("error: {printed}");
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !printed.contains(&text) {
            eprintln!("  caused by: {text}");
            printed = text;
        }
        source = s.source();
    }
}

/// A progress bar on a terminal, silence otherwise.
pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    /// A bar if stderr is a terminal and `quiet` is false.
    pub fn new(quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new(0);
            if let Ok(style) = ProgressStyle::with_template(
                "{msg:>12} [{bar:40}] {percent:>3}% {elapsed_precise} eta {eta}",
            ) {
                b.set_style(style.progress_chars("=> "));
            }
            b
        });
        Bar { bar }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn stage(&self, name: &str, total: u64) {
        if let Some(b) = &self.bar {
            b.set_message(name.to_string());
            b.set_length(total);
            b.set_position(0);
        }
    }
    fn advance(&self, delta: u64) {
        if let Some(b) = &self.bar {
            b.inc(delta);
        }
    }
}

/// Loads or generates the graph; returns it with the seconds it took.
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
    Ok((graph, start.elapsed().as_secs_f64()))
}

/// The shipped default graph, found from the working directory or the crate root.
pub fn default_graph_path() -> PathBuf {
    let here = PathBuf::from(DEFAULT_GRAPH);
    if here.exists() {
        return here;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_GRAPH)
}

/// The partition method from its flag.
pub fn partition_method(args: &GraphArgs) -> Result<PartitionMethod, AnyError> {
    Ok(args.partition.parse::<PartitionMethod>()?)
}

/// The context for these flags; prints the fallback note when auto chose the host.
pub fn context(args: &RunArgs) -> Result<Context, AnyError> {
    let backend: BackendChoice = args.backend.parse()?;
    let ctx = Context::builder()
        .devices(args.devices)
        .backend(backend)
        .jitter(args.jitter.map(Jitter::seeded))
        .build()?;
    if let Some(note) = ctx.fallback_note() {
        eprintln!("note: {note}");
    }
    Ok(ctx)
}

/// Name of the first device (for reports).
pub fn device_name(ctx: &Context) -> String {
    ctx.devices()
        .first()
        .map(|d| d.properties().name.clone())
        .unwrap_or_default()
}

/// The value traversal solvers report for an unreachable vertex.
pub const UNREACHED: u32 = u32::MAX;

/// The first vertex, in input order, that has out-edges (`order` must be `graph`'s).
pub fn first_vertex_with_out_edges(graph: &Graph, order: &InputOrder) -> Option<u32> {
    (0..graph.num_vertices() as u32).find(|&r| graph.csr.out_degree(order.vertex_of_rank(r)) > 0)
}

/// `count` distinct roots (ranks) with out-edges, sampled with `seed` the way Graph500 picks
/// its search keys: uniformly among the vertices, skipping those without out-edges. An error
/// names the flag when the graph has fewer such vertices than asked for.
pub fn sample_roots(
    graph: &Graph,
    order: &InputOrder,
    count: usize,
    seed: u64,
) -> Result<Vec<u32>, AnyError> {
    let n = graph.num_vertices();
    let has_edges = |r: u32| graph.csr.out_degree(order.vertex_of_rank(r)) > 0;
    let available = (0..n as u32).filter(|&r| has_edges(r)).count();
    if count == 0 || count > available {
        return Err(format!(
            "--roots {count}: {} has {available} vertices with out-edges; ask for 1 to {available} roots",
            graph.name
        )
        .into());
    }
    let mut chosen = Vec::with_capacity(count);
    let mut taken = std::collections::HashSet::with_capacity(count);
    // The SplitMix64 stream from `seed`: the same roots for the same seed on every machine.
    let mut stream = groute::graph::SplitMix64::new(seed);
    while chosen.len() < count {
        let r = (stream.next_u64() % n as u64) as u32;
        if has_edges(r) && taken.insert(r) {
            chosen.push(r);
        }
    }
    Ok(chosen)
}

/// Out-arcs of every reached vertex (the Graph500 convention for traversed edges); `values`
/// is indexed by rank and `order` must be `graph`'s.
pub fn edges_of_reached(graph: &Graph, order: &InputOrder, values: &[u32]) -> u64 {
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| **v != UNREACHED)
        .map(|(r, _)| graph.csr.out_degree(order.vertex_of_rank(r as u32)))
        .sum()
}

/// Writes `<id> <value>` per vertex in the input numbering, `inf` when unreachable.
pub fn write_values(path: &Path, values: &[u32], order: &InputOrder) -> Result<(), AnyError> {
    let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut out = BufWriter::new(file);
    for (rank, &value) in values.iter().enumerate() {
        let id = order.external_of_rank(rank as u32);
        if value == UNREACHED {
            writeln!(out, "{id} inf")?;
        } else {
            writeln!(out, "{id} {value}")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The median of `values` (sorted in place; `values` must not be empty).
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// `repeat` timed runs of a solver whose graph is already uploaded: one untimed warm-up first
/// when `repeat > 1` (kernel compilation, first touch), then the runs; `clocks` gives each
/// result's host time and device-event time (`stats.elapsed`, `stats.device_time`).
pub struct TimedRuns<R> {
    /// The last run's result.
    pub last: R,
    /// Host time of each timed run, ms.
    pub times_ms: Vec<f64>,
    /// Median of `times_ms`.
    pub median_ms: f64,
    /// Median device-event time, ms (`None` on the host backend).
    pub device_ms: Option<f64>,
}

/// Runs `run` as [`TimedRuns`] describes (`repeat` >= 1, else an error).
pub fn timed_runs<R, E: Into<AnyError>>(
    repeat: usize,
    mut run: impl FnMut() -> Result<R, E>,
    clocks: impl Fn(&R) -> (Duration, Option<Duration>),
) -> Result<TimedRuns<R>, AnyError> {
    if repeat > 1 {
        run().map_err(Into::into)?;
    }
    let mut times_ms = Vec::with_capacity(repeat);
    let mut device_times = Vec::with_capacity(repeat);
    let mut last = None;
    for _ in 0..repeat {
        let r = run().map_err(Into::into)?;
        let (host, device) = clocks(&r);
        times_ms.push(host.as_secs_f64() * 1e3);
        device_times.push(device);
        last = Some(r);
    }
    let last = last.ok_or("--repeat must be at least 1")?;
    let median_ms = median(&mut times_ms.clone());
    Ok(TimedRuns {
        last,
        times_ms,
        median_ms,
        device_ms: median_device_ms(device_times),
    })
}

/// The median, in ms, of the algorithm's device-event times of the runs (`stats.device_time`
/// of each): `None` when a run reported none (the host backend has no device clock).
pub fn median_device_ms(times: impl IntoIterator<Item = Option<Duration>>) -> Option<f64> {
    let mut ms = times
        .into_iter()
        .map(|t| t.map(|t| t.as_secs_f64() * 1e3))
        .collect::<Option<Vec<f64>>>()?;
    (!ms.is_empty()).then(|| median(&mut ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use groute::graph::EdgeList;

    /// A path 0-1-...-9 plus 10 isolated vertices (10..20): half the vertices have no edges.
    fn half_isolated() -> Graph {
        let pairs: Vec<(u32, u32)> = (0..9).map(|v| (v, v + 1)).collect();
        Graph::from_edges(20, &EdgeList::from_pairs(&pairs), "half-isolated", true).unwrap()
    }

    #[test]
    fn sampled_roots_are_distinct_have_out_edges_and_depend_only_on_the_seed() {
        let g = half_isolated();
        let order = InputOrder::of(&g);
        for count in [1, 4, 10] {
            let roots = sample_roots(&g, &order, count, 7).unwrap();
            assert_eq!(roots.len(), count);
            let distinct: std::collections::HashSet<_> = roots.iter().collect();
            assert_eq!(distinct.len(), count, "{roots:?}");
            for &r in &roots {
                assert!(g.csr.out_degree(order.vertex_of_rank(r)) > 0, "root {r}");
            }
            assert_eq!(roots, sample_roots(&g, &order, count, 7).unwrap());
        }
        // All ten vertices with edges, in some order; another seed, another order.
        let mut all = sample_roots(&g, &order, 10, 7).unwrap();
        let other = sample_roots(&g, &order, 10, 8).unwrap();
        assert_ne!(all, other);
        all.sort_unstable();
        assert_eq!(all, (0..10).collect::<Vec<u32>>());
    }

    #[test]
    fn asking_for_more_roots_than_vertices_with_edges_names_the_flag_and_the_limit() {
        let g = half_isolated();
        let order = InputOrder::of(&g);
        for count in [0, 11] {
            let err = sample_roots(&g, &order, count, 1).unwrap_err().to_string();
            assert!(err.contains("--roots") && err.contains("1 to 10"), "{err}");
        }
    }
}
