//! A loaded graph: CSR, the vertex numbering of its source, and a description.

use rayon::prelude::*;

use crate::csr::{Csr, CsrBuilder, EdgeList};
use crate::error::GraphError;
use crate::generate::{GenSpec, generate};
use crate::progress::NoProgress;
use crate::storage::Storage;

/// Maps internal vertex ids (`0..n`, the CSR's) to the ids of the input file's own numbering.
///
/// Two shapes: an offset (`external = internal + base`: base 1 for Matrix Market, DIMACS and
/// METIS, base 0 for Galois and generated graphs), or a table (SNAP files with non-contiguous ids,
/// and any graph renumbered by the partitioner).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexIds {
    base: u64,
    table: Option<IdTable>,
}

/// `ext[v]` is the external id of `v`; `by_ext` lists the internal ids in increasing external
/// order (absent when `ext` itself is increasing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IdTable {
    pub(crate) ext: Storage<u64>,
    pub(crate) by_ext: Option<Storage<u32>>,
}

impl VertexIds {
    /// `external = internal + base`.
    pub fn offset(base: u64) -> VertexIds {
        VertexIds { base, table: None }
    }

    /// An explicit table: `external[v]` is the external id of internal vertex `v`. The ids must
    /// be distinct (checked: returns `None` if not).
    pub fn from_table(base: u64, external: Vec<u64>) -> Option<VertexIds> {
        let sorted = external.par_windows(2).all(|w| w[0] < w[1]);
        let by_ext = if sorted {
            None
        } else {
            let mut idx: Vec<u32> = (0..external.len() as u32).collect();
            idx.par_sort_unstable_by_key(|&v| external[v as usize]);
            if idx
                .par_windows(2)
                .any(|w| external[w[0] as usize] == external[w[1] as usize])
            {
                return None;
            }
            Some(idx.into())
        };
        Some(VertexIds {
            base,
            table: Some(IdTable {
                ext: external.into(),
                by_ext,
            }),
        })
    }

    pub(crate) fn from_parts(base: u64, table: Option<IdTable>) -> VertexIds {
        VertexIds { base, table }
    }

    pub(crate) fn table(&self) -> Option<&IdTable> {
        self.table.as_ref()
    }

    /// The base of the input format's numbering (0 or 1).
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Whether ids are a plain offset of internal ids.
    pub fn is_offset(&self) -> bool {
        self.table.is_none()
    }

    /// The id, in the input file's numbering, of internal vertex `v`.
    #[inline]
    pub fn external_id(&self, v: u32) -> u64 {
        match &self.table {
            None => u64::from(v) + self.base,
            Some(t) => t.ext[v as usize],
        }
    }

    /// The internal id of external id `ext`, if `ext` names a vertex of a graph of `n` vertices.
    pub fn internal_id(&self, ext: u64, n: usize) -> Option<u32> {
        match &self.table {
            None => {
                let v = ext.checked_sub(self.base)?;
                (v < n as u64).then_some(v as u32)
            }
            Some(t) => match &t.by_ext {
                None => t.ext.binary_search(&ext).ok().map(|i| i as u32),
                Some(order) => {
                    let i = order.partition_point(|&v| t.ext[v as usize] < ext);
                    let v = *order.get(i)?;
                    (t.ext[v as usize] == ext).then_some(v)
                }
            },
        }
    }

    /// The ids after renumbering: new vertex `v` was old vertex `old_of_new[v]`.
    pub fn permuted(&self, old_of_new: &[u32]) -> VertexIds {
        let ext: Vec<u64> = old_of_new
            .par_iter()
            .map(|&o| self.external_id(o))
            .collect();
        // Distinct because `self` maps distinct vertices to distinct ids.
        VertexIds::from_table(self.base, ext).unwrap_or_else(|| VertexIds::offset(self.base))
    }
}

/// A graph as loaded or generated: its arcs, the numbering of its source, and a description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    /// The arcs.
    pub csr: Csr,
    /// The numbering of the source.
    pub ids: VertexIds,
    /// A short description: file name or generator spec.
    pub name: String,
    /// Whether the graph is known to be symmetric (undirected): set by readers of undirected
    /// formats, by symmetrising builders and generators. `false` means "not known", not
    /// "asymmetric"; see [`Csr::is_symmetric`].
    pub symmetric: bool,
}

impl Graph {
    /// A graph with 0-based identity numbering.
    pub fn new(csr: Csr, name: impl Into<String>, symmetric: bool) -> Graph {
        Graph {
            csr,
            ids: VertexIds::offset(0),
            name: name.into(),
            symmetric,
        }
    }

    /// A graph of `num_vertices` vertices (0-based) with the arcs of `edges`, both directions
    /// of each when `symmetric`: [`CsrBuilder`]'s CSR under [`Graph::new`].
    ///
    /// ```
    /// use groute_graph::{EdgeList, Graph};
    ///
    /// let g = Graph::from_edges(3, &EdgeList::from_pairs(&[(0, 1), (1, 2)]), "path", true)?;
    /// assert_eq!(g.csr.num_edges(), 4);
    /// assert!(Graph::from_edges(2, &EdgeList::from_pairs(&[(0, 5)]), "bad", false).is_err());
    /// # Ok::<(), groute_graph::GraphError>(())
    /// ```
    pub fn from_edges(
        num_vertices: usize,
        edges: &EdgeList,
        name: impl Into<String>,
        symmetric: bool,
    ) -> Result<Graph, GraphError> {
        let csr = CsrBuilder::new(num_vertices)
            .symmetrize(symmetric)
            .build(edges)?;
        Ok(Graph::new(csr, name, symmetric))
    }

    /// The graph a generator spec names (`kron:scale=10,ef=16,sym`, `road:side=64`, ...; see
    /// [`GenSpec`]), generated without progress reports.
    pub fn generated(spec: &str) -> Result<Graph, GraphError> {
        generate(&spec.parse::<GenSpec>()?, &NoProgress)
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.csr.num_vertices()
    }

    /// Number of directed arcs.
    pub fn num_edges(&self) -> u64 {
        self.csr.num_edges()
    }

    /// The id in the source's numbering of internal vertex `v`.
    pub fn external_id(&self, v: u32) -> u64 {
        self.ids.external_id(v)
    }

    /// The internal id of a vertex named in the source's numbering.
    pub fn internal_id(&self, ext: u64) -> Option<u32> {
        self.ids.internal_id(ext, self.num_vertices())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_ids_round_trip() {
        let ids = VertexIds::offset(1);
        assert_eq!(ids.external_id(0), 1);
        assert_eq!(ids.internal_id(1, 5), Some(0));
        assert_eq!(ids.internal_id(0, 5), None);
        assert_eq!(ids.internal_id(6, 5), None);
    }

    #[test]
    fn table_ids_round_trip_sorted_and_not() {
        let ids = VertexIds::from_table(0, vec![3, 10, 42]).unwrap();
        assert_eq!(ids.internal_id(10, 3), Some(1));
        assert_eq!(ids.internal_id(11, 3), None);
        let p = ids.permuted(&[2, 0, 1]);
        assert_eq!(p.external_id(0), 42);
        assert_eq!(p.internal_id(3, 3), Some(1));
        assert_eq!(p.internal_id(4, 3), None);
        assert!(VertexIds::from_table(0, vec![3, 1, 3]).is_none());
    }
}
