//! [`Graph`]: a loaded or generated graph, ready for the runs.

use std::path::Path;
use std::sync::Arc;

use groute_graph::{
    CsrBuilder, EdgeList, GenSpec, GraphFormat, InputOrder, NoProgress, generate, load_graph,
};
use serde::{Deserialize, Serialize};

use super::error::{Error, Result};

/// A graph to run algorithms on: its arcs, the numbering of the file it came from, and a name.
///
/// Vertices are numbered `0..vertices()` in **input order**: by their id in the input file
/// (for generated graphs and every 0-based format, vertex `v` is id `v`; a 1-based Matrix
/// Market, DIMACS or METIS file's vertex 1 is vertex 0). Sources are given, and every result
/// is indexed, in this numbering, whatever a partitioner does to the graph inside a run;
/// [`Graph::vertex`] and [`Graph::file_id`] convert to and from the file's ids.
///
/// Cloning is cheap (the arcs are shared), so a graph can be handed to asynchronous runs.
///
/// ```
/// use groute::Graph;
///
/// let grid = Graph::generate("road:side=8")?;
/// assert_eq!(grid.vertices(), 64);
/// assert!(grid.is_symmetric() && grid.is_weighted());
///
/// let path = Graph::from_edges(3, [(0, 1), (1, 2)])?;
/// assert_eq!((path.vertices(), path.arcs()), (3, 2));
/// let weighted = Graph::from_undirected_edges(3, [(0, 1, 5), (1, 2, 7)])?;
/// assert_eq!(weighted.arcs(), 4);
/// # Ok::<(), groute::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Graph {
    inner: Arc<Loaded>,
}

#[derive(Debug)]
struct Loaded {
    graph: groute_graph::Graph,
    order: InputOrder,
    numbering: FileIds,
}

impl Graph {
    /// Loads a graph file, its format taken from the extension (`.mtx` Matrix Market, `.gr`
    /// DIMACS or Galois binary, `.txt`/`.el` SNAP edge list, `.graph` METIS, `.grc` groute's
    /// binary cache), as the examples' `--graph` does.
    pub fn load(path: impl AsRef<Path>) -> Result<Graph> {
        Graph::load_as(path, None)
    }

    /// Loads a graph file in `format` (`None`: from the extension, like [`Graph::load`]).
    pub fn load_as(path: impl AsRef<Path>, format: Option<GraphFormat>) -> Result<Graph> {
        Ok(Graph::from_graph(load_graph(path, format)?))
    }

    /// Generates the graph a spec names, as the examples' `--gen` does: `kron:scale=16,ef=16,sym`
    /// (Graph500 Kronecker), `road:side=64` (a weighted road-like grid), `random:n=1000,m=5000`,
    /// presets such as `kron21.sym` and `road-usa`, and `weights=1..100` on any of them (see
    /// [`GenSpec`]). The same spec gives the same graph on every machine.
    pub fn generate(spec: &str) -> Result<Graph> {
        let spec: GenSpec = spec.parse()?;
        Ok(Graph::from_graph(generate(&spec, &NoProgress)?))
    }

    /// A directed graph of `vertices` vertices with the arcs `edges`: pairs `(u, v)`, or
    /// triples `(u, v, w)` with a `u32` weight `w`. Duplicate arcs and self-loops are kept.
    pub fn from_edges<E: IntoArc>(
        vertices: usize,
        edges: impl IntoIterator<Item = E>,
    ) -> Result<Graph> {
        Graph::build(vertices, edges, false)
    }

    /// An undirected graph: every edge `(u, v)` or `(u, v, w)` becomes the arcs `u -> v` and
    /// `v -> u` (a self-loop one arc).
    pub fn from_undirected_edges<E: IntoArc>(
        vertices: usize,
        edges: impl IntoIterator<Item = E>,
    ) -> Result<Graph> {
        Graph::build(vertices, edges, true)
    }

    fn build<E: IntoArc>(
        vertices: usize,
        edges: impl IntoIterator<Item = E>,
        symmetric: bool,
    ) -> Result<Graph> {
        let list = edge_list(vertices, edges.into_iter().map(IntoArc::into_arc))?;
        let csr = CsrBuilder::new(vertices)
            .symmetrize(symmetric)
            .build(&list)?;
        let kind = if symmetric { "undirected" } else { "directed" };
        Ok(Graph::from_graph(groute_graph::Graph::new(
            csr,
            format!("{kind} edge list ({vertices} vertices)"),
            symmetric,
        )))
    }

    /// Wraps a graph built with [`groute::graph`](crate::graph) (an empty graph is refused when
    /// a run starts).
    pub fn from_graph(graph: groute_graph::Graph) -> Graph {
        let order = InputOrder::of(&graph);
        let numbering = if order.is_identity() {
            FileIds::Offset(graph.ids.base())
        } else {
            let n = graph.num_vertices() as u32;
            FileIds::Table((0..n).map(|r| order.external_of_rank(r)).collect())
        };
        Graph {
            inner: Arc::new(Loaded {
                graph,
                order,
                numbering,
            }),
        }
    }

    /// Number of vertices.
    pub fn vertices(&self) -> usize {
        self.inner.graph.num_vertices()
    }

    /// Number of arcs (an undirected edge counts twice, once each way).
    pub fn arcs(&self) -> u64 {
        self.inner.graph.num_edges()
    }

    /// The file name or the generator spec.
    pub fn name(&self) -> &str {
        &self.inner.graph.name
    }

    /// Whether the arcs carry weights (SSSP weighs unweighted arcs 1).
    pub fn is_weighted(&self) -> bool {
        self.inner.graph.csr.is_weighted()
    }

    /// Whether the graph is known to be undirected (its format or generator says so).
    pub fn is_symmetric(&self) -> bool {
        self.inner.graph.symmetric
    }

    /// The vertex (input order) whose id in the input file is `file_id`, if there is one.
    ///
    /// ```
    /// use groute::Graph;
    /// let g = Graph::from_graph(groute::graph::Graph {
    ///     ids: groute::graph::VertexIds::offset(1), // a 1-based file
    ///     ..Graph::from_edges(2, [(0, 1)])?.as_graph().clone()
    /// });
    /// assert_eq!(g.vertex(1), Some(0));
    /// assert_eq!(g.file_id(1), 2);
    /// assert_eq!(g.vertex(0), None);
    /// # Ok::<(), groute::Error>(())
    /// ```
    pub fn vertex(&self, file_id: u64) -> Option<u32> {
        self.inner.order.rank_of_external(file_id, self.vertices())
    }

    /// A source for [`bfs`](crate::bfs()) and [`sssp`](crate::sssp()) that reaches most of the
    /// graph: the vertex of highest out-degree in the largest weakly connected component (the
    /// lowest vertex among equals), in input order. A fixed vertex such as 0 may lie in a
    /// component of a few vertices. Takes one pass over the arcs and 8 bytes per vertex.
    ///
    /// ```
    /// let graph = groute::Graph::from_undirected_edges(6, [(0, 1), (4, 2), (4, 3), (4, 5)])?;
    /// assert_eq!(graph.default_source()?, 4);
    /// # Ok::<(), groute::Error>(())
    /// ```
    pub fn default_source(&self) -> Result<u32> {
        let hub = groute_graph::largest_component_hub(&self.inner.graph, &self.inner.order)?;
        hub.map(|h| h.rank).ok_or_else(|| Error::EmptyGraph {
            name: self.name().to_string(),
        })
    }

    /// The id in the input file of `vertex` (input order; below [`vertices`](Self::vertices)).
    pub fn file_id(&self, vertex: u32) -> u64 {
        self.inner.numbering.file_id(vertex)
    }

    /// The numbering of the input file, as results carry it.
    pub fn file_ids(&self) -> &FileIds {
        &self.inner.numbering
    }

    /// The graph as [`groute::graph`](crate::graph) holds it (CSR in internal numbering, which
    /// is the input order except for SNAP files with gaps in their ids).
    pub fn as_graph(&self) -> &groute_graph::Graph {
        &self.inner.graph
    }

    /// The out-neighbours of `vertex` (both in input order), with their weights if any.
    pub fn neighbors(&self, vertex: u32) -> impl Iterator<Item = (u32, Option<u32>)> + '_ {
        let order = &self.inner.order;
        let csr = &self.inner.graph.csr;
        let v = order.vertex_of_rank(vertex);
        let weights = csr.edge_weights(v);
        csr.neighbors(v).iter().enumerate().map(move |(i, &t)| {
            let rank = if order.is_identity() {
                t
            } else {
                order
                    .rank_of_external(self.inner.graph.external_id(t), csr.num_vertices())
                    .unwrap_or(t)
            };
            (rank, weights.map(|w| w[i]))
        })
    }

    pub(crate) fn order(&self) -> &InputOrder {
        &self.inner.order
    }

    pub(crate) fn check_vertex(&self, vertex: u32) -> Result<()> {
        self.check_not_empty()?;
        if (vertex as usize) < self.vertices() {
            return Ok(());
        }
        Err(Error::VertexOutOfRange {
            vertex: u64::from(vertex),
            vertices: self.vertices(),
            name: self.name().to_owned(),
        })
    }

    pub(crate) fn check_not_empty(&self) -> Result<()> {
        if self.vertices() > 0 {
            return Ok(());
        }
        Err(Error::EmptyGraph {
            name: self.name().to_owned(),
        })
    }
}

impl From<groute_graph::Graph> for Graph {
    fn from(graph: groute_graph::Graph) -> Graph {
        Graph::from_graph(graph)
    }
}

/// The ids of the input file, by vertex (input order): what results carry so that they can be
/// written in the file's numbering on their own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileIds {
    /// Vertex `v` is id `v + base` (0 for generated graphs, 1 for Matrix Market, DIMACS, METIS).
    Offset(u64),
    /// Vertex `v` is id `table[v]` (increasing; SNAP files with gaps).
    Table(Vec<u64>),
}

impl FileIds {
    /// The file's id of `vertex`.
    pub fn file_id(&self, vertex: u32) -> u64 {
        match self {
            FileIds::Offset(base) => base + u64::from(vertex),
            FileIds::Table(ids) => ids
                .get(vertex as usize)
                .copied()
                .unwrap_or(u64::from(vertex)),
        }
    }
}

/// An arc given to [`Graph::from_edges`]: `(u, v)` or `(u, v, weight)`.
pub trait IntoArc {
    /// `(source, target, weight)`.
    fn into_arc(self) -> (u32, u32, Option<u32>);
}

impl IntoArc for (u32, u32) {
    fn into_arc(self) -> (u32, u32, Option<u32>) {
        (self.0, self.1, None)
    }
}

impl IntoArc for (u32, u32, u32) {
    fn into_arc(self) -> (u32, u32, Option<u32>) {
        (self.0, self.1, Some(self.2))
    }
}

impl<T: IntoArc + Copy> IntoArc for &T {
    fn into_arc(self) -> (u32, u32, Option<u32>) {
        (*self).into_arc()
    }
}

/// The edge list of `arcs`, checked against `vertices` (all weighted or none: the unweighted
/// ones of a mixed list weigh 1).
pub(crate) fn edge_list(
    vertices: usize,
    arcs: impl Iterator<Item = (u32, u32, Option<u32>)>,
) -> Result<EdgeList> {
    let mut list = EdgeList::default();
    let mut weights: Vec<u32> = Vec::new();
    let mut weighted = false;
    for (index, (u, v, w)) in arcs.enumerate() {
        if u as usize >= vertices || v as usize >= vertices {
            return Err(Error::EdgeOutOfRange {
                index,
                from: u64::from(u),
                to: u64::from(v),
                vertices,
            });
        }
        if let Some(w) = w {
            if !weighted {
                weighted = true;
                weights = vec![1; list.src.len()];
            }
            weights.push(w);
        } else if weighted {
            weights.push(1);
        }
        list.src.push(u);
        list.dst.push(v);
    }
    list.weights = weighted.then_some(weights);
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edge_beyond_the_vertex_count_is_refused_naming_it() {
        let err = Graph::from_edges(3, [(0, 1), (2, 3)]).unwrap_err();
        assert!(
            matches!(
                err,
                Error::EdgeOutOfRange {
                    index: 1,
                    from: 2,
                    to: 3,
                    vertices: 3
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("0..3"), "{err}");
    }

    #[test]
    fn weighted_edges_keep_their_weights_and_undirected_ones_go_both_ways() {
        let g = Graph::from_undirected_edges(3, [(0, 1, 5), (1, 2, 7)]).unwrap();
        let mut of_1: Vec<_> = g.neighbors(1).collect();
        of_1.sort_unstable();
        assert_eq!(of_1, vec![(0, Some(5)), (2, Some(7))]);
        let d = Graph::from_edges(3, [(0, 1)]).unwrap();
        assert_eq!(d.neighbors(1).count(), 0);
        assert!(!d.is_weighted() && !d.is_symmetric());
    }

    #[test]
    fn a_snap_style_numbering_with_gaps_maps_file_ids_to_input_order() {
        let base = Graph::from_edges(3, [(0, 1), (1, 2)]).unwrap();
        let ids = groute_graph::VertexIds::from_table(0, vec![30, 10, 20]).unwrap();
        let g = Graph::from_graph(groute_graph::Graph {
            ids,
            ..base.as_graph().clone()
        });
        // Input order sorts the file ids: 10, 20, 30 are vertices 0, 1, 2.
        assert_eq!(g.vertex(10), Some(0));
        assert_eq!(g.vertex(30), Some(2));
        assert_eq!(g.vertex(15), None);
        assert_eq!(g.file_id(1), 20);
        // Internal 0 (id 30) -> internal 1 (id 10): vertex 2 -> vertex 0.
        assert_eq!(g.neighbors(2).collect::<Vec<_>>(), vec![(0, None)]);
    }
}
