//! Launch wrapper of the device-driven loop (`pagerank_fused` in `kernels/pagerank/pagerank_fused.cu`):
//! one persistent cooperative kernel per device runs every round of a run; its state block,
//! settings, pull topology and peers block are `groute_kernels::abi`'s `PageRank*` structs
//! ([`peers_block`] builds the block of device memory through which a device reaches its
//! peers' halos and inboxes).

use groute_core::Error;
use groute_core::backend::{RawSlice, RawStream};
use groute_core::cuda::{
    CudaFunction, CudaModule, DevicePtr, LaunchConfig, PEER_MAX_DEVICES, PeerArgs, member_grid,
};
use groute_kernels::abi::{PageRankPeers, PageRankPull, PageRankStateBlock, read_block, words_of};

use super::pull::PullBuffers;
use super::{DeviceWorklistBuffers, PageRankBuffers, elements, keep};

/// Threads per block of `pagerank_fused` (its `__launch_bounds__`).
pub const FUSED_PAGERANK_BLOCK: u32 = 256;

/// `groute_kernels::pagerank::FUSED` (`kernels/pagerank/pagerank_fused.cu`), the kernel's source.
pub const FUSED_PAGERANK_SOURCE: groute_core::cuda::KernelSource = groute_kernels::pagerank::FUSED;

/// u32 words of the state block ([`PageRankStateBlock`]; zeroed before each run).
pub const STATE_WORDS: usize = words_of::<PageRankStateBlock>();

/// The kernel's scalar settings (`groute::PageRankSettings`).
pub use groute_kernels::abi::PageRankSettings as FusedSettings;

/// The state block after a run, read from its words ([`STATE_WORDS`] of them).
pub(crate) fn state_block(words: &[u32]) -> Result<PageRankStateBlock, Error> {
    read_block(words).ok_or_else(|| {
        Error::invalid(
            "fused PageRank state block",
            words.len(),
            format!("{STATE_WORDS} words"),
        )
    })
}

/// Where each device receives: its halo (2 x owned f32, parity-major), its inbox (2 x
/// `capacity` u32) and its two tails (u32), with its inbox capacity per parity.
#[derive(Clone, Debug)]
pub struct PeerInbox {
    /// The halo.
    pub halo: RawSlice,
    /// The inbox.
    pub inbox: RawSlice,
    /// The tails.
    pub tails: RawSlice,
    /// Inbox entries per parity.
    pub capacity: u32,
}

/// The peers block ([`PageRankPeers`], to upload to every device): every device's halo,
/// inbox and tails addresses, the partition's bounds and the inbox capacities. Errors when
/// the group is larger than [`PEER_MAX_DEVICES`] or a buffer is too small.
pub fn peers_block(bounds: &[u32], inboxes: &[PeerInbox]) -> Result<PageRankPeers, Error> {
    let size = inboxes.len();
    if size == 0 || size > PEER_MAX_DEVICES || bounds.len() != size + 1 {
        return Err(Error::invalid(
            "devices of a fused PageRank run",
            size,
            format!("1..={PEER_MAX_DEVICES} devices, with one partition bound more"),
        ));
    }
    let mut block: PageRankPeers = bytemuck::Zeroable::zeroed();
    for (d, inbox) in inboxes.iter().enumerate() {
        let owned = (bounds[d + 1] - bounds[d]) as usize;
        let cap = inbox.capacity as usize;
        if inbox.halo.len / 4 < 2 * owned || inbox.inbox.len / 4 < 2 * cap || inbox.tails.len < 8 {
            return Err(Error::LengthMismatch {
                operation: "fused PageRank halo (2 x owned f32) / inbox (2 x capacity) / tails (2)",
                dst: inbox.halo.len / 4,
                src: 2 * owned,
            });
        }
        block.halo[d] = DevicePtr::from_slice(&inbox.halo)?;
        block.inbox[d] = DevicePtr::from_slice(&inbox.inbox)?;
        block.tails[d] = DevicePtr::from_slice(&inbox.tails)?;
        block.capacity[d] = inbox.capacity;
    }
    block.bounds[..=size].copy_from_slice(bounds);
    Ok(block)
}

/// One device's launch of `pagerank_fused`.
#[derive(Clone, Debug)]
pub struct FusedLaunch {
    /// The graph and the PageRank arrays.
    pub pr: PageRankBuffers,
    /// The worklist and control block (`first` 0, control block zeroed).
    pub wl: DeviceWorklistBuffers,
    /// The pull sweep's topology.
    pub pull: PullBuffers,
    /// This device's copy of the [`peers_block`].
    pub peers: RawSlice,
    /// [`STATE_WORDS`] zeroed u32.
    pub state: RawSlice,
    /// The scalar settings.
    pub settings: FusedSettings,
    /// This device's member parameter of the group.
    pub group: PeerArgs,
    /// This device's in-cut vertices (owned, with an in-arc from another device; u32s), whose
    /// halo slots the drain takes after a round with cut pushes.
    pub in_cut: RawSlice,
    /// Merged cut sends (`None`: cut shares go straight to the peers): per cut arc its head's
    /// index into the distinct heads (u32s, as many as the cut lists' targets), the distinct
    /// heads (u32s) and one zeroed f32 slot per head.
    pub merged_cut: Option<MergedCut>,
    /// On this device, the address of every member's postbox (rank order; each of
    /// [`groute_core::cuda::PEER_POSTBOX_WORDS`] u64, zeroed before the run):
    /// [`groute_core::cuda::PeerGroup::peer_table`].
    pub postboxes: RawSlice,
}

/// A device's merged cut sends ([`FusedLaunch::merged_cut`]).
#[derive(Clone, Debug)]
pub struct MergedCut {
    /// Per cut arc, its head's index into `heads`.
    pub head_of_arc: RawSlice,
    /// The distinct heads of the cut arcs.
    pub heads: RawSlice,
    /// One f32 per head, zeroed before the run (the sweeps leave it zeroed).
    pub slots: RawSlice,
}

fn addr<T>(s: &RawSlice) -> Result<DevicePtr<T>, Error> {
    DevicePtr::from_slice(s)
}

/// `pagerank_fused` loaded into one device, with its resident grid ([`FusedKernel::load`]).
#[derive(Clone, Debug)]
pub struct FusedKernel {
    function: CudaFunction,
    grid: u32,
}

impl FusedKernel {
    /// Compiles and loads `pagerank_fused` into the device of `stream` (the function itself
    /// too, not lazily at its launch: see [`CudaFunction::load_now`]) and sizes its resident
    /// grid. Do it on EVERY member before launching any: a member that loads while another
    /// already waits for it at an exchange may wait behind work that waits for that member.
    /// `blocks_per_sm` picks the entry point: 0 the unbounded one, 6 or 8 those held to that
    /// many blocks per SM; anything else is an error naming the choices. `sharing`: the
    /// members of the run on this GPU, itself included (1: the GPU is its own); the grid is
    /// its share of the resident blocks ([`groute_core::cuda::member_share`]), so that every
    /// member sharing the GPU fits beside the others.
    pub fn load(
        stream: &dyn RawStream,
        blocks_per_sm: u32,
        sharing: usize,
    ) -> Result<FusedKernel, Error> {
        let name = match blocks_per_sm {
            0 => "pagerank_fused",
            6 => "pagerank_fused_b6",
            8 => "pagerank_fused_b8",
            other => {
                return Err(Error::invalid(
                    "blocks per SM of the fused PageRank kernel (--fused-blocks-per-sm)",
                    other,
                    "0 (let the compiler choose), 6 or 8",
                ));
            }
        };
        let function = CudaModule::load(stream, &FUSED_PAGERANK_SOURCE)?.function(name)?;
        function.load_now()?;
        let grid = member_grid(
            &function,
            "fused PageRank grid",
            FUSED_PAGERANK_BLOCK,
            sharing,
            "--driver host",
        )?;
        Ok(FusedKernel { function, grid })
    }

    /// Blocks of the cooperative launch (every one resident at once).
    pub fn grid(&self) -> u32 {
        self.grid
    }
}

/// Enqueues `kernel` (loaded for the device of `stream`) cooperatively on `stream` over the
/// resident grid. The caller loads every member's kernel, then launches every member before
/// waiting for any (their exchanges wait for each other), and keeps the peers' buffers alive
/// until every member completed.
pub fn launch_fused(
    stream: &dyn RawStream,
    kernel: &FusedKernel,
    l: &FusedLaunch,
) -> Result<(), Error> {
    let ops = l.pr.args()?;
    if l.state.len < STATE_WORDS * 4 || l.peers.len < std::mem::size_of::<PageRankPeers>() {
        return Err(Error::invalid(
            "fused PageRank state / peers block",
            l.state.len,
            "a PageRankStateBlock and a PageRankPeers",
        ));
    }
    if l.settings.max_batch == 0 {
        return Err(Error::invalid("max_batch", 0, "at least 1"));
    }
    if l.postboxes.len / 8 < l.group.size as usize {
        return Err(Error::LengthMismatch {
            operation: "fused PageRank postbox table (one address per member)",
            dst: l.postboxes.len / 8,
            src: l.group.size as usize,
        });
    }
    let pull = &l.pull;
    let (hubs, tiles, hub_sum, hub_count, tile_count, hub_degree) = match &pull.hubs {
        Some(h) => (
            addr::<u32>(&h.vertices)?,
            addr::<u64>(&h.tiles)?,
            addr::<f32>(&h.sums)?,
            elements::<u32>("pull hubs", &h.vertices)?,
            elements::<[u64; 3]>("pull hub tiles", &h.tiles)?,
            crate::PULL_HUB_DEGREE,
        ),
        None => (
            DevicePtr::null(),
            DevicePtr::null(),
            DevicePtr::null(),
            0,
            0,
            u64::MAX,
        ),
    };
    let (cut_vertices, cut_offsets, cut_targets, cut_count, cut_hubs) = match &pull.cut {
        Some(c) => (
            addr::<u32>(&c.vertices)?,
            addr::<u64>(&c.offsets)?,
            addr::<u32>(&c.targets)?,
            c.count()?,
            u32::from(c.has_hub_lists && l.settings.hub_capacity != 0),
        ),
        None => (
            DevicePtr::null(),
            DevicePtr::null(),
            DevicePtr::null(),
            0,
            0,
        ),
    };
    let (cut_head_of_arc, cut_heads, cut_merge, cut_head_count) = match (&l.merged_cut, &pull.cut) {
        (Some(m), Some(c)) => {
            let heads = elements::<u32>("merged cut heads", &m.heads)?;
            if m.head_of_arc.len != c.targets.len || m.slots.len / 4 < heads as usize {
                return Err(Error::LengthMismatch {
                    operation: "merged cut sends (one head index per cut arc, a slot per head)",
                    dst: m.head_of_arc.len / 4,
                    src: c.targets.len / 4,
                });
            }
            (
                addr::<u32>(&m.head_of_arc)?,
                addr::<u32>(&m.heads)?,
                addr::<f32>(&m.slots)?,
                heads,
            )
        }
        _ => (DevicePtr::null(), DevicePtr::null(), DevicePtr::null(), 0),
    };
    let in_csr = pull.in_csr.device_ptrs()?;
    let pull_args = PageRankPull {
        in_offsets: in_csr.offsets,
        in_sources: in_csr.targets,
        share: addr::<f32>(&pull.share)?,
        cut_vertices,
        cut_offsets,
        cut_targets,
        hubs,
        tiles,
        hub_sum,
        hub_degree,
        in_cut: addr::<u32>(&l.in_cut)?,
        hub_count,
        tile_count,
        cut_count,
        cut_hubs,
        in_cut_count: elements::<u32>("in-cut vertices", &l.in_cut)?,
        cut_head_of_arc,
        cut_heads,
        cut_merge,
        cut_head_count,
    };
    let (f, grid) = (&kernel.function, kernel.grid);
    let csr = l.pr.csr_ptrs()?;
    let args = (
        ops,
        csr.offsets,
        csr.targets,
        l.wl.args()?,
        pull_args,
        DevicePtr::<PageRankPeers>::from_slice(&l.peers)?,
        l.settings,
        DevicePtr::<u32>::from_slice(&l.state)?,
        l.group,
        DevicePtr::<u64>::from_slice(&l.postboxes)?,
    );
    // SAFETY: pagerank_fused(PageRankOps ops, const unsigned long long* offsets, const
    // unsigned* targets, DeviceWorklist wl, PageRankPull pull, const PageRankPeers* peers,
    // PageRankSettings settings, unsigned* state, PeerGroup group, unsigned long long* const*
    // postboxes): the tuple matches it field by field (the abi structs checked against
    // abi.h and abi_pagerank.h by groute-kernels' tests/abi.rs, the others' layouts asserted
    // in super). The owned range lies inside the residual and ranks, and the
    // CSR part holds exactly the owned rows, its pointers (and the in-CSR part's, in the pull
    // topology) rebased to global vertex and arc ids: the kernel reads only owned rows
    // (checked by `args`); the pull topology is the one `launch_pull_take`,
    // `launch_pull_cut` and `launch_pull_gather` check and read (built at upload; the cut
    // lists' count checked by `count`; absent parts are null and never read: no cut arc, no
    // hub); the peers block holds every member's halo, inbox and tails (sizes checked by
    // `peers_block`) and the postbox table one address per member (checked above), each
    // reachable from this device (the group checked peer access between every pair);
    // `in_cut` holds `in_cut_count` owned vertices, built at upload from the partition (the
    // drain indexes this device's halo and residual with them); the merged cut sends, when
    // present, hold a head index below `cut_head_count` per cut arc (as many as the cut
    // targets, checked above; built at upload from the same cut lists), the heads (vertex ids
    // of other devices) and a slot per head (checked); `state`
    // holds a zeroed PageRankStateBlock. The launch is cooperative over the resident grid at
    // FUSED_PAGERANK_BLOCK threads (the kernel's launch bounds), so every block reaches
    // every grid barrier; every exchange is bounded by the group's timeout and abort word.
    // Memory kept alive below; the caller keeps the peers' buffers and postboxes alive until
    // every member completed.
    unsafe {
        f.launch_cooperative(
            stream,
            LaunchConfig::linear(grid, FUSED_PAGERANK_BLOCK),
            args,
        )?
    };
    let mut memory = l.pr.memory();
    memory.extend(l.wl.memory());
    memory.extend(pull.memory());
    memory.extend([&l.peers, &l.state, &l.postboxes, &l.in_cut].map(|s| s.memory.clone()));
    if let Some(m) = &l.merged_cut {
        memory.extend([&m.head_of_arc, &m.heads, &m.slots].map(|s| s.memory.clone()));
    }
    keep(stream, memory)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peers_block_needs_1_to_8_devices_and_one_bound_more() {
        let ctx = groute_core::Context::host(1).unwrap();
        let buffer = ctx.devices()[0].alloc::<u32>(8).unwrap();
        for (bounds, inboxes) in [(vec![0u32], 0usize), (vec![0, 4], 2), (vec![0; 10], 9)] {
            let inboxes: Vec<PeerInbox> = (0..inboxes)
                .map(|_| PeerInbox {
                    halo: buffer.raw(),
                    inbox: buffer.raw(),
                    tails: buffer.raw(),
                    capacity: 1,
                })
                .collect();
            let e = peers_block(&bounds, &inboxes).unwrap_err();
            assert!(e.to_string().contains("1..=8 devices"), "{e}");
        }
    }
}
