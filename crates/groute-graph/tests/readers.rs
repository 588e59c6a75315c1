//! Every reader on good and malformed files, and round trips through the writers.

use std::path::Path;

use groute_graph::{
    BinaryProblem, CsrBuilder, EdgeList, Graph, GraphError, GraphFormat, LoadOptions, NoProgress,
    ParseProblem, load_graph, load_graph_with, write_graph,
};

mod support;
use support::{TempDir, arcs, expect_parse_error};

#[test]
fn matrix_market_general_and_symmetric() {
    let d = TempDir::new("mtx");
    let p = d.file(
        "g.mtx",
        "%%MatrixMarket matrix coordinate integer general\n% comment\n3 3 3\n1 2 5\n2 3 7\n3 1 9\n",
    );
    let g = load_graph(&p, None).unwrap();
    assert_eq!((g.num_vertices(), g.num_edges()), (3, 3));
    assert_eq!(
        arcs(&g),
        vec![(1, 2, Some(5)), (2, 3, Some(7)), (3, 1, Some(9))]
    );
    assert!(!g.symmetric);

    let p = d.file(
        "s.mtx",
        "%%MatrixMarket matrix coordinate real symmetric\n4 4 3\n2 1 1.4\n3 3 2.6\n4 2 -0.4\r\n",
    );
    let g = load_graph(&p, None).unwrap();
    // Off-diagonal entries give both directions, the diagonal one arc; reals are rounded.
    assert_eq!(g.num_edges(), 5);
    assert_eq!(
        arcs(&g),
        vec![
            (1, 2, Some(1)),
            (2, 1, Some(1)),
            (2, 4, Some(0)),
            (3, 3, Some(3)),
            (4, 2, Some(0))
        ]
    );
    assert!(g.symmetric && g.csr.is_symmetric());

    let p = d.file(
        "p.mtx",
        "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n",
    );
    let g = load_graph(&p, None).unwrap();
    assert!(!g.csr.is_weighted());
    assert_eq!(g.external_id(0), 1);
    assert_eq!(g.internal_id(2), Some(1));
}

#[test]
fn matrix_market_errors_name_the_line() {
    let d = TempDir::new("mtxbad");
    let h = "%%MatrixMarket matrix coordinate integer general\n";
    expect_parse_error(
        &d,
        "a.mtx",
        "%%MatrixMarket matrix array real general\n2 2\n",
        1,
        |p| matches!(p, ParseProblem::Unsupported(_)),
    );
    expect_parse_error(&d, "b.mtx", "3 3 1\n1 2 3\n", 1, |p| {
        matches!(p, ParseProblem::BadHeader(_))
    });
    expect_parse_error(&d, "c.mtx", &format!("{h}3 3 2\n1 2 3\n4 1 1\n"), 4, |p| {
        matches!(p, ParseProblem::IdOutOfRange { id: 4, .. })
    });
    expect_parse_error(&d, "d.mtx", &format!("{h}3 3 2\n1 2 3\n1 x 1\n"), 4, |p| {
        matches!(p, ParseProblem::NotNumeric { field: 2 })
    });
    expect_parse_error(&d, "e.mtx", &format!("{h}3 3 3\n1 2 3\n2 1 1\n"), 2, |p| {
        matches!(
            p,
            ParseProblem::CountMismatch {
                declared: 3,
                found: 2,
                ..
            }
        )
    });
    expect_parse_error(&d, "f.mtx", &format!("{h}3 3 1\n1 2\n"), 3, |p| {
        matches!(p, ParseProblem::MissingField { .. })
    });
    expect_parse_error(&d, "g.mtx", &format!("{h}3 3 1\n1 2 3 4\n"), 3, |p| {
        matches!(p, ParseProblem::ExtraField { .. })
    });
    expect_parse_error(&d, "h.mtx", &format!("{h}3 3 1\n1 2 -3\n"), 3, |p| {
        matches!(p, ParseProblem::WeightOutOfRange(_))
    });
    expect_parse_error(&d, "i.mtx", &format!("{h}3 4 1\n1 2 3\n"), 2, |p| {
        matches!(p, ParseProblem::Unsupported(_))
    });
    expect_parse_error(&d, "j.mtx", h, 2, |p| {
        matches!(p, ParseProblem::BadHeader(_))
    });
    // Negative values load once weights are ignored.
    let p = d.file("k.mtx", format!("{h}3 3 1\n1 2 -3\n"));
    let g = load_graph_with(&p, None, &LoadOptions::ignoring_weights(), &NoProgress).unwrap();
    assert_eq!(g.num_edges(), 1);
    assert!(!g.csr.is_weighted());
}

#[test]
fn dimacs_good_and_bad() {
    let d = TempDir::new("dimacs");
    let p = d.file(
        "r.gr",
        "c road\np sp 3 3\nc arcs\na 1 2 10\na 2 1 10\n\na 3 2 4\n",
    );
    let g = load_graph(&p, None).unwrap();
    assert_eq!(GraphFormat::detect(&p).unwrap(), GraphFormat::Dimacs);
    assert_eq!(
        arcs(&g),
        vec![(1, 2, Some(10)), (2, 1, Some(10)), (3, 2, Some(4))]
    );
    expect_parse_error(&d, "a.gr", "c x\na 1 2 3\n", 2, |p| {
        matches!(p, ParseProblem::UnexpectedLine(_))
    });
    expect_parse_error(&d, "b.gr", "p sp 2 1\na 1 3 1\n", 2, |p| {
        matches!(
            p,
            ParseProblem::IdOutOfRange {
                id: 3,
                min: 1,
                max: 2
            }
        )
    });
    expect_parse_error(&d, "c.gr", "p sp 2 2\na 1 2 1\n", 1, |p| {
        matches!(
            p,
            ParseProblem::CountMismatch {
                declared: 2,
                found: 1,
                ..
            }
        )
    });
    expect_parse_error(&d, "d.gr", "p sp 2 1\na 1 2\n", 2, |p| {
        matches!(p, ParseProblem::MissingField { .. })
    });
    expect_parse_error(&d, "e.gr", "p sp 2 1\na 1 2 1.5\n", 2, |p| {
        matches!(p, ParseProblem::NotNumeric { .. })
    });
    expect_parse_error(&d, "f.gr", "p max 2 1\n", 1, |p| {
        matches!(p, ParseProblem::BadHeader(_))
    });
    expect_parse_error(&d, "g.gr", "p sp 2 1\nq 1 2 1\n", 2, |p| {
        matches!(p, ParseProblem::UnexpectedLine(_))
    });
    expect_parse_error(&d, "h.gr", "p sp 2 1\na 1 2 1\np sp 2 1\n", 3, |p| {
        matches!(p, ParseProblem::UnexpectedLine(_))
    });
}

#[test]
fn snap_ids_need_not_be_contiguous() {
    let d = TempDir::new("snap");
    let p = d.file(
        "s.txt",
        "# Directed graph\n# FromNodeId\tToNodeId\n10\t20\n20 7\n\n7\t10\n",
    );
    let g = load_graph(&p, None).unwrap();
    assert_eq!(g.num_vertices(), 3);
    assert_eq!(arcs(&g), vec![(7, 10, None), (10, 20, None), (20, 7, None)]);
    assert_eq!(g.internal_id(20), Some(2));
    assert_eq!(g.internal_id(11), None);
    // Contiguous ids keep the identity numbering.
    let p = d.file("c.txt", "0 1\n1 2\n2 0\n");
    let g = load_graph(&p, None).unwrap();
    assert!(g.ids.is_offset());
    assert_eq!(g.external_id(2), 2);
    // Huge sparse ids take the sorting path.
    let p = d.file("h.txt", "0 18446744073709551615 3\n5000000000000 0 4\n");
    let g = load_graph(&p, None).unwrap();
    assert_eq!(
        arcs(&g),
        vec![(0, u64::MAX, Some(3)), (5_000_000_000_000, 0, Some(4))]
    );
}

#[test]
fn snap_errors() {
    let d = TempDir::new("snapbad");
    expect_parse_error(&d, "a.txt", "1 2\n3 x\n", 2, |p| {
        matches!(p, ParseProblem::NotNumeric { field: 2 })
    });
    expect_parse_error(&d, "b.txt", "1 2\n3\n", 2, |p| {
        matches!(p, ParseProblem::MissingField { .. })
    });
    expect_parse_error(&d, "c.txt", "1 2 3\n3 4\n", 2, |p| {
        matches!(p, ParseProblem::MissingField { .. })
    });
    expect_parse_error(&d, "d.txt", "1 2 3 4\n", 1, |p| {
        matches!(p, ParseProblem::ExtraField { max: 3 })
    });
    expect_parse_error(&d, "e.txt", "-1 2\n", 1, |p| {
        matches!(p, ParseProblem::NotNumeric { field: 1 })
    });
}

#[test]
fn metis_files() {
    let d = TempDir::new("metis");
    // A triangle plus an isolated vertex; edge weights.
    let p = d.file("t.graph", "% tri\n4 3 1\n2 5 3 6\n1 5 3 7\n1 6 2 7\n\n");
    let g = load_graph(&p, None).unwrap();
    assert_eq!((g.num_vertices(), g.num_edges()), (4, 6));
    assert!(g.symmetric);
    assert_eq!(g.csr.out_degree(3), 0);
    assert_eq!(g.csr.edge_weights(0).unwrap(), &[5, 6]);
    // Vertex weights (ncon = 2) are skipped.
    let p = d.file("v.graph", "2 1 010 2\n1 1 2\n4 4 1\n");
    let g = load_graph(&p, None).unwrap();
    assert_eq!(arcs(&g), vec![(1, 2, None), (2, 1, None)]);
    // An isolated last vertex is an empty line; a missing final newline is fine.
    let p = d.file("n.graph", "3 1\n2\n1\n\n");
    assert_eq!(load_graph(&p, None).unwrap().num_vertices(), 3);
    let p = d.file("m.graph", "2 1\n2\n1");
    assert_eq!(load_graph(&p, None).unwrap().num_edges(), 2);
    expect_parse_error(&d, "a.graph", "3 1\n2\n1\n", 1, |p| {
        matches!(
            p,
            ParseProblem::CountMismatch {
                declared: 3,
                found: 2,
                ..
            }
        )
    });
    expect_parse_error(&d, "b.graph", "2 1\n2\n1\n1\n", 4, |p| {
        matches!(
            p,
            ParseProblem::CountMismatch {
                what: "vertex lines",
                ..
            }
        )
    });
    expect_parse_error(&d, "c.graph", "2 2\n2\n1\n", 1, |p| {
        matches!(
            p,
            ParseProblem::CountMismatch {
                declared: 4,
                found: 2,
                ..
            }
        )
    });
    expect_parse_error(&d, "d.graph", "2 1\n3\n1\n", 2, |p| {
        matches!(p, ParseProblem::IdOutOfRange { id: 3, .. })
    });
    expect_parse_error(&d, "e.graph", "2 1 2\n", 1, |p| {
        matches!(p, ParseProblem::BadHeader(_))
    });
    expect_parse_error(&d, "f.graph", "2 1 1\n2\n1 1\n", 2, |p| {
        matches!(p, ParseProblem::MissingField { .. })
    });
}

fn sample_graph() -> Graph {
    let e = EdgeList::from_triples(&[(0, 1, 3), (1, 2, 4), (2, 0, 5), (2, 2, 1), (3, 1, 9)]);
    Graph::new(CsrBuilder::new(5).build(&e).unwrap(), "sample", false)
}

#[test]
fn galois_round_trip_and_truncation() {
    let d = TempDir::new("galois");
    let g = sample_graph();
    let p = d.0.join("s.gr");
    write_graph(&g, &p, Some(GraphFormat::Galois)).unwrap();
    assert_eq!(GraphFormat::detect(&p).unwrap(), GraphFormat::Galois);
    let h = load_graph(&p, None).unwrap();
    assert_eq!(h.csr, g.csr);
    let bytes = std::fs::read(&p).unwrap();
    // Odd arc count: a 4-byte pad before the weights.
    assert_eq!(bytes.len(), 32 + 8 * 5 + 4 * 5 + 4 + 4 * 5);
    let t = d.file("t.gr", &bytes[..bytes.len() - 3]);
    assert!(matches!(
        load_graph(&t, Some(GraphFormat::Galois)),
        Err(GraphError::Binary {
            problem: BinaryProblem::Truncated { .. },
            ..
        })
    ));
    let mut bad = bytes.clone();
    bad[32 + 40] = 77; // first target
    let b = d.file("b.gr", &bad);
    assert!(matches!(
        load_graph(&b, Some(GraphFormat::Galois)),
        Err(GraphError::Binary {
            problem: BinaryProblem::TargetOutOfRange {
                edge: 0,
                target: 77,
                ..
            },
            ..
        })
    ));
    let mut v2 = bytes.clone();
    v2[0] = 2;
    let b = d.file("v2.gr", &v2);
    assert!(matches!(
        load_graph(&b, None),
        Err(GraphError::Binary {
            problem: BinaryProblem::BadMagic(_),
            ..
        })
    ));
    let mut dec = bytes;
    dec[32] = 4; // out_end[0] = 4 > out_end[1] = 2
    let b = d.file("dec.gr", &dec);
    assert!(matches!(
        load_graph(&b, Some(GraphFormat::Galois)),
        Err(GraphError::Binary {
            problem: BinaryProblem::BadOffsets { .. },
            ..
        })
    ));
}

#[test]
fn cache_round_trip_maps_and_checks() {
    let d = TempDir::new("cache");
    let snap = d.file("s.txt", "10 20 1\n20 7 2\n7 10 3\n");
    let g = load_graph(&snap, None).unwrap();
    let c = d.0.join("s.grc");
    write_graph(&g, &c, None).unwrap();
    let h = load_graph(&c, None).unwrap();
    assert!(h.csr.is_mapped());
    assert_eq!(h.csr, g.csr);
    assert_eq!(h.ids, g.ids);
    assert_eq!(h.name, g.name);
    assert_eq!(h.internal_id(20), Some(2));
    let bytes = std::fs::read(&c).unwrap();
    for cut in [0, 10, 127, 200, bytes.len() - 20] {
        let t = d.file("t.grc", &bytes[..cut]);
        let e = load_graph(&t, None).unwrap_err();
        assert!(matches!(e, GraphError::Binary { .. }), "cut {cut}: {e:?}");
    }
    let mut bad = bytes.clone();
    bad[0] = b'X';
    let b = d.file("m.grc", &bad);
    assert!(matches!(
        load_graph(&b, None),
        Err(GraphError::Binary {
            problem: BinaryProblem::BadMagic(_),
            ..
        })
    ));
    // A target beyond n in the targets section.
    let mut bad = bytes;
    let targets_at = u64::from_le_bytes(bad[64..72].try_into().unwrap()) as usize;
    bad[targets_at] = 200;
    let b = d.file("x.grc", &bad);
    assert!(matches!(
        load_graph(&b, None),
        Err(GraphError::Binary {
            problem: BinaryProblem::TargetOutOfRange { .. },
            ..
        })
    ));
}

#[test]
fn text_writers_round_trip() {
    let d = TempDir::new("writers");
    let g = sample_graph();
    for (name, fmt) in [
        ("w.mtx", GraphFormat::MatrixMarket),
        ("w.gr", GraphFormat::Dimacs),
    ] {
        let p = d.0.join(name);
        write_graph(&g, &p, Some(fmt)).unwrap();
        let h = load_graph(&p, Some(fmt)).unwrap();
        assert_eq!(h.csr, g.csr, "{name}");
        // External ids are 1-based in both.
        assert_eq!(h.external_id(0), 1);
    }
    // Symmetric graphs go out as the lower triangle and come back whole.
    let e = EdgeList::from_triples(&[(0, 1, 3), (1, 2, 4), (2, 2, 1)]);
    let s = Graph::new(
        CsrBuilder::new(3).symmetrize(true).build(&e).unwrap(),
        "sym",
        true,
    );
    let p = d.0.join("s.mtx");
    write_graph(&s, &p, None).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.starts_with("%%MatrixMarket matrix coordinate integer symmetric\n"));
    assert!(text.contains("\n3 3 3\n"));
    assert_eq!(load_graph(&p, None).unwrap().csr, s.csr);
    // SNAP keeps the external ids.
    let snap = d.file("in.txt", "10 20\n20 7\n");
    let g = load_graph(&snap, None).unwrap();
    let out = d.0.join("out.txt");
    write_graph(&g, &out, None).unwrap();
    let h = load_graph(&out, None).unwrap();
    assert_eq!(arcs(&h), arcs(&g));
    assert!(matches!(
        write_graph(&g, d.0.join("x.graph"), None),
        Err(GraphError::NotWritable { .. })
    ));
}

#[test]
fn format_names_and_detection() {
    for f in GraphFormat::ALL {
        assert_eq!(f.name().parse::<GraphFormat>().unwrap(), f);
    }
    assert!("xml".parse::<GraphFormat>().is_err());
    assert_eq!(
        GraphFormat::from_extension(Path::new("a/b.MTX")),
        Some(GraphFormat::MatrixMarket)
    );
    assert_eq!(
        GraphFormat::from_extension(Path::new("a.graph")),
        Some(GraphFormat::Metis)
    );
    let d = TempDir::new("formats");
    let unnamed = d.file("edges.xyz", "1 2\n");
    let err = load_graph(&unnamed, None).unwrap_err();
    assert!(matches!(err, GraphError::UnknownFormat { .. }), "{err:?}");
    assert!(err.to_string().contains("--format"), "{err}");
    // A missing file is reported missing, whatever its extension.
    for missing in ["/nonexistent/a.mtx", "/nonexistent/a", "/nonexistent/a.xyz"] {
        let err = load_graph(missing, None).unwrap_err();
        assert!(matches!(err, GraphError::Io { .. }), "{missing}: {err:?}");
        assert!(err.to_string().contains(missing), "{err}");
    }
}

#[test]
fn large_inputs_parse_across_many_chunks() {
    // Enough lines to be cut into several chunks, with an error near the end.
    let d = TempDir::new("chunks");
    let mut s = String::from("p sp 1000 200000\n");
    for i in 0..200_000u32 {
        s.push_str(&format!(
            "a {} {} {}\n",
            i % 1000 + 1,
            (i * 7) % 1000 + 1,
            i % 13
        ));
    }
    let p = d.file("big.gr", &s);
    let g = load_graph(&p, None).unwrap();
    assert_eq!(g.num_edges(), 200_000);
    s.push_str("a 1 1001 1\n");
    let p = d.file("bad.gr", &s);
    match load_graph(&p, None) {
        Err(GraphError::Parse { line, .. }) => assert_eq!(line, 200_002),
        other => panic!("{other:?}"),
    }
}

#[test]
fn max_vertices_refuses_larger_graphs_in_every_format() {
    let d = TempDir::new("max-vertices");
    let opts = LoadOptions::default().with_max_vertices(4);
    let too_large = |r: Result<Graph, GraphError>| {
        matches!(
            r,
            Err(GraphError::TooLarge {
                what: "vertex count",
                value: 5,
                limit: 4
            })
        )
    };
    let text = [
        (
            "m.mtx",
            "%%MatrixMarket matrix coordinate pattern general\n5 5 1\n1 2\n",
        ),
        ("d.gr", "p sp 5 1\na 1 2 1\n"),
        ("g.graph", "5 1\n2\n1\n\n\n\n"),
        ("s.txt", "1 2\n3 4\n5 1\n"),
    ];
    for (name, content) in text {
        let p = d.file(name, content);
        assert!(load_graph_with(&p, None, &LoadOptions::default(), &NoProgress).is_ok());
        let r = load_graph_with(&p, None, &opts, &NoProgress);
        assert!(too_large(r), "{name}");
    }
    let g = sample_graph();
    assert_eq!(g.num_vertices(), 5);
    for (name, format) in [("b.gr", GraphFormat::Galois), ("c.grc", GraphFormat::Cache)] {
        let p = d.0.join(name);
        write_graph(&g, &p, Some(format)).unwrap();
        assert!(
            too_large(load_graph_with(&p, Some(format), &opts, &NoProgress)),
            "{name}"
        );
        let fits = LoadOptions::default().with_max_vertices(5);
        assert!(load_graph_with(&p, Some(format), &fits, &NoProgress).is_ok());
    }
}
