//! Hostile input: headers and specs that ask for more than the input holds or the machine has,
//! and damaged binary files. Each is a typed error, never an abort, a panic or a hang.
//!
//! The tests whose input asks for tens of gigabytes run in a child process (this test binary,
//! run again for that one test) under a 4 GB address-space limit (`ulimit -v`), so the
//! allocation fails the same way on every machine, however much memory it has.

use groute_core::testing::under_4gb_limit;
use groute_graph::{
    BinaryProblem, CsrBuilder, EdgeList, GenSpec, Graph, GraphError, GraphFormat,
    MAX_GENERATED_ARCS, ParseProblem, SpecProblem, VertexIds, load_graph, write_graph,
};

mod support;
use support::{TempDir, expect_parse_error};

fn assert_out_of_memory(r: Result<Graph, GraphError>, what_part: &str) {
    match r {
        Err(e @ GraphError::OutOfMemory { bytes, .. }) => {
            assert!(bytes > 4_000_000_000, "{e}");
            let msg = e.to_string();
            assert!(msg.contains(what_part), "{msg}");
            assert!(
                msg.contains("smaller"),
                "the message says what to do: {msg}"
            );
        }
        Err(e) => panic!("expected an out-of-memory error, got {e:?}"),
        Ok(g) => panic!("loaded {} vertices under a 4 GB limit", g.num_vertices()),
    }
}

#[test]
fn mtx_header_with_u32_max_vertices_is_an_allocation_error_not_an_abort() {
    under_4gb_limit(
        "mtx_header_with_u32_max_vertices_is_an_allocation_error_not_an_abort",
        || {
            let dir = TempDir::new("mtx-huge");
            let p = dir.file(
                "huge.mtx",
                "%%MatrixMarket matrix coordinate pattern general\n4294967295 4294967295 1\n1 1\n",
            );
            assert_out_of_memory(load_graph(&p, None), "bytes for the");
        },
    );
}

#[test]
fn dimacs_problem_line_with_u32_max_vertices_is_an_allocation_error_not_an_abort() {
    under_4gb_limit(
        "dimacs_problem_line_with_u32_max_vertices_is_an_allocation_error_not_an_abort",
        || {
            let dir = TempDir::new("dimacs-huge");
            let p = dir.file("huge.gr", "p sp 4294967295 0\n");
            assert_out_of_memory(load_graph(&p, None), "per vertex");
        },
    );
}

#[test]
fn road_spec_too_large_for_memory_is_an_allocation_error_not_an_abort() {
    under_4gb_limit(
        "road_spec_too_large_for_memory_is_an_allocation_error_not_an_abort",
        || assert_out_of_memory(Graph::generated("road:side=65535"), "grid"),
    );
}

#[test]
fn csr_builder_with_too_many_vertices_for_memory_is_an_allocation_error() {
    under_4gb_limit(
        "csr_builder_with_too_many_vertices_for_memory_is_an_allocation_error",
        || {
            let r = CsrBuilder::new(u32::MAX as usize).build(&EdgeList::from_pairs(&[(0, 1)]));
            assert!(matches!(r, Err(GraphError::OutOfMemory { .. })), "{r:?}");
        },
    );
}

#[test]
fn dimacs_arc_count_beyond_the_file_is_rejected_before_allocation() {
    let dir = TempDir::new("dimacs-count");
    expect_parse_error(&dir, "short.gr", "p sp 3 100000000000\na 1 2 1\n", 1, |p| {
        matches!(
            p,
            ParseProblem::MoreThanFileHolds {
                declared: 100_000_000_000,
                max: 4,
                ..
            }
        )
    });
    // An exact count still loads.
    let ok = dir.file("ok.gr", "p sp 3 1\na 1 2 1");
    assert_eq!(load_graph(&ok, None).unwrap().num_edges(), 1);
}

#[test]
fn mtx_entry_count_beyond_the_file_is_rejected_before_allocation() {
    let dir = TempDir::new("mtx-count");
    let short = "%%MatrixMarket matrix coordinate pattern general\n3 3 5\n1 2\n2 3\n";
    expect_parse_error(&dir, "short.mtx", short, 2, |p| {
        matches!(p, ParseProblem::MoreThanFileHolds { declared: 5, .. })
    });
    let ok = dir.file(
        "ok.mtx",
        "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3",
    );
    assert_eq!(load_graph(&ok, None).unwrap().num_edges(), 2);
}

#[test]
fn metis_edge_count_whose_double_overflows_is_rejected() {
    let dir = TempDir::new("metis-2m");
    let wrap = "2 9223372036854775808\n2\n1\n";
    expect_parse_error(&dir, "wrap.graph", wrap, 1, |p| {
        matches!(
            p,
            ParseProblem::MoreThanFileHolds {
                declared: 9_223_372_036_854_775_808,
                ..
            }
        )
    });
    let ok = dir.file("ok.graph", "2 1\n2\n1\n");
    assert_eq!(load_graph(&ok, None).unwrap().num_edges(), 2);
}

#[test]
fn metis_vertex_count_beyond_the_file_is_rejected_before_allocation() {
    let dir = TempDir::new("metis-n");
    expect_parse_error(&dir, "many.graph", "4000000000 0\n\n", 1, |p| {
        matches!(
            p,
            ParseProblem::MoreThanFileHolds {
                what: "vertex lines",
                ..
            }
        )
    });
}

fn small_graph() -> Graph {
    Graph::from_edges(
        3,
        &EdgeList::from_triples(&[(0, 1, 4), (1, 2, 5), (2, 0, 6)]),
        "tri",
        false,
    )
    .unwrap()
}

#[test]
fn galois_file_with_trailing_bytes_is_rejected() {
    let dir = TempDir::new("galois-trail");
    let p = dir.0.join("g.gr");
    write_graph(&small_graph(), &p, None).unwrap();
    assert_eq!(load_graph(&p, None).unwrap().csr, small_graph().csr);
    let mut bytes = std::fs::read(&p).unwrap();
    let len = bytes.len() as u64;
    bytes.extend_from_slice(&[0u8; 5]);
    std::fs::write(&p, &bytes).unwrap();
    let e = load_graph(&p, None).unwrap_err();
    assert!(
        matches!(
            e,
            GraphError::Binary {
                offset,
                problem: BinaryProblem::TrailingBytes { extra: 5, .. },
                ..
            } if offset == len
        ),
        "{e:?}"
    );
}

/// Writes `g` as a cache, applies `patch` to its bytes, and loads it again.
fn patched_cache(g: &Graph, tag: &str, patch: impl FnOnce(&mut Vec<u8>)) -> GraphError {
    let dir = TempDir::new(tag);
    let p = dir.0.join("g.grc");
    write_graph(g, &p, None).unwrap();
    assert_eq!(
        &load_graph(&p, None).unwrap(),
        g,
        "the unpatched cache loads"
    );
    let mut bytes = std::fs::read(&p).unwrap();
    patch(&mut bytes);
    std::fs::write(&p, &bytes).unwrap();
    load_graph(&p, None).unwrap_err()
}

fn header_u64(bytes: &[u8], at: usize) -> usize {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize
}

#[test]
fn grc_id_base_that_wraps_is_rejected() {
    let g = Graph {
        ids: VertexIds::offset(7),
        ..small_graph()
    };
    let e = patched_cache(&g, "grc-base", |b| {
        b[40..48].copy_from_slice(&(u64::MAX - 1).to_le_bytes());
    });
    assert!(
        matches!(
            e,
            GraphError::Binary {
                offset: 40,
                problem: BinaryProblem::BadField {
                    field: "id base",
                    ..
                },
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn grc_unsorted_or_duplicated_id_table_is_rejected() {
    // A sorted table (no order section): ids 10, 20, 30.
    let sorted = Graph {
        ids: VertexIds::from_table(0, vec![10, 20, 30]).unwrap(),
        ..small_graph()
    };
    for (tag, ids) in [("grc-unsorted", [30u64, 20, 10]), ("grc-dup", [10, 10, 30])] {
        let e = patched_cache(&sorted, tag, |b| {
            let at = header_u64(b, 16 + 8 * 8);
            for (k, id) in ids.iter().enumerate() {
                b[at + 8 * k..at + 8 * k + 8].copy_from_slice(&id.to_le_bytes());
            }
        });
        assert!(
            matches!(
                e,
                GraphError::Binary {
                    problem: BinaryProblem::UnsortedIds { entry: 1 },
                    ..
                }
            ),
            "{tag}: {e:?}"
        );
    }
    // An unsorted table with its order section: the order must sort the ids.
    let shuffled = Graph {
        ids: VertexIds::from_table(0, vec![30, 10, 20]).unwrap(),
        ..small_graph()
    };
    let e = patched_cache(&shuffled, "grc-order", |b| {
        let at = header_u64(b, 16 + 8 * 9);
        for (k, v) in [0u32, 1, 2].iter().enumerate() {
            b[at + 4 * k..at + 4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
    });
    assert!(
        matches!(
            e,
            GraphError::Binary {
                problem: BinaryProblem::UnsortedIds { .. },
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn directory_given_as_a_graph_file_is_named_as_one() {
    let dir = TempDir::new("dir");
    let sub = dir.0.join("graph.grc");
    std::fs::create_dir_all(&sub).unwrap();
    for format in [
        None,
        Some(GraphFormat::Cache),
        Some(GraphFormat::MatrixMarket),
    ] {
        let e = load_graph(&sub, format).unwrap_err();
        assert!(matches!(e, GraphError::IsADirectory { .. }), "{e:?}");
        assert!(e.to_string().contains("is a directory"), "{e}");
    }
}

#[test]
fn generator_specs_beyond_the_limits_are_refused_when_parsed() {
    for spec in [
        "kron:scale=31",
        "random:n=1000,m=100000000000",
        "kron:scale=30,ef=64",
    ] {
        let e = spec.parse::<GenSpec>().unwrap_err();
        assert!(
            matches!(
                e,
                GraphError::GenSpec {
                    problem: SpecProblem::TooManyArcs {
                        limit: MAX_GENERATED_ARCS,
                        ..
                    },
                    ..
                }
            ),
            "{spec}: {e:?}"
        );
        assert!(e.to_string().contains("smaller"), "{e}");
    }
    let e = "kron:scale=32".parse::<GenSpec>().unwrap_err();
    assert!(
        matches!(
            e,
            GraphError::GenSpec {
                problem: SpecProblem::OutOfRange(_),
                ..
            }
        ),
        "{e:?}"
    );
    // The largest grid and scale stay accepted (allocation decides).
    assert!("road:side=65535".parse::<GenSpec>().is_ok());
    assert!("kron:scale=30".parse::<GenSpec>().is_ok());
}

/// A cache read by rows checks the arcs of those rows: a damaged arc elsewhere is not read, a
/// damaged arc among them is an error naming its byte; rows past the graph are an error.
#[test]
fn grc_rows_check_their_own_arcs() {
    let g = small_graph();
    let dir = TempDir::new("grc-rows");
    let p = dir.0.join("g.grc");
    write_graph(&g, &p, None).unwrap();
    let mut bytes = std::fs::read(&p).unwrap();
    let targets_at = header_u64(&bytes, 16 + 8 * 6);
    let last_row = (g.num_vertices() - 1) as u32;
    let arc = g.csr.edge_range(last_row).start;
    assert!(
        g.csr.out_degree(last_row) > 0,
        "the last row has an arc to damage"
    );
    let at = targets_at + 4 * arc;
    bytes[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&p, &bytes).unwrap();
    let cache = groute_graph::GraphCache::open(&p).expect("offsets and ids are intact");
    let first = cache
        .load_rows(0..last_row)
        .expect("the rows before are intact");
    assert_eq!(first.csr.neighbors(0), g.csr.neighbors(0));
    let e = cache.load_rows(0..last_row + 1).unwrap_err();
    match e {
        GraphError::Binary {
            offset,
            problem: BinaryProblem::TargetOutOfRange { edge, .. },
            ..
        } => {
            assert_eq!(offset, at as u64);
            assert_eq!(edge, arc as u64);
        }
        other => panic!("expected the damaged arc, got {other:?}"),
    }
    assert!(
        cache.load().is_err(),
        "the whole graph holds the damaged arc"
    );
    let past = cache.load_rows(0..last_row + 2).unwrap_err();
    assert!(
        matches!(past, GraphError::RowRange { .. }) && past.to_string().contains("rows"),
        "{past}"
    );
}
