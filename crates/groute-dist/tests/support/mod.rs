//! What the multi-process test jobs share: their seeded random graphs.

use groute_graph::{Csr, CsrBuilder, EdgeList};

/// A random graph of `n` vertices and `m` arcs (seeded by `seed`; both directions of each
/// when `symmetric`), weights 1..=100.
pub fn random_graph(n: u32, m: u32, seed: u64, symmetric: bool) -> Csr {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let pairs: Vec<(u32, u32)> = (0..m)
        .map(|_| {
            (
                (next() % u64::from(n)) as u32,
                (next() % u64::from(n)) as u32,
            )
        })
        .collect();
    let csr = CsrBuilder::new(n as usize)
        .symmetrize(symmetric)
        .build(&EdgeList::from_pairs(&pairs))
        .expect("graph");
    let weights = (0..csr.num_edges())
        .map(|_| (next() % 100) as u32 + 1)
        .collect();
    csr.with_weights(weights).expect("weights")
}
