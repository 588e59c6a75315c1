//! What each device of a device-driven run on several devices exchanges, built once on the host
//! from the CSR and the partition: its **mirrors** (for every peer, the owned vertices with an
//! out-arc into that peer's range: their shares are what the peer's gather reads from this
//! device, posted once per sweep) and its **in-cut count** (owned vertices with an in-arc from
//! another device: the most distinct vertices a round's pushes can list in its inbox).
//!
//! A mirror list holds each vertex once per peer, however many of its arcs lead there: a
//! Kronecker graph's block partition cuts dozens of arcs per distinct head, a road network's
//! about one. Nothing here is sized by arcs.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use groute_core::Error;
use groute_core::cuda::PEER_MAX_DEVICES;
use groute_graph::{Csr, Partition};
use rayon::prelude::*;

/// One device's mirrors: for peer `o`, `vertices[bounds[o] as usize..bounds[o + 1] as usize]`
/// (ascending; empty for the device itself and for parts past the partition's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mirrors {
    /// The lists, peer after peer.
    pub(crate) vertices: Vec<u32>,
    /// Where each peer's list starts; `bounds[parts..]` all equal the total.
    pub(crate) bounds: [u32; PEER_MAX_DEVICES + 1],
}

impl Mirrors {
    /// The mirrors of part `d` of `partition` over `csr` (renumbered so that part `d` owns
    /// `partition.range(d)`). Errors when the partition has more parts than a device-driven
    /// group holds.
    pub(crate) fn of(csr: &Csr, partition: &Partition, d: usize) -> Result<Mirrors, Error> {
        let parts = checked_parts(partition)?;
        let owned = partition.range(d);
        // One bit per part that an owned vertex has an arc into (its own part's bit cleared).
        let masks: Vec<u8> = owned
            .clone()
            .into_par_iter()
            .map(|v| {
                cut_neighbors(csr, &owned, v).fold(0u8, |mask, w| mask | (1 << partition.owner(w)))
            })
            .collect();
        let mut vertices = Vec::new();
        let mut bounds = [0u32; PEER_MAX_DEVICES + 1];
        for (o, bound) in bounds.iter_mut().enumerate().take(parts) {
            *bound = count_u32(vertices.len())?;
            vertices.extend(
                masks
                    .iter()
                    .zip(owned.clone())
                    .filter(|&(mask, _)| mask & (1 << o) != 0)
                    .map(|(_, v)| v),
            );
        }
        let total = count_u32(vertices.len())?;
        bounds[parts..].fill(total);
        Ok(Mirrors { vertices, bounds })
    }
}

/// For every part of `partition`, its owned vertices with an in-arc from another part.
pub(crate) fn in_cut_counts(csr: &Csr, partition: &Partition) -> Result<Vec<usize>, Error> {
    let parts = checked_parts(partition)?;
    let marked: Vec<AtomicBool> = (0..csr.num_vertices())
        .map(|_| AtomicBool::new(false))
        .collect();
    (0..parts).into_par_iter().for_each(|d| {
        let owned = partition.range(d);
        owned.clone().into_par_iter().for_each(|v| {
            for w in cut_neighbors(csr, &owned, v) {
                marked[w as usize].store(true, Ordering::Relaxed);
            }
        });
    });
    Ok((0..parts)
        .map(|d| count_marked(&marked, partition.range(d)))
        .collect())
}

/// The heads of `v`'s arcs outside `owned` (`v`'s part).
fn cut_neighbors<'a>(
    csr: &'a Csr,
    owned: &'a Range<u32>,
    v: u32,
) -> impl Iterator<Item = u32> + 'a {
    csr.neighbors(v)
        .iter()
        .copied()
        .filter(|w| !owned.contains(w))
}

fn count_marked(marked: &[AtomicBool], range: Range<u32>) -> usize {
    marked[range.start as usize..range.end as usize]
        .par_iter()
        .filter(|m| m.load(Ordering::Relaxed))
        .count()
}

fn checked_parts(partition: &Partition) -> Result<usize, Error> {
    let parts = partition.num_parts();
    if parts > PEER_MAX_DEVICES {
        return Err(Error::invalid(
            "devices of a device-driven PageRank run",
            parts,
            format!("at most {PEER_MAX_DEVICES} (--driver host runs more)"),
        ));
    }
    Ok(parts)
}

fn count_u32(n: usize) -> Result<u32, Error> {
    u32::try_from(n).map_err(|_| {
        Error::invalid(
            "mirror entries of one device",
            n,
            "at most u32::MAX (more devices)",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use groute_graph::{Graph, NoProgress, PartitionMethod, partition_graph};

    #[test]
    fn mirrors_and_in_cut_counts_match_a_scan_of_every_arc() {
        for spec in [
            "random:n=300,m=1200,seed=3",
            "road:side=12,p=0.6,seed=1",
            "kron:scale=9,ef=8,sym,seed=3",
        ] {
            let g = Graph::generated(spec).unwrap();
            for parts in 1..=4 {
                let parted =
                    partition_graph(g.clone(), parts, PartitionMethod::Block, &NoProgress).unwrap();
                let (csr, partition) = (&parted.graph.csr, &parted.partition);
                let n = csr.num_vertices() as u32;
                let arcs: Vec<(u32, u32)> = (0..n)
                    .flat_map(|u| csr.neighbors(u).iter().map(move |&w| (u, w)))
                    .collect();
                let counts = in_cut_counts(csr, partition).unwrap();
                for (d, &count) in counts.iter().enumerate() {
                    let m = Mirrors::of(csr, partition, d).unwrap();
                    for o in 0..PEER_MAX_DEVICES {
                        let list = &m.vertices[m.bounds[o] as usize..m.bounds[o + 1] as usize];
                        let expected: Vec<u32> = if o == d || o >= parts {
                            Vec::new()
                        } else {
                            partition
                                .range(d)
                                .filter(|&u| {
                                    arcs.iter().any(|&(a, w)| a == u && partition.owner(w) == o)
                                })
                                .collect()
                        };
                        assert_eq!(list, expected, "{spec}, {parts} parts, {d} -> {o}");
                    }
                    let in_cut = partition
                        .range(d)
                        .filter(|&w| arcs.iter().any(|&(u, b)| b == w && partition.owner(u) != d))
                        .count();
                    assert_eq!(count, in_cut, "{spec}, {parts} parts, part {d}");
                }
                if parts > 1 {
                    assert!(counts.iter().any(|&c| c > 0), "{spec}: a cut");
                }
            }
        }
    }
}
