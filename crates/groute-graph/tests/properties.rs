//! Property tests over small random graphs: builder options, transpose, writers, partitions.

use groute_graph::{
    CsrBuilder, EdgeList, Graph, GraphFormat, NoProgress, PartitionMethod, halo_info, load_graph,
    partition_graph, write_graph,
};
use proptest::prelude::*;

fn edge_lists() -> impl Strategy<Value = (usize, Vec<(u32, u32, u32)>)> {
    (1usize..40).prop_flat_map(|n| {
        (
            Just(n),
            prop::collection::vec((0..n as u32, 0..n as u32, 0u32..50), 0..120),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn builder_matches_a_naive_model((n, e) in edge_lists(), sym: bool, dedup: bool, noloop: bool) {
        let g = CsrBuilder::new(n).symmetrize(sym).dedup(dedup).remove_self_loops(noloop)
            .build(&EdgeList::from_triples(&e)).unwrap();
        let mut model: Vec<(u32, u32, u32)> = Vec::new();
        for &(s, d, w) in &e {
            if s == d && noloop { continue; }
            model.push((s, d, w));
            if sym && s != d { model.push((d, s, w)); }
        }
        model.sort_unstable();
        if dedup { model.dedup_by_key(|a| (a.0, a.1)); }
        let mut got = Vec::new();
        for v in 0..n as u32 {
            let ws = g.edge_weights(v).unwrap();
            for (i, &t) in g.neighbors(v).iter().enumerate() { got.push((v, t, ws[i])); }
        }
        prop_assert_eq!(got, model);
        prop_assert!(g.rows_sorted());
        if sym { prop_assert!(g.clone().without_weights().is_symmetric()); }
        prop_assert_eq!(g.transpose().transpose(), g.clone());
    }

    #[test]
    fn writers_round_trip((n, e) in edge_lists()) {
        let csr = CsrBuilder::new(n).build(&EdgeList::from_triples(&e)).unwrap();
        let g = Graph::new(csr, "prop", false);
        let dir = std::env::temp_dir().join(format!("groute-prop-{}-{n}-{}", std::process::id(), e.len()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, fmt) in [("a.mtx", GraphFormat::MatrixMarket), ("a.gr", GraphFormat::Dimacs),
                            ("b.gr", GraphFormat::Galois), ("a.grc", GraphFormat::Cache)] {
            let p = dir.join(name);
            write_graph(&g, &p, Some(fmt)).unwrap();
            let h = load_graph(&p, Some(fmt)).unwrap();
            prop_assert_eq!(&h.csr, &g.csr, "{}", name);
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn partitions_are_valid((n, e) in edge_lists(), k in 1usize..6, metis: bool) {
        prop_assume!(k <= n);
        let csr = CsrBuilder::new(n).symmetrize(true).dedup(true).remove_self_loops(true)
            .build(&EdgeList::from_triples(&e)).unwrap();
        let g = Graph::new(csr, "prop", true);
        let method = if metis { PartitionMethod::Metis } else { PartitionMethod::Block };
        let parted = partition_graph(g.clone(), k, method, &NoProgress).unwrap();
        let p = &parted.partition;
        prop_assert_eq!(p.num_parts(), k);
        prop_assert_eq!(p.range(0).start, 0);
        prop_assert_eq!(p.range(k - 1).end as usize, n);
        for q in 1..k { prop_assert_eq!(p.range(q - 1).end, p.range(q).start); }
        let mut seen = vec![0u8; n];
        for v in 0..n as u32 {
            let o = p.owner(v);
            prop_assert!(p.range(o).contains(&v));
            seen[v as usize] += 1;
        }
        prop_assert!(seen.iter().all(|&c| c == 1));
        // The renumbered graph is the same graph under its external ids.
        let h = &parted.graph;
        let mut a: Vec<(u64, u64, u32)> = Vec::new();
        let mut b: Vec<(u64, u64, u32)> = Vec::new();
        for v in 0..n as u32 {
            for (i, &t) in h.csr.neighbors(v).iter().enumerate() {
                a.push((h.external_id(v), h.external_id(t), h.csr.edge_weights(v).unwrap()[i]));
            }
            for (i, &t) in g.csr.neighbors(v).iter().enumerate() {
                b.push((g.external_id(v), g.external_id(t), g.csr.edge_weights(v).unwrap()[i]));
            }
        }
        a.sort_unstable();
        b.sort_unstable();
        prop_assert_eq!(a, b);
        let halos = halo_info(&h.csr, p);
        prop_assert_eq!(halos.iter().map(|x| x.cut_arcs).sum::<u64>(), parted.stats.cut_arcs);
        for x in &halos {
            prop_assert!(x.remote.iter().all(|&t| !p.range(x.part).contains(&t)));
            prop_assert_eq!(x.remote_by_owner.iter().sum::<u64>(), x.remote.len() as u64);
        }
    }
}
