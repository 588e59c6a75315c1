//! Graphs from other crates: `TryFrom` for [`Graph`](crate::Graph) from petgraph's `Graph` and `Csr`
//! (feature `petgraph`) and from sprs's sparse matrices (feature `sprs`), with edge weights
//! converted by [`ArcWeight`].
//!
//! ```
//! # #[cfg(feature = "petgraph")] {
//! // With `groute = { version = "0.1", features = ["petgraph"] }`:
//! let mut p = petgraph::Graph::<(), u32>::new();
//! let (a, b) = (p.add_node(()), p.add_node(()));
//! p.add_edge(a, b, 7);
//! let graph = groute::Graph::try_from(&p)?;
//! assert_eq!(groute::sssp(&graph, 0)?.distances, [0, 7]);
//! # }
//! # Ok::<(), groute::Error>(())
//! ```
//!
//! Vertex `i` of the result is node index `i` (petgraph) or row and column `i` (sprs). An
//! undirected petgraph graph gives a symmetric graph. A sparse matrix is an adjacency matrix:
//! entry `(i, j)` is the arc `i -> j`, weighed by its value (a stored zero is an arc of
//! weight 0).

use super::error::WeightProblem;

/// An edge weight of another crate's graph, as groute's `u32` arc weight.
///
/// `()` and `bool` mean "no weight" (the graph is unweighted); integers convert where they fit
/// in `u32`; floats where they are finite, non-negative integers that fit.
pub trait ArcWeight {
    /// The weight, `None` for unweighted, or why it does not fit.
    fn arc_weight(&self) -> Result<Option<u32>, WeightProblem>;
}

impl ArcWeight for () {
    fn arc_weight(&self) -> Result<Option<u32>, WeightProblem> {
        Ok(None)
    }
}

impl ArcWeight for bool {
    fn arc_weight(&self) -> Result<Option<u32>, WeightProblem> {
        Ok(None)
    }
}

macro_rules! integer_weights {
    ($($t:ty),*) => {$(
        impl ArcWeight for $t {
            fn arc_weight(&self) -> Result<Option<u32>, WeightProblem> {
                u32::try_from(*self).map(Some).map_err(|_| {
                    // Out of range: below zero, or above u32::MAX (u128's above i128 too).
                    if i128::try_from(*self).is_ok_and(|x| x < 0) {
                        WeightProblem::Negative
                    } else {
                        WeightProblem::TooLarge
                    }
                })
            }
        }
    )*};
}

integer_weights!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);

macro_rules! float_weights {
    ($($t:ty),*) => {$(
        impl ArcWeight for $t {
            fn arc_weight(&self) -> Result<Option<u32>, WeightProblem> {
                let x = f64::from(*self);
                if !x.is_finite() {
                    Err(WeightProblem::NotFinite)
                } else if x < 0.0 {
                    Err(WeightProblem::Negative)
                } else if x.fract() != 0.0 {
                    Err(WeightProblem::Fractional)
                } else if x > f64::from(u32::MAX) {
                    Err(WeightProblem::TooLarge)
                } else {
                    Ok(Some(x as u32))
                }
            }
        }
    )*};
}

float_weights!(f32, f64);

impl<T: ArcWeight> ArcWeight for &T {
    fn arc_weight(&self) -> Result<Option<u32>, WeightProblem> {
        (**self).arc_weight()
    }
}

/// Builds a graph of `vertices` vertices from `(index, from, to, weight)` arcs.
#[cfg(any(feature = "petgraph", feature = "sprs"))]
fn from_arcs<W: ArcWeight>(
    vertices: usize,
    arcs: impl Iterator<Item = (usize, usize, W)>,
    symmetrize: bool,
    symmetric: bool,
    name: String,
) -> super::error::Result<super::graph::Graph> {
    use super::error::Error;

    let limit = u32::MAX as usize;
    if vertices > limit {
        return Err(Error::TooManyVertices { vertices });
    }
    let mut checked = Vec::new();
    for (index, (u, v, w)) in arcs.enumerate() {
        let weight = w.arc_weight().map_err(|problem| Error::InvalidWeight {
            index,
            from: u as u64,
            to: v as u64,
            problem,
        })?;
        if u >= vertices || v >= vertices {
            return Err(Error::EdgeOutOfRange {
                index,
                from: u as u64,
                to: v as u64,
                vertices,
            });
        }
        checked.push((u as u32, v as u32, weight));
    }
    let list = super::graph::edge_list(vertices, checked.into_iter())?;
    let csr = groute_graph::CsrBuilder::new(vertices)
        .symmetrize(symmetrize)
        .build(&list)?;
    Ok(super::graph::Graph::from_graph(groute_graph::Graph::new(
        csr, name, symmetric,
    )))
}

#[cfg(feature = "petgraph")]
mod petgraph_graphs {
    use petgraph::EdgeType;
    use petgraph::graph::IndexType;
    use petgraph::visit::EdgeRef;

    use super::{ArcWeight, from_arcs};
    use crate::api::error::Error;
    use crate::api::graph::Graph;

    /// Node `i` becomes vertex `i`; each edge an arc (both ways when undirected), weighed by
    /// [`ArcWeight`].
    impl<N, E: ArcWeight, Ty: EdgeType, Ix: IndexType> TryFrom<&petgraph::Graph<N, E, Ty, Ix>>
        for Graph
    {
        type Error = Error;

        fn try_from(g: &petgraph::Graph<N, E, Ty, Ix>) -> Result<Graph, Error> {
            let directed = Ty::is_directed();
            let arcs = g
                .edge_references()
                .map(|e| (e.source().index(), e.target().index(), e.weight()));
            let kind = if directed { "directed" } else { "undirected" };
            let name = format!("petgraph {kind} graph ({} nodes)", g.node_count());
            from_arcs(g.node_count(), arcs, !directed, !directed, name)
        }
    }

    /// Node `i` becomes vertex `i`; each stored arc an arc (an undirected `Csr` stores both
    /// ways already), weighed by [`ArcWeight`].
    impl<N, E: ArcWeight, Ty: EdgeType, Ix: IndexType> TryFrom<&petgraph::csr::Csr<N, E, Ty, Ix>>
        for Graph
    {
        type Error = Error;

        fn try_from(g: &petgraph::csr::Csr<N, E, Ty, Ix>) -> Result<Graph, Error> {
            let n = g.node_count();
            let arcs = (0..n).flat_map(|u| {
                let a = Ix::new(u);
                g.neighbors_slice(a)
                    .iter()
                    .zip(g.edges_slice(a))
                    .map(move |(t, w)| (u, t.index(), w))
            });
            let directed = Ty::is_directed();
            let kind = if directed { "directed" } else { "undirected" };
            let name = format!("petgraph {kind} csr ({n} nodes)");
            from_arcs(n, arcs, false, !directed, name)
        }
    }
}

#[cfg(feature = "sprs")]
mod sprs_matrices {
    use std::ops::Deref;

    use sprs::{CsMatBase, SpIndex};

    use super::{ArcWeight, from_arcs};
    use crate::api::error::Error;
    use crate::api::graph::Graph;

    /// An adjacency matrix, CSR or CSC: entry `(i, j)` is the arc `i -> j` weighed by its value
    /// ([`ArcWeight`]); the matrix must be square.
    impl<N, I, Iptr, IptrStorage, IndStorage, DataStorage>
        TryFrom<&CsMatBase<N, I, IptrStorage, IndStorage, DataStorage, Iptr>> for Graph
    where
        N: ArcWeight,
        I: SpIndex,
        Iptr: SpIndex,
        IptrStorage: Deref<Target = [Iptr]>,
        IndStorage: Deref<Target = [I]>,
        DataStorage: Deref<Target = [N]>,
    {
        type Error = Error;

        fn try_from(
            m: &CsMatBase<N, I, IptrStorage, IndStorage, DataStorage, Iptr>,
        ) -> Result<Graph, Error> {
            let (rows, cols) = (m.rows(), m.cols());
            if rows != cols {
                return Err(Error::NotSquare { rows, cols });
            }
            let arcs = m.iter().map(|(w, (i, j))| (i.index(), j.index(), w));
            let name = format!("sprs {rows} x {cols} adjacency matrix");
            from_arcs(rows, arcs, false, false, name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_convert_where_they_are_u32_and_name_the_problem_otherwise() {
        assert_eq!(7u64.arc_weight(), Ok(Some(7)));
        assert_eq!(().arc_weight(), Ok(None));
        assert_eq!((-1i32).arc_weight(), Err(WeightProblem::Negative));
        assert_eq!((1u64 << 40).arc_weight(), Err(WeightProblem::TooLarge));
        assert_eq!(2.0f64.arc_weight(), Ok(Some(2)));
        assert_eq!(2.5f32.arc_weight(), Err(WeightProblem::Fractional));
        assert_eq!(f64::NAN.arc_weight(), Err(WeightProblem::NotFinite));
        assert_eq!((-0.5f64).arc_weight(), Err(WeightProblem::Negative));
        assert_eq!(5e9f64.arc_weight(), Err(WeightProblem::TooLarge));
    }
}
