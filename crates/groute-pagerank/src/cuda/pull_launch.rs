//! Launch wrappers of the pull sweep (`pagerank_pull_take`, `pagerank_pull_cut`,
//! `pagerank_pull_gather` in `kernels/pagerank/pagerank.cu`): pass 1 takes the residuals above a floor
//! into the ranks and the share array; on several devices the cut vertices' shares are then
//! pushed along their cut arcs only; pass 2 gathers the shares over the in-CSR (crate docs,
//! "Pull sweeps").

use groute_core::Error;
use groute_core::backend::{RawMemory, RawSlice, RawStream};
use groute_core::cuda::{CudaModule, DevicePtr, LaunchConfig};
use groute_worklist::DeviceCsr;
use std::sync::Arc;

use super::launch::{
    AppendBuffers, DeviceWorklistBuffers, PAGERANK_BLOCK, PAGERANK_SOURCE, PageRankBuffers, config,
    csr_memory, elements, enqueue_push_hubs, keep, keep_memory, per_vertex_f32, too_many,
};

/// A device's pull-sweep topology and share array.
#[derive(Clone, Debug)]
pub struct PullBuffers {
    /// The owned rows of the in-CSR (the CSR's own part on a symmetric graph, else the
    /// transpose's): the tails of the arcs into each owned vertex, by global ids through
    /// [`DeviceCsr::device_ptrs`].
    pub in_csr: DeviceCsr,
    /// `n` f32 shares, 0 outside the owned range.
    pub share: RawSlice,
    /// The cut lists (owned vertices' arcs to non-owned heads, compact), `None` when the
    /// device has no cut arc.
    pub cut: Option<CutBuffers>,
    /// The owned vertices of at least [`crate::PULL_HUB_DEGREE`] in-arcs (`None`: none).
    pub hubs: Option<PullHubBuffers>,
    /// One bit per vertex (`u32` words, at least `n / 32` rounded up): where present, the
    /// gather first marks the vertices whose share is above 0 (`pagerank_mark_taken`) and
    /// then reads only their shares (`None`: every share is read).
    pub taken: Option<RawSlice>,
    /// The gather and the hub tiles keep several loads in flight per thread (the
    /// `_batched` kernels): what the synchronous sweeps ask for, and what every gather
    /// through `taken` runs. False: one load at a time, which the host-driven rounds'
    /// gathers, reading every share at random, run faster.
    pub batched_loads: bool,
    /// The gather deals its vertices out over the blocks thread by thread instead of warp by
    /// warp ([`crate::PageRankTuning::gather_interleave`]).
    pub interleave_gather: bool,
    /// The in-arcs into the vertices a gather sums (all the owned rows', or one vertex
    /// range's): with the vertices, what its grid is sized by.
    pub gathered_arcs: usize,
    /// At least the in-degree of every owned vertex (the device-driven loop's chained
    /// gathers sum lists shorter than a warp thread by thread, their loads batched).
    pub max_in_degree: u64,
    /// `in_csr`'s rows (one more than its vertices) as 32-bit arc positions, which the
    /// device-driven loop's short-list gather reads instead of the 64-bit ones (`None`:
    /// none). Crate-private: only `PullStorage` builds them, from the same rows, so their
    /// contents hold what the kernel relies on.
    pub(crate) in_offsets32: Option<RawSlice>,
}

/// A vertex range's gather tiles on the device (`crate::gather_tiles::GatherTiles`) and the
/// share array they read. Crate-private: only `PullStorage::with_tiles` builds them, from
/// `GatherTiles::build`, so their contents hold what the kernel's launch relies on.
#[derive(Clone, Debug)]
pub(crate) struct GatherTileBuffers {
    /// Tile `t`'s arcs are `arc_starts[t]..arc_starts[t + 1]` (u64s, one more than tiles).
    pub(crate) arc_starts: RawSlice,
    /// Tile `t`'s destinations: `spans[2 t]` (a global vertex id) and the next `count`
    /// vertices, `count` the low 31 bits of `spans[2 t + 1]` (bit 31: the tile's arcs are by
    /// destination) (u32s).
    pub(crate) spans: RawSlice,
    /// The arcs' sources (u32 vertex ids < n), each tile's ascending.
    pub(crate) sources: RawSlice,
    /// The arcs' destinations, as u16 offsets from their tile's first.
    pub(crate) dests: RawSlice,
    /// The most destinations a tile holds (the gather keeps 8 bytes of shared memory each).
    pub(crate) max_dests: u32,
    /// The blocks' tile counter and finished-block count: two u32s, 0 at launch (the gather
    /// leaves them so).
    pub(crate) claim: RawSlice,
    /// `n` f32 shares.
    pub(crate) share: RawSlice,
}

impl GatherTileBuffers {
    fn memory(&self) -> Vec<Arc<dyn RawMemory>> {
        [
            &self.arc_starts,
            &self.spans,
            &self.sources,
            &self.dests,
            &self.claim,
            &self.share,
        ]
        .map(|s| s.memory.clone())
        .to_vec()
    }
}

/// Threads of a block of the tiled gather.
const TILE_BLOCK: u32 = 1024;

/// Destinations a gather tile may hold at most: its flush gives each thread at most 32 of them
/// (bits of one word, `flush_tile` in `kernels/include/gather_tiles.cuh`).
pub(crate) const TILE_FLUSH_DESTS: u32 = 32 * TILE_BLOCK;

/// Enqueues the tiled gather of a vertex range (`pagerank_pull_gather_tiles`, in place of
/// [`launch_pull_gather`]'s hub tiles and gather): each of its vertices with in-arcs adds
/// its in-neighbours' shares to its residual and is appended to `wl` if it crossed epsilon.
pub(crate) fn launch_pull_gather_tiles(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    tiles: &GatherTileBuffers,
    wl: &DeviceWorklistBuffers,
) -> Result<(), Error> {
    let ops = pr.args()?;
    per_vertex_f32("pagerank pull share (one f32 per vertex)", &tiles.share, pr)?;
    let count = elements::<u32>("gather tile spans", &tiles.spans)? / 2;
    if tiles.arc_starts.len / 8 != count as usize + 1 {
        return Err(Error::LengthMismatch {
            operation: "pagerank gather tile arc starts (one u64 per tile, plus one)",
            dst: tiles.arc_starts.len / 8,
            src: count as usize + 1,
        });
    }
    if tiles.dests.len / 2 != tiles.sources.len / 4 {
        return Err(Error::LengthMismatch {
            operation: "pagerank gather tile destinations (one u16 per arc)",
            dst: tiles.dests.len / 2,
            src: tiles.sources.len / 4,
        });
    }
    if tiles.claim.len < 8 {
        return Err(Error::LengthMismatch {
            operation: "pagerank gather tile claim (two u32 counters)",
            dst: tiles.claim.len / 4,
            src: 2,
        });
    }
    if count == 0 {
        return Ok(());
    }
    if tiles.max_dests > TILE_FLUSH_DESTS {
        return Err(too_many("tile destinations", tiles.max_dests as usize));
    }
    let shared = tiles
        .max_dests
        .checked_mul(8)
        .ok_or_else(|| too_many("tile destinations", tiles.max_dests as usize))?;
    let f = CudaModule::load(stream, &PAGERANK_SOURCE)?.function("pagerank_pull_gather_tiles")?;
    f.set_max_dynamic_shared_memory(shared)?;
    let grid = f
        .max_resident_grid(TILE_BLOCK, shared as usize)?
        .max(1)
        .min(count);
    let config = LaunchConfig {
        shared_mem_bytes: shared,
        dependent: true,
        ..LaunchConfig::linear(grid, TILE_BLOCK)
    };
    let args = (
        ops,
        DevicePtr::<u64>::from_slice(&tiles.arc_starts)?,
        DevicePtr::<u32>::from_slice(&tiles.spans)?,
        count,
        DevicePtr::<u32>::from_slice(&tiles.sources)?,
        DevicePtr::<u16>::from_slice(&tiles.dests)?,
        DevicePtr::<f32>::from_slice(&tiles.share)?,
        wl.args()?,
        tiles.max_dests,
        DevicePtr::<u32>::from_slice(&tiles.claim)?,
    );
    // SAFETY: pagerank_pull_gather_tiles(PageRankOps ops, const unsigned long long*
    // arc_starts, const unsigned* spans, unsigned tile_count, const unsigned* sources, const
    // unsigned short* dests, const float* share, DeviceWorklist wl, unsigned max_dests,
    // unsigned* claim): the tuple matches it; `spans` holds 2 * count u32s and `arc_starts`
    // count + 1 u64s, `sources` and `dests` are of equal length and `claim` holds two u32s
    // (checked); the claim words are 0 (zeroed at upload and by `PullStorage::reset`, and
    // the kernel's last block leaves them 0); by construction (the buffers are crate-private,
    // built only from `GatherTiles::build` over a range of the owned vertices of the in-CSR:
    // its tests check these), each tile's destinations are at most `max_dests` owned
    // vertices (at most TILE_FLUSH_DESTS, checked; its count, the low 31 bits of
    // `spans[2 t + 1]`), its arcs ascending
    // positions inside `sources` and `dests`, whose sources are vertex ids < n (the
    // in-CSR's) and whose destination offsets lie inside their tile; the
    // share holds n f32s (checked) and the residual is full length; the launch's dynamic
    // shared memory holds 2 * max_dests words, the kernel's sums, which the function was
    // allowed to ask for above; the worklist as in `launch_pull_gather`; memory kept alive
    // below. Dependent: the kernel's first statement waits for the prior grid.
    unsafe { f.launch(stream, config, args)? };
    keep_memory(stream, pr, wl, tiles.memory())
}

/// A device's cut lists (`CutLists` of `kernels/include/pagerank_push.cuh`): cut vertex `i`
/// is `vertices[i]`, its cut arcs' heads `targets[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Debug)]
pub struct CutBuffers {
    /// The owned vertices with a cut arc (u32s).
    pub vertices: RawSlice,
    /// `vertices + 1` u64 offsets into `targets`.
    pub offsets: RawSlice,
    /// The heads (u32 vertex ids of other devices).
    pub targets: RawSlice,
    /// Whether a cut list is at least [`super::HUB_MIN_DEGREE`] long (so the cut pass may list
    /// hubs for `pagerank_push_hubs`).
    pub has_hub_lists: bool,
}

impl CutBuffers {
    /// The number of cut vertices, checked against the offsets.
    pub(crate) fn count(&self) -> Result<u32, Error> {
        let count = elements::<u32>("cut vertices", &self.vertices)?;
        if self.offsets.len / 8 != count as usize + 1 {
            return Err(Error::LengthMismatch {
                operation: "pagerank cut offsets (one u64 per cut vertex, plus one)",
                dst: self.offsets.len / 8,
                src: count as usize + 1,
            });
        }
        Ok(count)
    }

    fn memory(&self) -> [Arc<dyn RawMemory>; 3] {
        [&self.vertices, &self.offsets, &self.targets].map(|s| s.memory.clone())
    }
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
        let n = pr.num_vertices;
        let rows = self.in_csr.rows();
        if pr.owned.start < rows.start || pr.owned.end > rows.end {
            return Err(Error::invalid(
                "pagerank pull in-CSR rows",
                format_args!("{rows:?}"),
                format!("holding the owned range {:?}", pr.owned),
            ));
        }
        if let Some(cut) = &self.cut {
            cut.count()?;
        }
        per_vertex_f32("pagerank pull share (one f32 per vertex)", &self.share, pr)?;
        if let Some(taken) = &self.taken
            && taken.len / 4 < n.div_ceil(32)
        {
            return Err(Error::LengthMismatch {
                operation: "pagerank pull taken bitmap (one bit per vertex)",
                dst: taken.len / 4,
                src: n.div_ceil(32),
            });
        }
        Ok(())
    }

    pub(crate) fn memory(&self) -> Vec<Arc<dyn RawMemory>> {
        let mut m = csr_memory(&self.in_csr);
        m.push(self.share.memory.clone());
        if let Some(cut) = &self.cut {
            m.extend(cut.memory());
        }
        if let Some(h) = &self.hubs {
            m.extend([&h.vertices, &h.tiles, &h.sums].map(|s| s.memory.clone()));
        }
        if let Some(taken) = &self.taken {
            m.push(taken.memory.clone());
        }
        if let Some(rows) = &self.in_offsets32 {
            m.push(rows.memory.clone());
        }
        m
    }
}

/// Enqueues pass 1 of a pull sweep on `stream`: every owned vertex whose residual exceeds
/// `floor` is taken into its rank and its share per out-arc stored in `pull.share` (0 for
/// the others). Pushes nothing ([`launch_pull_cut`] pushes the cut arcs). Adds the vertices
/// taken to control word [`super::CTRL_PUSHED`]. Where `dependent` (the rounds by vertex
/// ranges), a programmatic dependent launch ([`LaunchConfig::dependent`]).
pub fn launch_pull_take(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    pull: &PullBuffers,
    wl: &DeviceWorklistBuffers,
    (floor, dependent): (f32, bool),
) -> Result<(), Error> {
    if floor.is_nan() || floor < 0.0 {
        return Err(Error::invalid("sweep floor", floor, "a residual >= 0"));
    }
    let ops = pr.args()?;
    pull.check(pr)?;
    let (f, cfg) = config(stream, "pagerank_pull_take", pr.owned.len())?;
    let cfg = LaunchConfig { dependent, ..cfg };
    let args = (
        ops,
        pr.csr_ptrs()?.offsets,
        DevicePtr::<f32>::from_slice(&pull.share)?,
        wl.args()?,
        floor,
    );
    // SAFETY: pagerank_pull_take(PageRankOps ops, const unsigned long long* offsets, float*
    // share, DeviceWorklist wl, float floor): the tuple matches it field by field; the owned
    // range lies inside the residual and the share, and the CSR part holds the owned rows'
    // offsets, rebased to global ids (checked by `args` and `check`); of the worklist, the
    // kernel writes only the control block's CTRL_PUSHED word and its 64-bit CTRL_TAKEN_ARCS
    // (CTRL_WORDS words, checked by `wl.args`; every control block is an allocation's start,
    // 8-byte aligned, as CTRL_HUB_COUNTER's 64-bit atomics need too); memory kept alive below
    // until the kernel completes. Dependent or not, the kernel's first statement waits for the
    // prior grid (a no-op after a plain launch).
    unsafe { f.launch(stream, cfg, args)? };
    keep_memory(stream, pr, wl, pull.memory())
}

/// Enqueues the cut pass of a pull sweep on `stream`, after [`launch_pull_take`] (nothing
/// when the device has no cut arc): each cut vertex's share pushed along its cut arcs (remote
/// heads appended to `remote` when their halo slot was empty), then, when a cut list may be
/// a hub and `wl` has hub slots, `pagerank_push_hubs` over the cut lists.
pub fn launch_pull_cut(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    pull: &PullBuffers,
    wl: &DeviceWorklistBuffers,
    remote: &AppendBuffers,
) -> Result<(), Error> {
    let Some(cut) = &pull.cut else {
        return Ok(());
    };
    let ops = pr.args()?;
    pull.check(pr)?;
    let count = cut.count()?;
    let (f, cfg) = config(stream, "pagerank_pull_cut", count as usize)?;
    let args = (
        ops,
        DevicePtr::<u32>::from_slice(&cut.vertices)?,
        DevicePtr::<u64>::from_slice(&cut.offsets)?,
        DevicePtr::<u32>::from_slice(&cut.targets)?,
        count,
        DevicePtr::<f32>::from_slice(&pull.share)?,
        wl.args()?,
        wl.hub_capacity,
        remote.args::<u32>("remote list")?,
    );
    // SAFETY: pagerank_pull_cut(PageRankOps ops, const unsigned* cut_vertices, const unsigned
    // long long* cut_offsets, const unsigned* cut_targets, unsigned cut_count, const float*
    // share, DeviceWorklist wl, unsigned hub_capacity, AppendBuffer<unsigned> remote_list):
    // the tuple matches it; `cut_vertices` holds `count` owned vertices and `cut_offsets` count + 1 offsets
    // (checked by `cut.count`), built at upload from this device's CSR, so the offsets lie
    // inside `cut_targets`, whose heads are vertex ids < n, inside the residual; the share
    // holds n f32s (checked); sizes of the worklist and appends as in `launch_sweep`; memory
    // kept alive below.
    unsafe { f.launch(stream, cfg, args)? };
    keep_memory(stream, pr, wl, remote.memory())?;
    keep(stream, pull.memory())?;
    if cut.has_hub_lists && wl.hub_capacity != 0 {
        // The hubs were recorded by their index in the cut lists.
        enqueue_push_hubs(
            stream,
            pr,
            DevicePtr::from_slice(&cut.offsets)?,
            DevicePtr::from_slice(&cut.targets)?,
            wl,
            remote,
        )?;
        keep(stream, pull.memory())?;
    }
    Ok(())
}

/// The in-arcs per thread a gather's grid is sized for, at least (the vertices being the
/// other measure): lists of 32 arcs and more are summed by a warp or a block.
const GATHER_ARCS_PER_THREAD: usize = 8;

/// Enqueues pass 2 of a pull sweep on `stream` (after [`launch_pull_take`] and
/// [`launch_pull_cut`], and after every share the gather reads is in place): where
/// `pull.taken` is given, the bitmap of the vertices taken is marked from the shares first
/// and only their shares are read; then
/// the hubs' in-lists are summed in tiles over the whole grid (when the device has pull
/// hubs), and each owned vertex adds the shares of its in-neighbours to its residual and is
/// appended to `wl` if it crossed epsilon.
pub fn launch_pull_gather(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    pull: &PullBuffers,
    wl: &DeviceWorklistBuffers,
) -> Result<(), Error> {
    let ops = pr.args()?;
    pull.check(pr)?;
    let taken = match &pull.taken {
        Some(bits) => {
            launch_mark_taken(stream, pr, pull, bits)?;
            DevicePtr::<u32>::from_slice(bits)?
        }
        None => DevicePtr::null(),
    };
    let batched = pull.batched_loads || !taken.is_null();
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
            launch_hub_tiles(stream, pull, h, taken, batched)?;
            (&h.vertices, count, &h.sums, crate::PULL_HUB_DEGREE)
        }
        // No hub: the kernel reads no hub array (count 0, no in-list that long).
        None => (&pull.share, 0, &pull.share, u64::MAX),
    };
    let kernel = match (batched, pull.interleave_gather) {
        (false, false) => "pagerank_pull_gather",
        (false, true) => "pagerank_pull_gather_interleaved",
        (true, false) => "pagerank_pull_gather_batched",
        (true, true) => "pagerank_pull_gather_batched_interleaved",
    };
    // The grid follows the arcs as well as the vertices (capped at the resident grid): a
    // gather into a part of the rows (the sweeps' rounds by vertex ranges) may take few
    // vertices with most of the arcs, which a grid of one thread per vertex would leave to
    // a few blocks.
    let elements = pr
        .owned
        .len()
        .max(pull.gathered_arcs / GATHER_ARCS_PER_THREAD);
    let (f, cfg) = config(stream, kernel, elements)?;
    let in_csr = pull.in_csr.device_ptrs()?;
    let args = (
        ops,
        in_csr.offsets,
        in_csr.targets,
        DevicePtr::<f32>::from_slice(&pull.share)?,
        taken,
        wl.args()?,
        DevicePtr::<u32>::from_slice(hubs)?,
        hub_count,
        DevicePtr::<f32>::from_slice(hub_sums)?,
        hub_degree,
    );
    // SAFETY: pagerank_pull_gather and its _interleaved, _batched and _batched_interleaved
    // forms (PageRankOps ops, const unsigned long long* in_offsets,
    // const unsigned* in_sources, const float* share, const unsigned* taken, DeviceWorklist
    // wl, const unsigned* hubs, unsigned hub_count, float* hub_sum, unsigned long long
    // hub_degree): the tuple matches it; `taken` is null or holds a bit per vertex
    // (checked); the owned range lies inside the residual and the in-CSR part holds the
    // owned rows (checked; a vertex range's gather owns a part of them), its pointers
    // rebased so that the kernel's global vertex and arc ids of the owned rows land inside
    // it (the kernel reads no other row); the in-CSR sources are vertex ids < n (the
    // transpose of, or, the CSR) and the share holds n f32s (checked); `hubs` and `hub_sum`
    // hold `hub_count` elements (checked), the hubs being owned vertices of at least
    // `hub_degree` in-arcs (built at upload for the owned range, or for the vertex range by
    // `PullStorage::for_range`), which the per-vertex pass skips; memory kept alive below.
    unsafe { f.launch(stream, cfg, args)? };
    keep_memory(stream, pr, wl, pull.memory())
}

/// Enqueues `pagerank_mark_taken`: bit `v` of `taken` set where `pull.share[v] > 0`, for
/// every vertex.
fn launch_mark_taken(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    pull: &PullBuffers,
    taken: &RawSlice,
) -> Result<(), Error> {
    let n = u32::try_from(pr.num_vertices).map_err(|_| too_many("vertices", pr.num_vertices))?;
    // One warp per bitmap word.
    let (f, cfg) = config(
        stream,
        "pagerank_mark_taken",
        pr.num_vertices.div_ceil(32) * 32,
    )?;
    let args = (
        DevicePtr::<f32>::from_slice(&pull.share)?,
        n,
        DevicePtr::<u32>::from_slice(taken)?,
    );
    // SAFETY: pagerank_mark_taken(const float* share, unsigned n, unsigned* taken): the tuple
    // matches it; the share holds n f32s and `taken` n / 32 words rounded up (both checked
    // by `check` before this call), the kernel reads no share past n and writes no word past
    // them; its full-mask ballot needs whole warps, and PAGERANK_BLOCK (256) is a multiple
    // of 32; memory kept alive below.
    unsafe { f.launch(stream, cfg, args)? };
    keep(stream, pull.memory())
}

/// Enqueues `pagerank_pull_hub_tiles` (`_batched` where `batched`) over the hubs' tiles, on
/// the resident grid (reading the shares whose `taken` bit is set; every share where `taken`
/// is null).
fn launch_hub_tiles(
    stream: &dyn RawStream,
    pull: &PullBuffers,
    hubs: &PullHubBuffers,
    taken: DevicePtr<u32>,
    batched: bool,
) -> Result<(), Error> {
    let words = hubs.tiles.len / 8;
    let tiles = u32::try_from(words / 3).map_err(|_| too_many("pull hub tiles", words / 3))?;
    let kernel = if batched {
        "pagerank_pull_hub_tiles_batched"
    } else {
        "pagerank_pull_hub_tiles"
    };
    let f = CudaModule::load(stream, &PAGERANK_SOURCE)?.function(kernel)?;
    let grid = f
        .max_resident_grid(PAGERANK_BLOCK, 0)?
        .max(1)
        .min(tiles.max(1));
    let args = (
        DevicePtr::<u64>::from_slice(&hubs.tiles)?,
        tiles,
        pull.in_csr.device_ptrs()?.targets,
        DevicePtr::<f32>::from_slice(&pull.share)?,
        taken,
        DevicePtr::<f32>::from_slice(&hubs.sums)?,
    );
    // SAFETY: pagerank_pull_hub_tiles and pagerank_pull_hub_tiles_batched (const unsigned long
    // long* tiles, unsigned tile_count,
    // const unsigned* in_sources, const float* share, const unsigned* taken, float* hub_sum):
    // the tuple matches it; `taken` is null or a bit per vertex (checked by the caller);
    // `tiles` holds 3 * tile_count u64s (counted from its length), built at upload from the
    // in-CSR of `in_sources`: hub indices below the length of `hub_sum`, global arc ranges of
    // owned hubs' rows, inside the in-CSR part (its sources pointer rebased to global arc
    // ids), whose sources index the n-long share; memory kept alive below.
    unsafe { f.launch(stream, LaunchConfig::linear(grid, PAGERANK_BLOCK), args)? };
    keep(stream, pull.memory())
}
