//! Helpers shared by the reader tests (and by the fuzz targets in `fuzz/`, which include this
//! file): scratch directories, reading bytes as a given format, and the check every graph a
//! reader returns must pass.

// Each test binary uses a different subset of the helpers.
#![allow(dead_code)]

use std::path::PathBuf;

use groute_graph::{
    Graph, GraphError, GraphFormat, LoadOptions, NoProgress, ParseProblem, load_graph,
    load_graph_with,
};

/// A scratch directory under the system's temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// `groute-graph-<tag>-<pid>`, created empty.
    pub fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("groute-graph-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    /// Writes `content` to `name` in the directory and returns its path.
    pub fn file(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, content).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// Loads `content` as `name` and expects a parse error at `line` matching `problem`.
pub fn expect_parse_error(
    dir: &TempDir,
    name: &str,
    content: &str,
    line: u64,
    problem: impl Fn(&ParseProblem) -> bool,
) {
    let p = dir.file(name, content);
    match load_graph(&p, None) {
        Err(GraphError::Parse {
            path,
            line: l,
            problem: pr,
        }) => {
            assert_eq!(path, p);
            assert_eq!(l, line, "{name}: {pr}");
            assert!(problem(&pr), "{name}: unexpected problem {pr:?}");
        }
        other => panic!("{name}: expected a parse error, got {other:?}"),
    }
}

/// The readers the corpus and mutation tests cover: (corpus folder, file name, format).
/// DIMACS and Galois files share `.gr`, so the format is named explicitly.
pub const READERS: [(&str, &str, GraphFormat); 6] = [
    ("mtx", "input.mtx", GraphFormat::MatrixMarket),
    ("dimacs", "input.gr", GraphFormat::Dimacs),
    ("metis", "input.graph", GraphFormat::Metis),
    ("galois_gr", "input.gr", GraphFormat::Galois),
    ("edge_list", "input.txt", GraphFormat::Snap),
    ("grc", "input.grc", GraphFormat::Cache),
];

/// The file name a reader's input is written under.
pub fn file_name(format: GraphFormat) -> &'static str {
    READERS
        .iter()
        .find(|r| r.2 == format)
        .map(|r| r.1)
        .unwrap_or("input.bin")
}

/// The most vertices [`read_bytes`] accepts. A text header may declare billions of vertices in
/// a few bytes, a valid graph that takes gigabytes to build (`hostile_inputs.rs` tests that
/// under a memory limit); damaged inputs are read under this limit so they stay fast.
pub const MAX_VERTICES: u64 = 1 << 20;

/// Writes `bytes` to the directory under the format's file name and reads it as `format`, with
/// at most [`MAX_VERTICES`] vertices.
pub fn read_bytes(dir: &TempDir, format: GraphFormat, bytes: &[u8]) -> Result<Graph, GraphError> {
    let path = dir.file(file_name(format), bytes);
    let options = LoadOptions::default().with_max_vertices(MAX_VERTICES);
    load_graph_with(&path, Some(format), &options, &NoProgress)
}

/// Panics unless `g` is internally valid: the CSR's invariants ([`groute_graph::Csr::check`]),
/// and a vertex numbering that maps every vertex to an external id and back.
pub fn assert_valid_graph(g: &Graph) {
    if let Err(e) = g.csr.check() {
        panic!("a reader returned an invalid CSR: {e}");
    }
    let n = g.num_vertices();
    assert_eq!(g.csr.offsets().len(), n + 1);
    assert_eq!(g.csr.offsets()[n], g.num_edges());
    assert_eq!(g.csr.targets().len() as u64, g.num_edges());
    if let Some(w) = g.csr.weights() {
        assert_eq!(w.len() as u64, g.num_edges());
    }
    // Huge vertex counts without arcs are legal; the id round trip is checked on a prefix.
    for v in 0..n.min(1 << 16) as u32 {
        let ext = g.external_id(v);
        assert_eq!(
            g.internal_id(ext),
            Some(v),
            "vertex {v} (external id {ext}) does not map back"
        );
    }
}

/// Reads `bytes` as `format` and panics unless the result is an error or a valid graph.
/// Returns whether the input was accepted.
pub fn check_input(dir: &TempDir, format: GraphFormat, bytes: &[u8]) -> bool {
    match read_bytes(dir, format, bytes) {
        Ok(g) => {
            assert_valid_graph(&g);
            // Text and Galois readers derive the flag from the arcs; a cache stores it, and
            // checking it there would mean a transposed copy of every mapped graph it loads.
            if g.symmetric && format != GraphFormat::Cache {
                assert!(g.csr.is_symmetric(), "marked symmetric, but it is not");
            }
            if format == GraphFormat::Cache {
                check_cache_rows(dir, &g);
            }
            true
        }
        Err(e) => {
            // Every error has a message; formatting it must not panic either.
            assert!(!e.to_string().is_empty());
            false
        }
    }
}

/// A cache that loads whole loads by rows too (the `.grc` just read, in `dir`): every split
/// in two gives the whole graph's rows and empty others.
fn check_cache_rows(dir: &TempDir, g: &Graph) {
    let cache = groute_graph::GraphCache::open(dir.0.join(file_name(GraphFormat::Cache)))
        .expect("a cache that loads whole opens");
    let n = g.num_vertices() as u32;
    for split in [0, n / 2, n] {
        for rows in [0..split, split..n] {
            let part = cache.load_rows(rows.clone()).expect("its rows load");
            assert_valid_graph(&part);
            for v in 0..n {
                if rows.contains(&v) {
                    assert_eq!(part.csr.neighbors(v), g.csr.neighbors(v));
                    assert_eq!(part.csr.edge_weights(v), g.csr.edge_weights(v));
                } else {
                    assert!(part.csr.neighbors(v).is_empty());
                }
            }
        }
    }
}

/// Every arc of `g` as (source, target, weight) in the file's own ids, sorted: what two
/// readings of one graph must agree on whatever their internal numbering.
pub fn arcs(g: &Graph) -> Vec<(u64, u64, Option<u32>)> {
    let mut out = Vec::new();
    for v in 0..g.num_vertices() as u32 {
        let w = g.csr.edge_weights(v);
        for (i, &t) in g.csr.neighbors(v).iter().enumerate() {
            out.push((g.external_id(v), g.external_id(t), w.map(|w| w[i])));
        }
    }
    out.sort_unstable();
    out
}
