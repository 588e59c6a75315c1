//! Launch wrappers of a push round of the synchronous sweeps (`pagerank_push_taken` and
//! `pagerank_absorb` in `kernels/pagerank/pagerank.cu`): after the take, the vertices taken
//! add their shares to their out-arcs' heads with atomics (a peer's heads in this device's
//! slots of them), and each device absorbs what its peers collected for its vertices,
//! collecting those left above epsilon (`crate::ranks::sweeps`, "Push rounds").

use groute_core::Error;
use groute_core::backend::{RawSlice, RawStream};
use groute_core::cuda::DevicePtr;

use super::launch::{DeviceWorklistBuffers, PageRankBuffers, config, keep_memory, per_vertex_f32};

/// Out-arcs from which a vertex's list is pushed by the whole grid in a push round
/// (`PUSH_GRID_DEGREE` in `kernels/pagerank/pagerank.cu`): `pagerank_push_taken` lists it
/// for `pagerank_push_big`.
pub const PUSH_GRID_DEGREE: u64 = 2048;

/// The slots the hubs of a push round need on a device whose rows hold `arcs` out-arcs: a
/// hub has [`PUSH_GRID_DEGREE`] of them at least.
pub fn push_hub_slots(arcs: u64) -> usize {
    usize::try_from(arcs / PUSH_GRID_DEGREE + 1).unwrap_or(usize::MAX)
}

/// Enqueues `pagerank_push_taken`, then `pagerank_push_big`, on `stream`: each of the first
/// `count` items of `wl`'s slots (the owned vertices the take took) adds `share[v]` to the
/// residual of every head of its out-arcs (the full-length residual: a non-owned head's
/// slot on this device); the lists of [`PUSH_GRID_DEGREE`] arcs or more are listed in `big`
/// (u32 slots, at least [`push_hub_slots`] of the owned rows' arcs; its count in the
/// worklist's control block, which must be zeroed since the take) and pushed by the whole
/// grid. Items outside the owned range are skipped.
pub fn launch_push_taken(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    share: &RawSlice,
    wl: &DeviceWorklistBuffers,
    count: u32,
    big: &RawSlice,
) -> Result<(), Error> {
    let ops = pr.args()?;
    let items = wl.args()?;
    let arcs = pr.csr.num_arcs() as u64;
    let big_capacity = u32::try_from(big.len / 4).unwrap_or(u32::MAX);
    if (big_capacity as usize) < push_hub_slots(arcs) {
        return Err(Error::LengthMismatch {
            operation: "pagerank push hubs (push_hub_slots of the owned arcs)",
            dst: big.len / 4,
            src: push_hub_slots(arcs),
        });
    }
    let share_ptr = per_vertex_f32("pagerank push share (one f32 per vertex)", share, pr)?;
    if count as usize > wl.data.len / 4 {
        return Err(Error::LengthMismatch {
            operation: "pagerank push items (the worklist's slots)",
            dst: wl.data.len / 4,
            src: count as usize,
        });
    }
    let (f, cfg) = config(stream, "pagerank_push_taken", count as usize)?;
    let csr = pr.csr_ptrs()?;
    let big_ptr = DevicePtr::<u32>::from_slice(big)?;
    let args = (
        ops,
        csr.offsets,
        csr.targets,
        share_ptr,
        items.data,
        count,
        big_ptr,
        big_capacity,
        items.ctrl,
    );
    // SAFETY: pagerank_push_taken(PageRankOps ops, const unsigned long long* offsets, const
    // unsigned* targets, const float* share, const unsigned* items, unsigned count, unsigned*
    // big, unsigned big_capacity, unsigned* ctrl): the tuple matches it; the residual and the
    // share hold n f32s (checked by `args` and above); `count` items lie in the worklist's
    // slots (checked above); the kernel reads the rows of an item only when it is owned (the
    // CSR part holds the owned rows, rebased to global ids, checked by `args`), whose
    // targets are vertex ids < n; it writes `big` below `big_capacity` (its length) and the
    // control block's words CTRL_PUSH_BIG and CTRL_WL_OVERFLOW (CTRL_WORDS of them, checked
    // by `wl.args`); its block claims run on whole blocks with a trip count uniform across
    // the grid.
    unsafe { f.launch(stream, cfg, args)? };
    let (f, cfg) = config(stream, "pagerank_push_big", pr.csr.num_arcs().max(1))?;
    let args = (
        ops,
        csr.offsets,
        csr.targets,
        share_ptr,
        big_ptr,
        big_capacity,
        items.ctrl,
    );
    // SAFETY: pagerank_push_big(PageRankOps ops, const unsigned long long* offsets, const
    // unsigned* targets, const float* share, const unsigned* big, unsigned big_capacity,
    // const unsigned* ctrl): the tuple matches it; it reads the first min(ctrl[CTRL_PUSH_BIG],
    // big_capacity) entries of `big` (inside it), and the rows and shares of those that are
    // owned only (the CSR part holds the owned rows; a count the take did not zero
    // reads no other row); the heads are vertex ids < n, inside the residual; memory kept
    // alive below.
    unsafe { f.launch(stream, cfg, args)? };
    keep_memory(stream, pr, wl, [share.memory.clone(), big.memory.clone()])
}

/// Enqueues `pagerank_absorb` on `stream`: every owned vertex adds `incoming[v]` (a full
/// length f32 array whose owned entries hold a peer's slots of the owned vertices; `None`:
/// nothing comes in) to its residual, and where `collect`, the owned vertices left above
/// epsilon are appended to `wl` (its end word counts them).
pub fn launch_absorb(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    incoming: Option<&RawSlice>,
    wl: &DeviceWorklistBuffers,
    collect: bool,
) -> Result<(), Error> {
    let ops = pr.args()?;
    let incoming_ptr = match incoming {
        Some(s) => per_vertex_f32("pagerank absorb incoming (one f32 per vertex)", s, pr)?,
        None => DevicePtr::null(),
    };
    let (f, cfg) = config(stream, "pagerank_absorb", pr.owned.len())?;
    let args = (ops, incoming_ptr, wl.args()?, u32::from(collect));
    // SAFETY: pagerank_absorb(PageRankOps ops, const float* incoming, DeviceWorklist wl,
    // unsigned collect): the tuple matches it; the owned range lies inside the residual and
    // `incoming` is null or holds n f32s (checked by `args` and above); the appends go
    // through the worklist's checked reservations (an append past its capacity records the
    // size it needed in the overflow word); its block reservations run on whole blocks with
    // a trip count uniform across the grid; memory kept alive below.
    unsafe { f.launch(stream, cfg, args)? };
    keep_memory(stream, pr, wl, incoming.map(|s| s.memory.clone()))
}
