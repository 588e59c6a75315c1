//! [`HeldRows`]: the rows of a graph that one process of a run holds, and what it knows of
//! the whole graph.

use std::ops::Range;

use crate::csr::Csr;
use crate::error::GraphError;

/// The rows of a graph that one process of a run holds: a [`Csr`] over all the graph's
/// vertices whose rows in [`held`](HeldRows::held) are the graph's own, and whether the whole
/// graph is symmetric. Rows outside `held` may be empty (a process that loaded only its rows,
/// [`GraphCache::load_rows`](crate::GraphCache::load_rows)) or whole (a process that loaded
/// the whole graph but runs only some of its parts): the executors never read them.
///
/// What the whole graph alone can give is asked of this type, so that a process holding some
/// rows never computes it from a part: the in-arcs ([`HeldRows::in_arcs`]).
#[derive(Clone, Debug)]
pub struct HeldRows<'a> {
    csr: &'a Csr,
    held: Range<u32>,
    symmetric: Option<bool>,
}

/// Where the in-arcs of the held rows come from ([`HeldRows::in_arcs`]).
#[derive(Debug)]
pub enum InArcs {
    /// The graph is symmetric: a vertex's in-arcs are its out-arcs, in the held rows.
    OwnRows,
    /// The whole graph is held, and this is its transpose.
    Transpose(Csr),
    /// Only some rows of a directed graph are held: their in-arcs come from rows that are not.
    Unavailable,
}

impl<'a> HeldRows<'a> {
    /// All of `csr`'s rows: a process that holds the whole graph (symmetry found from the
    /// arcs when asked).
    pub fn whole(csr: &'a Csr) -> Self {
        HeldRows {
            csr,
            held: 0..csr.num_vertices() as u32,
            symmetric: None,
        }
    }

    /// Rows `held` of `csr`, a part of a graph that is symmetric when `symmetric` says so (as
    /// [`Graph::symmetric`](crate::Graph::symmetric) or
    /// [`GraphCache::is_symmetric`](crate::GraphCache::is_symmetric) tell). An error if
    /// `held` is not a range of `csr`'s vertices.
    pub fn some(csr: &'a Csr, held: Range<u32>, symmetric: bool) -> Result<Self, GraphError> {
        let n = csr.num_vertices() as u64;
        if held.start > held.end || u64::from(held.end) > n {
            return Err(GraphError::RowRange {
                start: u64::from(held.start),
                end: u64::from(held.end),
                num_vertices: n,
            });
        }
        Ok(HeldRows {
            csr,
            held,
            symmetric: Some(symmetric),
        })
    }

    /// The CSR (rows outside [`HeldRows::held`] are not the graph's).
    pub fn csr(&self) -> &'a Csr {
        self.csr
    }

    /// The rows held.
    pub fn held(&self) -> Range<u32> {
        self.held.clone()
    }

    /// The graph's vertex count.
    pub fn num_vertices(&self) -> usize {
        self.csr.num_vertices()
    }

    /// Arcs per vertex over the held rows (the whole graph's average where it is all held):
    /// what a share's executor tunes itself by.
    pub fn average_degree(&self) -> f64 {
        let o = self.csr.offsets();
        let arcs = o[self.held.end as usize] - o[self.held.start as usize];
        arcs as f64 / (self.held.end - self.held.start).max(1) as f64
    }

    /// Whether every row of `rows` is held.
    pub fn holds(&self, rows: &Range<u32>) -> bool {
        rows.is_empty() || (self.held.start <= rows.start && rows.end <= self.held.end)
    }

    /// Whether every row of the graph is held.
    pub fn is_whole(&self) -> bool {
        self.holds(&(0..self.csr.num_vertices() as u32))
    }

    /// Whether the graph is symmetric: as given for some rows, found from the arcs (one pass,
    /// no transpose) for the whole graph.
    pub fn is_symmetric(&self) -> bool {
        self.symmetric.unwrap_or_else(|| self.csr.is_symmetric())
    }

    /// The in-arcs of the held rows' vertices: the rows themselves on a symmetric graph, the
    /// transpose where the whole graph is held and is not symmetric (built here), else
    /// unavailable.
    pub fn in_arcs(&self) -> InArcs {
        match (self.symmetric, self.is_whole()) {
            (Some(true), _) => InArcs::OwnRows,
            (_, false) => InArcs::Unavailable,
            (Some(false), true) => InArcs::Transpose(self.csr.transpose()),
            (None, true) => match self.csr.transpose_unless_symmetric() {
                Some(t) => InArcs::Transpose(t),
                None => InArcs::OwnRows,
            },
        }
    }
}

impl<'a> From<&'a Csr> for HeldRows<'a> {
    fn from(csr: &'a Csr) -> Self {
        HeldRows::whole(csr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csr::{CsrBuilder, EdgeList};

    fn path(symmetric: bool) -> Csr {
        let pairs: &[(u32, u32)] = if symmetric {
            &[(0, 1), (1, 0), (1, 2), (2, 1)]
        } else {
            &[(0, 1), (1, 2)]
        };
        CsrBuilder::new(3)
            .build(&EdgeList::from_pairs(pairs))
            .expect("a valid graph")
    }

    #[test]
    fn whole_rows_find_symmetry_from_the_arcs() {
        let sym = path(true);
        assert!(matches!(HeldRows::whole(&sym).in_arcs(), InArcs::OwnRows));
        let directed = path(false);
        match HeldRows::whole(&directed).in_arcs() {
            InArcs::Transpose(t) => assert_eq!(t.neighbors(2), &[1]),
            other => panic!("expected the transpose, got {other:?}"),
        }
    }

    #[test]
    fn some_rows_of_a_directed_graph_have_no_in_arcs() {
        let directed = path(false);
        let rows = HeldRows::some(&directed, 0..2, false).expect("a range of vertices");
        assert!(rows.holds(&(0..1)) && rows.holds(&(1..2)) && !rows.holds(&(1..3)));
        assert!(!rows.is_whole());
        assert!(matches!(rows.in_arcs(), InArcs::Unavailable));
        let sym = path(true);
        let rows = HeldRows::some(&sym, 2..3, true).expect("a range of vertices");
        assert!(matches!(rows.in_arcs(), InArcs::OwnRows));
        // Held rows that turn out to be all of them give the transpose.
        let all = HeldRows::some(&directed, 0..3, false).expect("a range of vertices");
        assert!(matches!(all.in_arcs(), InArcs::Transpose(_)));
    }

    #[test]
    fn rows_outside_the_graph_are_an_error() {
        let g = path(true);
        assert!(HeldRows::some(&g, 1..4, true).is_err());
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 2..1;
        assert!(HeldRows::some(&g, reversed, true).is_err());
    }
}
