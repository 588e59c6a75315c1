use std::ops::Range;

use proptest::prelude::*;

use super::{
    GatherTiles, TILE_BY_DESTINATION, TileShape, one_wave_arcs, plan, sort_by_source, tile_count,
};

/// An in-CSR of `degrees.len()` vertices whose rows hold the sources `sources` drew for them
/// (each row's count from `degrees`), as offsets and sources.
fn in_csr(degrees: &[u8], sources: &[u32]) -> (Vec<u64>, Vec<u32>) {
    let n = degrees.len() as u32;
    let mut offsets = vec![0u64];
    let mut srcs = Vec::new();
    let mut next = sources.iter().cycle();
    for &d in degrees {
        for _ in 0..d {
            srcs.push(next.next().map_or(0, |&u| u % n));
        }
        offsets.push(srcs.len() as u64);
    }
    (offsets, srcs)
}

/// The vertices between the two cuts (each taken modulo n + 1) of a graph of `n` vertices.
fn cut_range(cut: (u16, u16), n: u32) -> Range<u32> {
    let (a, b) = (u32::from(cut.0) % (n + 1), u32::from(cut.1) % (n + 1));
    a.min(b)..a.max(b)
}

/// Tile `t`'s first destination, destination count and order (by destination).
fn span(tiles: &GatherTiles, t: usize) -> (u32, u32, bool) {
    let word = tiles.spans[2 * t + 1];
    (
        tiles.spans[2 * t],
        word & !TILE_BY_DESTINATION,
        word & TILE_BY_DESTINATION != 0,
    )
}

/// Checks `tiles` against the in-arcs of `range`: every arc once, the tiles largest first,
/// each tile's arcs in its order (by source, or by destination where its destinations have
/// at least `shape.by_destination` arcs each on average), its destinations inside it and
/// the shape's bounds kept, no two tiles sharing a destination unless both hold only it.
fn check(
    tiles: &GatherTiles,
    offsets: &[u64],
    sources: &[u32],
    range: &Range<u32>,
    shape: TileShape,
) {
    let mut expected: Vec<(u32, u32)> = range
        .clone()
        .flat_map(|v| {
            let row = offsets[v as usize] as usize..offsets[v as usize + 1] as usize;
            sources[row].iter().map(move |&u| (u, v))
        })
        .collect();
    let mut got = Vec::new();
    assert_eq!(tiles.arc_starts.len(), tiles.spans.len() / 2 + 1);
    assert_eq!(
        *tiles.arc_starts.last().unwrap_or(&0) as usize,
        tiles.sources.len()
    );
    let mut spans = Vec::new();
    for t in 0..tiles.spans.len() / 2 {
        let (first, count, by_destination) = span(tiles, t);
        let arcs = tiles.arc_starts[t] as usize..tiles.arc_starts[t + 1] as usize;
        assert!(
            count >= 1 && count <= shape.max_dests,
            "tile {t}: {count} destinations"
        );
        assert!(!arcs.is_empty(), "tile {t} has no arc");
        assert!(
            arcs.len() as u64 <= shape.target_arcs,
            "tile {t}: {} arcs",
            arcs.len()
        );
        if t > 0 {
            let before = tiles.arc_starts[t] - tiles.arc_starts[t - 1];
            assert!(
                before >= arcs.len() as u64,
                "tile {t} is larger than tile {}",
                t - 1
            );
        }
        assert!(
            first >= range.start && first + count <= range.end,
            "tile {t} leaves the range"
        );
        assert_eq!(
            by_destination,
            arcs.len() as u64 >= shape.by_destination.saturating_mul(u64::from(count)),
            "tile {t}: the order of {} arcs of {count} destinations",
            arcs.len()
        );
        spans.push((first, count));
        let srcs = &tiles.sources[arcs.clone()];
        let dests = &tiles.dests[arcs];
        if by_destination {
            assert!(
                dests.windows(2).all(|w| w[0] <= w[1]),
                "tile {t}: destinations out of order"
            );
        } else {
            assert!(
                srcs.windows(2).all(|w| w[0] <= w[1]),
                "tile {t}: sources out of order"
            );
        }
        for (&u, &d) in srcs.iter().zip(dests) {
            assert!(
                u32::from(d) < count,
                "tile {t}: destination offset {d} of {count}"
            );
            got.push((u, first + u32::from(d)));
        }
    }
    // Only a split vertex's tiles (one destination each) share a destination.
    spans.sort_unstable();
    for w in spans.windows(2) {
        let ((a, a_count), (b, b_count)) = (w[0], w[1]);
        let shared_split = a == b && a_count == 1 && b_count == 1;
        assert!(a + a_count <= b || shared_split, "tiles {:?} overlap", w);
    }
    expected.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, expected, "the tiles' arcs are not the range's in-arcs");
}

#[test]
fn a_vertex_of_more_arcs_than_a_tile_takes_tiles_of_its_own() {
    // Vertex 1 has 10 in-arcs, a tile at most 4: three tiles of its own, of 4, 4 and 2 arcs.
    let degrees = [2u8, 10, 1, 0, 0, 3, 0];
    let (offsets, sources) = in_csr(&degrees, &[6, 5, 4, 3, 2, 1, 0]);
    let shape = TileShape {
        max_dests: 8,
        target_arcs: 4,
        by_destination: 3,
    };
    let tiles = GatherTiles::build(&offsets, &sources, &(0..7), shape).unwrap();
    check(&tiles, &offsets, &sources, &(0..7), shape);
    // Largest first (stable): [1] and [1] (4 arcs each), [2, 3, 4, 5] (4 arcs; the vertices
    // without arcs 3 and 4 between 2 and 5, 6 in none), [0] and [1] (2 arcs each). Only the
    // tiles of 4 arcs of one destination have the 3 a destination that orders by destination.
    let by = TILE_BY_DESTINATION;
    assert_eq!(tiles.spans, [1, 1 | by, 1, 1 | by, 2, 4, 0, 1, 1, 1]);
    assert_eq!(tiles.arc_starts, [0, 4, 8, 12, 14, 16]);
}

#[test]
fn a_tile_closes_at_its_destination_bound() {
    let degrees = [1u8; 10];
    let (offsets, sources) = in_csr(&degrees, &[9, 3, 7, 1]);
    let shape = TileShape {
        max_dests: 4,
        target_arcs: 100,
        by_destination: 2,
    };
    let tiles = GatherTiles::build(&offsets, &sources, &(2..10), shape).unwrap();
    check(&tiles, &offsets, &sources, &(2..10), shape);
    assert_eq!(tiles.spans, [2, 4, 6, 4]);
}

/// The tiles of `range` at `target_arcs` a tile (destination bound `max_dests`).
fn count_at(offsets: &[u64], range: &Range<u32>, max_dests: u32, target_arcs: u64) -> u64 {
    let shape = TileShape {
        max_dests,
        target_arcs,
        by_destination: u64::MAX,
    };
    tile_count(offsets, range, shape)
}

#[test]
fn one_wave_tiles_are_the_shortest_that_fit_the_blocks() {
    // 100 vertices of one in-arc each: on 10 blocks, tiles of 10 arcs fill one wave and
    // tiles of 9 would need 12 blocks.
    let (offsets, _) = in_csr(&[1u8; 100], &[0]);
    assert_eq!(one_wave_arcs(&offsets, &(0..100), 1000, 10), Some(10));
    // At most 4 destinations a tile: 25 tiles at least, 3 waves of 10 blocks; tiles of 3
    // arcs would number 34, of 4 arcs 25.
    assert_eq!(one_wave_arcs(&offsets, &(0..100), 4, 10), Some(4));
    // A range without in-arcs has no tiles, and an empty one neither.
    let (offsets, _) = in_csr(&[0u8, 0, 1], &[0]);
    assert_eq!(one_wave_arcs(&offsets, &(0..2), 8, 10), None);
    assert_eq!(one_wave_arcs(&offsets, &(2..2), 8, 10), None);
    // More blocks than arcs: one arc a tile.
    assert_eq!(one_wave_arcs(&offsets, &(0..3), 8, 10), Some(1));
}

#[test]
fn bad_shapes_are_errors() {
    let (offsets, sources) = in_csr(&[1, 1], &[1, 0]);
    for shape in [
        TileShape {
            max_dests: 0,
            target_arcs: 4,
            by_destination: 4,
        },
        TileShape {
            max_dests: (1 << 16) + 1,
            target_arcs: 4,
            by_destination: 4,
        },
        TileShape {
            max_dests: 4,
            target_arcs: 0,
            by_destination: 4,
        },
    ] {
        assert!(GatherTiles::build(&offsets, &sources, &(0..2), shape).is_err());
    }
}

proptest! {
    #[test]
    fn the_radix_sort_sorts_as_a_comparison_sort_does(
        sources in prop::collection::vec(any::<u32>(), 0..2000),
        source_bits in 0u32..=32,
    ) {
        // Sources of at most `source_bits` bits, the offsets ascending in input order (as a
        // tile appends its destinations' rows): sorted stably by source, the keys are in
        // full order.
        let mask = u32::MAX.checked_shr(32 - source_bits).unwrap_or(0);
        let mut keys: Vec<u64> = sources
            .iter()
            .enumerate()
            .map(|(i, &u)| u64::from(u & mask) << 16 | i as u64)
            .collect();
        let mut expected = keys.clone();
        expected.sort_unstable();
        sort_by_source(&mut keys, source_bits);
        prop_assert_eq!(keys, expected);
    }

    #[test]
    fn tiles_hold_every_in_arc_once_in_their_order(
        degrees in prop::collection::vec(prop_oneof![3 => 0u8..4, 1 => 0u8..=255], 1..200),
        sources in prop::collection::vec(any::<u32>(), 1..64),
        cut in any::<(u16, u16)>(),
        max_dests in 1u32..40,
        target_arcs in 1u64..300,
        by_destination in prop_oneof![0u64..300, Just(u64::MAX)],
    ) {
        let (offsets, sources) = in_csr(&degrees, &sources);
        let range = cut_range(cut, degrees.len() as u32);
        let shape = TileShape { max_dests, target_arcs, by_destination };
        let tiles = GatherTiles::build(&offsets, &sources, &range, shape).unwrap();
        check(&tiles, &offsets, &sources, &range, shape);
    }
}

proptest! {
    #[test]
    fn tiles_are_counted_as_cut_and_one_wave_tiles_are_the_shortest_that_fit(
        degrees in prop::collection::vec(prop_oneof![3 => 0u8..4, 1 => 0u8..=255], 1..300),
        cut in any::<(u16, u16)>(),
        max_dests in 1u32..40,
        target_arcs in 1u64..300,
        blocks in 1u64..20,
    ) {
        let (offsets, _) = in_csr(&degrees, &[1, 2, 3]);
        let range = cut_range(cut, degrees.len() as u32);
        // The count jumps from tile to tile: the same tiles as the plan walks.
        let shape = TileShape { max_dests, target_arcs, by_destination: u64::MAX };
        let planned = plan(&offsets, &range, shape).len() as u64;
        prop_assert_eq!(tile_count(&offsets, &range, shape), planned);
        // Longer tiles never number more (the search relies on it).
        let longer = count_at(&offsets, &range, max_dests, target_arcs + 1);
        prop_assert!(
            longer <= planned,
            "{} tiles at {} arcs, {} at one more", planned, target_arcs, longer
        );
        // The length found: its tiles number at most the whole waves of `blocks` that the
        // destination bound leaves, and within the search's precision (a 256th) below it
        // some length needs more, unless it is the least length that could fit.
        let arcs = offsets[range.end as usize] - offsets[range.start as usize];
        let found = one_wave_arcs(&offsets, &range, max_dests, blocks);
        prop_assert_eq!(found.is_none(), arcs == 0);
        if let Some(target) = found {
            let limit = count_at(&offsets, &range, max_dests, arcs).div_ceil(blocks) * blocks;
            prop_assert!(count_at(&offsets, &range, max_dests, target) <= limit);
            let step = (target / 256).max(1);
            let least = arcs.div_ceil(limit);
            prop_assert!(
                target.saturating_sub(step) < least
                    || (target - step..target)
                        .any(|t| count_at(&offsets, &range, max_dests, t) > limit),
                "{} arcs, {} tiles at most: {} a tile", arcs, limit, target
            );
        }
    }
}

#[test]
fn the_order_bit_mirrors_the_kernel() {
    let header = groute_kernels::HEADERS
        .iter()
        .find(|h| h.name == "gather_tiles.cuh")
        .expect("gather_tiles.cuh is a kernel header");
    let line = format!("TILE_BY_DESTINATION = {TILE_BY_DESTINATION:#x}u;");
    assert!(
        header.source.contains(&line),
        "gather_tiles.cuh lacks `{line}`"
    );
}
