//! [`PullBits`]: a CUDA device's bitmaps of the frontier, which its pulls read instead of the
//! level array, and its pull lists (`kernels/include/pull_lists.cuh`), in the device-driven
//! (`fused/`) and host-driven (`multi/`) runs alike; [`pulls_read_bitmaps`] says where
//! [`BfsTuning::pull_bitmap`](crate::BfsTuning) `None` turns them on.

use std::ops::Range;

use groute_core::cuda::DevicePtr;
use groute_core::{Buffer, Context, Device, Error};

/// Whether the pulls of a run over `vertices` on devices whose smallest L2 holds
/// `l2_cache_bytes` read frontier bitmaps ([`BfsTuning::pull_bitmap`](crate::BfsTuning)
/// `None`): where the level array (4 bytes a vertex), which a pull would read at random,
/// outgrows the L2. The bitmaps (n / 8 bytes) stay in it, but they cost passes of their own
/// (the device-driven kernel builds one from the levels for a pull after a push); where the
/// levels fit the L2, those cost more than the bitmaps save.
pub(crate) fn pulls_read_bitmaps(vertices: u64, l2_cache_bytes: u64) -> bool {
    groute_core::outgrows_l2(4 * vertices, l2_cache_bytes)
}

/// The choice of `pull_bitmap` ([`BfsTuning::pull_bitmap`](crate::BfsTuning)) for a run over
/// `vertices` on the devices of `context`: `None` decides by [`pulls_read_bitmaps`].
pub(crate) fn pull_bitmaps_chosen(
    pull_bitmap: Option<bool>,
    context: &Context,
    vertices: u64,
) -> bool {
    pull_bitmap.unwrap_or_else(|| pulls_read_bitmaps(vertices, context.smallest_l2_cache_bytes()))
}

/// The `u32` of the pull lists of a device whose first pull scans `pullable` vertices with a
/// grid of `threads` threads (the kernels' layout, `kernels/include/pull_lists.cuh`): a count
/// per warp, then a region per warp of its slice of the pullable vertices.
fn pull_list_words(pullable: usize, threads: usize) -> usize {
    let warps = (threads / 32).max(1);
    warps + warps * pullable.div_ceil(warps)
}

/// The vertices of `owned` with in-arcs in the pull CSR of `offsets`, ascending: what the
/// first pull of a run scans (a vertex without in-arcs is never pulled). Host memory for the
/// list is reserved fallibly.
fn pullable(offsets: &[u64], owned: &Range<u32>) -> Result<Vec<u32>, Error> {
    let vertices = owned.start..owned.end.min(offsets.len().saturating_sub(1) as u32);
    let has_in = |&v: &u32| offsets[v as usize + 1] > offsets[v as usize];
    let count = vertices.clone().filter(has_in).count();
    let mut list = Vec::new();
    list.try_reserve_exact(count)
        .map_err(|_| Error::OutOfMemory {
            bytes: count.saturating_mul(4),
            location: "host memory (the BFS's pullable vertices)".into(),
            source: None,
        })?;
    list.extend(vertices.filter(has_in));
    Ok(list)
}

/// A device's frontier bitmaps and pull lists.
pub(crate) struct PullBits {
    /// Two bitmaps of `words` u32, the frontier at the levels of each parity.
    bits: Buffer<u32>,
    /// Words of one bitmap (`ceil(n / 32)`, at least 1).
    words: usize,
    /// The pull lists ([`pull_list_words`]).
    lists: Buffer<u32>,
    /// The owned vertices with in-arcs ([`pullable`]; one unused word where there are none).
    pullable: Buffer<u32>,
    /// How many.
    pullable_count: usize,
}

impl PullBits {
    /// The bitmaps of a graph of `words` bitmap words, and the lists of the vertices `owned`
    /// whose in-arcs the pull CSR's `offsets` (every vertex's) give, for pulls launched with
    /// `threads` threads, on `device`. Nothing is initialised.
    pub(crate) fn new(
        device: &Device,
        offsets: &[u64],
        owned: &Range<u32>,
        (words, threads): (usize, usize),
    ) -> Result<Self, Error> {
        let list = pullable(offsets, owned)?;
        let lists = pull_list_words(list.len(), threads);
        Ok(PullBits {
            bits: device.alloc::<u32>(2 * words)?,
            words,
            lists: device.alloc::<u32>(lists)?,
            pullable: if list.is_empty() {
                device.alloc::<u32>(1)?
            } else {
                device.upload_graph(&list)?
            },
            pullable_count: list.len(),
        })
    }

    /// The bitmap of the frontier at `level` (the levels of its parity).
    pub(crate) fn frontier(&self, level: u32) -> Result<Buffer<u32>, Error> {
        let first = (level as usize & 1) * self.words;
        self.bits.slice(first..first + self.words)
    }

    /// Both bitmaps, one after the other (the device-driven kernel's `front_bits`).
    pub(crate) fn both(&self) -> &Buffer<u32> {
        &self.bits
    }

    /// The pull lists.
    pub(crate) fn lists(&self) -> &Buffer<u32> {
        &self.lists
    }

    /// The pullable vertices (at least one word).
    pub(crate) fn pullable(&self) -> &Buffer<u32> {
        &self.pullable
    }

    /// How many vertices are pullable.
    pub(crate) fn pullable_count(&self) -> u64 {
        self.pullable_count as u64
    }

    /// The device address of one of `bits`'s buffers (`pick`), or null without them.
    pub(crate) fn ptr(
        bits: &Option<PullBits>,
        pick: impl Fn(&PullBits) -> &Buffer<u32>,
    ) -> Result<DevicePtr<u32>, Error> {
        match bits {
            Some(p) => DevicePtr::from_slice(&pick(p).raw()),
            None => Ok(DevicePtr::null()),
        }
    }

    /// Every buffer, for a launch to keep alive.
    pub(crate) fn buffers(&self) -> [&Buffer<u32>; 3] {
        [&self.bits, &self.lists, &self.pullable]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An H200's L2 (60 MiB): the level array of a Kronecker graph of scale 21 (8 MiB) fits
    /// it, scale 25's (128 MiB) does not; the host backend reports no L2.
    #[test]
    fn bitmaps_where_the_levels_outgrow_the_l2() {
        let l2 = 60 << 20;
        assert!(!pulls_read_bitmaps(1 << 21, l2));
        assert!(pulls_read_bitmaps(1 << 25, l2));
        assert!(!pulls_read_bitmaps(15 << 20, l2));
        assert!(pulls_read_bitmaps((15 << 20) + 1, l2));
        assert!(!pulls_read_bitmaps(1 << 30, 0));
    }

    /// The pull lists hold a count per warp and, per warp, a region of its slice of the
    /// pullable vertices: at least one entry per pullable vertex.
    #[test]
    fn pull_lists_hold_a_region_per_warp() {
        // 64 threads: 2 warps, each 50 of 100 pullable vertices (or 51 of 101).
        assert_eq!(pull_list_words(100, 64), 2 + 100);
        assert_eq!(pull_list_words(101, 64), 2 + 102);
        assert_eq!(pull_list_words(0, 64), 2);
        for (pullable, threads) in [(1usize << 24, 1280usize), (4999, 256), (5, 4096)] {
            let words = pull_list_words(pullable, threads);
            let warps = threads / 32;
            assert!(words >= warps + pullable);
            assert!(words < warps + pullable + warps);
        }
    }

    /// The pullable vertices are the owned ones with in-arcs, ascending, clamped to the
    /// graph.
    #[test]
    fn pullable_lists_the_owned_vertices_with_in_arcs() {
        // Vertices 0..6: in-degrees 2, 0, 1, 0, 0, 3.
        let offsets = [0u64, 2, 2, 3, 3, 3, 6];
        assert_eq!(pullable(&offsets, &(0..6)).unwrap(), [0, 2, 5]);
        assert_eq!(pullable(&offsets, &(1..5)).unwrap(), [2]);
        assert_eq!(pullable(&offsets, &(3..100)).unwrap(), [5]);
        assert!(pullable(&offsets, &(4..4)).unwrap().is_empty());
    }
}
