//! The edge list, staged once in pinned host memory.

use std::sync::Arc;
use std::time::{Duration, Instant};

use groute_core::backend::Backend;
use groute_core::{Buffer, Context};
use groute_graph::Graph;
use rayon::prelude::*;

use crate::{CcError, Edge};

/// The edges of a graph in pinned host memory, ready to be streamed to the devices.
///
/// Built once per graph and context, and reused by every run of
/// [`crate::connected_components`], so that timing measures the algorithm, not the staging.
///
/// The edges are the CSR's arcs `(u, v)` in CSR order, self-loops left out (they never join
/// anything). For a symmetric graph only `u < v` is kept (each undirected edge once); for a
/// directed graph every arc is kept once (weak connectivity ignores direction).
pub struct StagedEdges {
    edges: Buffer<Edge>,
    num_vertices: usize,
    backend: Arc<dyn Backend>,
    staging_time: Duration,
}

impl std::fmt::Debug for StagedEdges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagedEdges")
            .field("num_vertices", &self.num_vertices)
            .field("num_edges", &self.edges.len())
            .finish()
    }
}

impl StagedEdges {
    /// Extracts the edge list of `graph` into pinned host memory of `ctx`.
    pub fn new(ctx: &Context, graph: &Graph) -> Result<Self, CcError> {
        let start = Instant::now();
        let csr = &graph.csr;
        let n = csr.num_vertices();
        check_vertex_count(n)?;
        let offsets = csr.offsets();
        let targets = csr.targets();
        let symmetric = graph.symmetric;
        let keep = move |u: u32, v: u32| if symmetric { u < v } else { u != v };
        // Vertices per parallel block: each block counts, then fills its own contiguous range.
        const BLOCK: usize = 1 << 14;
        let blocks = n.div_ceil(BLOCK);
        let counts: Vec<usize> = (0..blocks)
            .into_par_iter()
            .map(|b| {
                let (lo, hi) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
                (lo..hi)
                    .map(|u| {
                        let row = &targets[offsets[u] as usize..offsets[u + 1] as usize];
                        row.iter().filter(|&&v| keep(u as u32, v)).count()
                    })
                    .sum()
            })
            .collect();
        let mut starts = Vec::with_capacity(blocks + 1);
        let mut total = 0usize;
        for c in &counts {
            starts.push(total);
            total += c;
        }
        starts.push(total);
        // One element at least: zero-byte allocations are refused by some backends.
        let edges = ctx.alloc_host::<Edge>(total.max(1))?.slice(0..total)?;
        if total > 0 {
            // SAFETY: the buffer was just allocated; no device work or other view touches it
            // until this function returns it.
            let out =
                unsafe { edges.as_host_slice_mut() }.ok_or(groute_core::Error::Unsupported {
                    operation: "writing pinned host memory",
                    backend: "this",
                })?;
            let mut parts: Vec<&mut [Edge]> = Vec::with_capacity(blocks);
            let mut rest = out;
            for b in 0..blocks {
                let (head, tail) = rest.split_at_mut(starts[b + 1] - starts[b]);
                parts.push(head);
                rest = tail;
            }
            parts.into_par_iter().enumerate().for_each(|(b, part)| {
                let (lo, hi) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
                let mut k = 0;
                for u in lo..hi {
                    for &v in &targets[offsets[u] as usize..offsets[u + 1] as usize] {
                        if keep(u as u32, v) {
                            part[k] = Edge::new(u as u32, v);
                            k += 1;
                        }
                    }
                }
            });
        }
        Ok(StagedEdges {
            edges,
            num_vertices: n,
            backend: Arc::clone(ctx.backend()),
            staging_time: start.elapsed(),
        })
    }

    /// Stages `edges` as given (any order, duplicates and self-loops allowed) for a graph of
    /// `num_vertices` vertices: for edge lists that do not come from a CSR (and to exercise
    /// the hook kernels on unsorted input). Fails when an endpoint is not below
    /// `num_vertices` or `num_vertices` exceeds `u32::MAX`.
    pub fn from_edges(ctx: &Context, num_vertices: usize, edges: &[Edge]) -> Result<Self, CcError> {
        let start = Instant::now();
        check_vertex_count(num_vertices)?;
        if let Some(e) = edges
            .iter()
            .find(|e| e.u as usize >= num_vertices || e.v as usize >= num_vertices)
        {
            return Err(CcError::invalid(
                "edge",
                format!("({}, {})", e.u, e.v),
                format!("both endpoints below num_vertices = {num_vertices}"),
            ));
        }
        let total = edges.len();
        // One element at least: zero-byte allocations are refused by some backends.
        let staged = ctx.alloc_host::<Edge>(total.max(1))?.slice(0..total)?;
        if total > 0 {
            // SAFETY: the buffer was just allocated; nothing else touches it yet.
            unsafe { staged.as_host_slice_mut() }
                .ok_or(groute_core::Error::Unsupported {
                    operation: "writing pinned host memory",
                    backend: "this",
                })?
                .copy_from_slice(edges);
        }
        Ok(StagedEdges {
            edges: staged,
            num_vertices,
            backend: Arc::clone(ctx.backend()),
            staging_time: start.elapsed(),
        })
    }

    /// Number of vertices of the graph.
    pub fn num_vertices(&self) -> usize {
        self.num_vertices
    }

    /// Number of staged edges.
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// The edges (pinned host memory).
    pub fn edges(&self) -> &Buffer<Edge> {
        &self.edges
    }

    /// How long staging took (edge extraction and the pinned copy).
    pub fn staging_time(&self) -> Duration {
        self.staging_time
    }

    /// Whether these edges live in `ctx`'s host memory.
    pub fn belongs_to(&self, ctx: &Context) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self.backend), Arc::as_ptr(ctx.backend()))
    }
}

/// Refuses a graph of more vertices than `u32` ids can name (every vertex is below `n`, and
/// `u32::MAX` is the kernels' "no vertex").
pub(crate) fn check_vertex_count(n: usize) -> Result<(), CcError> {
    if n > u32::MAX as usize {
        return Err(CcError::invalid(
            "graph",
            n,
            "at most u32::MAX vertices (vertex ids are u32)",
        ));
    }
    Ok(())
}
