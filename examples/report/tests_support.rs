//! Synthetic records and scratch folders for the report's tests.

use std::path::PathBuf;

use crate::record::{FORMAT, Measurement};

/// A plausible record of `algorithm` on `graph` with `devices` devices taking `ms`.
pub fn sample(algorithm: &str, graph: &str, devices: usize, ms: f64) -> Measurement {
    Measurement {
        format: FORMAT,
        algorithm: algorithm.into(),
        graph: graph.into(),
        vertices: 2_097_152,
        arcs: 182_081_864,
        devices,
        backend: "cuda".into(),
        gpu: "NVIDIA H200".into(),
        timer: "device events".into(),
        median_ms: ms,
        min_ms: ms * 0.9,
        max_ms: ms * 1.2,
        full_run_median_ms: ms * 3.0,
        samples: 20,
        solver_median_ms: ms * 0.8,
        edges: 182_000_000,
        edges_kind: if algorithm == "cc" {
            "hooked"
        } else {
            "traversed"
        }
        .into(),
        edges_per_s: 182e6 / (ms / 1e3),
        work_items: 2_000_000,
        bytes_sent: (devices > 1).then_some(devices as u64 * 1_000_000),
        depth: (algorithm == "bfs").then_some(12),
        date: "2026-11-22".into(),
        commit: "abc1234".into(),
    }
}

/// An empty folder of its own under the system's temporary folder.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("groute-report-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}
