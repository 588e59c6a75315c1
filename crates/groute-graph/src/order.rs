//! The input order: vertices ranked by their id in the input file.
//!
//! Solvers report per-vertex values by *rank* (the position of a vertex's external id among
//! all external ids), which is independent of any renumbering by the partitioner. For
//! offset-numbered graphs (every format but SNAP with gaps, before partitioning) the rank of
//! a vertex is simply its internal id.

use rayon::prelude::*;

use crate::graph::Graph;

/// Ranks of a graph's vertices by external id (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputOrder {
    base: u64,
    /// `None`: identity (`external = base + internal`, rank = internal id).
    table: Option<RankTable>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct RankTable {
    /// Internal vertex of each rank.
    vertex: Vec<u32>,
    /// External id of each rank (increasing).
    external: Vec<u64>,
}

impl InputOrder {
    /// The input order of `graph` (O(n log n) when the numbering is not the identity).
    pub fn of(graph: &Graph) -> InputOrder {
        let n = graph.num_vertices() as u32;
        let base = graph.ids.base();
        let identity = (0..n)
            .into_par_iter()
            .all(|v| graph.external_id(v) == base + u64::from(v));
        if identity {
            return InputOrder { base, table: None };
        }
        let mut vertex: Vec<u32> = (0..n).collect();
        vertex.par_sort_unstable_by_key(|&v| graph.external_id(v));
        let external = vertex.par_iter().map(|&v| graph.external_id(v)).collect();
        InputOrder {
            base,
            table: Some(RankTable { vertex, external }),
        }
    }

    /// Whether rank and internal id coincide.
    pub fn is_identity(&self) -> bool {
        self.table.is_none()
    }

    /// Number of ranked vertices (`None` for the identity, which fits any size).
    pub fn len(&self) -> Option<usize> {
        self.table.as_ref().map(|t| t.vertex.len())
    }

    /// Whether the order ranks no vertex (only a table can be empty).
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// The internal vertex of `rank`.
    pub fn vertex_of_rank(&self, rank: u32) -> u32 {
        match &self.table {
            None => rank,
            Some(t) => t.vertex[rank as usize],
        }
    }

    /// The external id of `rank`.
    pub fn external_of_rank(&self, rank: u32) -> u64 {
        match &self.table {
            None => self.base + u64::from(rank),
            Some(t) => t.external[rank as usize],
        }
    }

    /// The rank of external id `ext` in a graph of `n` vertices, if it names a vertex.
    pub fn rank_of_external(&self, ext: u64, n: usize) -> Option<u32> {
        match &self.table {
            None => ext
                .checked_sub(self.base)
                .filter(|&r| r < n as u64)
                .map(|r| r as u32),
            Some(t) => t.external.binary_search(&ext).ok().map(|r| r as u32),
        }
    }

    /// Reorders per-vertex `values` (indexed by internal id) into rank order.
    pub fn to_rank_order<T: Copy + Send + Sync>(&self, values: Vec<T>) -> Vec<T> {
        match &self.table {
            None => values,
            Some(t) => t.vertex.par_iter().map(|&v| values[v as usize]).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CsrBuilder, EdgeList, VertexIds};

    fn path(n: u32) -> Graph {
        let pairs: Vec<(u32, u32)> = (1..n).map(|v| (v - 1, v)).collect();
        let csr = CsrBuilder::new(n as usize)
            .build(&EdgeList::from_pairs(&pairs))
            .unwrap();
        Graph::new(csr, "path", false)
    }

    #[test]
    fn offset_numbering_is_the_identity() {
        let mut g = path(4);
        g.ids = VertexIds::offset(1);
        let o = InputOrder::of(&g);
        assert!(o.is_identity());
        assert_eq!(o.rank_of_external(1, 4), Some(0));
        assert_eq!(o.rank_of_external(0, 4), None);
        assert_eq!(o.rank_of_external(5, 4), None);
        assert_eq!(o.external_of_rank(3), 4);
        assert_eq!(o.to_rank_order(vec![7, 8, 9, 10]), vec![7, 8, 9, 10]);
    }

    #[test]
    fn a_table_ranks_by_external_id() {
        let mut g = path(4);
        g.ids = VertexIds::from_table(0, vec![40, 10, 30, 20]).unwrap();
        let o = InputOrder::of(&g);
        assert!(!o.is_identity());
        assert_eq!(o.len(), Some(4));
        assert_eq!(
            (0..4).map(|r| o.external_of_rank(r)).collect::<Vec<_>>(),
            vec![10, 20, 30, 40]
        );
        assert_eq!(o.vertex_of_rank(0), 1);
        assert_eq!(o.rank_of_external(30, 4), Some(2));
        assert_eq!(o.rank_of_external(31, 4), None);
        // values by internal id: v0=a(40) v1=b(10) v2=c(30) v3=d(20)
        assert_eq!(
            o.to_rank_order(vec!['a', 'b', 'c', 'd']),
            vec!['b', 'd', 'c', 'a']
        );
    }
}
