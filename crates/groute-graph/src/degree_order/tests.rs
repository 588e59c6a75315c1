//! Tests of the degree order: whole graphs, rows renumbered apart, and the errors.

use super::*;
use crate::partition::tests::heads_by_id;
use crate::partition::{PartitionMethod, block_partition, partition_graph};
use crate::progress::NoProgress;

fn kron(seed: u32) -> Graph {
    let spec = format!("kron:scale=9,ef=8,sym,seed={seed}")
        .parse()
        .unwrap();
    crate::generate(&spec, &NoProgress).unwrap()
}

#[test]
fn the_degree_order_keeps_parts_and_arcs_and_sorts_each_part_by_degree() {
    let g = kron(4);
    for parts in [1, 3] {
        let parted =
            partition_graph(g.clone(), parts, PartitionMethod::Block, &NoProgress).unwrap();
        let p = &parted.partition;
        let ordered = order_parts_by_degree(&parted.graph, p).unwrap();
        assert_eq!(ordered.csr.num_edges(), g.csr.num_edges());
        assert_eq!(
            p.edge_cut(&ordered.csr),
            p.edge_cut(&parted.graph.csr),
            "same cut"
        );
        for part in 0..parts {
            let range = p.range(part);
            // Every vertex stays in its part, with its own arcs (by external id).
            for v in range.clone() {
                let old = parted.graph.internal_id(ordered.external_id(v)).unwrap();
                assert!(range.contains(&old), "vertex {v} left part {part}");
                assert_eq!(
                    heads_by_id(&ordered, v),
                    heads_by_id(&parted.graph, old),
                    "vertex {v}'s arcs"
                );
            }
            let degrees: Vec<u64> = range.map(|v| ordered.csr.out_degree(v)).collect();
            assert!(
                degrees.windows(2).all(|w| w[0] >= w[1]),
                "part {part} not in decreasing degree"
            );
        }
    }
    let small = crate::generate(&"road:side=4,p=1".parse().unwrap(), &NoProgress).unwrap();
    let other = block_partition(&small.csr, 2).unwrap();
    let e = order_parts_by_degree(&g, &other).unwrap_err().to_string();
    assert!(e.contains("partition this graph"), "{e}");
}

/// Holders of some parts' rows each order their parts, learn the others' orders, and rename
/// their rows: each gets exactly its rows of the whole graph's renumbering.
#[test]
fn rows_renumbered_apart_are_the_whole_renumbering_s_rows() {
    let g = kron(7);
    let n = g.num_vertices();
    let p = block_partition(&g.csr, 4).unwrap();
    let whole = order_parts_by_degree(&g, &p).unwrap();
    let identity: Vec<u32> = (0..n as u32).collect();
    let holders = [0..1, 1..3, 3..4];
    // Each holder's rows alone (every other row empty), as a rank loads them.
    let held: Vec<Csr> = holders
        .iter()
        .map(|parts| renumber_rows(&g.csr, p.range_of_parts(parts.clone()), &identity).unwrap())
        .collect();
    let mut new_of_old = vec![u32::MAX; n];
    for (parts, csr) in holders.iter().zip(&held) {
        let rows = p.range_of_parts(parts.clone());
        let order = degree_order_of_parts(csr, &p, parts.clone()).unwrap();
        assert_eq!(order.len(), rows.len());
        for (i, &old) in order.iter().enumerate() {
            new_of_old[old as usize] = rows.start + i as u32;
        }
    }
    for (parts, csr) in holders.iter().zip(&held) {
        let rows = p.range_of_parts(parts.clone());
        let renamed = renumber_rows(csr, rows.clone(), &new_of_old).unwrap();
        for v in 0..n as u32 {
            let expected: &[u32] = if rows.contains(&v) {
                whole.csr.neighbors(v)
            } else {
                &[]
            };
            assert_eq!(
                renamed.neighbors(v),
                expected,
                "holder of {parts:?}, row {v}"
            );
        }
    }
}

#[test]
fn a_renumbering_that_leaves_its_rows_or_repeats_an_id_is_refused() {
    let g = kron(2);
    let n = g.num_vertices() as u32;
    let rows = 10..20;
    let mut map: Vec<u32> = (0..n).collect();
    map[12] = 25; // leaves the rows
    let e = renumber_rows(&g.csr, rows.clone(), &map)
        .unwrap_err()
        .to_string();
    assert!(e.contains("vertex 12 cannot become vertex 25"), "{e}");
    map[12] = 13; // repeats vertex 13's id
    let e = renumber_rows(&g.csr, rows.clone(), &map)
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot become vertex 13"), "{e}");
    assert!(e.contains("renumber within the parts"), "{e}");
    map[12] = 12;
    map[40] = n; // a head renamed past the vertices
    let e = renumber_rows(&g.csr, rows.clone(), &map)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("vertex 40 cannot become vertex {n}")),
        "{e}"
    );
    let e = renumber_rows(&g.csr, rows, &map[1..])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(
            "gives {} new ids for a graph of {n} vertices",
            n - 1
        )),
        "{e}"
    );
    let e = renumber_rows(&g.csr, 5..n + 1, &map)
        .unwrap_err()
        .to_string();
    assert!(e.contains("rows"), "{e}");
    let p = block_partition(&g.csr, 3).unwrap();
    let e = degree_order_of_parts(&g.csr, &p, 2..5)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("parts 2..5 asked for, but the partition has 3"),
        "{e}"
    );
}

#[test]
fn the_degree_order_keeps_each_arc_s_weight_and_sorts_the_rows_by_head_then_weight() {
    let spec = "kron:scale=9,ef=8,sym,seed=5,weights=1..4:9"
        .parse()
        .unwrap();
    let g = crate::generate(&spec, &NoProgress).unwrap();
    assert!(g.csr.weights().is_some());
    for parts in [1, 3] {
        let p = block_partition(&g.csr, parts).unwrap();
        let ordered = order_parts_by_degree(&g, &p).unwrap();
        assert!(
            ordered.csr.rows_sorted(),
            "{parts} parts: rows sorted by head, then weight"
        );
        // Every vertex keeps its arcs' (head, weight) pairs, by external id.
        let arcs = |graph: &Graph, v: u32| {
            let weights = graph.csr.edge_weights(v).unwrap();
            let mut pairs: Vec<(u64, u32)> = graph
                .csr
                .neighbors(v)
                .iter()
                .zip(weights)
                .map(|(&w, &weight)| (graph.external_id(w), weight))
                .collect();
            pairs.sort_unstable();
            pairs
        };
        for v in 0..ordered.num_vertices() as u32 {
            let old = g.internal_id(ordered.external_id(v)).unwrap();
            assert_eq!(arcs(&ordered, v), arcs(&g, old), "vertex {v}'s arcs");
        }
    }
}
