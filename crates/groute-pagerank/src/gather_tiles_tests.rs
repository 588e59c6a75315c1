use std::ops::Range;

use proptest::prelude::*;

use super::{GatherTiles, TileShape};

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

/// Checks `tiles` against the in-arcs of `range`: every arc once, each tile's sources
/// ascending, its destinations inside it and the shape's bounds kept.
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
    let mut previous_end = range.start;
    for t in 0..tiles.spans.len() / 2 {
        let (first, count) = (tiles.spans[2 * t], tiles.spans[2 * t + 1]);
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
        assert!(
            first >= range.start && first + count <= range.end,
            "tile {t} leaves the range"
        );
        // In destination order; only a split vertex's tiles share it.
        assert!(
            first + 1 >= previous_end,
            "tile {t} overlaps an earlier one"
        );
        assert!(
            first >= previous_end || count == 1,
            "tile {t} overlaps an earlier one"
        );
        previous_end = first + count;
        let srcs = &tiles.sources[arcs.clone()];
        assert!(
            srcs.windows(2).all(|w| w[0] <= w[1]),
            "tile {t}: sources out of order"
        );
        for (&u, &d) in srcs.iter().zip(&tiles.dests[arcs]) {
            assert!(
                u32::from(d) < count,
                "tile {t}: destination offset {d} of {count}"
            );
            got.push((u, first + u32::from(d)));
        }
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
    };
    let tiles = GatherTiles::build(&offsets, &sources, &(0..7), shape).unwrap();
    check(&tiles, &offsets, &sources, &(0..7), shape);
    // [0], [1] x 3, [2, 3, 4, 5]: the vertices without arcs 3 and 4 between 2 and 5, 6 in none.
    assert_eq!(tiles.spans, [0, 1, 1, 1, 1, 1, 1, 1, 2, 4]);
    assert_eq!(tiles.arc_starts, [0, 2, 6, 10, 12, 16]);
}

#[test]
fn a_tile_closes_at_its_destination_bound() {
    let degrees = [1u8; 10];
    let (offsets, sources) = in_csr(&degrees, &[9, 3, 7, 1]);
    let shape = TileShape {
        max_dests: 4,
        target_arcs: 100,
    };
    let tiles = GatherTiles::build(&offsets, &sources, &(2..10), shape).unwrap();
    check(&tiles, &offsets, &sources, &(2..10), shape);
    assert_eq!(tiles.spans, [2, 4, 6, 4]);
}

#[test]
fn bad_shapes_are_errors() {
    let (offsets, sources) = in_csr(&[1, 1], &[1, 0]);
    for shape in [
        TileShape {
            max_dests: 0,
            target_arcs: 4,
        },
        TileShape {
            max_dests: (1 << 16) + 1,
            target_arcs: 4,
        },
        TileShape {
            max_dests: 4,
            target_arcs: 0,
        },
    ] {
        assert!(GatherTiles::build(&offsets, &sources, &(0..2), shape).is_err());
    }
}

proptest! {
    #[test]
    fn tiles_hold_every_in_arc_once_by_source(
        degrees in prop::collection::vec(prop_oneof![3 => 0u8..4, 1 => 0u8..=255], 1..200),
        sources in prop::collection::vec(any::<u32>(), 1..64),
        cut in any::<(u16, u16)>(),
        max_dests in 1u32..40,
        target_arcs in 1u64..300,
    ) {
        let (offsets, sources) = in_csr(&degrees, &sources);
        let n = degrees.len() as u32;
        let (a, b) = (u32::from(cut.0) % (n + 1), u32::from(cut.1) % (n + 1));
        let range = a.min(b)..a.max(b);
        let shape = TileShape { max_dests, target_arcs };
        let tiles = GatherTiles::build(&offsets, &sources, &range, shape).unwrap();
        check(&tiles, &offsets, &sources, &range, shape);
    }
}
