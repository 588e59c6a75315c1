//! Strong scaling of BFS, SSSP, PageRank and CC: for every graph and device count, the
//! median time of the algorithm with the graph already on the devices, timed with device
//! events (and, beside it, the median of a full run: reset, algorithm, download).
//!
//! ```text
//! cargo bench --bench scaling -- --quick --noplot            # here: host backend, small graphs
//! GROUTE_BENCH_JSON=scaling.json GROUTE_BENCH_MEASURE_MS=200 bash .gpu/run.sh bench scaling -- --bench --noplot
//! cargo run --release --example report -- --input scaling.json --out docs/
//! ```
//!
//! Settings come from the environment (see `config.rs`: devices, graphs, algorithms,
//! partition, JSON output). Each graph is generated once per process and partitioned once
//! per device count; each solver is built once per (graph, devices, algorithm), run twice
//! to warm up (kernel compilation, first touch), then timed by criterion through
//! `iter_custom` with the algorithm time of `timing.rs` (the solver's device-event time on
//! CUDA, its own clock on the host backend). Criterion's own statistics stay on this
//! machine; the JSON line per measurement (`record.rs`) carries the algorithm's median, min
//! and max over every timed run (all of them after the warm-up runs), the full run's median
//! and the solver clock's, and is what `examples/report` reads.

#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`

mod config;
mod record;
mod timing;
mod workload;

use std::cell::RefCell;
use std::fs::OpenOptions;
use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use groute::core::{BackendKind, Context};
use groute::graph::{GenSpec, Graph, NoProgress, PartitionedGraph, generate, partition_graph};

use config::{CUDA_GRAPHS, Config, HOST_GRAPHS};
use record::{FORMAT, Measurement, utc_date};
use timing::{Timer, time_run};
use workload::{RunReport, Workload, weights_for};

/// Runs before timing starts, on top of criterion's own warm-up.
const WARM_UP_RUNS: usize = 2;

/// Prints `error` and exits non-zero (a bench has no caller to hand the error to).
fn fail(what: &str, error: impl std::fmt::Display) -> ! {
    eprintln!("error: {what}: {error}");
    std::process::exit(1)
}

/// The commit measured: `GROUTE_COMMIT` as the bench runs, else as it was built (a binary
/// staged for another machine, whose checkout's git may be at another commit, names its
/// own), else git's, else `unknown`.
fn commit() -> String {
    let given = std::env::var("GROUTE_COMMIT").ok();
    if let Some(c) = given.as_deref().or(option_env!("GROUTE_COMMIT"))
        && !c.trim().is_empty()
    {
        return c.trim().to_string();
    }
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn context(config: &Config, devices: usize) -> Context {
    Context::builder()
        .devices(devices)
        .backend(config.backend)
        .build()
        .unwrap_or_else(|e| fail(&format!("a context with {devices} devices"), e))
}

fn median(sorted: &[f64]) -> f64 {
    sorted[sorted.len() / 2]
}

/// One timed run.
struct Sample {
    /// The algorithm's time (criterion's input and the headline).
    algorithm: Duration,
    /// The full run's time.
    full_run: Duration,
    report: RunReport,
}

/// Sorted milliseconds.
fn sorted_ms(times: impl Iterator<Item = Duration>) -> Vec<f64> {
    let mut ms: Vec<f64> = times.map(|t| t.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    ms
}

/// The JSON record of one (graph, devices, algorithm) from its timed runs.
fn summarise(runs: &[Sample], base: Measurement) -> Measurement {
    let times = sorted_ms(runs.iter().map(|r| r.algorithm));
    let full = sorted_ms(runs.iter().map(|r| r.full_run));
    let solver = sorted_ms(runs.iter().map(|r| r.report.solver_time));
    let mut by_time: Vec<&Sample> = runs.iter().collect();
    by_time.sort_by_key(|r| r.algorithm);
    let median_run = &by_time[by_time.len() / 2].report;
    let median_ms = median(&times);
    Measurement {
        median_ms,
        min_ms: times[0],
        max_ms: times[times.len() - 1],
        full_run_median_ms: median(&full),
        samples: runs.len(),
        solver_median_ms: median(&solver),
        edges: median_run.edges,
        edges_per_s: median_run.edges as f64 / (median_ms / 1e3),
        work_items: median_run.work_items,
        bytes_sent: median_run.bytes_sent,
        depth: median_run.depth,
        ..base
    }
}

fn append_json(config: &Config, m: &Measurement) {
    let Some(path) = &config.json else { return };
    let line = serde_json::to_string(m).unwrap_or_else(|e| fail("serialising a record", e));
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap_or_else(|e| fail(&format!("opening {}", path.display()), e));
    writeln!(file, "{line}").unwrap_or_else(|e| fail(&format!("writing {}", path.display()), e));
}

fn generate_graph(spec: &str) -> Graph {
    let parsed: GenSpec = spec
        .parse()
        .unwrap_or_else(|e| fail(&format!("GROUTE_BENCH_GRAPHS entry `{spec}`"), e));
    let start = std::time::Instant::now();
    let graph = generate(&parsed, &NoProgress).unwrap_or_else(|e| fail(spec, e));
    println!(
        "graph {spec}: {} vertices, {} arcs, generated in {:.1} s",
        graph.num_vertices(),
        graph.num_edges(),
        start.elapsed().as_secs_f64()
    );
    graph
}

fn partition(graph: &Graph, devices: usize, config: &Config) -> PartitionedGraph {
    partition_graph(graph.clone(), devices, config.partition, &NoProgress)
        .unwrap_or_else(|e| fail(&format!("partitioning {} into {devices}", graph.name), e))
}

fn scaling(c: &mut Criterion) {
    let config = Config::from_env().unwrap_or_else(|e| fail("bench settings", e));
    // Criterion's test and list modes run nothing worth recording.
    let recording = !std::env::args().any(|a| a == "--test" || a == "--list");
    let probe = context(&config, 1);
    let backend = probe.backend_kind();
    let gpu = probe.devices()[0].properties().name.clone();
    let present = probe.backend().physical_devices();
    let timer = Timer::of(&probe);
    match backend {
        BackendKind::Host => println!(
            "host backend: no GPU found{}; timing the algorithm with the solvers' clocks",
            probe
                .fallback_note()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        ),
        _ => println!(
            "{backend} backend: {present} x {gpu}; timing the algorithm with device events"
        ),
    }
    drop(probe);
    let device_counts = config.devices.clone().unwrap_or_else(|| match backend {
        BackendKind::Host => vec![1, 2],
        _ => (1..=present).collect(),
    });
    let graphs: Vec<String> = config.graphs.clone().unwrap_or_else(|| {
        let defaults = match backend {
            BackendKind::Host => HOST_GRAPHS,
            _ => CUDA_GRAPHS,
        };
        defaults.iter().map(|g| g.to_string()).collect()
    });
    let (date, commit) = (
        utc_date(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        ),
        commit(),
    );
    for spec in &graphs {
        let graph = generate_graph(spec);
        let weighted = config.algorithms.iter().any(|a| a == "sssp").then(|| {
            weights_for(spec)
                .apply(graph.clone())
                .unwrap_or_else(|e| fail("weighting the graph", e))
        });
        for &devices in &device_counts {
            let ctx = context(&config, devices);
            let parted = partition(&graph, devices, &config);
            let parted_weighted = weighted.as_ref().map(|w| partition(w, devices, &config));
            let mut group = c.benchmark_group(format!("scaling_{backend}/{spec}/{devices}dev"));
            group.sampling_mode(SamplingMode::Flat);
            group.sample_size(10);
            group.warm_up_time(config.warm_up);
            group.measurement_time(config.measurement);
            for algorithm in &config.algorithms {
                let what = format!("{algorithm} on {spec}, {devices} devices");
                let mut workload = Workload::new(
                    algorithm,
                    &ctx,
                    &parted,
                    parted_weighted.as_ref().unwrap_or(&parted),
                )
                .unwrap_or_else(|e| fail(&what, e));
                for _ in 0..WARM_UP_RUNS {
                    workload.run().unwrap_or_else(|e| fail(&what, e));
                }
                let runs = RefCell::new(Vec::new());
                group.bench_function(algorithm.as_str(), |b| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let (finished, full_run) = time_run(&ctx, || workload.run())
                                .unwrap_or_else(|e| fail(&what, e));
                            let report = workload.report(finished);
                            let algorithm = timer
                                .algorithm_time(&report)
                                .unwrap_or_else(|e| fail(&what, e));
                            runs.borrow_mut().push(Sample {
                                algorithm,
                                full_run,
                                report,
                            });
                            total += algorithm;
                        }
                        total
                    })
                });
                let runs = runs.into_inner();
                if runs.is_empty() || !recording {
                    continue;
                }
                let m = summarise(
                    &runs,
                    Measurement {
                        format: FORMAT,
                        algorithm: algorithm.clone(),
                        graph: spec.clone(),
                        vertices: graph.num_vertices() as u64,
                        arcs: graph.num_edges(),
                        devices,
                        backend: backend.to_string(),
                        gpu: gpu.clone(),
                        timer: timer.name().into(),
                        median_ms: 0.0,
                        min_ms: 0.0,
                        max_ms: 0.0,
                        full_run_median_ms: 0.0,
                        samples: 0,
                        solver_median_ms: 0.0,
                        edges: 0,
                        edges_kind: workload.edges_kind().into(),
                        edges_per_s: 0.0,
                        work_items: 0,
                        bytes_sent: None,
                        depth: None,
                        date: date.clone(),
                        commit: commit.clone(),
                    },
                );
                println!(
                    "{what}: algorithm median {:.3} ms (min {:.3}, max {:.3}, {} runs, {}), full run {:.3} ms, solver clock {:.3} ms, {:.3} G edges/s ({})",
                    m.median_ms,
                    m.min_ms,
                    m.max_ms,
                    m.samples,
                    m.timer,
                    m.full_run_median_ms,
                    m.solver_median_ms,
                    m.gteps(),
                    m.edges_kind,
                );
                append_json(&config, &m);
            }
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = scaling
}
criterion_main!(benches);
