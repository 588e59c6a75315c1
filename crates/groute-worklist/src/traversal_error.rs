//! The error of a worklist algorithm's run ([`TraversalError`]): one enum for the traversals
//! from one source (BFS, SSSP) and for PageRank, each instance a type of its own through the
//! marker that names it.

use std::convert::Infallible;
use std::marker::PhantomData;

use groute_core::Context;
use groute_graph::{GraphError, PartitionedGraph};

use crate::WorklistError;

/// The algorithm a [`TraversalError`] is of, as its messages name it.
pub trait TraversalName {
    /// The algorithm's name in messages (`"BFS"`).
    const NAME: &'static str;
}

/// What can go wrong in a run of algorithm `A`: a traversal from one source
/// (`groute_bfs::BfsError` is `TraversalError<Bfs>`, `groute_sssp::SsspError` is
/// `TraversalError<Sssp>`) or PageRank (`groute_pagerank::PageRankError`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraversalError<A: TraversalName> {
    /// The graph has no vertices.
    #[error("the graph is empty: {} needs at least one vertex", A::NAME)]
    EmptyGraph,
    /// The source is not a vertex of the graph.
    #[error(
        "source vertex {vertex} is out of range: the graph has {vertices} vertices (0..{vertices}); pass --source below {vertices}"
    )]
    SourceOutOfRange {
        /// The source asked for (input order).
        vertex: u32,
        /// Vertices in the graph.
        vertices: usize,
    },
    /// A parameter is out of range.
    #[error("{name} = {value} is out of range: {expected}")]
    InvalidParameter {
        /// The setting (with its flag).
        name: &'static str,
        /// The value given.
        value: f32,
        /// What it must be.
        expected: &'static str,
    },
    /// The graph's partition does not match the context.
    #[error(
        "the graph is partitioned into {parts} parts but the context has {devices} devices; partition it into {devices}"
    )]
    PartitionMismatch {
        /// Parts of the partition.
        parts: usize,
        /// Devices of the context.
        devices: usize,
    },
    /// The worklist run failed (capacity, backend, time limit).
    #[error(transparent)]
    Worklist(#[from] WorklistError),
    /// A graph error.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// Never built (it cannot be: it holds an [`Infallible`]); it only carries the algorithm.
    #[doc(hidden)]
    #[error("{1}")]
    Unreachable(PhantomData<fn() -> A>, Infallible),
}

impl<A: TraversalName> From<groute_core::Error> for TraversalError<A> {
    fn from(e: groute_core::Error) -> Self {
        TraversalError::Worklist(WorklistError::Runtime(e))
    }
}

impl<A: TraversalName> TraversalError<A> {
    /// Checks what a solver of `A` needs of its input: a graph with vertices
    /// ([`EmptyGraph`](Self::EmptyGraph)), partitioned into as many parts as `context` has
    /// devices ([`PartitionMismatch`](Self::PartitionMismatch)).
    pub fn check_graph(context: &Context, graph: &PartitionedGraph) -> Result<(), Self> {
        if graph.graph.num_vertices() == 0 {
            return Err(TraversalError::EmptyGraph);
        }
        if graph.partition.num_parts() != context.num_devices() {
            return Err(TraversalError::PartitionMismatch {
                parts: graph.partition.num_parts(),
                devices: context.num_devices(),
            });
        }
        Ok(())
    }

    /// Checks that `source` is a vertex of a graph of `vertices` vertices
    /// ([`SourceOutOfRange`](Self::SourceOutOfRange)).
    pub fn check_source(source: u32, vertices: usize) -> Result<(), Self> {
        if source as usize >= vertices {
            return Err(TraversalError::SourceOutOfRange {
                vertex: source,
                vertices,
            });
        }
        Ok(())
    }
}
