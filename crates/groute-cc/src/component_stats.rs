//! The number of components and the size of the largest, from min-id labels, in parallel.
//!
//! Every run of [`crate::connected_components`] reports them. Counted one label at a time
//! into a histogram of `n` sizes, they would take many times as long as the algorithm itself
//! (a large histogram's page faults and a random increment per vertex). Here rayon's threads
//! count pieces of the labels: each piece
//! keeps a small direct-mapped cache of label counts and adds a count to the shared histogram
//! (`u32` atomics) only when its slot is taken by another label, so the giant component's
//! count, met by most vertices, is added once per eviction rather than once per vertex.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

/// Labels one task counts.
const PIECE: usize = 1 << 16;

/// Slots of a piece's cache of label counts (a power of two).
const CACHE_SLOTS: usize = 64;

/// Number of components and the size of the largest one, from min-id labels (as returned by
/// [`crate::cc_reference`] and [`crate::connected_components`]): a component is a vertex
/// `v` with `labels[v] == v`, and its size is the number of vertices labelled `v`. Labels
/// at or past `labels.len()` count in neither.
pub fn component_stats(labels: &[u32]) -> (usize, usize) {
    let n = labels.len();
    if n > u32::MAX as usize {
        // A size past u32::MAX (no graph has so many vertices: its ids are u32).
        return sequential(labels);
    }
    let components = labels
        .par_iter()
        .enumerate()
        .filter(|&(v, &l)| l as usize == v)
        .count();
    let sizes: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    labels.par_chunks(PIECE).for_each(|piece| {
        let mut cache = [(u32::MAX, 0u32); CACHE_SLOTS];
        let flush = |(label, count): (u32, u32)| {
            if count > 0 {
                sizes[label as usize].fetch_add(count, Ordering::Relaxed);
            }
        };
        for &l in piece {
            if l as usize >= n {
                continue;
            }
            let slot = &mut cache[l as usize % CACHE_SLOTS];
            if slot.0 == l {
                slot.1 += 1;
            } else {
                flush(std::mem::replace(slot, (l, 1)));
            }
        }
        cache.into_iter().for_each(flush);
    });
    let largest = sizes
        .par_iter()
        .map(|s| s.load(Ordering::Relaxed) as usize)
        .max()
        .unwrap_or(0);
    (components, largest)
}

/// One label at a time into a histogram: the definition (and the tests' oracle).
fn sequential(labels: &[u32]) -> (usize, usize) {
    let mut sizes = vec![0usize; labels.len()];
    let mut components = 0;
    for (v, &l) in labels.iter().enumerate() {
        if l as usize == v {
            components += 1;
        }
        if let Some(s) = sizes.get_mut(l as usize) {
            *s += 1;
        }
    }
    (components, sizes.into_iter().max().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn empty_single_and_giant_components() {
        assert_eq!(component_stats(&[]), (0, 0));
        assert_eq!(component_stats(&[0]), (1, 1));
        // One giant component over several pieces with singletons between its vertices,
        // colliding with its cache slot (labels that are multiples of CACHE_SLOTS).
        let n = 3 * PIECE + 17;
        let labels: Vec<u32> = (0..n as u32)
            .map(|v| {
                if v % 3 == 0 && v % CACHE_SLOTS as u32 == 0 {
                    v
                } else {
                    0
                }
            })
            .collect();
        assert_eq!(component_stats(&labels), sequential(&labels));
    }

    proptest! {
        #[test]
        fn equals_the_sequential_count(
            raw in proptest::collection::vec(0u32..1000, 0..3000),
            spread in 1u32..400,
        ) {
            // Labels at most the vertex (as min-id labels are), some past the end.
            let n = raw.len() as u32;
            let labels: Vec<u32> = raw
                .iter()
                .enumerate()
                .map(|(v, &r)| if r == 999 { n + r } else { (v as u32).saturating_sub(r % spread) })
                .collect();
            prop_assert_eq!(component_stats(&labels), sequential(&labels));
        }
    }

    #[test]
    fn large_inputs_equal_the_sequential_count() {
        // Several pieces, a giant component and many small ones (a road grid's shape).
        let n = 5 * PIECE + 123;
        let labels: Vec<u32> = (0..n as u32)
            .map(|v| match v % 11 {
                0 | 5 => v,
                1 => v - 1,
                _ => 7,
            })
            .collect();
        assert_eq!(component_stats(&labels), sequential(&labels));
    }
}
