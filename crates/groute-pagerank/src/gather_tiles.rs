//! The in-arcs of a vertex range regrouped for the tiled gather
//! (`pagerank_pull_gather_tiles`, [`crate::PageRankTuning::gather_tiles`]).
//!
//! A gather by destination (each vertex summing its in-neighbours' shares) reads one share at
//! random per arc: on a skewed graph most of them miss the L1 and cost the L2 a 32-byte
//! sector each, and that bounds the gather. The tiles turn the order around. A tile is a run
//! of at most [`TileShape::max_dests`] consecutive destinations of about
//! [`TileShape::target_arcs`] in-arcs, whose arcs are stored sorted by source, each as its
//! source id and its destination's offset in the tile (16 bits). One block sums a tile in
//! shared memory: its threads walk the arcs in source order, so neighbouring threads read
//! neighbouring shares (the same line, often the same word) and a share read by many of the
//! tile's destinations is read once a line. A destination of more in-arcs than a tile holds
//! gets tiles of its own, each with a part of its arcs (every tile adds its sums to the
//! residuals with an atomic, so parts of one vertex add up). The block sums in 64-bit fixed
//! point with 32 fraction bits (native 32-bit atomics; float atomics on shared memory are
//! compare-and-swap loops): each share is rounded to the nearest multiple of 2^-32, so a
//! gather's mass moves by at most 2^-33 per arc (a share below that adds nothing).
//!
//! A tile of few destinations of many arcs each (a split vertex's tile has one) keeps its arcs
//! by destination instead, each destination's in-list whole ([`TileShape::by_destination`]):
//! by source, most of a warp's adds would go to the same word of shared memory, one after
//! the other; by destination, each thread sums a run of one destination's arcs in a register
//! and adds it once. The tiles are stored largest first: the blocks claim them in order, so
//! the longest start first and the short ones fill the end.
//!
//! Vertices without in-arcs are in no tile unless between two that have some: they gather
//! nothing.

use std::ops::Range;

use groute_core::Error;
use rayon::prelude::*;

/// How [`GatherTiles::build`] cuts a range into tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TileShape {
    /// Destinations a tile holds at most (its block's shared memory holds a sum for each; at
    /// most 65,536: the arcs keep a 16-bit offset; the CUDA gather launches tiles of at most
    /// 32,768, `TILE_FLUSH_DESTS`).
    pub(crate) max_dests: u32,
    /// In-arcs a tile takes about: a tile closes before the destination that would take it
    /// past this, and a destination of more gets tiles of its own of at most this many.
    pub(crate) target_arcs: u64,
    /// A tile whose destinations have at least this many of its arcs each, on average, keeps
    /// them by destination ([`TILE_BY_DESTINATION`]).
    pub(crate) by_destination: u64,
}

/// Bit 31 of a tile's destination count (`spans[2 t + 1]`): its arcs are ordered by
/// destination (`TILE_BY_DESTINATION` of `kernels/include/gather_tiles.cuh`).
pub(crate) const TILE_BY_DESTINATION: u32 = 1 << 31;

/// The tiles of one vertex range (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct GatherTiles {
    /// Tile `t`'s arcs are `sources[arc_starts[t]..arc_starts[t + 1]]` (one entry more than
    /// there are tiles).
    pub(crate) arc_starts: Vec<u64>,
    /// Tile `t`'s destinations are the `count` vertices from `spans[2 t]`, `count` the low 31
    /// bits of `spans[2 t + 1]`, whose bit 31 is [`TILE_BY_DESTINATION`]. Largest first.
    pub(crate) spans: Vec<u32>,
    /// The arcs' sources (global vertex ids), each tile's ascending, or each destination's
    /// in-list in its order where the tile is by destination.
    pub(crate) sources: Vec<u32>,
    /// The arcs' destinations, as offsets from their tile's first destination.
    pub(crate) dests: Vec<u16>,
}

/// Where a tile's arcs come from: the in-lists of the destinations `dests` whole, or (a
/// destination split over several tiles) the arcs `arcs` of one.
#[derive(Clone, Debug, PartialEq, Eq)]
struct TilePlan {
    dests: Range<u32>,
    arcs: Range<u64>,
}

impl TilePlan {
    fn arc_count(&self) -> u64 {
        self.arcs.end - self.arcs.start
    }

    /// Whether the tile keeps its arcs by destination ([`TileShape::by_destination`]).
    fn by_destination(&self, shape: TileShape) -> bool {
        let dests = u64::from(self.dests.end - self.dests.start);
        self.arc_count() >= shape.by_destination.saturating_mul(dests)
    }

    /// The tile's destination count with its order bit.
    fn count_word(&self, shape: TileShape) -> u32 {
        let order = if self.by_destination(shape) {
            TILE_BY_DESTINATION
        } else {
            0
        };
        (self.dests.end - self.dests.start) | order
    }
}

impl GatherTiles {
    /// The tiles of the destinations `range` of the in-CSR whose rows are `offsets` (global,
    /// `n + 1` entries) and whose sources are `sources`.
    pub(crate) fn build(
        offsets: &[u64],
        sources: &[u32],
        range: &Range<u32>,
        shape: TileShape,
    ) -> Result<Self, Error> {
        if shape.max_dests == 0 || shape.max_dests > 1 << 16 || shape.target_arcs == 0 {
            return Err(Error::invalid(
                "gather tile shape",
                format_args!("{shape:?}"),
                "1 to 65,536 destinations a tile, and at least one arc",
            ));
        }
        let mut plans = plan(offsets, range, shape);
        plans.sort_by_key(|p| std::cmp::Reverse(p.arc_count()));
        let arcs: u64 = plans.iter().map(TilePlan::arc_count).sum();
        let count = usize::try_from(arcs).map_err(|_| too_large(arcs))?;
        let mut tiles = GatherTiles {
            arc_starts: Vec::with_capacity(plans.len() + 1),
            spans: Vec::with_capacity(2 * plans.len()),
            sources: zeroed(count, "the sources of the gather tiles")?,
            dests: zeroed(count, "the destinations of the gather tiles")?,
        };
        let mut start = 0u64;
        for p in &plans {
            tiles.arc_starts.push(start);
            tiles.spans.extend([p.dests.start, p.count_word(shape)]);
            start += p.arc_count();
        }
        tiles.arc_starts.push(start);
        // Each tile's part of the two arrays, handed out in order.
        let mut parts = Vec::with_capacity(plans.len());
        let (mut src_rest, mut dst_rest) = (&mut tiles.sources[..], &mut tiles.dests[..]);
        for p in &plans {
            let len = p.arc_count() as usize;
            let (s, s_rest) = src_rest.split_at_mut(len);
            let (d, d_rest) = dst_rest.split_at_mut(len);
            parts.push((p, s, d));
            (src_rest, dst_rest) = (s_rest, d_rest);
        }
        parts
            .into_par_iter()
            .for_each(|(p, s, d)| fill(offsets, sources, p, p.by_destination(shape), s, d));
        Ok(tiles)
    }
}

/// The tiles of `range`, in order (see [`TileShape`]).
fn plan(offsets: &[u64], range: &Range<u32>, shape: TileShape) -> Vec<TilePlan> {
    let mut plans = Vec::new();
    cut(offsets, range, shape, |p| plans.push(p));
    plans
}

/// Cuts `range` into tiles shaped by `shape`, handing each to `tile` in order.
fn cut(offsets: &[u64], range: &Range<u32>, shape: TileShape, mut tile: impl FnMut(TilePlan)) {
    let degree = |v: u32| offsets[v as usize + 1] - offsets[v as usize];
    let mut open: Option<Range<u32>> = None;
    let close = |open: &mut Option<Range<u32>>, tile: &mut dyn FnMut(TilePlan)| {
        if let Some(d) = open.take() {
            let arcs = offsets[d.start as usize]..offsets[d.end as usize];
            tile(TilePlan { dests: d, arcs });
        }
    };
    for v in range.clone() {
        let arcs = degree(v);
        if arcs > shape.target_arcs {
            close(&mut open, &mut tile);
            let parts = arcs.div_ceil(shape.target_arcs);
            let chunk = arcs.div_ceil(parts);
            let first = offsets[v as usize];
            for k in 0..parts {
                let begin = first + k * chunk;
                let arcs = begin..(begin + chunk).min(first + arcs);
                tile(TilePlan {
                    dests: v..v + 1,
                    arcs,
                });
            }
            continue;
        }
        // A vertex without in-arcs joins a tile only between two that have some.
        if arcs == 0 {
            continue;
        }
        match &mut open {
            Some(d) => {
                let held = offsets[v as usize] - offsets[d.start as usize];
                if held + arcs > shape.target_arcs || v + 1 - d.start > shape.max_dests {
                    close(&mut open, &mut tile);
                    open = Some(v..v + 1);
                } else {
                    d.end = v + 1;
                }
            }
            None => open = Some(v..v + 1),
        }
    }
    close(&mut open, &mut tile);
}

/// The number of tiles `shape` cuts `range` into (as [`cut`] cuts it), jumping from tile to
/// tile by binary searches over the offsets instead of walking every vertex:
/// [`one_wave_arcs`] counts the tiles of a range at a dozen lengths or more.
fn tile_count(offsets: &[u64], range: &Range<u32>, shape: TileShape) -> u64 {
    // rows[i] is vertex range.start + i's first arc; n vertices.
    let rows = &offsets[range.start as usize..=range.end as usize];
    let n = rows.len() - 1;
    // The first vertex at or after `from` with in-arcs (n: none).
    let with_arcs = |from: usize| from + rows[from + 1..].partition_point(|&o| o <= rows[from]);
    let mut count = 0;
    let mut v = with_arcs(0);
    while v < n {
        let arcs = rows[v + 1] - rows[v];
        if arcs > shape.target_arcs {
            count += arcs.div_ceil(shape.target_arcs);
            v = with_arcs(v + 1);
            continue;
        }
        count += 1;
        // The tile opened at v holds the vertices before the first that would take it past
        // its arcs (a vertex of more arcs than a tile takes among them) or its destinations.
        let limit = rows[v].saturating_add(shape.target_arcs);
        let past_arcs = v + rows[v + 1..].partition_point(|&o| o <= limit);
        // (A bound of 0 cuts as 1 does: `cut` closes a tile at every vertex.)
        let past_dests = v.saturating_add(shape.max_dests.max(1) as usize);
        v = with_arcs(past_arcs.min(past_dests).min(n));
    }
    count
}

/// The tile length ([`TileShape::target_arcs`]) at which `range`'s tiles fill the fewest
/// waves of `blocks` blocks, one tile a block, with the shortest tiles: the shortest length
/// (found to within a 256th) at which the tiles number at most `waves * blocks`, `waves` the
/// least that the destination bound `max_dests` leaves (1 unless the range has many more
/// destinations than the blocks can hold in one wave). `None` where the range has no in-arc.
///
/// Why: the tiles' blocks read the shares of their arcs' sources from the L2, each block
/// the lines of its own tile's, so fewer and longer tiles read fewer lines; but a wave with a
/// few tiles more than it has blocks runs as two. On one H200, over the lengths tried on
/// Kronecker graphs of scale 21 and 25, the fastest ranged rounds were those whose tiles just
/// fit one wave; tiles twice as many (two waves) or a few more than the blocks ran them
/// 1.2 to 1.4 times slower.
pub(crate) fn one_wave_arcs(
    offsets: &[u64],
    range: &Range<u32>,
    max_dests: u32,
    blocks: u64,
) -> Option<u64> {
    let arcs = offsets[range.end as usize] - offsets[range.start as usize];
    if arcs == 0 {
        return None; // no in-arc (an empty range among them)
    }
    let blocks = blocks.max(1);
    let count = |target_arcs: u64| {
        let shape = TileShape {
            max_dests,
            target_arcs,
            by_destination: u64::MAX,
        };
        tile_count(offsets, range, shape)
    };
    // At `arcs`, no tile closes on its arcs: only the destination bound cuts.
    let limit = count(arcs).div_ceil(blocks) * blocks;
    // count(hi) <= limit holds; below `lo`, the tiles cannot number at most `limit`.
    let (mut lo, mut hi) = (arcs.div_ceil(limit), arcs);
    while hi - lo > (hi / 256).max(1) - 1 {
        let mid = lo + (hi - lo) / 2;
        if count(mid) <= limit {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(hi)
}

/// Writes tile `p`'s arcs into `s` (sources) and `d` (destination offsets), by destination
/// where `by_destination`, else by source.
fn fill(
    offsets: &[u64],
    sources: &[u32],
    p: &TilePlan,
    by_destination: bool,
    s: &mut [u32],
    d: &mut [u16],
) {
    let rows = p.dests.clone().map(|v| {
        let row = offsets[v as usize].max(p.arcs.start)..offsets[v as usize + 1].min(p.arcs.end);
        (
            v - p.dests.start,
            &sources[row.start as usize..row.end as usize],
        )
    });
    if by_destination {
        let mut at = 0;
        for (offset, row) in rows {
            s[at..at + row.len()].copy_from_slice(row);
            d[at..at + row.len()].fill(offset as u16);
            at += row.len();
        }
        return;
    }
    let mut keyed: Vec<u64> = Vec::with_capacity(s.len());
    let mut largest = 0u32;
    for (offset, row) in rows {
        largest = row.iter().fold(largest, |m, &u| m.max(u));
        keyed.extend(row.iter().map(|&u| u64::from(u) << 16 | u64::from(offset)));
    }
    sort_by_source(&mut keyed, u32::BITS - largest.leading_zeros());
    for ((k, s), d) in keyed.iter().zip(s.iter_mut()).zip(d.iter_mut()) {
        *s = (k >> 16) as u32;
        *d = *k as u16;
    }
}

/// Bits of a digit of [`sort_by_source`]'s radix sort.
const DIGIT_BITS: u32 = 11;

/// Sorts `keys` (each a source above 16 bits of destination offset) by source, the sources
/// of at most `source_bits` bits: a least-significant-digit radix sort, stable, of
/// `source_bits / 11` passes rounded up (a tile's arcs number hundreds of thousands: a
/// comparison sort took several times longer).
fn sort_by_source(keys: &mut Vec<u64>, source_bits: u32) {
    let mut scratch = vec![0u64; keys.len()];
    let mask = (1u64 << DIGIT_BITS) - 1;
    let mut shift = 16;
    while shift < 16 + source_bits {
        let mut starts = [0usize; 1 << DIGIT_BITS];
        for &k in keys.iter() {
            starts[(k >> shift & mask) as usize] += 1;
        }
        let mut at = 0;
        for start in &mut starts {
            (*start, at) = (at, at + *start);
        }
        for &k in keys.iter() {
            let digit = (k >> shift & mask) as usize;
            scratch[starts[digit]] = k;
            starts[digit] += 1;
        }
        std::mem::swap(keys, &mut scratch);
        shift += DIGIT_BITS;
    }
}

/// `count` zeroed elements (calloc: the system zeroes the pages as the tiles' parallel fill
/// first touches them), or the allocation's failure as an error.
fn zeroed<T: bytemuck::Zeroable>(count: usize, what: &str) -> Result<Vec<T>, Error> {
    bytemuck::allocation::try_zeroed_vec(count).map_err(|()| Error::OutOfMemory {
        bytes: count.saturating_mul(size_of::<T>()),
        location: format!("host memory ({what})"),
        source: None,
    })
}

fn too_large(arcs: u64) -> Error {
    Error::invalid("gather tile arcs", arcs, "an arc count that fits in memory")
}

#[cfg(test)]
#[path = "gather_tiles_tests.rs"]
mod tests;
