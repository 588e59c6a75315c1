//! The graph as one rank of an MPI job holds it ([`RankGraph`]): rank 0 loads the whole graph
//! (it validates, picks the default source and writes `--output`); every other rank, given a
//! groute cache (`.grc`), maps only the cache's offsets and ids and the arcs of its own
//! parts' rows, so its host memory follows its share of the graph. Other inputs (text files,
//! `--gen`) are parsed whole on every rank: convert them once to a cache
//! (`graphinfo --graph g.mtx --write g.grc`).

use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

use groute::graph::{
    Graph, GraphCache, GraphFormat, HeldRows, InputOrder, Partition, WeightSpec, block_partition,
    block_partition_of_offsets,
};

use super::{AnyError, GraphArgs, RunArgs};

/// The graph as this rank holds it, and the partition of the whole graph.
pub struct RankGraph {
    /// The graph: whole, or (a rank other than 0, from a cache) its vertices with only the
    /// rows in [`RankGraph::held`] filled.
    pub graph: Graph,
    /// Blocks of vertices and arcs, one part per device of every rank: rank `r` holds parts
    /// `r * devices..(r + 1) * devices`.
    pub partition: Partition,
    /// The rows of this rank's parts.
    pub held: Range<u32>,
    /// Whether `graph` holds every row (else only `held`).
    pub whole: bool,
    /// Milliseconds spent loading.
    pub load_ms: f64,
}

impl RankGraph {
    /// The source of a traversal as a rank of the input order: `--source`, or the default
    /// source where this rank holds the whole graph (rank 0's is every rank's: elsewhere
    /// `0` stands in).
    pub fn source(&self, given: Option<u64>) -> Result<u32, AnyError> {
        let order = InputOrder::of(&self.graph);
        match given {
            _ if self.whole => super::source::pick(&self.graph, &order, given),
            Some(ext) => {
                let n = self.graph.num_vertices();
                order.rank_of_external(ext, n).ok_or_else(|| {
                    format!(
                        "--source {ext} is not a vertex of {} ({n} vertices); pick an id from \
                         the file",
                        self.graph.name
                    )
                    .into()
                })
            }
            None => Ok(0),
        }
    }

    /// The rows this rank runs, as the solver takes them.
    pub fn rows(&self) -> Result<HeldRows<'_>, AnyError> {
        Ok(HeldRows::some(
            &self.graph.csr,
            self.held.clone(),
            self.graph.symmetric,
        )?)
    }
}

/// What a rank needs of the graph besides its rows' out-arcs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Out-arcs of its rows only (BFS, SSSP, PageRank).
    OwnRows,
    /// Arcs both ways: a directed graph is loaded whole on every rank to symmetrize it (CC).
    BothWays,
}

/// Loads the graph as this rank of a job of `ranks` ranks holds it (devices per rank from
/// `run`), `weights` applied as [`super::graph_args::load`] applies them.
pub fn load(
    args: &GraphArgs,
    weights: Option<&str>,
    run: &RunArgs,
    ranks: usize,
    needs: Needs,
) -> Result<RankGraph, AnyError> {
    let rank = groute::dist::launched_rank().map_or(0, |(rank, _)| rank);
    let parts = ranks
        .checked_mul(run.devices)
        .ok_or("--devices times the ranks overflows")?;
    let rows_of = |partition: &Partition| {
        let first = partition.range(rank * run.devices).start;
        first..partition.range((rank + 1) * run.devices - 1).end
    };
    if rank > 0
        && let Some(path) = cache_path(args)?
    {
        let start = Instant::now();
        let cache = GraphCache::open(&path)?;
        if needs == Needs::OwnRows || cache.is_symmetric() {
            let partition = block_partition_of_offsets(cache.offsets(), parts)?;
            let held = rows_of(&partition);
            let mut graph = cache.load_rows(held.clone())?;
            if let Some(w) = weights {
                graph = w.parse::<WeightSpec>()?.apply(graph)?;
            }
            return Ok(RankGraph {
                graph,
                partition,
                held,
                whole: false,
                load_ms: start.elapsed().as_secs_f64() * 1e3,
            });
        }
    }
    let (graph, load_ms) = super::graph_args::load(args, weights, run.quiet())?;
    let partition = block_partition(&graph.csr, parts)?;
    let held = rows_of(&partition);
    Ok(RankGraph {
        graph,
        partition,
        held,
        whole: true,
        load_ms,
    })
}

/// `--graph`'s path when it is a groute cache (by `--format` or its name).
fn cache_path(args: &GraphArgs) -> Result<Option<PathBuf>, AnyError> {
    let Some(path) = &args.graph else {
        return Ok(None);
    };
    if args.gen_spec.is_some() {
        return Ok(None);
    }
    let format = match args.format.as_deref() {
        Some(f) => f.parse::<GraphFormat>()?,
        None => match GraphFormat::detect(path) {
            Ok(f) => f,
            // The whole-graph load names what is wrong with the path.
            Err(_) => return Ok(None),
        },
    };
    Ok((format == GraphFormat::Cache).then(|| path.clone()))
}
