//! How far a measurement is from the memory system: the time one pass over the bytes the
//! algorithm must stream takes at the GPU's HBM bandwidth, split evenly over the devices of
//! the run.
//!
//! One pass reads the arcs the run counts (`edges`: the rows of every reached vertex for BFS
//! and SSSP, every in-arc for a PageRank sweep, every edge for CC) once and touches each
//! vertex's row offsets and values once:
//!
//! | algorithm | bytes of one pass |
//! |---|---|
//! | BFS | 4 per traversed arc (its head) + 12 per vertex (8 of offsets, 4 of level) |
//! | SSSP | 8 per traversed arc (head and weight) + 12 per vertex (offsets, distance) |
//! | PageRank | 4 per input arc (its tail) + 24 per vertex (offsets; rank and residual, each read and written) |
//! | CC | 8 per edge hooked (both ends, from the edge list) + 4 per vertex (parent) |
//!
//! It is a floor, not a model of the run: the value each arc reads or updates at its far
//! end (a level, a distance, a residual added atomically, a gathered rank) comes on top, at
//! random addresses, and devices that keep full-length arrays (CC's parents, the levels of a
//! multi-device BFS) touch more than their share. A direction-optimizing BFS skips most arcs
//! of a dense graph and can take less than one pass. Read *passes* (the run's time over one
//! pass's) as how far a row is from streaming its graph: each PageRank sweep and SSSP
//! relaxation pass is at least one; far above that, a run is bound by something else (latency
//! per level on a deep graph, random accesses, atomics, load imbalance).

use crate::record::Measurement;

/// The least time of one level of a level-synchronous traversal that claims its heads with
/// atomics, microseconds, on the GPUs where it was measured (by a substring of the model
/// name): the targets load, the atomic's round trip and the barrier of a road grid's levels
/// on an H200 (docs/device-protocol.md, "What a level costs").
const LEVEL_FLOOR_US: [(&str, f64); 1] = [("H200", 2.5)];

/// The least time of `levels` levels on `m`'s GPU, in ms: `levels` times the GPU's
/// [`LEVEL_FLOOR_US`] (`None` without levels, on the host backend or on a GPU where no level
/// was measured). `levels` is `m`'s own depth for BFS, and for SSSP the depth of the BFS from
/// the same source on the same graph (its paths have at least as many arcs). Levels follow
/// each other whatever the devices, so it is not split over them.
pub fn level_floor_ms(m: &Measurement, levels: Option<u32>) -> Option<f64> {
    let levels = levels.filter(|&d| d > 0)?;
    if m.backend == "host" {
        return None;
    }
    Some(f64::from(levels) * for_model(&LEVEL_FLOOR_US, &m.gpu)? / 1e3)
}

/// Peak HBM bandwidth of the GPUs the report knows (NVIDIA's data sheets), bytes per second,
/// by a substring of the model name; the first match counts.
const HBM_BANDWIDTH: [(&str, f64); 3] = [
    ("H200", 4.8e12),
    ("H100 80GB HBM3", 3.35e12),
    ("H100 PCIe", 2.0e12),
];

/// The GPU's peak HBM bandwidth, bytes per second (`None` for a model not in the table).
pub fn hbm_bandwidth(gpu: &str) -> Option<f64> {
    for_model(&HBM_BANDWIDTH, gpu)
}

/// The value of the first row of `table` whose model name is a substring of `gpu`.
fn for_model(table: &[(&str, f64)], gpu: &str) -> Option<f64> {
    table
        .iter()
        .find(|(model, _)| gpu.contains(model))
        .map(|&(_, value)| value)
}

/// The bytes one pass of `m`'s algorithm touches (see the module docs).
pub fn one_pass_bytes(m: &Measurement) -> Option<f64> {
    let (arcs, vertices) = (m.edges as f64, m.vertices as f64);
    let bytes = match m.algorithm.as_str() {
        "bfs" => 4.0 * arcs + 12.0 * vertices,
        "sssp" => 8.0 * arcs + 12.0 * vertices,
        "pagerank" => 4.0 * arcs + 24.0 * vertices,
        "cc" => 8.0 * arcs + 4.0 * vertices,
        _ => return None,
    };
    Some(bytes)
}

/// One pass's time in ms on `m`'s devices together (`None` on the host backend or a GPU the
/// table does not know).
pub fn one_pass_ms(m: &Measurement) -> Option<f64> {
    if m.backend == "host" {
        return None;
    }
    let bandwidth = hbm_bandwidth(&m.gpu)? * m.devices.max(1) as f64;
    Some(one_pass_bytes(m)? / bandwidth * 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::sample;

    #[test]
    fn one_pass_is_the_bytes_over_every_device_bandwidth() {
        // 182M traversed arcs and 2.1M vertices on one H200: (4 * 182e6 + 12 * 2097152) B
        // at 4.8 TB/s.
        let m = sample("bfs", "kron21.sym", 1, 1.0);
        let want = (4.0 * 182e6 + 12.0 * 2_097_152.0) / 4.8e12 * 1e3;
        assert!((one_pass_ms(&m).unwrap() - want).abs() < 1e-9);
        let two = sample("bfs", "kron21.sym", 2, 1.0);
        assert!((one_pass_ms(&two).unwrap() - want / 2.0).abs() < 1e-9);
    }

    #[test]
    fn the_level_floor_is_the_depth_times_the_gpus_level_cost() {
        let mut m = sample("bfs", "road", 2, 20.0);
        assert!((level_floor_ms(&m, Some(4000)).unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(level_floor_ms(&m, None), None);
        m.gpu = "NVIDIA H100 80GB HBM3".into();
        assert_eq!(level_floor_ms(&m, Some(4000)), None);
        let mut host = sample("sssp", "road", 1, 20.0);
        host.backend = "host".into();
        assert_eq!(level_floor_ms(&host, Some(4000)), None);
    }

    #[test]
    fn unknown_gpus_and_the_host_backend_have_no_pass_time() {
        let mut m = sample("sssp", "kron21.sym", 1, 1.0);
        m.gpu = "Some Future GPU".into();
        assert_eq!(one_pass_ms(&m), None);
        m.gpu = "NVIDIA H100 80GB HBM3".into();
        assert!(one_pass_ms(&m).is_some());
        m.backend = "host".into();
        assert_eq!(one_pass_ms(&m), None);
    }
}
