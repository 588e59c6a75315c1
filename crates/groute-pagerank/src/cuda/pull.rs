//! Launch wrappers of the pull sweep (`pagerank_pull_take`, `pagerank_pull_gather` in
//! `kernels/pagerank.cu`): pass 1 takes the residuals above a floor into the ranks and the
//! share array and pushes along the cut arcs only; pass 2 gathers the shares over the in-CSR
//! (crate docs, "Pull sweeps").

use groute_core::Error;
use groute_core::backend::{RawMemory, RawSlice, RawStream};
use groute_core::cuda::DevicePtr;
use std::sync::Arc;

use super::{
    AppendBuffers, DeviceWorklistBuffers, PageRankBuffers, config, keep, keep_push_memory,
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

    fn memory(&self) -> Vec<Arc<dyn RawMemory>> {
        let mut m = vec![
            self.in_offsets.memory.clone(),
            self.in_sources.memory.clone(),
            self.share.memory.clone(),
        ];
        if let Some((o, t)) = &self.cut {
            m.push(o.memory.clone());
            m.push(t.memory.clone());
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
/// push): each owned vertex adds the shares of its in-neighbours to its residual and is
/// appended to `wl` if it crossed epsilon.
pub fn launch_pull_gather(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    pull: &PullBuffers,
    wl: &DeviceWorklistBuffers,
) -> Result<(), Error> {
    let ops = pr.args()?;
    pull.check(pr)?;
    let (f, cfg) = config(stream, "pagerank_pull_gather", pr.owned.len())?;
    let args = (
        ops,
        DevicePtr::<u64>::from_slice(&pull.in_offsets)?,
        DevicePtr::<u32>::from_slice(&pull.in_sources)?,
        DevicePtr::<f32>::from_slice(&pull.share)?,
        wl.args()?,
    );
    // SAFETY: pagerank_pull_gather(PageRankOps ops, const unsigned long long* in_offsets,
    // const unsigned* in_sources, const float* share, DeviceWorklist wl): the tuple matches
    // it; the owned range lies inside the in-CSR offsets and the residual (checked), the
    // in-CSR sources are vertex ids < n (the transpose of, or, the CSR) and the share holds
    // n f32s (checked); memory kept alive below.
    unsafe { f.launch(stream, cfg, args)? };
    let mut memory = pr.memory();
    memory.extend(wl.memory());
    memory.extend(pull.memory());
    keep(stream, memory)
}
