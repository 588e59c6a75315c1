//! [`GraphCache`]: a groute cache (`.grc`, laid out in [`binary`](super::binary)) read whole
//! or by rows.

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use super::binary::{BOM, HEADER, MAGIC, bin, invalid_to_error, map, u64_at};
use crate::alloc::try_zeroed;
use crate::csr::{Csr, Invalid};
use crate::error::{BinaryProblem, GraphError};
use crate::graph::{Graph, IdTable, VertexIds};
use crate::storage::Storage;

/// A groute cache (`.grc`) opened for reading, whole or by rows: the file is mapped, and its
/// header, section layout, offsets and id table are checked; arcs are checked as they are
/// read ([`GraphCache::load`] checks all, [`GraphCache::load_rows`] those of its rows).
///
/// A process of a run spanning several processes opens the cache, partitions the graph from
/// its [offsets](GraphCache::offsets) alone, and loads only the rows of its parts: the pages
/// of the other rows' arcs are never read. As with [`load_graph`](crate::load_graph), the file
/// must not be truncated or modified while the cache or a graph loaded from it is alive.
///
/// ```
/// use groute_graph::{GenSpec, GraphCache, GraphFormat, generate, write_graph};
///
/// let graph = generate(&"kron:scale=8,ef=4,sym".parse::<GenSpec>()?, &groute_graph::NoProgress)?;
/// let path = std::env::temp_dir().join(format!("doc-rows-{}.grc", std::process::id()));
/// write_graph(&graph, &path, Some(GraphFormat::Cache))?;
/// let cache = GraphCache::open(&path)?;
/// let rows = cache.load_rows(10..20)?;
/// assert_eq!(rows.num_vertices(), graph.num_vertices());
/// assert_eq!(rows.csr.neighbors(12), graph.csr.neighbors(12));
/// assert!(rows.csr.neighbors(25).is_empty());
/// # drop((cache, rows));
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct GraphCache {
    path: std::path::PathBuf,
    map: Arc<memmap2::Mmap>,
    n: u64,
    m: u64,
    offsets_at: u64,
    targets_at: u64,
    weights_at: Option<u64>,
    offsets: Storage<u64>,
    ids: VertexIds,
    name: String,
    symmetric: bool,
}

impl std::fmt::Debug for GraphCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphCache")
            .field("path", &self.path)
            .field("vertices", &self.n)
            .field("arcs", &self.m)
            .field("symmetric", &self.symmetric)
            .finish()
    }
}

impl GraphCache {
    /// Maps the cache at `path` and checks everything but the arcs: the header, that every
    /// section lies in the file, the offsets (from 0, non-decreasing, ending at the arc
    /// count) and the id table. Reads the offsets (8 bytes a vertex) and the id table where
    /// there is one (up to 12 more), no arc.
    pub fn open(path: impl AsRef<Path>) -> Result<GraphCache, GraphError> {
        Self::open_with(path.as_ref(), false)
    }

    /// [`GraphCache::open`]; `populate` reads the whole file in at once, for a caller that
    /// will read it all.
    pub(crate) fn open_with(path: &Path, populate: bool) -> Result<GraphCache, GraphError> {
        super::reject_directory(path)?;
        if cfg!(target_endian = "big") {
            return Err(bin(path, 8, BinaryProblem::Endianness));
        }
        let map = map(path, populate)?;
        let data: &[u8] = &map;
        let len = data.len() as u64;
        if data.len() < HEADER {
            return Err(bin(
                path,
                len,
                BinaryProblem::Truncated {
                    needed: HEADER as u64,
                    len,
                },
            ));
        }
        if &data[..8] != MAGIC {
            return Err(bin(
                path,
                0,
                BinaryProblem::BadMagic("not a groute cache (.grc) file"),
            ));
        }
        let bom = u32::from_le_bytes([data[8], data[9], data[10], data[11]]);
        if bom != BOM {
            return Err(bin(path, 8, BinaryProblem::Endianness));
        }
        let version = u32::from_le_bytes([data[12], data[13], data[14], data[15]]);
        if version != 1 {
            return Err(bin(
                path,
                12,
                BinaryProblem::BadField {
                    field: "version",
                    value: u64::from(version),
                },
            ));
        }
        let f = |i: usize| u64_at(data, 16 + 8 * i).unwrap_or(0);
        let (flags, n, m, base, name_len) = (f(0), f(1), f(2), f(3), f(4));
        let (offsets_at, targets_at, weights_at, ids_at, order_at, name_at) =
            (f(5), f(6), f(7), f(8), f(9), f(10));
        if n > u64::from(u32::MAX) {
            return Err(bin(
                path,
                24,
                BinaryProblem::BadField {
                    field: "n",
                    value: n,
                },
            ));
        }
        if m > len {
            return Err(bin(
                path,
                32,
                BinaryProblem::BadField {
                    field: "m",
                    value: m,
                },
            ));
        }
        let section =
            |at: u64, count: u64, size: u64, field: &'static str| -> Result<(), GraphError> {
                let end = count.checked_mul(size).and_then(|b| b.checked_add(at));
                match end {
                    Some(end) if end <= len && at % 8 == 0 => Ok(()),
                    Some(end) if at % 8 == 0 => {
                        Err(bin(path, at, BinaryProblem::Truncated { needed: end, len }))
                    }
                    _ => Err(bin(path, 56, BinaryProblem::BadField { field, value: at })),
                }
            };
        section(offsets_at, n + 1, 8, "offsets start")?;
        section(targets_at, m, 4, "targets start")?;
        let weighted = flags & 1 != 0;
        if weighted {
            section(weights_at, m, 4, "weights start")?;
        }
        let has_table = flags & 4 != 0;
        let has_order = flags & 8 != 0;
        if has_table {
            section(ids_at, n, 8, "ids start")?;
            if has_order {
                section(order_at, n, 4, "id order start")?;
            }
        }
        section(name_at, name_len, 1, "name start")?;
        let bad_layout = |field| bin(path, 56, BinaryProblem::BadField { field, value: 0 });
        let nu = n as usize;
        let offsets = Storage::<u64>::mapped(map.clone(), offsets_at as usize, nu + 1)
            .ok_or(bad_layout("offsets start"))?;
        crate::csr::check_offsets(&offsets, m)
            .map_err(|e| invalid_to_error(path, e, offsets_at, targets_at, n))?;
        let table = if has_table {
            let ext = Storage::<u64>::mapped(map.clone(), ids_at as usize, nu)
                .ok_or(bad_layout("ids start"))?;
            let by_ext = if has_order {
                let o = Storage::<u32>::mapped(map.clone(), order_at as usize, nu)
                    .ok_or(bad_layout("id order start"))?;
                if let Some(i) = o.par_iter().position_any(|&v| u64::from(v) >= n) {
                    return Err(bin(
                        path,
                        order_at + 4 * i as u64,
                        BinaryProblem::BadField {
                            field: "id order entry",
                            value: u64::from(o[i]),
                        },
                    ));
                }
                Some(o)
            } else {
                None
            };
            // `internal_id` searches the ids in their order: it must be strictly increasing.
            let unsorted = match &by_ext {
                None => ext.par_windows(2).position_first(|w| w[0] >= w[1]),
                Some(o) => o
                    .par_windows(2)
                    .position_first(|w| ext[w[0] as usize] >= ext[w[1] as usize]),
            };
            if let Some(i) = unsorted {
                let (at, size) = if has_order {
                    (order_at, 4)
                } else {
                    (ids_at, 8)
                };
                return Err(bin(
                    path,
                    at + size * (i as u64 + 1),
                    BinaryProblem::UnsortedIds {
                        entry: i as u64 + 1,
                    },
                ));
            }
            Some(IdTable { ext, by_ext })
        } else {
            // Offset ids run from `base` to `base + n - 1`, which must not wrap.
            if n > 0 && base.checked_add(n - 1).is_none() {
                return Err(bin(
                    path,
                    40,
                    BinaryProblem::BadField {
                        field: "id base",
                        value: base,
                    },
                ));
            }
            None
        };
        let name = String::from_utf8_lossy(&data[name_at as usize..(name_at + name_len) as usize])
            .into_owned();
        Ok(GraphCache {
            path: path.to_path_buf(),
            map: map.clone(),
            n,
            m,
            offsets_at,
            targets_at,
            weights_at: weighted.then_some(weights_at),
            offsets,
            ids: VertexIds::from_parts(base, table),
            name,
            symmetric: flags & 2 != 0,
        })
    }

    /// The arcs `from..to` (targets and weights, in place in the map).
    fn arcs(&self, from: u64, to: u64) -> Result<(Storage<u32>, Option<Storage<u32>>), GraphError> {
        let bad_layout = |field| bin(&self.path, 56, BinaryProblem::BadField { field, value: 0 });
        let count = (to - from) as usize;
        let targets = Storage::<u32>::mapped(
            self.map.clone(),
            (self.targets_at + 4 * from) as usize,
            count,
        )
        .ok_or(bad_layout("targets start"))?;
        let weights = match self.weights_at {
            Some(at) => Some(
                Storage::<u32>::mapped(self.map.clone(), (at + 4 * from) as usize, count)
                    .ok_or(bad_layout("weights start"))?,
            ),
            None => None,
        };
        Ok((targets, weights))
    }

    fn graph(&self, csr: Csr) -> Graph {
        Graph {
            csr,
            ids: self.ids.clone(),
            name: self.name.clone(),
            symmetric: self.symmetric,
        }
    }

    /// The number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.n as usize
    }

    /// The number of arcs of the whole graph.
    pub fn num_arcs(&self) -> u64 {
        self.m
    }

    /// The whole graph's offsets (`n + 1` words, in place in the map): enough to partition
    /// it ([`block_partition_of_offsets`](crate::block_partition_of_offsets)) and to know
    /// every vertex's out-degree.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// Whether the cache marks the graph symmetric ([`Graph::symmetric`]).
    pub fn is_symmetric(&self) -> bool {
        self.symmetric
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The whole graph, every arc checked (as [`load_graph`](crate::load_graph) reads it).
    pub fn load(&self) -> Result<Graph, GraphError> {
        self.whole()
    }

    /// The graph's vertices (all `n`, with their ids) holding the arcs of rows `rows` only:
    /// every other row is empty. Those arcs are checked and used in place in the map; the
    /// offsets are a new array of `n + 1` words. An error if `rows` is not a range of
    /// vertices.
    pub fn load_rows(&self, rows: std::ops::Range<u32>) -> Result<Graph, GraphError> {
        self.rows(rows)
    }

    fn whole(&self) -> Result<Graph, GraphError> {
        let (targets, weights) = self.arcs(0, self.m)?;
        let csr =
            Csr::with_checked_offsets(self.offsets.clone(), targets, weights).map_err(|e| {
                invalid_to_error(&self.path, e, self.offsets_at, self.targets_at, self.n)
            })?;
        Ok(self.graph(csr))
    }

    fn rows(&self, rows: std::ops::Range<u32>) -> Result<Graph, GraphError> {
        if rows.start > rows.end || u64::from(rows.end) > self.n {
            return Err(GraphError::RowRange {
                start: u64::from(rows.start),
                end: u64::from(rows.end),
                num_vertices: self.n,
            });
        }
        let o = &self.offsets[..];
        let (first, last) = (o[rows.start as usize], o[rows.end as usize]);
        let mut offsets = try_zeroed::<u64>(o.len(), "the offsets of a cache's rows")?;
        offsets[rows.start as usize..=rows.end as usize]
            .par_iter_mut()
            .zip(&o[rows.start as usize..=rows.end as usize])
            .for_each(|(to, &from)| *to = from - first);
        offsets[rows.end as usize..]
            .par_iter_mut()
            .for_each(|to| *to = last - first);
        let (targets, weights) = self.arcs(first, last)?;
        let csr =
            Csr::with_checked_offsets(offsets.into(), targets, weights).map_err(|e| match e {
                Invalid::Target { edge, target } => bin(
                    &self.path,
                    self.targets_at + 4 * (first + edge),
                    BinaryProblem::TargetOutOfRange {
                        edge: first + edge,
                        target,
                        num_vertices: self.n,
                    },
                ),
                other => {
                    invalid_to_error(&self.path, other, self.offsets_at, self.targets_at, self.n)
                }
            })?;
        Ok(self.graph(csr))
    }
}

/// Loads a whole groute cache by mapping it, checking every arc.
pub(crate) fn read_cache(path: &Path) -> Result<Graph, GraphError> {
    GraphCache::open_with(path, true)?.whole()
}
