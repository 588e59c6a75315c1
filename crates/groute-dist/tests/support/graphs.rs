//! The graphs the tests of ranks run on and their partitions: seeded random graphs, generated
//! ones in blocks, cuts drawn from a seed, and the rows each rank holds of a directed graph.

use groute_graph::testing::{generated, partition_at_cuts};
use groute_graph::{Csr, CsrBuilder, EdgeList, HeldRows, Partition, block_partition_of_offsets};

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

/// `csr` cut into `parts` blocks of about equal vertices and arcs.
pub fn in_blocks(csr: &Csr, parts: usize) -> Partition {
    block_partition_of_offsets(csr.offsets(), parts).expect("partition")
}

/// Calls `test` on the graph of each generator spec of `specs` for each `(ranks, devices)`
/// of `shapes`, with the graph [`in_blocks`] of one part per device of every rank and a label
/// naming the spec and the shape.
pub fn for_each_generated_shape(
    specs: &[&str],
    shapes: &[(usize, usize)],
    mut test: impl FnMut(&Csr, &Partition, (usize, usize), &str),
) {
    for spec in specs {
        let csr = &generated(spec).csr;
        for &(ranks, devices) in shapes {
            let partition = in_blocks(csr, ranks * devices);
            test(
                csr,
                &partition,
                (ranks, devices),
                &format!("{spec} {ranks}x{devices}"),
            );
        }
    }
}

/// `n` vertices cut into `parts` parts at cuts drawn from `seed` (some parts may be empty):
/// the cuts, for a test's label, and the partition they make.
pub fn seeded_cuts(n: u32, parts: usize, seed: u64) -> (Vec<u32>, Partition) {
    let cuts: Vec<u32> = (1..parts)
        .map(|k| seed.rotate_left(k as u32 * 7) as u32)
        .collect();
    let partition = partition_at_cuts(n as usize, parts, &cuts);
    (cuts, partition)
}

/// A directed random graph of 600 vertices and `arcs` arcs (seed 4), and 4 uneven parts of
/// it: for 2 ranks of 2 devices.
pub fn directed_in_four_parts(arcs: u32) -> (Csr, Partition) {
    let csr = random_graph(600, arcs, 4, false);
    let partition = partition_at_cuts(600, 4, &[100, 350, 420]);
    (csr, partition)
}

/// The rows of the directed `csr` that each rank of `devices` devices holds: those of its
/// parts `rank * devices..(rank + 1) * devices` of `partition`.
pub fn directed_rows_of<'a>(
    csr: &'a Csr,
    partition: &'a Partition,
    devices: usize,
) -> impl Fn(usize) -> HeldRows<'a> + Sync + 'a {
    move |rank| {
        let held = partition.range_of_parts(rank * devices..(rank + 1) * devices);
        HeldRows::some(csr, held, false).expect("rows")
    }
}
