//! One measurement of the scaling bench, as a line of JSON: written by `benches/scaling`
//! (`GROUTE_BENCH_JSON=PATH` appends one line per measurement) and read by
//! `examples/report`, which includes this file so that writer and reader share one schema.
//!
//! **Formats.** [`FORMAT`] 2 (this one): `median_ms` is the algorithm alone, timed by the
//! solver with device events (CUDA) or its own clock (host backend); the full run's median
//! is `full_run_median_ms`. Format 1 lines (no `format` field, written before algorithm-only
//! device timing) timed the full run as `median_ms`; the report (`examples/report/input.rs`)
//! reads them as format 2: their full-run time moves to `full_run_median_ms`, the algorithm time becomes
//! their solver clock (timer `solver clock`; min and max, not recorded for it, are set to
//! it), and the rate is recomputed from it.

use serde::{Deserialize, Serialize};

/// The record layout written now (see the module docs).
pub const FORMAT: u32 = 2;

fn format_1() -> u32 {
    1
}

/// One algorithm on one graph and device count: the median of its timed runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Layout of this record ([`FORMAT`]; lines without the field are format 1).
    #[serde(default = "format_1")]
    pub format: u32,
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
    /// How `median_ms` was taken: `device events` (CUDA: the solver's timing events, after
    /// its per-run reset and before the result's download, max over devices) or `solver
    /// clock` (host backend: the solver's own host clock; also format 1 records upgraded).
    pub timer: String,
    /// Median time of the algorithm alone (per-run reset, result download and, for CC,
    /// router setup excluded), ms: the headline.
    pub median_ms: f64,
    /// Fastest run of the algorithm, ms.
    pub min_ms: f64,
    /// Slowest run of the algorithm, ms.
    pub max_ms: f64,
    /// Median time of a full run (state reset, algorithm, result back in host memory), ms:
    /// device events on every device's stream before and after `solver.run()` on CUDA (max
    /// over devices), the wall clock on the host backend.
    #[serde(default)]
    pub full_run_median_ms: f64,
    /// Timed runs (warm-up runs excluded).
    pub samples: usize,
    /// Median of the solver's own host clock (the algorithm only: reset and download
    /// excluded, as the original Groute times), ms.
    pub solver_median_ms: f64,
    /// Edges per run (see `edges_kind`), the numerator of `edges_per_s`.
    pub edges: u64,
    /// What `edges` counts: `traversed` (out-arcs of every reached vertex, Graph500's
    /// convention), `hooked` (CC: edges streamed and hooked) or `input arcs` (PageRank).
    pub edges_kind: String,
    /// `edges / median_ms` (the algorithm), per second (GTEPS = this / 1e9).
    pub edges_per_s: f64,
    /// Work items processed (worklist pops; CC: edges hooked), median run.
    pub work_items: u64,
    /// Bytes that crossed between devices, median run (`None` where the run does not count
    /// them, and in records written before they were counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_sent: Option<u64>,
    /// BFS: the levels of the median run (its largest level, plus one), what a deep graph's
    /// time is paid per; `None` for the other algorithms and in records written before it
    /// was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// UTC date of the measurement, `YYYY-MM-DD`.
    pub date: String,
    /// The commit measured (`GROUTE_COMMIT` at run time, else at build time, else
    /// `git rev-parse --short HEAD`, else `unknown`).
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
