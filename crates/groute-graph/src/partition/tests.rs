//! Tests of the partitioners, the renumbering and the halo counts.

use super::*;
use crate::csr::{CsrBuilder, EdgeList};
use crate::progress::NoProgress;

/// The external ids of `v`'s heads in `graph`, sorted.
pub(crate) fn heads_by_id(graph: &Graph, v: u32) -> Vec<u64> {
    let mut heads: Vec<u64> = graph
        .csr
        .neighbors(v)
        .iter()
        .map(|&t| graph.external_id(t))
        .collect();
    heads.sort_unstable();
    heads
}

fn path(n: u32) -> Graph {
    let pairs: Vec<(u32, u32)> = (0..n - 1).map(|i| (i, i + 1)).collect();
    let csr = CsrBuilder::new(n as usize)
        .symmetrize(true)
        .build(&EdgeList::from_pairs(&pairs))
        .unwrap();
    Graph::new(csr, "path", true)
}

#[test]
fn partition_method_names_parse_and_unknown_ones_name_the_choices() {
    for m in [
        PartitionMethod::Metis,
        PartitionMethod::Block,
        PartitionMethod::Auto,
    ] {
        assert_eq!(m.to_string().parse::<PartitionMethod>().unwrap(), m);
    }
    assert_eq!(
        "METIS".parse::<PartitionMethod>().unwrap(),
        PartitionMethod::Metis
    );
    let err = "foo".parse::<PartitionMethod>().unwrap_err();
    assert!(
        matches!(err, GraphError::UnknownPartitionMethod { .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("partition method `foo`") && text.contains("auto, metis, block"),
        "{text}"
    );
    assert!(!text.contains("generator"), "{text}");
}

#[test]
fn owner_finds_ranges_including_empty_parts() {
    let p = Partition::from_bounds(vec![0, 3, 3, 7]).unwrap();
    assert_eq!(p.owner(0), 0);
    assert_eq!(p.owner(2), 0);
    assert_eq!(p.owner(3), 2);
    assert_eq!(p.owner(6), 2);
    assert!(Partition::from_bounds(vec![1, 3]).is_none());
}

#[test]
fn block_balances_arcs_not_just_vertices() {
    // A star: vertex 0 has 99 arcs, the rest one each.
    let pairs: Vec<(u32, u32)> = (1..100)
        .map(|i| (0, i))
        .chain((1..100).map(|i| (i, 0)))
        .collect();
    let csr = CsrBuilder::new(100)
        .build(&EdgeList::from_pairs(&pairs))
        .unwrap();
    let p = block_partition(&csr, 2).unwrap();
    // Cost 100 for vertex 0 + 2 per other vertex: the split lands near vertex 50, not 50
    // vertices plus the hub in the first part.
    let r = p.range(0);
    assert!(r.end < 40, "{r:?}");
    assert_eq!(p.range(1).end, 100);
}

#[test]
fn metis_renumbers_contiguously_and_keeps_ids() {
    let g = path(100);
    let parted = partition_graph(g.clone(), 4, PartitionMethod::Metis, &NoProgress).unwrap();
    assert_eq!(parted.method, PartitionMethod::Metis);
    let p = &parted.partition;
    assert_eq!(p.bounds()[4], 100);
    // A path cut into 4 pieces: 3 cut edges, 6 cut arcs.
    assert_eq!(parted.stats.cut_arcs, 6);
    assert!(parted.graph.csr.is_symmetric());
    for v in 0..100u32 {
        let old = g.internal_id(parted.graph.external_id(v)).unwrap();
        assert_eq!(heads_by_id(&parted.graph, v), heads_by_id(&g, old));
    }
    let halos = halo_info(&parted.graph.csr, p);
    assert_eq!(halos.iter().map(|h| h.cut_arcs).sum::<u64>(), 6);
}

#[test]
fn directed_graph_falls_back_with_reason() {
    let csr = CsrBuilder::new(4)
        .build(&EdgeList::from_pairs(&[(0, 1), (1, 2), (2, 3)]))
        .unwrap();
    let parted = partition_graph(
        Graph::new(csr, "d", false),
        2,
        PartitionMethod::Metis,
        &NoProgress,
    )
    .unwrap();
    assert_eq!(parted.method, PartitionMethod::Block);
    assert_eq!(parted.fallback, Some(Fallback::NotSymmetric));
}

#[test]
fn auto_runs_metis_up_to_its_limit_and_blocks_above() {
    assert_eq!(
        PartitionMethod::Auto.resolve(AUTO_METIS_MAX_ARCS),
        (PartitionMethod::Metis, None)
    );
    let (method, why) = PartitionMethod::Auto.resolve(AUTO_METIS_MAX_ARCS + 1);
    assert_eq!(method, PartitionMethod::Block);
    let why = why.expect("a reason for blocks");
    assert_eq!(
        why,
        Fallback::AboveAutoLimit {
            arcs: AUTO_METIS_MAX_ARCS + 1,
            limit: AUTO_METIS_MAX_ARCS
        }
    );
    assert!(why.to_string().contains("--partition metis"), "{why}");
    // The explicit methods are kept whatever the size.
    for method in [PartitionMethod::Metis, PartitionMethod::Block] {
        assert_eq!(method.resolve(u64::MAX), (method, None));
    }
    assert_eq!(
        "AUTO".parse::<PartitionMethod>().unwrap(),
        PartitionMethod::Auto
    );
    assert_eq!(PartitionMethod::Auto.to_string(), "auto");
}

/// Below the limit, auto partitions exactly as METIS does; on one part it runs neither
/// and gives no reason.
#[test]
fn auto_below_the_limit_is_metis() {
    let sym = path(64);
    let metis = partition_graph(sym.clone(), 3, PartitionMethod::Metis, &NoProgress).unwrap();
    let auto = partition_graph(sym.clone(), 3, PartitionMethod::Auto, &NoProgress).unwrap();
    assert_eq!(auto.method, PartitionMethod::Metis);
    assert!(auto.fallback.is_none());
    assert_eq!(auto.partition, metis.partition);
    let one = partition_graph(sym, 1, PartitionMethod::Auto, &NoProgress).unwrap();
    assert_eq!(one.method, PartitionMethod::Block);
    assert!(one.fallback.is_none());
}

#[test]
fn bad_part_counts_are_errors() {
    assert!(partition_graph(path(3), 0, PartitionMethod::Block, &NoProgress).is_err());
    assert!(partition_graph(path(3), 4, PartitionMethod::Metis, &NoProgress).is_err());
}

#[test]
fn digests_tell_partitions_apart_by_their_bounds() {
    let a = Partition::from_bounds(vec![0, 10, 20]).unwrap();
    let same = Partition::from_bounds(vec![0, 10, 20]).unwrap();
    assert_eq!(a.digest(), same.digest());
    for other in [vec![0, 11, 20], vec![0, 20], vec![0, 10, 20, 20]] {
        let other = Partition::from_bounds(other).unwrap();
        assert_ne!(a.digest(), other.digest(), "{other:?}");
    }
}
