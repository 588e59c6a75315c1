//! One device's pull-sweep storage on CUDA (kept across runs with the rest of
//! [`crate::cuda::storage::CudaPageRankStorage`]): the owned rows of the in-CSR (the device's
//! own part of the CSR on a symmetric graph, the owned rows of the transpose otherwise: a
//! [`DeviceCsr`]), the cut lists of the owned range (when
//! any arc leaves it), the owned hubs of the in-CSR with their tiles (when any vertex has
//! [`crate::PULL_HUB_DEGREE`] in-arcs) and the full-length share array, zeroed once: pass 1
//! writes only the owned range, so the other entries stay 0 and remote in-neighbours add
//! nothing. The hubs' sums are zeroed once too; the gather leaves them 0.

use std::ops::Range;

use groute_core::{Buffer, Device, Error};
use groute_graph::Csr;
use groute_kernels::abi::PRF_SHORT_LIST_ARCS;
use groute_worklist::DeviceCsr;
use rayon::prelude::*;

use crate::PageRankTuning;
use crate::cuda::pull_launch::{CutBuffers, GatherTileBuffers, PullBuffers, PullHubBuffers};
use crate::gather_tiles::{GatherTiles, TileShape, one_wave_arcs};
use crate::sweep::{CutArcs, PullHubs};

/// The cut lists on the device (`crate::sweep::CutArcs`). Derived from the owned rows (a
/// subset of their arcs), they are ordinary allocations, not counted as graph structure.
#[derive(Clone)]
struct CutStorage {
    vertices: Buffer<u32>,
    offsets: Buffer<u64>,
    targets: Buffer<u32>,
    /// A list is at least [`crate::cuda::HUB_MIN_DEGREE`] long.
    has_hub_lists: bool,
}

/// A device's pull hubs ([`PullHubs`]): their ids, their tiles and their `f32` sums (as bits).
type HubStorage = (Buffer<u32>, Buffer<u64>, Buffer<u32>);

/// A vertex range's gather tiles on the device ([`GatherTiles`]), and the destinations a
/// tile holds at most.
#[derive(Clone)]
struct TileStorage {
    arc_starts: Buffer<u64>,
    spans: Buffer<u32>,
    sources: Buffer<u32>,
    dests: Buffer<u16>,
    max_dests: u32,
    /// The blocks' tile counter and finished-block count (two words, 0 between launches).
    claim: Buffer<u32>,
}

/// Destinations a gather tile holds at most where the device lets a block have the shared
/// memory (8 bytes each): on one H200, tiles of up to 22,528 ran a Kronecker graph's ranged
/// gathers faster than tiles of 11,264.
const TILE_MAX_DESTS: u32 = 22_528;
const _: () = assert!(TILE_MAX_DESTS <= super::pull_launch::TILE_FLUSH_DESTS);

/// Shared memory the tiled gather keeps for itself (the block's reservation words).
const TILE_STATIC_SHARED: u32 = 1024;

/// The device buffers of the pull sweep.
#[derive(Clone)]
pub(crate) struct PullStorage {
    /// The owned rows of the in-CSR.
    in_csr: DeviceCsr,
    /// `f32` shares, as bits, one per vertex.
    share: Buffer<u32>,
    cut: Option<CutStorage>,
    /// The hubs of the in-CSR, their tiles and their `f32` sums (as bits, zeroed).
    hubs: Option<HubStorage>,
    /// One bit per vertex, marked before each gather where kept ([`PullTopology::taken_bits`]).
    taken: Option<Buffer<u32>>,
    /// [`PullTopology::interleave_gather`].
    interleave_gather: bool,
    /// [`PullBuffers::gathered_arcs`].
    gathered_arcs: usize,
    /// [`PullBuffers::max_in_degree`].
    max_in_degree: u64,
    /// [`PullBuffers::in_offsets32`]'s rows.
    in_offsets32: Option<Buffer<u32>>,
    /// A vertex range's gather tiles, where its gather goes by tiles.
    tiles: Option<TileStorage>,
}

/// What a device's pull storage is built from besides the CSR, built once on the host for
/// every device.
#[derive(Clone, Copy, Default)]
pub(crate) struct PullTopology<'a> {
    /// The transpose of a directed graph (`None`: the graph is symmetric and pulls over its
    /// own CSR).
    pub(crate) transpose: Option<&'a Csr>,
    /// The device's cut arcs (`CutArcs::of` its owned range; `None`: none).
    pub(crate) cut: Option<&'a CutArcs>,
    /// Keep a bitmap of the vertices a sweep took, so that the gather reads only their
    /// shares: for sweeps that also run when few vertices are taken (every round of
    /// [`crate::Driver::Sweeps`]), where most shares read are 0.
    pub(crate) taken_bits: bool,
    /// The gather deals its vertices out over the blocks thread by thread
    /// ([`crate::PageRankTuning::gather_interleave_for`]).
    pub(crate) interleave_gather: bool,
    /// Upload the owned rows also as 32-bit arc positions where every owned in-list is
    /// shorter than [`PRF_SHORT_LIST_ARCS`] and the positions fit, for the device-driven
    /// loop's short-list gather ([`PullBuffers::in_offsets32`]).
    pub(crate) offsets32: bool,
}

impl PullStorage {
    /// Uploads the pull topology of `owned`: the owned rows of `topology.transpose` (or, on a
    /// symmetric graph, the device's part of the CSR, `part`, already there) and
    /// `topology.cut`; allocates and zeroes the share array.
    pub(crate) fn new(
        device: &Device,
        csr: &Csr,
        part: &DeviceCsr,
        topology: PullTopology<'_>,
        owned: &Range<u32>,
    ) -> Result<Self, Error> {
        let PullTopology {
            transpose,
            cut,
            taken_bits,
            interleave_gather,
            offsets32,
        } = topology;
        let n = csr.num_vertices();
        let in_part = match transpose {
            Some(t) => DeviceCsr::upload(device, t, owned.clone(), false)?,
            None => part.clone(),
        };
        let in_csr = transpose.unwrap_or(csr);
        let hubs = upload_hubs(device, in_csr, owned)?;
        let cut = cut
            .map(|c| -> Result<_, Error> {
                Ok(CutStorage {
                    vertices: device.upload_graph(&c.vertices)?,
                    offsets: device.upload_graph(&c.offsets)?,
                    targets: device.upload_graph(&c.targets)?,
                    has_hub_lists: c.max_degree() >= crate::cuda::HUB_MIN_DEGREE,
                })
            })
            .transpose()?;
        let share = device.alloc::<u32>(n.max(1))?;
        device.stream().fill(&share, 0u32)?;
        let taken = taken_bits
            .then(|| device.alloc::<u32>(n.div_ceil(32).max(1)))
            .transpose()?;
        let gathered_arcs = in_part.num_arcs();
        let in_offsets = in_csr.offsets();
        let max_in_degree = owned
            .clone()
            .map(|v| in_offsets[v as usize + 1] - in_offsets[v as usize])
            .max()
            .unwrap_or(0);
        let in_offsets32 = if offsets32 && max_in_degree < u64::from(PRF_SHORT_LIST_ARCS) {
            upload_offsets32(device, in_offsets, owned)?
        } else {
            None
        };
        Ok(PullStorage {
            max_in_degree,
            in_offsets32,
            in_csr: in_part,
            share,
            cut,
            hubs,
            taken,
            interleave_gather,
            gathered_arcs,
            tiles: None,
        })
    }

    /// The storage of a gather into the vertices of `range` only (a part of the owned range:
    /// the sweeps' rounds by vertex ranges): the same in-CSR (`in_csr` its host copy, the
    /// transpose or the CSR), share array and bitmap, with the hubs of `range` alone.
    pub(crate) fn for_range(
        &self,
        device: &Device,
        in_csr: &Csr,
        range: &Range<u32>,
    ) -> Result<Self, Error> {
        let offsets = in_csr.offsets();
        let arcs = offsets[range.end as usize] - offsets[range.start as usize];
        Ok(PullStorage {
            hubs: upload_hubs(device, in_csr, range)?,
            gathered_arcs: usize::try_from(arcs).unwrap_or(usize::MAX),
            ..self.clone()
        })
    }

    /// This storage of a gather into `range` (made by [`PullStorage::for_range`] for that
    /// range: its gathered arcs are the range's) with the range's in-arcs also uploaded as
    /// gather tiles ([`GatherTiles`], shaped as `tuning` asks:
    /// [`PageRankTuning::gather_tile_by_destination`], [`PageRankTuning::gather_tile_arcs`]),
    /// which its gather then sums instead of
    /// the hubs and the in-lists (the hubs dropped). `None` where they do not fit the
    /// device's memory, where the device lets a block have too little shared memory for a
    /// tile, or where the range has no in-arc: the range then gathers by vertex.
    pub(crate) fn with_tiles(
        &self,
        device: &Device,
        in_csr: &Csr,
        range: &Range<u32>,
        tuning: &PageRankTuning,
    ) -> Result<Option<Self>, Error> {
        let arcs = self.gathered_arcs as u64;
        let tiles = match upload_tiles(device, in_csr, range, arcs, tuning) {
            Ok(t) => t,
            Err(e) if e.is_out_of_memory() => None,
            Err(e) => return Err(e),
        };
        Ok(tiles.map(|t| PullStorage {
            hubs: None,
            tiles: Some(t),
            ..self.clone()
        }))
    }

    /// Whether the range gathers by tiles ([`PullStorage::with_tiles`]).
    pub(crate) fn has_tiles(&self) -> bool {
        self.tiles.is_some()
    }

    /// The kernel-side view of the range's gather tiles (`None`: it gathers by destination).
    pub(crate) fn tile_buffers(&self) -> Option<GatherTileBuffers> {
        self.tiles.as_ref().map(|t| GatherTileBuffers {
            arc_starts: t.arc_starts.raw(),
            spans: t.spans.raw(),
            sources: t.sources.raw(),
            dests: t.dests.raw(),
            max_dests: t.max_dests,
            claim: t.claim.raw(),
            share: self.share.raw(),
        })
    }

    /// Zeroes the hubs' sums and the tiles' claim counter on `device`'s stream (the gathers
    /// leave them 0; this covers a run that failed between the hub tiles and the gather, or
    /// during a tiled gather).
    pub(crate) fn reset(&self, device: &Device) -> Result<(), Error> {
        if let Some((_, _, sums)) = &self.hubs {
            device.stream().fill(sums, 0u32)?;
        }
        if let Some(t) = &self.tiles {
            device.stream().fill(&t.claim, 0u32)?;
        }
        Ok(())
    }

    /// The full-length share array (`f32` bits).
    pub(crate) fn share(&self) -> &Buffer<u32> {
        &self.share
    }

    /// The owned rows of the in-CSR.
    pub(crate) fn in_csr(&self) -> &DeviceCsr {
        &self.in_csr
    }

    /// The kernel-side view of the buffers (one load in flight per gather thread).
    pub(crate) fn buffers(&self) -> PullBuffers {
        PullBuffers {
            in_csr: self.in_csr.clone(),
            share: self.share.raw(),
            cut: self.cut.as_ref().map(|c| CutBuffers {
                vertices: c.vertices.raw(),
                offsets: c.offsets.raw(),
                targets: c.targets.raw(),
                has_hub_lists: c.has_hub_lists,
            }),
            hubs: self.hubs.as_ref().map(|(v, t, s)| PullHubBuffers {
                vertices: v.raw(),
                tiles: t.raw(),
                sums: s.raw(),
            }),
            taken: self.taken.as_ref().map(Buffer::raw),
            batched_loads: false,
            interleave_gather: self.interleave_gather,
            gathered_arcs: self.gathered_arcs,
            max_in_degree: self.max_in_degree,
            in_offsets32: self.in_offsets32.as_ref().map(Buffer::raw),
        }
    }
}

/// The rows `owned` of `in_offsets` as 32-bit arc positions on `device` (`None` where the
/// last one is within [`PRF_SHORT_LIST_ARCS`] of 2^32: the kernel adds up to that much to a
/// position in 32 bits).
fn upload_offsets32(
    device: &Device,
    in_offsets: &[u64],
    owned: &Range<u32>,
) -> Result<Option<Buffer<u32>>, Error> {
    let rows = &in_offsets[owned.start as usize..=owned.end as usize];
    let most = u64::from(u32::MAX - PRF_SHORT_LIST_ARCS);
    if rows.last().is_some_and(|&last| last > most) {
        return Ok(None);
    }
    let mut narrow = Vec::new();
    narrow
        .try_reserve_exact(rows.len())
        .map_err(|_| Error::OutOfMemory {
            bytes: rows.len().saturating_mul(4),
            location: "host memory (the owned in-CSR rows as 32-bit arc positions)".into(),
            source: None,
        })?;
    // Ascending, the last fits: every one does.
    narrow.par_extend(rows.par_iter().map(|&o| o as u32));
    device.upload_graph(&narrow).map(Some)
}

/// The gather tiles of `range` (`arcs` in-arcs) of `in_csr` on `device`, shaped by its
/// multiprocessors and shared memory and by `tuning` (`None`: the device lets a block have
/// too little shared memory for a tile, or the range has no in-arc).
fn upload_tiles(
    device: &Device,
    in_csr: &Csr,
    range: &Range<u32>,
    arcs: u64,
    tuning: &PageRankTuning,
) -> Result<Option<TileStorage>, Error> {
    let props = device.properties();
    let room = props
        .shared_memory_per_block_optin
        .saturating_sub(TILE_STATIC_SHARED)
        / 8;
    let max_dests = room.min(TILE_MAX_DESTS);
    if max_dests < 32 || arcs == 0 {
        return Ok(None);
    }
    // One block of the tiled gather per multiprocessor: its sums (8 bytes for each of up to
    // TILE_MAX_DESTS destinations) take more than half a multiprocessor's shared memory on
    // the GPUs it runs on (the launch sizes its grid by occupancy all the same).
    let blocks = u64::from(props.multiprocessors);
    let target_arcs = match tuning.gather_tile_arcs {
        Some(a) => a,
        None => one_wave_arcs(in_csr.offsets(), range, max_dests, blocks).unwrap_or(arcs),
    };
    let shape = TileShape {
        max_dests,
        target_arcs: target_arcs.max(1),
        by_destination: tuning.gather_tile_by_destination_for(),
    };
    let t = GatherTiles::build(in_csr.offsets(), in_csr.targets(), range, shape)?;
    let claim = device.alloc::<u32>(2)?;
    device.stream().fill(&claim, 0u32)?;
    Ok(Some(TileStorage {
        claim,
        arc_starts: device.upload_graph(&t.arc_starts)?,
        spans: device.upload_graph(&t.spans)?,
        sources: device.upload_graph(&t.sources)?,
        dests: device.upload_graph(&t.dests)?,
        max_dests,
    }))
}

/// The hubs of `owned` in `in_csr` (its vertices of at least [`crate::PULL_HUB_DEGREE`]
/// in-arcs), their tiles and their sums, zeroed, on `device` (`None`: no hub).
fn upload_hubs(
    device: &Device,
    in_csr: &Csr,
    owned: &Range<u32>,
) -> Result<Option<HubStorage>, Error> {
    let Some(h) = PullHubs::of(in_csr.offsets(), owned) else {
        return Ok(None);
    };
    let sums = device.alloc::<u32>(h.vertices.len())?;
    device.stream().fill(&sums, 0u32)?;
    Ok(Some((
        device.upload_graph(&h.vertices)?,
        device.upload_graph(&h.tiles)?,
        sums,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use groute_core::Context;

    #[test]
    fn the_32_bit_rows_are_the_owned_rows_or_none_near_the_32_bit_limit() {
        let ctx = Context::host(1).unwrap();
        let device = &ctx.devices()[0];
        let offsets = [0u64, 3, 3, 7, 9, 12];
        let rows = upload_offsets32(device, &offsets, &(1..4))
            .unwrap()
            .unwrap();
        assert_eq!(device.download(&rows).unwrap(), vec![3u32, 3, 7, 9]);
        let most = u64::from(u32::MAX - PRF_SHORT_LIST_ARCS);
        let fits = [0, most - 1, most];
        assert!(upload_offsets32(device, &fits, &(0..2)).unwrap().is_some());
        let past = [0, most, most + 1];
        assert!(upload_offsets32(device, &past, &(0..2)).unwrap().is_none());
        // Only the owned rows count: a later part past the limit is not this one's.
        assert!(upload_offsets32(device, &past, &(0..1)).unwrap().is_some());
    }
}
