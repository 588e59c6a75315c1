//! One measurement of the scaling bench, as a line of JSON: written by `benches/scaling`
//! (`GROUTE_BENCH_JSON=PATH` appends one line per measurement) and read by
//! `examples/report`, which includes this file so that writer and reader share one schema.

use serde::{Deserialize, Serialize};

/// A full run of one algorithm on one graph and device count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// `bfs`, `sssp`, `pagerank` or `cc`.
    pub algorithm: String,
    /// The generator spec (or file) of the graph, e.g. `kron21.sym`.
    pub graph: String,
    /// Vertices of the graph.
    pub vertices: u64,
    /// Arcs of the graph (a symmetric graph counts each edge twice).
    pub arcs: u64,
    /// Devices the run used.
    pub devices: usize,
    /// `cuda` or `host`.
    pub backend: String,
    /// The model of device 0 (`NVIDIA H200`, or the host backend's name).
    pub gpu: String,
    /// How `median_ms` was taken: `device events` (CUDA: max over devices of the time
    /// between events recorded before and after the run) or `wall` (host backend).
    pub timer: String,
    /// Median time of a full run (state reset, algorithm, result back in host memory), ms.
    pub median_ms: f64,
    /// Fastest run, ms.
    pub min_ms: f64,
    /// Slowest run, ms.
    pub max_ms: f64,
    /// Timed runs (warm-up runs excluded).
    pub samples: usize,
    /// Median of the solver's own clock (the algorithm only: reset and download excluded,
    /// as the original Groute times), ms.
    pub solver_median_ms: f64,
    /// Edges per run (see `edges_kind`), the numerator of `edges_per_s`.
    pub edges: u64,
    /// What `edges` counts: `traversed` (out-arcs of every reached vertex, Graph500's
    /// convention), `hooked` (CC: edges streamed and hooked) or `input arcs` (PageRank).
    pub edges_kind: String,
    /// `edges / median_ms`, per second (GTEPS = this / 1e9).
    pub edges_per_s: f64,
    /// Work items processed (worklist pops; CC: edges hooked), median run.
    pub work_items: u64,
    /// UTC date of the measurement, `YYYY-MM-DD`.
    pub date: String,
    /// The commit measured (`GROUTE_COMMIT`, else `git rev-parse --short HEAD`, else
    /// `unknown`).
    pub commit: String,
}

impl Measurement {
    /// Billions of edges per second.
    pub fn gteps(&self) -> f64 {
        self.edges_per_s / 1e9
    }
}

/// The UTC calendar date of `secs` seconds after the Unix epoch, `YYYY-MM-DD` (the civil
/// calendar algorithm of H. Hinnant's `days_from_civil`, inverted).
pub fn utc_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
