//! Graphs from petgraph (feature `petgraph`) and sprs (feature `sprs`) convert into
//! `groute::Graph` with their weights, and refuse what groute cannot hold.
//!
//! `cargo test -p groute --features petgraph,sprs --test interop` (the target needs both
//! features: `required-features` in Cargo.toml).

mod petgraph_graphs {
    use groute::{Backend, Error, Graph, Runner, WeightProblem};
    use petgraph::{Directed, Undirected};

    fn host() -> Runner {
        Runner::new().backend(Backend::Host)
    }

    #[test]
    fn a_directed_weighted_graph_keeps_its_arcs_and_weights() {
        let mut p = petgraph::Graph::<&str, u32, Directed>::new();
        let [a, b, c, d] = ["a", "b", "c", "d"].map(|n| p.add_node(n));
        p.add_edge(a, b, 4);
        p.add_edge(b, c, 3);
        p.add_edge(a, c, 9);
        p.add_edge(c, d, 1);
        let g = Graph::try_from(&p).unwrap();
        assert_eq!((g.vertices(), g.arcs()), (4, 4));
        assert!(g.is_weighted() && !g.is_symmetric());
        let run = host().devices(2).sssp(&g, 0).unwrap();
        assert_eq!(run.distances, [0, 4, 7, 8]);
        // Directed: nothing reaches a from d.
        assert_eq!(host().bfs(&g, 3).unwrap().reached(), 1);
    }

    #[test]
    fn an_undirected_unweighted_graph_becomes_symmetric() {
        let mut p = petgraph::Graph::<(), (), Undirected>::new_undirected();
        let nodes: Vec<_> = (0..5).map(|_| p.add_node(())).collect();
        p.add_edge(nodes[0], nodes[1], ());
        p.add_edge(nodes[1], nodes[2], ());
        p.add_edge(nodes[3], nodes[4], ());
        let g = Graph::try_from(&p).unwrap();
        assert_eq!(g.arcs(), 6);
        assert!(g.is_symmetric() && !g.is_weighted());
        assert_eq!(host().bfs(&g, 2).unwrap().levels[0], 2);
        assert_eq!(host().cc(&g).unwrap().labels, [0, 0, 0, 3, 3]);
    }

    #[test]
    fn weights_that_are_not_u32_are_refused_naming_the_edge() {
        let mut p = petgraph::Graph::<(), f64>::new();
        let (a, b) = (p.add_node(()), p.add_node(()));
        p.add_edge(a, b, 2.0);
        p.add_edge(b, a, 0.5);
        let err = Graph::try_from(&p).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidWeight {
                    index: 1,
                    from: 1,
                    to: 0,
                    problem: WeightProblem::Fractional
                }
            ),
            "{err:?}"
        );
        let mut n = petgraph::Graph::<(), i64>::new();
        let (a, b) = (n.add_node(()), n.add_node(()));
        n.add_edge(a, b, -3);
        let err = Graph::try_from(&n).unwrap_err();
        assert!(err.to_string().contains("negative"), "{err}");
    }

    #[test]
    fn a_petgraph_csr_converts_with_its_stored_arcs() {
        let mut directed = petgraph::csr::Csr::<(), u32, Directed>::new();
        let (a, b, c) = (
            directed.add_node(()),
            directed.add_node(()),
            directed.add_node(()),
        );
        directed.add_edge(a, b, 2);
        directed.add_edge(b, c, 5);
        let g = Graph::try_from(&directed).unwrap();
        assert_eq!(g.arcs(), 2);
        assert_eq!(host().sssp(&g, 0).unwrap().distances, [0, 2, 7]);

        // An undirected Csr stores both directions of each edge.
        let mut undirected = petgraph::csr::Csr::<(), (), Undirected>::new();
        let (a, b) = (undirected.add_node(()), undirected.add_node(()));
        undirected.add_edge(a, b, ());
        let g = Graph::try_from(&undirected).unwrap();
        assert_eq!(g.arcs(), 2);
        assert!(g.is_symmetric());
        assert_eq!(host().bfs(&g, 1).unwrap().levels, [1, 0]);
    }
}

mod sprs_matrices {
    use groute::{Backend, Error, Graph, Runner, WeightProblem};
    use sprs::{CsMat, TriMat};

    fn adjacency() -> TriMat<u32> {
        let mut t = TriMat::new((4, 4));
        t.add_triplet(0, 1, 4);
        t.add_triplet(1, 2, 3);
        t.add_triplet(0, 2, 9);
        t.add_triplet(2, 3, 1);
        t
    }

    #[test]
    fn a_csr_and_a_csc_matrix_give_the_same_graph() {
        let csr: CsMat<u32> = adjacency().to_csr();
        let csc: CsMat<u32> = adjacency().to_csc();
        let (a, b) = (
            Graph::try_from(&csr).unwrap(),
            Graph::try_from(&csc).unwrap(),
        );
        assert_eq!(a.as_graph().csr, b.as_graph().csr);
        assert_eq!((a.vertices(), a.arcs()), (4, 4));
        let run = Runner::new()
            .backend(Backend::Host)
            .devices(2)
            .sssp(&a, 0)
            .unwrap();
        assert_eq!(run.distances, [0, 4, 7, 8]);
        // A view converts too.
        assert_eq!(Graph::try_from(&csr.view()).unwrap().arcs(), 4);
    }

    #[test]
    fn a_matrix_that_is_not_square_or_has_non_u32_values_is_refused() {
        let mut t = TriMat::<f32>::new((2, 3));
        t.add_triplet(0, 2, 1.0);
        let err = Graph::try_from(&t.to_csr::<usize>()).unwrap_err();
        assert!(
            matches!(err, Error::NotSquare { rows: 2, cols: 3 }),
            "{err:?}"
        );
        let mut t = TriMat::<f32>::new((2, 2));
        t.add_triplet(0, 1, f32::INFINITY);
        let err = Graph::try_from(&t.to_csr::<usize>()).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidWeight {
                    problem: WeightProblem::NotFinite,
                    ..
                }
            ),
            "{err:?}"
        );
    }
}
