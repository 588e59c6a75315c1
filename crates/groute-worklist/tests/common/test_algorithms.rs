//! The `WorklistAlgorithm`s of the crate's tests, each one implementation of the trait: the
//! largest id reaching each vertex, weighted min algorithms from sources (widest paths,
//! shortest distances), path counts in a DAG, and one that panics on a given vertex.

// Each test binary uses a different subset of the algorithms.
#![allow(dead_code)]

use groute_worklist::traversal::UNREACHED;
use groute_worklist::{Combine, Start, WorklistAlgorithm};

/// The largest id of the vertices that reach each vertex (itself included), as
/// `u32::MAX - id`.
#[derive(Clone)]
pub struct LargestReachingId;

impl WorklistAlgorithm for LargestReachingId {
    type Value = u32;
    const COMBINE: Combine = Combine::Min;
    const START: Start = Start::EveryVertex;
    const WEIGHTED: bool = false;
    fn init(&self, vertex: u32, _source: bool) -> u32 {
        u32::MAX - vertex
    }
    fn relax(&self, complement: u32, _weight: u32, _out_degree: u32) -> Option<u32> {
        Some(complement)
    }
}

/// A weighted min algorithm from the sources: a source's value is 0, every other vertex
/// starts [`UNREACHED`], and an arc of weight `w` from a reached vertex of value `x` offers
/// `extend(x, w)` to its head.
#[derive(Clone, Copy)]
pub struct FromSources {
    /// The value an arc offers its head, from its tail's value and its weight.
    pub extend: fn(u32, u32) -> u32,
}

impl WorklistAlgorithm for FromSources {
    type Value = u32;
    const COMBINE: Combine = Combine::Min;
    const START: Start = Start::Sources;
    const WEIGHTED: bool = true;
    fn init(&self, _vertex: u32, source: bool) -> u32 {
        if source { 0 } else { UNREACHED }
    }
    fn relax(&self, value: u32, weight: u32, _out_degree: u32) -> Option<u32> {
        (value != UNREACHED).then(|| (self.extend)(value, weight))
    }
}

/// Widest (maximum-bottleneck) paths from the sources: a vertex's value is `u32::MAX` minus
/// the width of its widest path (the sources' width is unbounded, value 0; unreached vertices
/// keep `u32::MAX`, width 0).
pub const WIDEST_PATH: FromSources = FromSources {
    extend: |narrowing, weight| narrowing.max(u32::MAX - weight),
};

/// Shortest distances from the sources over the arcs' weights.
pub const DISTANCES: FromSources = FromSources {
    extend: |distance, weight| distance.saturating_add(weight),
};

/// The number of paths from the sources to each vertex of a DAG: each unit of mass that
/// reaches a vertex moves on along every arc.
pub struct PathCount;

impl WorklistAlgorithm for PathCount {
    type Value = u32;
    const COMBINE: Combine = Combine::Sum;
    const START: Start = Start::Sources;
    const WEIGHTED: bool = false;
    fn init(&self, _vertex: u32, source: bool) -> u32 {
        u32::from(source)
    }
    fn relax(&self, paths: u32, _weight: u32, _out_degree: u32) -> Option<u32> {
        Some(paths)
    }
}

/// Relaxing any arc of the vertex [`POISONED`] panics.
pub struct Panicking;

/// The vertex whose arcs [`Panicking`] cannot relax.
pub const POISONED: u32 = 5;

impl WorklistAlgorithm for Panicking {
    type Value = u32;
    const COMBINE: Combine = Combine::Min;
    const START: Start = Start::EveryVertex;
    const WEIGHTED: bool = false;
    fn init(&self, vertex: u32, _source: bool) -> u32 {
        vertex
    }
    fn relax(&self, label: u32, _weight: u32, _out_degree: u32) -> Option<u32> {
        assert_ne!(label, POISONED, "the algorithm's own bug");
        Some(label)
    }
}
