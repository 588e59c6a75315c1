//! Readers and writers of the field's graph formats.
//!
//! | format | extension | ids | arcs |
//! |---|---|---|---|
//! | Matrix Market coordinate | `.mtx`, `.mm` | 1-based | one per entry; both directions for `symmetric` |
//! | DIMACS 9 shortest path | `.gr` (text) | 1-based | one per `a` line, weighted |
//! | SNAP edge list | `.txt`, `.el`, `.edges`, `.tsv`, `.snap` | as written | one per line |
//! | METIS graph | `.graph`, `.mgraph`, `.metis` | 1-based | one per adjacency entry (both directions) |
//! | Galois binary v1 | `.gr` (binary) | 0-based | as stored |
//! | groute cache | `.grc` | as the source | as stored, memory-mapped |
//!
//! `.gr` is shared by DIMACS text and Galois binary files; the first bytes decide. Text files are
//! memory-mapped, cut into chunks at line boundaries and parsed in parallel. Malformed input is a
//! [`GraphError`] naming the file, line (or byte offset) and problem.
//!
//! Sizes in headers are not trusted. A count of lines (arcs, entries, vertex lines, edges) is
//! checked against the bytes after the header, at least two bytes a line (a character and its
//! newline), before anything is built ([`ParseProblem::MoreThanFileHolds`]); binary formats
//! check their sections against the file's length and reject trailing bytes. A vertex count
//! cannot be checked that way, since vertices without arcs take no bytes: every array sized by
//! it (or by the arcs) is allocated fallibly, so a count this machine cannot hold is a
//! [`GraphError::OutOfMemory`] naming the bytes and the array, not an abort.
//!
//! Files are memory-mapped while they are read, and a `.grc` graph keeps its file mapped while it
//! lives: do not truncate or rewrite a file that is being read.
//!
//! ```
//! # fn main() -> Result<(), groute_graph::GraphError> {
//! use groute_graph::{load_graph, write_graph, GraphFormat};
//! let dir = std::env::temp_dir().join(format!("groute-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("tiny.gr");
//! std::fs::write(&path, "c tiny\np sp 3 2\na 1 2 7\na 2 3 9\n").unwrap();
//! let g = load_graph(&path, None)?;
//! assert_eq!((g.num_vertices(), g.num_edges()), (3, 2));
//! assert_eq!(g.external_id(0), 1);
//! write_graph(&g, &dir.join("tiny.grc"), None)?;
//! let again = load_graph(&dir.join("tiny.grc"), None)?;
//! assert_eq!(again.csr, g.csr);
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(()) }
//! ```

mod binary;
mod cache;
mod dimacs;
mod metis_fmt;
mod mtx;
mod snap;
pub(crate) mod text;
mod write;

pub use cache::GraphCache;

use std::path::Path;
use std::str::FromStr;

use crate::error::GraphError;
#[cfg(doc)]
use crate::error::ParseProblem;
use crate::graph::Graph;
use crate::progress::{NoProgress, Progress};

/// A graph file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GraphFormat {
    /// Matrix Market coordinate (`mtx`).
    MatrixMarket,
    /// DIMACS 9 shortest-path text (`dimacs`).
    Dimacs,
    /// SNAP edge list (`snap`).
    Snap,
    /// METIS graph (`metis`).
    Metis,
    /// Galois binary `.gr` version 1 (`galois`).
    Galois,
    /// groute's memory-mapped binary cache (`grc`).
    Cache,
}

impl GraphFormat {
    /// Every format, in the order of the table above.
    pub const ALL: [GraphFormat; 6] = [
        GraphFormat::MatrixMarket,
        GraphFormat::Dimacs,
        GraphFormat::Snap,
        GraphFormat::Metis,
        GraphFormat::Galois,
        GraphFormat::Cache,
    ];

    /// The short name accepted by `FromStr` (and `--format`).
    pub fn name(self) -> &'static str {
        match self {
            GraphFormat::MatrixMarket => "mtx",
            GraphFormat::Dimacs => "dimacs",
            GraphFormat::Snap => "snap",
            GraphFormat::Metis => "metis",
            GraphFormat::Galois => "galois",
            GraphFormat::Cache => "grc",
        }
    }

    /// The format a file name's extension implies. `.gr` is ambiguous (DIMACS text or Galois
    /// binary) and gives `None` here; [`GraphFormat::detect`] looks at the bytes too.
    pub fn from_extension(path: &Path) -> Option<GraphFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "mtx" | "mm" => GraphFormat::MatrixMarket,
            "txt" | "el" | "edges" | "tsv" | "snap" => GraphFormat::Snap,
            "graph" | "mgraph" | "metis" => GraphFormat::Metis,
            "grc" => GraphFormat::Cache,
            "dimacs" => GraphFormat::Dimacs,
            _ => return None,
        })
    }

    /// The format of `path` from its extension, looking at the first bytes for `.gr`. A file
    /// that cannot be opened is reported as such ([`GraphError::Io`]), whatever its name.
    pub fn detect(path: &Path) -> Result<GraphFormat, GraphError> {
        reject_directory(path)?;
        if let Some(f) = GraphFormat::from_extension(path) {
            return Ok(f);
        }
        let is_gr = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("gr"));
        if !is_gr {
            return Err(GraphError::UnknownFormat {
                path: path.to_path_buf(),
            });
        }
        use std::io::Read;
        let mut head = [0u8; 8];
        let mut f = std::fs::File::open(path).map_err(|e| GraphError::io(path, e))?;
        let got = f.read(&mut head).map_err(|e| GraphError::io(path, e))?;
        let word = u64::from_le_bytes(head);
        if got == 8 && (word == 1 || word == 2) {
            Ok(GraphFormat::Galois)
        } else {
            Ok(GraphFormat::Dimacs)
        }
    }
}

impl std::fmt::Display for GraphFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GraphFormat {
    type Err = GraphError;
    fn from_str(s: &str) -> Result<Self, GraphError> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "mtx" | "mm" | "matrix-market" | "matrixmarket" => GraphFormat::MatrixMarket,
            "dimacs" | "dimacs9" | "gr-text" => GraphFormat::Dimacs,
            "snap" | "txt" | "edgelist" | "edge-list" => GraphFormat::Snap,
            "metis" | "graph" => GraphFormat::Metis,
            "galois" | "gr-bin" | "galois-gr" => GraphFormat::Galois,
            "grc" | "cache" => GraphFormat::Cache,
            _ => {
                return Err(GraphError::UnknownFormatName { name: s.to_owned() });
            }
        })
    }
}

/// Options for [`load_graph_with`].
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct LoadOptions {
    /// Drop the weights (values) of the file, e.g. for real matrices with negative entries.
    pub ignore_weights: bool,
    /// Refuse graphs of more vertices than this ([`GraphError::TooLarge`]); `None`: up to
    /// `u32::MAX`.
    ///
    /// A vertex count in a text header (Matrix Market, DIMACS, METIS) cannot be checked against
    /// the file's size, since vertices without arcs take no bytes, so a small file may declare
    /// billions of vertices and make the reader allocate gigabytes for them. A program that
    /// reads files it does not trust sets a limit here; it is checked before anything is
    /// allocated. The binary formats store an offset per vertex, so the file's size bounds
    /// their count; the limit is checked on them too.
    pub max_vertices: Option<u64>,
}

impl LoadOptions {
    /// Options that drop the file's weights.
    pub fn ignoring_weights() -> LoadOptions {
        LoadOptions {
            ignore_weights: true,
            ..LoadOptions::default()
        }
    }

    /// These options with [`LoadOptions::max_vertices`] set to `max`.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use groute_graph::{GraphError, GraphFormat, LoadOptions, NoProgress, load_graph_with};
    /// let path = std::env::temp_dir().join(format!("groute-doc-max-{}.gr", std::process::id()));
    /// std::fs::write(&path, "p sp 3000000000 1\na 1 2 1\n")?;
    /// let opts = LoadOptions::default().with_max_vertices(1 << 20);
    /// let r = load_graph_with(&path, Some(GraphFormat::Dimacs), &opts, &NoProgress);
    /// assert!(matches!(r, Err(GraphError::TooLarge { value: 3_000_000_000, .. })));
    /// # std::fs::remove_file(&path).ok();
    /// # Ok(()) }
    /// ```
    pub fn with_max_vertices(mut self, max: u64) -> LoadOptions {
        self.max_vertices = Some(max);
        self
    }

    /// `Err` if a graph of `n` vertices is more than these options (or a CSR) allow.
    pub(crate) fn check_vertex_count(&self, n: u64) -> Result<(), GraphError> {
        let limit = self
            .max_vertices
            .unwrap_or(u64::MAX)
            .min(u64::from(u32::MAX));
        if n > limit {
            return Err(GraphError::TooLarge {
                what: "vertex count",
                value: n,
                limit,
            });
        }
        Ok(())
    }
}

/// Loads a graph, taking the format from `format` or else from the file name.
pub fn load_graph(
    path: impl AsRef<Path>,
    format: Option<GraphFormat>,
) -> Result<Graph, GraphError> {
    load_graph_with(path, format, &LoadOptions::default(), &NoProgress)
}

/// Loads a graph with options and progress reports (bytes parsed).
pub fn load_graph_with(
    path: impl AsRef<Path>,
    format: Option<GraphFormat>,
    options: &LoadOptions,
    progress: &dyn Progress,
) -> Result<Graph, GraphError> {
    let path = path.as_ref();
    reject_directory(path)?;
    let format = match format {
        Some(f) => f,
        None => GraphFormat::detect(path)?,
    };
    if format == GraphFormat::Cache {
        progress.stage("mapping", 0);
        let g = cache::read_cache(path)?;
        options.check_vertex_count(g.num_vertices() as u64)?;
        return Ok(if options.ignore_weights {
            Graph {
                csr: g.csr.without_weights(),
                ..g
            }
        } else {
            g
        });
    }
    let data = text::open_bytes(path)?;
    progress.stage("parsing", data.len() as u64);
    let file = text::TextFile {
        path,
        data: &data,
        opts: options,
        progress,
    };
    let mut g = match format {
        GraphFormat::MatrixMarket => mtx::read(file)?,
        GraphFormat::Dimacs => dimacs::read(file)?,
        GraphFormat::Snap => snap::read(file)?,
        GraphFormat::Metis => metis_fmt::read(file)?,
        GraphFormat::Galois | GraphFormat::Cache => binary::read_galois(path, &data)?,
    };
    options.check_vertex_count(g.num_vertices() as u64)?;
    if options.ignore_weights && g.csr.is_weighted() {
        g.csr = g.csr.without_weights();
    }
    Ok(g)
}

/// Writes `graph` to `path` in `format` (or the format the extension implies; `.gr` means
/// Galois binary). Writable: Matrix Market, DIMACS, SNAP, Galois, groute cache.
///
/// Vertex ids are written in the format's numbering: `internal + 1` for Matrix Market and DIMACS,
/// the graph's external ids for SNAP (so a SNAP file round-trips with its own ids).
pub fn write_graph(
    graph: &Graph,
    path: impl AsRef<Path>,
    format: Option<GraphFormat>,
) -> Result<(), GraphError> {
    let path = path.as_ref();
    let format = match format {
        Some(f) => f,
        None => match GraphFormat::from_extension(path) {
            Some(f) => f,
            None if path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("gr")) =>
            {
                GraphFormat::Galois
            }
            None => {
                return Err(GraphError::UnknownFormat {
                    path: path.to_path_buf(),
                });
            }
        },
    };
    if cfg!(target_endian = "big") && matches!(format, GraphFormat::Galois | GraphFormat::Cache) {
        return Err(GraphError::Binary {
            path: path.to_path_buf(),
            offset: 0,
            problem: crate::error::BinaryProblem::Endianness,
        });
    }
    // Write to a temporary name, then rename: a reader never sees a half-written file, and a
    // cache that is mapped by someone else is replaced rather than overwritten in place.
    let tmp = path.with_extension(format!(
        "{}.tmp{}",
        path.extension().and_then(|e| e.to_str()).unwrap_or(""),
        std::process::id()
    ));
    let file = std::fs::File::create(&tmp).map_err(|e| GraphError::io(&tmp, e))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 22, file);
    let result = match format {
        GraphFormat::MatrixMarket => write::write_mtx(graph, &mut out),
        GraphFormat::Dimacs => write::write_dimacs(graph, &mut out),
        GraphFormat::Snap => write::write_snap(graph, &mut out),
        GraphFormat::Galois => binary::write_galois(graph, &mut out),
        GraphFormat::Cache => binary::write_cache(graph, &mut out),
        GraphFormat::Metis => {
            drop(out);
            std::fs::remove_file(&tmp).ok();
            return Err(GraphError::NotWritable { format });
        }
    };
    let result = result.and_then(|()| {
        use std::io::Write;
        out.flush()
    });
    if let Err(e) = result {
        std::fs::remove_file(&tmp).ok();
        return Err(GraphError::io(path, e));
    }
    drop(out);
    std::fs::rename(&tmp, path).map_err(|e| GraphError::io(path, e))
}

/// An error for a path that cannot be read as a file: missing ([`GraphError::Io`]) or a
/// directory ([`GraphError::IsADirectory`], rather than the system's word for mapping one).
pub(crate) fn reject_directory(path: &Path) -> Result<(), GraphError> {
    let meta = std::fs::metadata(path).map_err(|e| GraphError::io(path, e))?;
    if meta.is_dir() {
        return Err(GraphError::IsADirectory {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

pub(crate) fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}
