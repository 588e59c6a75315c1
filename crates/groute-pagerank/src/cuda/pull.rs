//! Launch wrappers of the pull sweep (`pagerank_pull_take`, `pagerank_pull_gather` in
//! `kernels/pagerank.cu`): pass 1 takes the residuals above a floor into the ranks and the
//! share array and pushes along the cut arcs only; pass 2 gathers the shares over the in-CSR
//! (crate docs, "Pull sweeps").

use groute_core::Error;
use groute_core::backend::{RawMemory, RawSlice, RawStream};
use groute_core::cuda::{CudaModule, DevicePtr, LaunchConfig};
use std::sync::Arc;

use super::{
    AppendBuffers, DeviceWorklistBuffers, PAGERANK_BLOCK, PAGERANK_SOURCE, PageRankBuffers, config,
    elements, keep, keep_push_memory, too_many,
};

/// A device's pull-sweep topology and share array.
#[derive(Clone, Debug)]
pub struct PullBuffers {
    /// In-CSR offsets, `n + 1` u64s (the CSR's own on a symmetric graph).
    pub in_offsets: RawSlice,
    /// In-CSR sources (u32s): the tails of the arcs into each vertex.
    pub in_sources: RawSlice,
    /// `n` f32 shares, 0 outside the owned range.
    pub share: RawSlice,
    /// The cut CSR (owned vertices' arcs to non-owned heads; full-length offsets, empty rows
    /// elsewhere), `None` when the device has no cut arc.
    pub cut: Option<(RawSlice, RawSlice)>,
    /// The owned vertices of at least [`crate::PULL_HUB_DEGREE`] in-arcs (`None`: none).
    pub hubs: Option<PullHubBuffers>,
}

/// The pull hubs of a device (`pagerank_pull_hub_tiles`).
#[derive(Clone, Debug)]
pub struct PullHubBuffers {
    /// The hubs (u32 vertex ids, owned).
    pub vertices: RawSlice,
    /// Their tiles: three u64s each (hub index, first arc, end arc of the in-CSR).
    pub tiles: RawSlice,
    /// One f32 per hub: the tiles' sums, 0 between sweeps.
    pub sums: RawSlice,
}

impl PullBuffers {
    fn check(&self, pr: &PageRankBuffers) -> Result<(), Error> {
        let n = pr.offsets.len / 8;
        if self.in_offsets.len != pr.offsets.len {
            return Err(Error::LengthMismatch {
                operation: "pagerank pull in-CSR offsets (n + 1 u64s)",
                dst: self.in_offsets.len / 8,
                src: n,
            });
        }
        if let Some((cut_offsets, _)) = &self.cut
            && cut_offsets.len != pr.offsets.len
        {
            return Err(Error::LengthMismatch {
                operation: "pagerank cut CSR offsets (n + 1 u64s)",
                dst: cut_offsets.len / 8,
                src: n,
            });
        }
        if self.share.len / 4 + 1 < n {
            return Err(Error::LengthMismatch {
                operation: "pagerank pull share (one f32 per vertex)",
                dst: self.share.len / 4,
                src: n.saturating_sub(1),
            });
        }
        Ok(())
    }

    pub(crate) fn memory(&self) -> Vec<Arc<dyn RawMemory>> {
        let mut m = vec![
            self.in_offsets.memory.clone(),
            self.in_sources.memory.clone(),
            self.share.memory.clone(),
        ];
        if let Some((o, t)) = &self.cut {
            m.push(o.memory.clone());
            m.push(t.memory.clone());
        }
        if let Some(h) = &self.hubs {
            m.extend([&h.vertices, &h.tiles, &h.sums].map(|s| s.memory.clone()));
        }
        m
    }

    /// The push buffers with the cut CSR in place of the CSR: what `pagerank_push_hubs`
    /// reads after [`launch_pull_take`] (`None`: no cut arc, so no hub was listed).
    pub fn cut_push(&self, pr: &PageRankBuffers) -> Option<PageRankBuffers> {
        self.cut.as_ref().map(|(offsets, targets)| PageRankBuffers {
            offsets: offsets.clone(),
            targets: targets.clone(),
            ..pr.clone()
        })
    }
}

/// Enqueues pass 1 of a pull sweep on `stream`: every owned vertex whose residual exceeds
/// `floor` is taken into its rank and its share per out-arc stored in `pull.share` (0 for
/// the others), and pushed along its cut arcs (remote heads appended to `remote`, hubs of the
/// cut CSR listed for [`super::launch_push_hubs`] over [`PullBuffers::cut_push`]). Adds the
/// vertices taken to control word [`super::CTRL_PUSHED`].
pub fn launch_pull_take(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    pull: &PullBuffers,
    wl: &DeviceWorklistBuffers,
    floor: f32,
    remote: &AppendBuffers,
) -> Result<(), Error> {
    if floor.is_nan() || floor < 0.0 {
        return Err(Error::invalid("sweep floor", floor, "a residual >= 0"));
    }
    let ops = pr.args()?;
    pull.check(pr)?;
    let (rd, rc, rn, ro) = remote.args::<u32>("remote list")?;
    let (f, cfg) = config(stream, "pagerank_pull_take", pr.owned.len())?;
    // Without cut arcs the kernel never reads the cut pointers; the CSR's stand in.
    let (cut_offsets, cut_targets) = pull
        .cut
        .as_ref()
        .map_or((&pr.offsets, &pr.targets), |(o, t)| (o, t));
    let args = (
        ops,
        DevicePtr::<u64>::from_slice(&pr.offsets)?,
        DevicePtr::<u64>::from_slice(cut_offsets)?,
        DevicePtr::<u32>::from_slice(cut_targets)?,
        u32::from(pull.cut.is_some()),
        DevicePtr::<f32>::from_slice(&pull.share)?,
        wl.args()?,
        floor,
        wl.hub_capacity,
        rd,
        rc,
        rn,
        ro,
    );
    // SAFETY: pagerank_pull_take(PageRankOps ops, const unsigned long long* offsets, const
    // unsigned long long* cut_offsets, const unsigned* cut_targets, unsigned has_cut, float*
    // share, DeviceWorklist wl, float floor, unsigned hub_capacity, unsigned* remote_data,
    // unsigned remote_capacity, unsigned* remote_count, unsigned* remote_overflow): the tuple
    // matches it field by field; the owned range lies inside the CSR, residual, share and cut
    // offsets (checked by `args` and `check`; the cut CSR holds arcs of the CSR, so its
    // targets are vertex ids < n); sizes of the worklist and appends as in `launch_sweep`;
    // memory kept alive below until the kernel completes.
    unsafe { f.launch(stream, cfg, args)? };
    keep_push_memory(stream, pr, wl, remote)?;
    keep(stream, pull.memory())
}

/// Enqueues pass 2 of a pull sweep on `stream` (after [`launch_pull_take`] and its hub
/// push): the hubs' in-lists summed in tiles over the whole grid (when the device has pull
/// hubs), then each owned vertex adds the shares of its in-neighbours to its residual and is
/// appended to `wl` if it crossed epsilon.
pub fn launch_pull_gather(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    pull: &PullBuffers,
    wl: &DeviceWorklistBuffers,
) -> Result<(), Error> {
    let ops = pr.args()?;
    pull.check(pr)?;
    let (hubs, hub_count, hub_sums, hub_degree) = match &pull.hubs {
        Some(h) => {
            let count = elements::<u32>("pull hubs", &h.vertices)?;
            if h.sums.len / 4 < count as usize {
                return Err(Error::LengthMismatch {
                    operation: "pagerank pull hub sums (one f32 per hub)",
                    dst: h.sums.len / 4,
                    src: count as usize,
                });
            }
            launch_hub_tiles(stream, pull, h)?;
            (&h.vertices, count, &h.sums, crate::PULL_HUB_DEGREE)
        }
        // No hub: the kernel reads no hub array (count 0, no in-list that long).
        None => (&pull.in_sources, 0, &pull.share, u64::MAX),
    };
    let (f, cfg) = config(stream, "pagerank_pull_gather", pr.owned.len())?;
    let args = (
        ops,
        DevicePtr::<u64>::from_slice(&pull.in_offsets)?,
        DevicePtr::<u32>::from_slice(&pull.in_sources)?,
        DevicePtr::<f32>::from_slice(&pull.share)?,
        wl.args()?,
        DevicePtr::<u32>::from_slice(hubs)?,
        hub_count,
        DevicePtr::<f32>::from_slice(hub_sums)?,
        hub_degree,
    );
    // SAFETY: pagerank_pull_gather(PageRankOps ops, const unsigned long long* in_offsets,
    // const unsigned* in_sources, const float* share, DeviceWorklist wl, const unsigned*
    // hubs, unsigned hub_count, float* hub_sum, unsigned long long hub_degree): the tuple
    // matches it; the owned range lies inside the in-CSR offsets and the residual (checked),
    // the in-CSR sources are vertex ids < n (the transpose of, or, the CSR) and the share
    // holds n f32s (checked); `hubs` and `hub_sum` hold `hub_count` elements (checked), the
    // hubs being owned vertices of at least `hub_degree` in-arcs (built at upload), which the
    // per-vertex pass skips; memory kept alive below.
    unsafe { f.launch(stream, cfg, args)? };
    let mut memory = pr.memory();
    memory.extend(wl.memory());
    memory.extend(pull.memory());
    keep(stream, memory)
}

/// Enqueues `pagerank_pull_hub_tiles` over the hubs' tiles, on the resident grid.
fn launch_hub_tiles(
    stream: &dyn RawStream,
    pull: &PullBuffers,
    hubs: &PullHubBuffers,
) -> Result<(), Error> {
    let words = hubs.tiles.len / 8;
    let tiles = u32::try_from(words / 3).map_err(|_| too_many("pull hub tiles", words / 3))?;
    let f = CudaModule::load(stream, &PAGERANK_SOURCE)?.function("pagerank_pull_hub_tiles")?;
    let grid = f
        .max_resident_grid(PAGERANK_BLOCK, 0)?
        .max(1)
        .min(tiles.max(1));
    let args = (
        DevicePtr::<u64>::from_slice(&hubs.tiles)?,
        tiles,
        DevicePtr::<u32>::from_slice(&pull.in_sources)?,
        DevicePtr::<f32>::from_slice(&pull.share)?,
        DevicePtr::<f32>::from_slice(&hubs.sums)?,
    );
    // SAFETY: pagerank_pull_hub_tiles(const unsigned long long* tiles, unsigned tile_count,
    // const unsigned* in_sources, const float* share, float* hub_sum): the tuple matches it;
    // `tiles` holds 3 * tile_count u64s (counted from its length), built at upload from the
    // in-CSR of `in_sources`: hub indices below the length of `hub_sum`, arc ranges inside
    // the in-CSR, whose sources index the n-long share; memory kept alive below.
    unsafe { f.launch(stream, LaunchConfig::linear(grid, PAGERANK_BLOCK), args)? };
    keep(stream, pull.memory())
}
