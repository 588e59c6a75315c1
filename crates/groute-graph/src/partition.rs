//! Partitioning a graph into contiguous per-device vertex ranges.
//!
//! [`partition_graph`] assigns vertices to `k` parts (METIS k-way, or edge-balanced blocks),
//! renumbers them so part `p` owns the contiguous range [`Partition::range`]`(p)`, and returns
//! the renumbered graph, whose [`VertexIds`](crate::VertexIds) still give each vertex its id in
//! the input file. METIS needs a symmetric graph whose index arrays fit 32-bit signed integers;
//! other graphs fall back to blocks, and the result says why.
//!
//! ```
//! use groute_graph::{generate, halo_info, partition_graph, GenSpec, NoProgress, PartitionMethod};
//! let g = generate(&"road:side=32,p=0.6".parse::<GenSpec>()?, &NoProgress)?;
//! let before = g.clone();
//! let parted = partition_graph(g, 4, PartitionMethod::Metis, &NoProgress)?;
//! assert!(parted.fallback.is_none());
//! let p = &parted.partition;
//! assert_eq!(p.range(0).start, 0);
//! assert_eq!(p.range(3).end as usize, parted.graph.num_vertices());
//! // External ids follow the vertices.
//! let v = parted.graph.internal_id(before.external_id(5)).unwrap();
//! assert_eq!(parted.graph.csr.out_degree(v), before.csr.out_degree(5));
//! let halos = halo_info(&parted.graph.csr, p);
//! assert_eq!(halos.len(), 4);
//! # Ok::<(), groute_graph::GraphError>(())
//! ```

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use rayon::prelude::*;

use crate::alloc::try_zeroed;
use crate::csr::{Csr, fill_sorted_rows};
use crate::error::{GraphError, PartitionProblem};
use crate::graph::Graph;
use crate::par::{SharedSlice, first_cost_reaching, prefix_sum, try_prefix_sum};
use crate::progress::Progress;

/// How to assign vertices to parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PartitionMethod {
    /// METIS k-way, minimising the edge cut with vertex weights `1 + out-degree`.
    Metis,
    /// Contiguous blocks of the current numbering balancing `vertices + arcs`.
    Block,
    /// [`Metis`](Self::Metis) for a graph of at most [`AUTO_METIS_MAX_ARCS`] arcs,
    /// [`Block`](Self::Block) above (the result's `fallback` then says so): METIS takes
    /// seconds below that size and about a minute on graphs ten times larger, which runs of
    /// milliseconds do not repay.
    Auto,
}

/// The most arcs for which [`PartitionMethod::Auto`] runs METIS: 2^24 (16,777,216).
///
/// METIS k-way time grows with the arcs: up to this size it partitions within seconds even on
/// a two-core machine, while a graph ten times larger takes about a minute.
pub const AUTO_METIS_MAX_ARCS: u64 = 1 << 24;

impl PartitionMethod {
    /// What [`partition_graph`] tries first for a graph of `arcs` arcs: `self`, except that
    /// [`Auto`](Self::Auto) resolves to METIS or, above [`AUTO_METIS_MAX_ARCS`], to blocks
    /// with the [`Fallback`] that says why.
    pub fn resolve(self, arcs: u64) -> (PartitionMethod, Option<Fallback>) {
        match self {
            PartitionMethod::Auto if arcs > AUTO_METIS_MAX_ARCS => (
                PartitionMethod::Block,
                Some(Fallback::AboveAutoLimit {
                    arcs,
                    limit: AUTO_METIS_MAX_ARCS,
                }),
            ),
            PartitionMethod::Auto => (PartitionMethod::Metis, None),
            method => (method, None),
        }
    }
}

impl FromStr for PartitionMethod {
    type Err = GraphError;
    fn from_str(s: &str) -> Result<Self, GraphError> {
        match s.to_ascii_lowercase().as_str() {
            "metis" => Ok(PartitionMethod::Metis),
            "block" | "blocks" | "contiguous" => Ok(PartitionMethod::Block),
            "auto" => Ok(PartitionMethod::Auto),
            _ => Err(GraphError::UnknownPartitionMethod { name: s.to_owned() }),
        }
    }
}

impl fmt::Display for PartitionMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PartitionMethod::Metis => "metis",
            PartitionMethod::Block => "block",
            PartitionMethod::Auto => "auto",
        })
    }
}

/// Why METIS was not used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fallback {
    /// The graph is directed (not symmetric); METIS partitions undirected graphs only.
    NotSymmetric,
    /// The graph does not fit METIS's 32-bit signed indices.
    TooLarge {
        /// `vertices + arcs` (the sum of METIS vertex weights).
        size: u64,
    },
    /// [`PartitionMethod::Auto`] chose blocks: the graph has more arcs than METIS is run on
    /// by default.
    AboveAutoLimit {
        /// Arcs in the graph.
        arcs: u64,
        /// [`AUTO_METIS_MAX_ARCS`].
        limit: u64,
    },
}

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fallback::NotSymmetric => f.write_str("graph is directed (not symmetric); METIS needs an undirected graph, using block partition"),
            Fallback::TooLarge { size } => write!(
                f,
                "graph too large for METIS's 32-bit indices (vertices + arcs = {size} > {}), using block partition",
                i32::MAX
            ),
            Fallback::AboveAutoLimit { arcs, limit } => write!(
                f,
                "graph has {arcs} arcs, more than the {limit} that the auto partition runs METIS on (METIS's time grows with the arcs: seconds for ten million, a minute for 181 million), using block partition; ask for metis (--partition metis) to run it anyway"
            ),
        }
    }
}

/// `k` contiguous vertex ranges: part `p` owns `bounds[p]..bounds[p + 1]`.
///
/// Invariant: `bounds` has `k + 1` entries, starts at 0, never decreases, and ends at the vertex
/// count; so every vertex is owned by exactly one part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    bounds: Vec<u32>,
}

impl Partition {
    /// A partition from its `k + 1` bounds; `None` unless they start at 0 and never decrease.
    pub fn from_bounds(bounds: Vec<u32>) -> Option<Partition> {
        (bounds.len() >= 2 && bounds[0] == 0 && bounds.windows(2).all(|w| w[0] <= w[1]))
            .then_some(Partition { bounds })
    }

    /// Number of parts.
    pub fn num_parts(&self) -> usize {
        self.bounds.len() - 1
    }

    /// Number of vertices covered.
    pub fn num_vertices(&self) -> usize {
        self.bounds[self.bounds.len() - 1] as usize
    }

    /// The vertices of part `p`.
    pub fn range(&self, p: usize) -> Range<u32> {
        self.bounds[p]..self.bounds[p + 1]
    }

    /// The vertices of parts `parts` (consecutive parts own consecutive ranges); empty for
    /// no part. Panics, as [`Partition::range`] does, past the last part.
    pub fn range_of_parts(&self, parts: Range<usize>) -> Range<u32> {
        if parts.is_empty() {
            return 0..0;
        }
        self.bounds[parts.start]..self.bounds[parts.end]
    }

    /// A 32-bit digest of the bounds (FNV-1a), for processes to check that they were given
    /// the same partition by summing digests (a `u64` sum of 32-bit words cannot overflow
    /// for any count of processes that exists).
    pub fn digest(&self) -> u32 {
        let mut hash: u32 = 0x811c_9dc5;
        for byte in self.bounds.iter().flat_map(|b| b.to_le_bytes()) {
            hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
        }
        hash
    }

    /// The `k + 1` bounds.
    pub fn bounds(&self) -> &[u32] {
        &self.bounds
    }

    /// The part owning `v` (binary search, O(log k)). `v` must be below the vertex count.
    #[inline]
    pub fn owner(&self, v: u32) -> usize {
        self.bounds
            .partition_point(|&b| b <= v)
            .saturating_sub(1)
            .min(self.num_parts() - 1)
    }

    /// Arcs whose endpoints lie in different parts (an undirected edge crossing counts twice in
    /// a symmetric graph).
    pub fn edge_cut(&self, csr: &Csr) -> u64 {
        (0..self.num_parts())
            .into_par_iter()
            .map(|p| {
                let r = self.range(p);
                targets_of_rows(csr, &r)
                    .par_iter()
                    .with_min_len(1 << 14)
                    .filter(|&&t| !r.contains(&t))
                    .count() as u64
            })
            .sum()
    }

    /// Largest part's arcs over the mean (1.0 is perfect).
    pub fn balance(&self, csr: &Csr) -> f64 {
        self.stats(csr).edge_balance
    }

    /// Cut and balance figures.
    pub fn stats(&self, csr: &Csr) -> PartitionStats {
        let k = self.num_parts() as f64;
        let o = csr.offsets();
        let max_v = (0..self.num_parts())
            .map(|p| self.range(p).len() as u64)
            .max()
            .unwrap_or(0);
        let max_e = (0..self.num_parts())
            .map(|p| {
                let r = self.range(p);
                o[r.end as usize] - o[r.start as usize]
            })
            .max()
            .unwrap_or(0);
        let ratio = |max: u64, total: u64| {
            if total == 0 {
                1.0
            } else {
                max as f64 * k / total as f64
            }
        };
        let cut = self.edge_cut(csr);
        PartitionStats {
            cut_arcs: cut,
            cut_fraction: if csr.num_edges() == 0 {
                0.0
            } else {
                cut as f64 / csr.num_edges() as f64
            },
            vertex_balance: ratio(max_v, csr.num_vertices() as u64),
            edge_balance: ratio(max_e, csr.num_edges()),
        }
    }
}

/// Quality of a partition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartitionStats {
    /// Arcs between parts.
    pub cut_arcs: u64,
    /// `cut_arcs / arcs`.
    pub cut_fraction: f64,
    /// Largest part's vertices over the mean.
    pub vertex_balance: f64,
    /// Largest part's arcs over the mean.
    pub edge_balance: f64,
}

/// A renumbered graph and its partition.
#[derive(Clone, Debug)]
pub struct PartitionedGraph {
    /// The graph, renumbered so each part is a contiguous range; external ids preserved.
    pub graph: Graph,
    /// The ranges.
    pub partition: Partition,
    /// The method actually used (METIS or blocks, never [`PartitionMethod::Auto`]).
    pub method: PartitionMethod,
    /// Why METIS was asked for (or `Auto`) but not used.
    pub fallback: Option<Fallback>,
    /// Cut and balance.
    pub stats: PartitionStats,
}

/// Contiguous blocks of `0..n` balancing `vertices + arcs` per part.
pub fn block_partition(csr: &Csr, parts: usize) -> Result<Partition, GraphError> {
    block_partition_of_offsets(csr.offsets(), parts)
}

/// [`block_partition`] from a graph's offsets alone (`n + 1` words, as
/// [`Csr::offsets`] or [`GraphCache::offsets`](crate::GraphCache::offsets) give them): how
/// a process that loads only its own rows partitions the whole graph.
pub fn block_partition_of_offsets(o: &[u64], parts: usize) -> Result<Partition, GraphError> {
    let n = o.len().saturating_sub(1);
    check_parts(n, parts)?;
    let total = u128::from(o.last().copied().unwrap_or(0)) + n as u128;
    let mut bounds = Vec::with_capacity(parts + 1);
    bounds.push(0u32);
    for p in 1..parts {
        let goal = (total * p as u128 / parts as u128) as u64;
        let prev = *bounds.last().unwrap_or(&0) as usize;
        // First vertex whose prefix cost reaches the goal, at least one past the previous bound.
        let lo = first_cost_reaching(o, prev, n, goal);
        // Leave at least one vertex for each remaining part.
        let b = lo.max(prev + 1).min(n - (parts - p));
        bounds.push(b as u32);
    }
    bounds.push(n as u32);
    Ok(Partition { bounds })
}

fn check_parts(n: usize, parts: usize) -> Result<(), GraphError> {
    if parts == 0 {
        return Err(GraphError::Partition {
            parts,
            problem: PartitionProblem::ZeroParts,
        });
    }
    if parts > n.max(1) {
        return Err(GraphError::Partition {
            parts,
            problem: PartitionProblem::MorePartsThanVertices(n),
        });
    }
    Ok(())
}

/// Partitions `graph` into `parts` parts and renumbers it so each part is a contiguous range.
///
/// With [`PartitionMethod::Metis`], a graph that is not symmetric, or too large for METIS's
/// 32-bit indices, falls back to [`PartitionMethod::Block`] and the result's `fallback` says why.
/// [`PartitionMethod::Auto`] is METIS up to [`AUTO_METIS_MAX_ARCS`] arcs and blocks above
/// ([`PartitionMethod::resolve`]). Block partitioning keeps the numbering (and the graph) as
/// it is; the result's `method` is the one used (never `Auto`).
pub fn partition_graph(
    graph: Graph,
    parts: usize,
    method: PartitionMethod,
    progress: &dyn Progress,
) -> Result<PartitionedGraph, GraphError> {
    check_parts(graph.num_vertices(), parts)?;
    // One part needs no partitioner (and no note on why one was not run).
    let (method, mut fallback) = if parts > 1 {
        method.resolve(graph.num_edges())
    } else {
        (PartitionMethod::Block, None)
    };
    if method == PartitionMethod::Metis && parts > 1 {
        let size = graph.num_vertices() as u64 + graph.num_edges();
        if size > i32::MAX as u64 {
            fallback = Some(Fallback::TooLarge { size });
        } else {
            progress.stage("checking symmetry", 0);
            let symmetric = graph.symmetric || graph.csr.clone().without_weights().is_symmetric();
            if !symmetric {
                fallback = Some(Fallback::NotSymmetric);
            }
        }
        if fallback.is_none() {
            progress.stage("METIS k-way", 0);
            let part = metis_parts(&graph.csr, parts)?;
            progress.stage("renumbering", 0);
            let (graph, partition) = renumber(graph, &part, parts)?;
            let stats = partition.stats(&graph.csr);
            return Ok(PartitionedGraph {
                graph,
                partition,
                method: PartitionMethod::Metis,
                fallback: None,
                stats,
            });
        }
    }
    let partition = block_partition(&graph.csr, parts)?;
    let stats = partition.stats(&graph.csr);
    Ok(PartitionedGraph {
        graph,
        partition,
        method: PartitionMethod::Block,
        fallback,
        stats,
    })
}

/// Runs METIS on the undirected simple graph underlying `csr` (self-loops and repeated arcs
/// dropped), with vertex weights `1 + out-degree`.
fn metis_parts(csr: &Csr, parts: usize) -> Result<Vec<i32>, GraphError> {
    let n = csr.num_vertices();
    let sorted;
    let csr = if csr.rows_sorted() {
        csr
    } else {
        sorted = csr.clone().sorted();
        &sorted
    };
    let keep = |v: usize, i: usize| {
        let t = csr.targets()[i];
        t as usize != v && (i == csr.offsets()[v] as usize || csr.targets()[i - 1] != t)
    };
    let degrees: Vec<u64> = (0..n)
        .into_par_iter()
        .map(|v| {
            (csr.offsets()[v] as usize..csr.offsets()[v + 1] as usize)
                .filter(|&i| keep(v, i))
                .count() as u64
        })
        .collect();
    let xadj64 = prefix_sum(degrees.iter().copied(), n);
    // Sizes were checked against i32::MAX by the caller.
    let xadj: Vec<i32> = xadj64.par_iter().map(|&x| x as i32).collect();
    let mut adjncy = try_zeroed::<i32>(xadj64[n] as usize, "METIS's adjacency array")?;
    {
        let out = SharedSlice::new(&mut adjncy);
        (0..n).into_par_iter().for_each(|v| {
            let mut pos = xadj64[v] as usize;
            for i in csr.offsets()[v] as usize..csr.offsets()[v + 1] as usize {
                if keep(v, i) {
                    // SAFETY: row v owns xadj[v]..xadj[v + 1], sized by the same `keep` filter.
                    unsafe { out.write(pos, csr.targets()[i] as i32) };
                    pos += 1;
                }
            }
        });
    }
    let vwgt: Vec<i32> = (0..n)
        .into_par_iter()
        .map(|v| 1 + csr.out_degree(v as u32) as i32)
        .collect();
    let mut part = vec![0i32; n];
    // METIS keeps its random state in C globals, so two partitions running at once race on
    // it (and neither is reproducible from its seed): one METIS call at a time per process.
    static METIS_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _serial = METIS_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    metis::Graph::new(1, parts as i32, &xadj, &adjncy)
        .map_err(|e| GraphError::Metis(e.into()))?
        .set_vwgt(&vwgt)
        .set_option(metis::option::Seed(1))
        .part_kway(&mut part)?;
    Ok(part)
}

/// Renumbers so that part 0's vertices come first (in their old order), then part 1's, ...
fn renumber(graph: Graph, part: &[i32], parts: usize) -> Result<(Graph, Partition), GraphError> {
    let n = graph.num_vertices();
    let mut counts = vec![0u64; parts];
    for &p in part {
        counts[p as usize] += 1;
    }
    let starts = prefix_sum(counts.iter().copied(), parts);
    let mut next = starts.clone();
    let mut new_of_old = try_zeroed::<u32>(n, "the partition's new vertex ids")?;
    let mut old_of_new = try_zeroed::<u32>(n, "the partition's old vertex ids")?;
    for (v, &p) in part.iter().enumerate() {
        let id = next[p as usize];
        next[p as usize] += 1;
        new_of_old[v] = id as u32;
        old_of_new[id as usize] = v as u32;
    }
    let csr = permute(&graph.csr, &old_of_new, &new_of_old)?;
    let ids = graph.ids.permuted(&old_of_new);
    let bounds = starts.iter().map(|&s| s as u32).collect();
    Ok((
        Graph {
            csr,
            ids,
            name: graph.name,
            symmetric: graph.symmetric,
        },
        Partition { bounds },
    ))
}

/// The graph with vertex `old_of_new[v]` renamed `v`.
fn permute(csr: &Csr, old_of_new: &[u32], new_of_old: &[u32]) -> Result<Csr, GraphError> {
    permute_rows(csr, 0..csr.num_vertices() as u32, old_of_new, new_of_old)
}

/// The CSR over `csr`'s vertices whose row `rows.start + i` is old row `old_of_new[i]` with
/// every head `t` renamed `new_of_old[t]`, rows outside `rows` empty: a renumbering that maps
/// the rows `rows` onto themselves (the caller checked it), applied to those rows only.
pub(crate) fn permute_rows(
    csr: &Csr,
    rows: Range<u32>,
    old_of_new: &[u32],
    new_of_old: &[u32],
) -> Result<Csr, GraphError> {
    let n = csr.num_vertices();
    let (first, last) = (rows.start as usize, rows.end as usize);
    let offsets = try_prefix_sum(
        (0..n).map(|v| {
            if (first..last).contains(&v) {
                csr.out_degree(old_of_new[v - first])
            } else {
                0
            }
        }),
        n,
        "the renumbered CSR offsets",
    )?;
    let m = offsets[n] as usize;
    let mut targets = try_zeroed::<u32>(m, "the renumbered CSR targets")?;
    let mut weights = match csr.weights() {
        Some(_) => Some(try_zeroed::<u32>(m, "the renumbered CSR weights")?),
        None => None,
    };
    // Each new row v of `rows` is old row old_of_new[v - first], renamed and sorted; the
    // other rows are empty.
    fill_sorted_rows(&offsets, &mut targets, weights.as_deref_mut(), |v, t, w| {
        if !(first..last).contains(&v) {
            return;
        }
        let old = old_of_new[v - first];
        for (new, &old_head) in t.iter_mut().zip(csr.neighbors(old)) {
            *new = new_of_old[old_head as usize];
        }
        if let (Some(w), Some(old_weights)) = (w, csr.edge_weights(old)) {
            w.copy_from_slice(old_weights);
        }
    });
    Ok(Csr::from_parts_trusted(
        offsets.into(),
        targets.into(),
        weights.map(Into::into),
    ))
}

/// What part `part` needs from the others: the remote vertices its arcs reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HaloInfo {
    /// The part.
    pub part: usize,
    /// Distinct vertices outside the part that its arcs point to, ascending.
    pub remote: Vec<u32>,
    /// `remote_by_owner[q]`: how many of `remote` part `q` owns (0 for `q == part`).
    pub remote_by_owner: Vec<u64>,
    /// Arcs leaving the part.
    pub cut_arcs: u64,
}

/// The targets of the arcs of the rows `rows` of `csr` (one part's arcs).
fn targets_of_rows<'a>(csr: &'a Csr, rows: &Range<u32>) -> &'a [u32] {
    let offsets = csr.offsets();
    &csr.targets()[offsets[rows.start as usize] as usize..offsets[rows.end as usize] as usize]
}

/// The halo of every part.
pub fn halo_info(csr: &Csr, partition: &Partition) -> Vec<HaloInfo> {
    (0..partition.num_parts())
        .into_par_iter()
        .map(|p| {
            let r = partition.range(p);
            let mut remote: Vec<u32> = targets_of_rows(csr, &r)
                .par_iter()
                .copied()
                .filter(|t| !r.contains(t))
                .collect();
            let cut_arcs = remote.len() as u64;
            remote.par_sort_unstable();
            remote.dedup();
            let mut remote_by_owner = vec![0u64; partition.num_parts()];
            for &t in &remote {
                remote_by_owner[partition.owner(t)] += 1;
            }
            HaloInfo {
                part: p,
                remote,
                remote_by_owner,
                cut_arcs,
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
