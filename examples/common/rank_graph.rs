//! The graph as one rank of an MPI job holds it ([`RankGraph`]): rank 0 loads the whole graph
//! (it validates, picks the default source and writes `--output`); every other rank, given a
//! groute cache (`.grc`), maps only the cache's offsets and ids and the arcs of its own
//! parts' rows, so its host memory is its share of the arcs plus per-vertex arrays (offsets,
//! ids). Other inputs (text files,
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
    /// Whether the job's ranks other than 0 hold only their rows (a cache input): then every
    /// rank, rank 0 too, runs as if it did ([`RankGraph::rows`]), so that all decide alike.
    pub by_rows: bool,
    /// Milliseconds spent loading.
    pub load_ms: f64,
}

impl RankGraph {
    /// The source of a traversal as a rank of `order` (the graph's input order): `--source`,
    /// or the default source where this rank holds the whole graph (rank 0's is every rank's:
    /// elsewhere `0` stands in).
    pub fn source(&self, order: &InputOrder, given: Option<u64>) -> Result<u32, AnyError> {
        match given {
            _ if self.whole => super::source::pick(&self.graph, order, given),
            Some(ext) => super::source::rank_of(&self.graph, order, ext),
            None => Ok(0),
        }
    }

    /// The graph as the solver takes it: in a job whose other ranks hold only their rows,
    /// this rank's rows and the cache's symmetry flag (which groute's writer sets only after
    /// checking the arcs), so that every rank decides alike (PageRank's sweeps); else the
    /// whole graph, whose symmetry is found from its arcs when asked.
    pub fn rows(&self) -> Result<HeldRows<'_>, AnyError> {
        if !self.by_rows {
            return Ok(HeldRows::whole(&self.graph.csr));
        }
        Ok(HeldRows::some(
            &self.graph.csr,
            self.held.clone(),
            self.graph.symmetric,
        )?)
    }

    /// Partitions the whole graph again (after a change of its arcs: CC symmetrizes a
    /// directed graph, which every rank then holds whole).
    pub fn repartition(&mut self, ranks: usize, devices: usize) -> Result<(), AnyError> {
        if !self.whole {
            return Err("only a whole graph can be partitioned again".into());
        }
        self.partition = block_partition(&self.graph.csr, ranks * devices)?;
        self.held = rows_of(&self.partition, rank(), devices);
        Ok(())
    }
}

/// What a rank needs of the graph besides its rows' out-arcs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Out-arcs of its rows only (BFS, SSSP).
    OwnRows,
    /// Arcs both ways: a directed graph is loaded whole on every rank, to symmetrize it (CC)
    /// or for the in-arcs of its rows (PageRank).
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
    args.blocks_only("a run across MPI ranks")?;
    let rank = rank();
    let parts = ranks
        .checked_mul(run.devices)
        .ok_or("--devices times the ranks overflows")?;
    let cache = cache_path(args)?;
    if rank > 0
        && let Some(path) = &cache
    {
        let start = Instant::now();
        let cache = GraphCache::open(path)?;
        if needs == Needs::OwnRows || cache.is_symmetric() {
            let partition = block_partition_of_offsets(cache.offsets(), parts)?;
            let held = rows_of(&partition, rank, run.devices);
            let mut graph = cache.load_rows(held.clone())?;
            if let Some(w) = weights {
                graph = w.parse::<WeightSpec>()?.apply(graph)?;
            }
            return Ok(RankGraph {
                graph,
                partition,
                held,
                whole: false,
                by_rows: true,
                load_ms: start.elapsed().as_secs_f64() * 1e3,
            });
        }
    }
    let (graph, load_ms) = super::graph_args::load(args, weights, run.quiet())?;
    let partition = block_partition(&graph.csr, parts)?;
    let held = rows_of(&partition, rank, run.devices);
    // The other ranks' choice, made from the same cache flag (a loaded cache carries it).
    let by_rows = cache.is_some() && (needs == Needs::OwnRows || graph.symmetric);
    Ok(RankGraph {
        graph,
        partition,
        held,
        whole: true,
        by_rows,
        load_ms,
    })
}

/// This process's rank in the MPI job (0 outside one).
fn rank() -> usize {
    groute::dist::launched_rank().map_or(0, |(rank, _)| rank)
}

/// The rows of rank `rank`'s parts (`devices` a rank) of `partition`.
fn rows_of(partition: &Partition, rank: usize, devices: usize) -> Range<u32> {
    partition.range_of_parts(rank * devices..(rank + 1) * devices)
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
