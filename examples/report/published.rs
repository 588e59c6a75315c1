//! Published figures for the graphs the scaling bench generates (the papers' and artifacts'
//! own figures, and the upstream Groute code run on the same machine kind as ours), shown
//! beside ours so a reader sees where we stand. Each figure
//! keeps its system, hardware, device count and source; times are the algorithm only, as
//! each system's own timer reports them.

/// One published time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Published {
    /// `bfs`, `sssp`, `pagerank` or `cc`.
    pub algorithm: &'static str,
    /// The graph, as [`anchor_graph`] names it.
    pub graph: &'static str,
    /// The system measured.
    pub system: &'static str,
    /// GPUs used.
    pub devices: usize,
    /// The GPU model.
    pub hardware: &'static str,
    /// Milliseconds.
    pub ms: f64,
    /// Where the figure comes from, with any caveat.
    pub source: &'static str,
}

/// Kronecker scale 21, edge factor 48, symmetrised (DIMACS10 kron_g500-logn21).
pub const KRON21: &str = "kron21";
/// The 2048 x 2048 grid with edges kept at probability 0.6.
pub const ROAD_2048: &str = "road-like 4M";

const PAPER: &str = "Groute paper (ACM TOPC 2020), best of 1-8 GPUs";
const ORIGINAL_HERE: &str = "upstream Groute built for sm_90, run on our 2 x H200, own timer";
const ORIGINAL_HERE_ROAD: &str =
    "upstream Groute on our 2 x H200, its own random 2048 x 2048 p=0.6 grid, own timer";
const GUNROCK: &str = "Gunrock 1.0 (direction-optimizing BFS), as published";

/// Every published figure the report knows (one line each, as a table).
#[rustfmt::skip]
pub const PUBLISHED: &[Published] = &[
    Published { algorithm: "bfs", graph: KRON21, system: "Groute (paper)", devices: 7, hardware: "Tesla M60", ms: 42.8, source: PAPER },
    Published { algorithm: "bfs", graph: KRON21, system: "Groute (artifact)", devices: 1, hardware: "Tesla P100", ms: 36.9, source: "PPoPP'17 artifact, run by others" },
    Published { algorithm: "bfs", graph: KRON21, system: "Gunrock 1.0", devices: 1, hardware: "Tesla V100", ms: 1.06, source: GUNROCK },
    Published { algorithm: "bfs", graph: KRON21, system: "Groute (original)", devices: 1, hardware: "H200", ms: 5.53, source: ORIGINAL_HERE },
    Published { algorithm: "bfs", graph: KRON21, system: "Groute (original)", devices: 2, hardware: "H200", ms: 9.17, source: ORIGINAL_HERE },
    Published { algorithm: "sssp", graph: KRON21, system: "Groute (paper)", devices: 8, hardware: "Tesla M60", ms: 245.0, source: PAPER },
    Published { algorithm: "sssp", graph: KRON21, system: "Gunrock 1.0", devices: 1, hardware: "Tesla V100", ms: 24.8, source: "Gunrock 1.0, as published" },
    Published { algorithm: "sssp", graph: KRON21, system: "Groute (original)", devices: 1, hardware: "H200", ms: 23.8, source: ORIGINAL_HERE },
    Published { algorithm: "sssp", graph: KRON21, system: "Groute (original)", devices: 2, hardware: "H200", ms: 23.7, source: ORIGINAL_HERE },
    Published { algorithm: "pagerank", graph: KRON21, system: "Groute (paper)", devices: 8, hardware: "Tesla M60", ms: 1991.0, source: PAPER },
    Published { algorithm: "pagerank", graph: KRON21, system: "Groute (original)", devices: 1, hardware: "H200", ms: 197.0, source: "upstream Groute on our 2 x H200; eps 0.01, top ranks ~29% below the exact fixed point" },
    Published { algorithm: "pagerank", graph: KRON21, system: "Groute (original)", devices: 2, hardware: "H200", ms: 365.0, source: "upstream Groute on our 2 x H200; eps 0.01, top ranks ~29% below the exact fixed point" },
    Published { algorithm: "cc", graph: KRON21, system: "Groute (paper)", devices: 8, hardware: "Tesla M60", ms: 13.7, source: PAPER },
    Published { algorithm: "cc", graph: KRON21, system: "Groute (original)", devices: 1, hardware: "H200", ms: 3.37, source: ORIGINAL_HERE },
    Published { algorithm: "cc", graph: KRON21, system: "Groute (original)", devices: 2, hardware: "H200", ms: 2.89, source: ORIGINAL_HERE },
    Published { algorithm: "bfs", graph: ROAD_2048, system: "Groute (original)", devices: 1, hardware: "H200", ms: 81.8, source: ORIGINAL_HERE_ROAD },
    Published { algorithm: "bfs", graph: ROAD_2048, system: "Groute (original)", devices: 2, hardware: "H200", ms: 126.0, source: ORIGINAL_HERE_ROAD },
    Published { algorithm: "sssp", graph: ROAD_2048, system: "Groute (original)", devices: 1, hardware: "H200", ms: 88.8, source: ORIGINAL_HERE_ROAD },
    Published { algorithm: "sssp", graph: ROAD_2048, system: "Groute (original)", devices: 2, hardware: "H200", ms: 137.0, source: ORIGINAL_HERE_ROAD },
    Published { algorithm: "pagerank", graph: ROAD_2048, system: "Groute (original)", devices: 1, hardware: "H200", ms: 18.8, source: "upstream Groute on our 2 x H200; eps 0.01, about 4% below exact" },
    Published { algorithm: "pagerank", graph: ROAD_2048, system: "Groute (original)", devices: 2, hardware: "H200", ms: 9.5, source: "upstream Groute on our 2 x H200; eps 0.01, about 4% below exact" },
    Published { algorithm: "cc", graph: ROAD_2048, system: "Groute (original)", devices: 1, hardware: "H200", ms: 0.95, source: ORIGINAL_HERE_ROAD },
    Published { algorithm: "cc", graph: ROAD_2048, system: "Groute (original)", devices: 2, hardware: "H200", ms: 0.80, source: ORIGINAL_HERE_ROAD },
];

/// The published graph a bench graph spec reproduces, if any: `kron21.sym` (or the same
/// Kronecker parameters spelled out) and the 2048 x 2048, p = 0.6 road-like grid.
pub fn anchor_graph(spec: &str) -> Option<&'static str> {
    let base = spec.split(":seed").next().unwrap_or(spec);
    let fields: Vec<&str> = base
        .split([':', ','])
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect();
    let has = |f: &str| fields.contains(&f);
    if base == "kron21.sym"
        || base == "kron_g500-logn21"
        || (has("kron") && has("scale=21") && has("ef=48") && has("sym"))
    {
        return Some(KRON21);
    }
    if has("road") && has("side=2048") && has("p=0.6") {
        return Some(ROAD_2048);
    }
    None
}

/// The published figures for `algorithm` on the graph `spec` reproduces.
pub fn published_for(algorithm: &str, spec: &str) -> Vec<Published> {
    let Some(graph) = anchor_graph(spec) else {
        return Vec::new();
    };
    PUBLISHED
        .iter()
        .filter(|p| p.algorithm == algorithm && p.graph == graph)
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_default_graphs_map_to_their_published_graphs() {
        assert_eq!(anchor_graph("kron21.sym"), Some(KRON21));
        assert_eq!(anchor_graph("kron:scale=21,ef=48,sym"), Some(KRON21));
        assert_eq!(anchor_graph("road:side=2048,p=0.6"), Some(ROAD_2048));
        assert_eq!(anchor_graph("road:side=256,p=0.6"), None);
        assert_eq!(anchor_graph("kron:scale=14,ef=16,sym"), None);
    }

    #[test]
    fn every_algorithm_has_a_kron21_figure_and_every_figure_is_sane() {
        for algo in crate::input::ALGORITHMS {
            assert!(!published_for(algo, "kron21.sym").is_empty(), "{algo}");
        }
        for p in PUBLISHED {
            assert!(
                p.ms > 0.0 && p.devices >= 1 && !p.source.is_empty(),
                "{p:?}"
            );
        }
    }
}
