//! The section of `performance.md` on one process against several ranks: the JSON lines of
//! `tools/ranks-record.py` (one per example run of `tools/ranks-gpu.sh`), read and tabulated.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::Path;

use serde::Deserialize;

use crate::input::{ALGORITHMS, InputError, json_lines};
use crate::markdown::{ms, per_arc, title};

/// The record format this reader knows.
const FORMAT: u32 = 1;

/// One example run of `tools/ranks-gpu.sh`.
#[derive(Clone, Debug, Deserialize)]
pub struct RankRun {
    /// Record format (1).
    pub format: u32,
    /// `bfs`, `sssp`, `cc` or `pagerank`.
    pub algorithm: String,
    /// The graph's short name (`--graphs NAME=SPEC`).
    pub graph: String,
    /// The graph as the example reports it (its generator spec).
    pub spec: Option<String>,
    /// Arcs of the graph (absent for a refused run).
    pub arcs: Option<u64>,
    /// `1process`, `<N>devices`, `<N>ranks`, `memlimit-1device` or `memlimit-<N>devices`.
    pub run: String,
    /// Processes (MPI ranks) of the run.
    pub processes: usize,
    /// Devices of each process.
    pub devices_per_process: usize,
    /// The GPU (absent for a refused run).
    pub gpu: Option<String>,
    /// The execution the example ran (`host-driven`, `device-driven`).
    pub mode: Option<String>,
    /// Median of the timed runs, ms (absent for a refused run).
    pub median_ms: Option<f64>,
    /// Timed runs.
    pub repeats: Option<usize>,
    /// Bytes between devices (between ranks, for a run over ranks), where counted.
    pub comm_bytes: Option<u64>,
    /// The largest device peak, bytes (for a refused run: the 1-device run's peak).
    pub device_peak_bytes: Option<u64>,
    /// `--device-memory-limit`, bytes, where set.
    pub limit_bytes: Option<u64>,
    /// `equal` (to the 1-device output), `validated`, `refused`, or a failure; none for the
    /// 1-device run the others are compared with.
    pub check: Option<String>,
}

impl RankRun {
    fn devices(&self) -> usize {
        self.processes * self.devices_per_process
    }
}

/// Reads the JSON lines of `path`; an unreadable line is an error naming the file and line.
pub fn read_ranks(path: &Path) -> Result<Vec<RankRun>, InputError> {
    let text = std::fs::read_to_string(path).map_err(|e| InputError {
        place: path.display().to_string(),
        reason: format!("cannot read it ({e}); check --ranks"),
    })?;
    let lines: Vec<(String, RankRun)> = json_lines(
        path,
        &text,
        "ranks record",
        "write the file with tools/ranks-record.py from a ranks-gpu.sh output folder",
    )?;
    lines
        .into_iter()
        .map(|(place, run)| {
            if run.format == FORMAT {
                Ok(run)
            } else {
                Err(InputError {
                    place,
                    reason: format!(
                        "ranks record format {} (this report reads {FORMAT})",
                        run.format
                    ),
                })
            }
        })
        .collect()
}

fn gib(bytes: Option<u64>) -> String {
    bytes.map_or("-".into(), |b| {
        format!("{:.2}", b as f64 / f64::from(1u32 << 30))
    })
}

fn time(run: Option<&RankRun>) -> String {
    run.and_then(|r| r.median_ms).map_or("-".into(), ms)
}

fn ratio(a: Option<&RankRun>, b: Option<&RankRun>) -> String {
    match (a.and_then(|r| r.median_ms), b.and_then(|r| r.median_ms)) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "-".into(),
    }
}

/// How the tables name a graph: its spec as the examples report it (a preset's name alone),
/// else the short name `tools/ranks-gpu.sh --graphs` gave it.
fn graph_label(runs: &[RankRun], graph: &str) -> String {
    let spec = runs
        .iter()
        .filter(|r| r.graph == graph)
        .find_map(|r| r.spec.as_deref());
    let name = spec.map_or(graph, |s| s.split(" (").next().unwrap_or(s));
    format!("`{name}`")
}

/// How many timed runs the medians of the main table take: the fewest of any of its runs.
fn timed_runs(runs: &[RankRun]) -> String {
    runs.iter()
        .filter(|r| !r.run.starts_with("memlimit"))
        .filter_map(|r| r.repeats)
        .min()
        .map_or("`--repeat`".into(), |n| format!("at least {n}"))
}

/// Report order of an algorithm (unknown ones last).
fn order(algorithm: &str) -> usize {
    ALGORITHMS
        .iter()
        .position(|a| *a == algorithm)
        .unwrap_or(ALGORITHMS.len())
}

/// The graphs measured for each algorithm (keyed by report order).
type Rows<'a> = BTreeMap<(usize, &'a str), BTreeSet<&'a str>>;

/// The section's markdown (empty without runs).
pub fn ranks_md(runs: &[RankRun]) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let ranks = runs
        .iter()
        .filter(|r| r.run.ends_with("ranks"))
        .map(|r| r.processes)
        .max()
        .unwrap_or(2);
    let gpus: Vec<&str> = {
        let mut g: Vec<&str> = runs.iter().filter_map(|r| r.gpu.as_deref()).collect();
        g.sort_unstable();
        g.dedup();
        g
    };
    let mut md = String::new();
    let _ = writeln!(md, "## One process and several ranks\n");
    let _ = writeln!(
        md,
        "Generated from `tools/ranks-gpu.sh`'s runs of the examples on {} (its output folder \
         made into JSON lines by `tools/ranks-record.py`, read with `--ranks`). Each \
         graph runs in one process of 1 device, one process of {ranks} devices and {ranks} MPI \
         ranks of 1 device each (NCCL between the ranks). *ms* is the median of the example's \
         own device timer over its timed runs ({timed}, after a warm-up run). BFS, SSSP and \
         CC outputs are compared with the 1-device run's (*equal*); PageRank's ranks are \
         validated against the reference within its error bound (*validated*). The examples \
         run their own defaults, not the bench's: SSSP on the graph's own weights (1 per arc \
         on a Kronecker graph, the cell distances on a road grid), PageRank with epsilon 2e-4. *B/arc* is what the ranks' run moved between ranks per arc of the graph; \
         *device peak* is the most memory any one device held (the largest over the devices, and \
         over the ranks); *modes* are the executions `auto` picked (one process / ranks).\n",
        gpus.join(", "),
        timed = timed_runs(runs),
    );
    let mut rows: Rows<'_> = BTreeMap::new();
    for r in runs.iter().filter(|r| !r.run.starts_with("memlimit")) {
        rows.entry((order(&r.algorithm), r.algorithm.as_str()))
            .or_default()
            .insert(r.graph.as_str());
    }
    let _ = writeln!(
        md,
        "| algorithm | graph | 1 device ms | {ranks} devices, 1 process ms | {ranks} ranks ms | speedup of {ranks} devices | {ranks} ranks / {ranks} devices in 1 process | B/arc between ranks | device peak GiB: 1 device / {ranks} devices / {ranks} ranks | modes | results |"
    );
    let _ = writeln!(md, "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|");
    let find = |algorithm: &str, graph: &str, run: &str| {
        runs.iter()
            .find(|r| r.algorithm == algorithm && r.graph == graph && r.run == run)
    };
    for ((_, algorithm), graphs) in &rows {
        for graph in graphs {
            let one = find(algorithm, graph, "1process");
            let process = find(algorithm, graph, &format!("{ranks}devices"));
            let ranked = find(algorithm, graph, &format!("{ranks}ranks"));
            let arcs = [one, process, ranked].iter().flatten().find_map(|r| r.arcs);
            let results: Vec<&str> = [process, ranked]
                .iter()
                .flatten()
                .map(|r| r.check.as_deref().unwrap_or("not checked"))
                .collect();
            let mode = |r: Option<&RankRun>| r.and_then(|r| r.mode.clone()).unwrap_or("-".into());
            let _ = writeln!(
                md,
                "| {} | {}{} | {} | {} | {} | {} | {} | {} | {} / {} / {} | {} / {} | {} |",
                title(algorithm),
                graph_label(runs, graph),
                arcs.map_or(String::new(), |a| format!(" ({a} arcs)")),
                time(one),
                time(process),
                time(ranked),
                ratio(one, process),
                ratio(ranked, process),
                per_arc(ranked.and_then(|r| r.comm_bytes), arcs),
                gib(one.and_then(|r| r.device_peak_bytes)),
                gib(process.and_then(|r| r.device_peak_bytes)),
                gib(ranked.and_then(|r| r.device_peak_bytes)),
                mode(process),
                mode(ranked),
                results.join(", "),
            );
        }
    }
    memory_limit_md(&mut md, runs);
    md
}

/// The memory-limit runs: 1 device refused under a limit below its peak, several devices
/// finishing under the same limit.
fn memory_limit_md(md: &mut String, runs: &[RankRun]) {
    let mut refused: Vec<&RankRun> = runs
        .iter()
        .filter(|r| r.run == "memlimit-1device")
        .collect();
    refused.sort_by_key(|r| (order(&r.algorithm), r.graph.as_str()));
    if refused.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "\nUnder `--device-memory-limit` below the 1-device run's device peak, 1 device must \
         stop with the limit's error (exit 1 or 2) and one process of several devices must \
         finish with the 1-device result (one timed run each):\n"
    );
    let _ = writeln!(
        md,
        "| algorithm | graph | limit GiB | 1-device peak GiB | 1 device | devices | their peak GiB | ms | result |"
    );
    let _ = writeln!(md, "|---|---|---:|---:|---|---:|---:|---:|---|");
    for r in refused {
        let spread = runs.iter().find(|s| {
            s.algorithm == r.algorithm
                && s.graph == r.graph
                && s.run.starts_with("memlimit-")
                && s.run != "memlimit-1device"
        });
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            title(&r.algorithm),
            graph_label(runs, &r.graph),
            gib(r.limit_bytes),
            gib(r.device_peak_bytes),
            r.check.as_deref().unwrap_or("-"),
            spread.map_or("-".into(), |s| s.devices().to_string()),
            gib(spread.and_then(|s| s.device_peak_bytes)),
            time(spread),
            spread
                .and_then(|s| s.check.as_deref())
                .unwrap_or("did not run"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::scratch_dir;

    fn line(
        algorithm: &str,
        graph: &str,
        run: &str,
        ms: Option<f64>,
        check: Option<&str>,
    ) -> String {
        let (processes, devices) = match run {
            "2ranks" => (2, 1),
            "2devices" | "memlimit-2devices" => (1, 2),
            _ => (1, 1),
        };
        serde_json::json!({
            "format": 1, "algorithm": algorithm, "graph": graph, "spec": "kron:scale=10",
            "arcs": 1000, "run": run, "processes": processes, "devices_per_process": devices,
            "gpu": "NVIDIA H200", "mode": "device-driven", "median_ms": ms, "repeats": 10,
            "comm_bytes": 500, "device_peak_bytes": 4u64 << 30,
            "limit_bytes": (run.starts_with("memlimit")).then_some(3u64 << 30), "check": check,
        })
        .to_string()
    }

    #[test]
    fn the_section_tabulates_process_and_ranks_and_the_memory_limit_runs() {
        let dir = scratch_dir("ranks-section");
        let path = dir.join("ranks.jsonl");
        let lines = [
            line("bfs", "k", "1process", Some(2.0), None),
            line("bfs", "k", "2devices", Some(1.0), Some("equal")),
            line("bfs", "k", "2ranks", Some(4.0), Some("equal")),
            line("bfs", "k", "memlimit-1device", None, Some("refused")),
            line("bfs", "k", "memlimit-2devices", Some(1.1), Some("equal")),
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let runs = read_ranks(&path).unwrap();
        let md = ranks_md(&runs);
        assert!(md.contains("## One process and several ranks"), "{md}");
        assert!(
            md.contains(
                "| BFS | `kron:scale=10` (1000 arcs) | 2.00 | 1.00 | 4.00 | 2.00 | 4.00 | 0.500 |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| BFS | `kron:scale=10` | 3.00 | 4.00 | refused | 2 | 4.00 | 1.10 | equal |"
            ),
            "{md}"
        );
        assert!(ranks_md(&[]).is_empty());
    }

    #[test]
    fn a_line_that_is_not_a_ranks_record_is_an_error_naming_the_line() {
        let dir = scratch_dir("ranks-bad");
        let path = dir.join("ranks.jsonl");
        std::fs::write(
            &path,
            format!(
                "{}\n{{\"format\": 1}}\n",
                line("cc", "k", "1process", Some(1.0), None)
            ),
        )
        .unwrap();
        let err = read_ranks(&path).unwrap_err().to_string();
        assert!(
            err.contains("ranks.jsonl:2") && err.contains("ranks-record.py"),
            "{err}"
        );
    }
}
