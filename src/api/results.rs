//! Typed results of the runs: per-vertex values in input order, with [`RunStats`]; each one
//! serializes with serde and writes the text files the examples' `--output` writes.

use std::fmt::Display;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::{Error, Result};
use super::graph::FileIds;
use super::options::{Backend, Execution, Partition};
use groute_worklist::traversal::{count_reached, max_reached};

/// The value of a vertex that a traversal did not reach ([`BfsRun::levels`],
/// [`SsspRun::distances`]).
pub const UNREACHED: u32 = u32::MAX;

/// What ran and how long it took.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunStats {
    /// The algorithm (`bfs`, `sssp`, `pagerank`, `cc`).
    pub algorithm: String,
    /// The graph's name (file name or generator spec).
    pub graph: String,
    /// The backend that ran ([`Backend::Host`] or [`Backend::Cuda`]; `Auto` only for a
    /// backend this version does not name).
    pub backend: Backend,
    /// Why [`Backend::Auto`] chose the host, if it did.
    pub backend_note: Option<String>,
    /// Devices the run used.
    pub devices: usize,
    /// Who drove the rounds (never [`Execution::Auto`]).
    pub execution: Execution,
    /// The engine in words (`asynchronous worklist`, `direction-optimizing`, `fused
    /// persistent kernel`, ...).
    pub engine: String,
    /// How the vertices were split (never [`Partition::Auto`]; `None` for CC's hook and
    /// compress, which streams the edges to whichever device is free instead).
    pub partition: Option<Partition>,
    /// Why METIS was not used, where it was asked for (or chosen by `Auto`) and not run.
    pub partition_note: Option<String>,
    /// The algorithm's time in milliseconds, host clock (upload and download excluded).
    pub time_ms: f64,
    /// The algorithm's time on the devices in milliseconds (CUDA events; `None` on the host
    /// backend): the figure benchmarks report.
    pub device_ms: Option<f64>,
    /// Milliseconds spent before the algorithm: context, partition, upload or staging.
    pub setup_ms: f64,
    /// Rounds of the busiest device, where the engine counts them (levels of a
    /// level-synchronous run; `None` for CC's hook and compress).
    pub rounds: Option<u64>,
    /// Work items processed on all devices, where the engine counts them.
    pub work_items: Option<u64>,
    /// Each device's memory over the run (set-up included).
    pub memory: Vec<DeviceMemory>,
}

/// What one device held over a run, as its memory pool counted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceMemory {
    /// The (virtual) device.
    pub device: usize,
    /// The most bytes it held at once (live buffers and blocks cached for reuse).
    pub peak_bytes: u64,
    /// The most bytes of graph structure (offsets, arcs, weights, and maps such as PageRank's
    /// cut lists) it held at once: its part of the graph.
    pub graph_bytes: u64,
}

/// Writes `<file id> <value>` per vertex.
fn write_lines<T>(
    path: &Path,
    ids: &FileIds,
    values: &[T],
    value: impl Fn(&T) -> String,
) -> Result<()> {
    let wrap = |source| Error::Write {
        path: path.to_owned(),
        source,
    };
    let file = File::create(path).map_err(wrap)?;
    let mut out = BufWriter::new(file);
    for (v, x) in values.iter().enumerate() {
        writeln!(out, "{} {}", ids.file_id(v as u32), value(x)).map_err(wrap)?;
    }
    out.flush().map_err(wrap)
}

fn or_inf(x: u32) -> String {
    if x == UNREACHED {
        "inf".to_owned()
    } else {
        x.to_string()
    }
}

fn reachable(x: u32) -> Option<u32> {
    (x != UNREACHED).then_some(x)
}

/// The result of a BFS: levels by vertex.
///
/// ```
/// let graph = groute::Graph::from_edges(4, [(0, 1), (1, 2)])?;
/// let run = groute::bfs(&graph, 0)?;
/// assert_eq!(run.levels, [0, 1, 2, groute::UNREACHED]);
/// assert_eq!((run.reached(), run.depth(), run.level(3)), (3, 2, None));
/// let json = serde_json::to_string(&run).unwrap();
/// let back: groute::BfsRun = serde_json::from_str(&json).unwrap();
/// assert_eq!(back.levels, run.levels);
/// # Ok::<(), groute::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BfsRun {
    /// The source (input order).
    pub source: u32,
    /// Level of each vertex in input order: hops from the source, [`UNREACHED`] where
    /// unreachable.
    pub levels: Vec<u32>,
    /// What ran.
    pub stats: RunStats,
    /// The input file's numbering, for [`write_text`](Self::write_text).
    pub file_ids: FileIds,
}

impl BfsRun {
    /// The level of `vertex`, `None` where unreachable (or not a vertex).
    pub fn level(&self, vertex: u32) -> Option<u32> {
        self.levels
            .get(vertex as usize)
            .copied()
            .and_then(reachable)
    }

    /// Vertices reached from the source (the source included).
    pub fn reached(&self) -> usize {
        count_reached(&self.levels)
    }

    /// The largest level reached (the source's eccentricity).
    pub fn depth(&self) -> u32 {
        max_reached(&self.levels)
    }

    /// Writes `<id> <level>` per vertex, ids of the input file, `inf` where unreachable (the
    /// bfs example's `--output`).
    pub fn write_text(&self, path: impl AsRef<Path>) -> Result<()> {
        write_lines(path.as_ref(), &self.file_ids, &self.levels, |&l| or_inf(l))
    }
}

/// The result of SSSP: distances by vertex.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SsspRun {
    /// The source (input order).
    pub source: u32,
    /// Distance of each vertex in input order (sum of `u32` arc weights; unweighted arcs weigh
    /// 1), [`UNREACHED`] where unreachable; a path longer than
    /// [`MAX_DISTANCE`](crate::sssp::MAX_DISTANCE) saturates there.
    pub distances: Vec<u32>,
    /// What ran.
    pub stats: RunStats,
    /// The input file's numbering, for [`write_text`](Self::write_text).
    pub file_ids: FileIds,
}

impl SsspRun {
    /// The distance of `vertex`, `None` where unreachable (or not a vertex).
    pub fn distance(&self, vertex: u32) -> Option<u32> {
        self.distances
            .get(vertex as usize)
            .copied()
            .and_then(reachable)
    }

    /// Vertices reached from the source (the source included).
    pub fn reached(&self) -> usize {
        count_reached(&self.distances)
    }

    /// The largest distance reached.
    pub fn max_distance(&self) -> u32 {
        max_reached(&self.distances)
    }

    /// Writes `<id> <distance>` per vertex, ids of the input file, `inf` where unreachable (the
    /// sssp example's `--output`).
    pub fn write_text(&self, path: impl AsRef<Path>) -> Result<()> {
        write_lines(path.as_ref(), &self.file_ids, &self.distances, |&d| {
            or_inf(d)
        })
    }
}

/// The result of PageRank: ranks by vertex.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageRankRun {
    /// Rank of each vertex in input order (unnormalised: `(1 - alpha) + alpha * sum of
    /// in-neighbours' rank / out-degree`; see [`groute::pagerank`](mod@crate::pagerank)).
    pub ranks: Vec<f32>,
    /// The damping factor.
    pub alpha: f32,
    /// The residual threshold.
    pub epsilon: f32,
    /// Residual left unpushed (`|res|_1`): the L1 error of `ranks` is at most this over
    /// `1 - alpha`.
    pub residual_left: f64,
    /// What ran.
    pub stats: RunStats,
    /// The input file's numbering, for [`write_text`](Self::write_text).
    pub file_ids: FileIds,
}

impl PageRankRun {
    /// The rank of `vertex`, if it is a vertex.
    pub fn rank(&self, vertex: u32) -> Option<f32> {
        self.ranks.get(vertex as usize).copied()
    }

    /// The `k` highest-ranked vertices, highest first, ties by vertex.
    pub fn top(&self, k: usize) -> Vec<(u32, f32)> {
        groute_pagerank::top_ranks(&self.ranks, k)
    }

    /// The bound on the L1 error of `ranks` against the exact ranks: `residual_left / (1 -
    /// alpha)`.
    pub fn error_bound(&self) -> f64 {
        self.residual_left / (1.0 - f64::from(self.alpha))
    }

    /// Writes `<id> <rank>` per vertex, ids of the input file (the pagerank example's
    /// `--output`).
    pub fn write_text(&self, path: impl AsRef<Path>) -> Result<()> {
        write_lines(path.as_ref(), &self.file_ids, &self.ranks, |r| {
            r.to_string()
        })
    }
}

/// The result of connected components (weakly connected on directed graphs): a label by
/// vertex.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CcRun {
    /// The component of each vertex in input order, named by its smallest vertex (input order).
    pub labels: Vec<u32>,
    /// Number of components.
    pub components: usize,
    /// Vertices in the largest component.
    pub largest_component: usize,
    /// What ran.
    pub stats: RunStats,
    /// The input file's numbering, for [`write_text`](Self::write_text).
    pub file_ids: FileIds,
}

impl CcRun {
    /// Whether `a` and `b` are in one component (false if either is not a vertex).
    pub fn connected(&self, a: u32, b: u32) -> bool {
        match (self.labels.get(a as usize), self.labels.get(b as usize)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        }
    }

    /// Writes `<id> <label id>` per vertex, both ids of the input file (the cc example's
    /// `--output`).
    pub fn write_text(&self, path: impl AsRef<Path>) -> Result<()> {
        let ids = &self.file_ids;
        write_lines(path.as_ref(), ids, &self.labels, |&l| {
            ids.file_id(l).to_string()
        })
    }
}

/// Milliseconds of a duration.
pub(crate) fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A note's text.
pub(crate) fn note(n: Option<impl Display>) -> Option<String> {
    n.map(|n| n.to_string())
}
