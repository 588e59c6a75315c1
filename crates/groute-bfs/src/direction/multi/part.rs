//! [`Part`]: one device's share of a multi-device direction-optimizing run, as the kernels
//! the level loop enqueues on its stream (CUDA in `cuda_part.rs`, host in `host_part.rs`).

use std::ops::Range;

use groute_core::{Buffer, Error, Stream};

use crate::direction::readback::{COUNTERS, EXAMINED, FRONTIER, IN_ARCS, OUT_ARCS};

/// What a device's counters hold after a level (cumulative over the run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct PartCounts {
    /// Vertices of every frontier counted so far (its owned vertices at each level).
    pub frontiers: u64,
    /// Out-degrees of every frontier counted so far.
    pub out_arcs: u64,
    /// In-degrees of every frontier counted so far.
    pub in_arcs: u64,
    /// Arcs its steps read so far (pull steps; push steps on the host backend).
    pub examined: u64,
}

impl PartCounts {
    /// From the counters of `kernels/bfs/bfs_direction.cu`.
    pub(super) fn from_counters(counters: &[u64; COUNTERS]) -> Self {
        PartCounts {
            frontiers: counters[FRONTIER],
            out_arcs: counters[OUT_ARCS],
            in_arcs: counters[IN_ARCS],
            examined: counters[EXAMINED],
        }
    }
}

/// The words of the bitmap of a graph of `n` vertices: one bit per vertex, at least one word.
pub(super) fn bitmap_len(n: u32) -> u32 {
    n.div_ceil(32).max(1)
}

/// The bitmap words covering the vertices `vertices`, of a bitmap of `total` words (at least
/// one word, even for no vertices).
pub(super) fn words_of(vertices: &Range<u32>, total: u32) -> Range<u32> {
    let first = (vertices.start / 32).min(total - 1);
    first..vertices.end.div_ceil(32).clamp(first + 1, total)
}

/// Fails unless a list of at most `cap` push finds, after its count word, fits a buffer of
/// `words` words (`what`: the buffer, as the error names it). The callers size them so that
/// it does ([`Part::list_push_finds`], [`Part::apply_list`]).
pub(super) fn check_list_fits(cap: u32, words: usize, what: &'static str) -> Result<(), Error> {
    if (cap as usize) < words {
        return Ok(());
    }
    Err(Error::LengthMismatch {
        operation: what,
        dst: cap as usize + 1,
        src: words,
    })
}

/// The words of `bitmap`, as the kernels count them.
pub(super) fn bitmap_words(bitmap: &Buffer<u32>) -> Result<u32, Error> {
    u32::try_from(bitmap.len())
        .map_err(|_| Error::invalid("bitmap", bitmap.len(), "below 2^32 words"))
}

/// One device's kernels over its own level array (every vertex), bitmap (one bit per vertex)
/// and frontier (its owned vertices at the current level, counted as they are found: by the
/// step, or as another device's discovery applied).
/// Every method only enqueues on [`Part::stream`], except [`Part::read_counts`].
pub(super) trait Part: Send {
    /// The device's stream, where every kernel runs.
    fn stream(&self) -> &Stream;
    /// The bitmap the exchange sends (one bit per vertex, `ceil(n / 32)` words), or whose
    /// first words carry a list of push finds ([`Part::list_push_finds`]).
    fn bitmap(&self) -> &Buffer<u32>;
    /// A run from `source`: every level UNREACHED but the source's 0, counters zeroed, then
    /// the source counted where it is owned (the first frontier).
    fn reset(&self, source: u32) -> Result<(), Error>;
    /// Push step: expands the frontier (its owned vertices at `level`, `frontier` of them)
    /// over all their out-arcs, giving every unvisited head level `level + 1`.
    fn push(&self, level: u32, frontier: u32) -> Result<(), Error>;
    /// Pull step: every unvisited owned vertex with an in-neighbour at `level` gets
    /// `level + 1` and is counted (the next frontier). When `write_bitmap`, it also writes
    /// the bitmap words covering the owned vertices ([`words_of`] the owned range) from its
    /// finds, as `mark_bitmap(level + 1, those words)` would after it.
    fn pull(&self, level: u32, write_bitmap: bool) -> Result<(), Error>;
    /// After a push step that expanded a frontier of `frontier` vertices, before any other
    /// device's discoveries are applied: counts the owned vertices it discovered (level
    /// `mark`, the next frontier) and, when `write_bitmap`, writes the whole bitmap from all
    /// it discovered (as `mark_bitmap` over every word would). Call once after every push
    /// step.
    fn count_push_finds(&self, mark: u32, frontier: u32, write_bitmap: bool) -> Result<(), Error>;
    /// After [`Part::count_push_finds`] of a push step that expanded a frontier of `frontier`
    /// vertices, before any other device's discoveries are applied: writes the vertices it
    /// discovered (level `mark`, owned or not) into the first `1 + cap` words of the bitmap as
    /// a list, their number and then the vertices. `cap` bounds them (the frontier's out-arcs);
    /// more fails the run ([`Part::check_worklist`]). What a process's leader alone in its
    /// process gathers after a push with few out-arcs instead of the bitmap.
    fn list_push_finds(&self, mark: u32, frontier: u32, cap: u32) -> Result<(), Error>;
    /// Gives level `mark` to every unvisited vertex of `list` (a received list of at most
    /// `cap` vertices, as [`Part::list_push_finds`] writes it), in stream order after `list`
    /// is valid, and counts the owned ones among them.
    fn apply_list(&self, list: &Buffer<u32>, cap: u32, mark: u32) -> Result<(), Error>;
    /// Writes the bitmap words `words` from the vertices at level `mark`.
    fn mark_bitmap(&self, mark: u32, words: Range<u32>) -> Result<(), Error>;
    /// Gives level `mark` to every unvisited vertex whose bit is set in `packet` (a received
    /// bitmap whose first word is word `word_offset`), in stream order after `packet` is
    /// valid, and counts the owned ones among them.
    fn apply(&self, packet: &Buffer<u32>, word_offset: u32, mark: u32) -> Result<(), Error>;
    /// Waits for the stream and reads the counters (one copy).
    fn read_counts(&self) -> Result<PartCounts, Error>;
    /// Waits for the stream and fails if the worklist or a list of push finds overflowed (once
    /// per run: neither can).
    fn check_worklist(&self) -> Result<(), Error>;
    /// Downloads the level array (after the stream is idle).
    fn levels(&self) -> Result<Vec<u32>, Error>;
}
