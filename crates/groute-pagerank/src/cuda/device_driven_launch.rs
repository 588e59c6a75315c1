//! Launch wrapper of the device-driven loop (`pagerank_fused` in `kernels/pagerank/pagerank_fused.cu`):
//! one persistent cooperative kernel per device runs every round of a run; its state block,
//! settings, pull topology and peers block are `groute_kernels::abi`'s `PageRank*` structs
//! ([`peers_block`] builds the block of device memory through which a device reaches its
//! peers' halos, inboxes and share arrays).

use groute_core::Error;
use groute_core::backend::{RawSlice, RawStream};
use groute_core::cuda::{
    CudaFunction, CudaModule, DevicePtr, LaunchConfig, PEER_MAX_DEVICES, PeerArgs, member_grid,
};
use groute_kernels::abi::{PageRankPeers, PageRankPull, PageRankStateBlock, read_block, words_of};

use super::launch::{DeviceWorklistBuffers, PageRankBuffers, elements, keep_memory};
use super::pull_launch::PullBuffers;

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
/// `capacity` u32), its two tails (u32) and its share array (one f32 per vertex of the
/// graph: the peers' mirror posts), with its inbox capacity per parity.
#[derive(Clone, Debug)]
pub struct PeerInbox {
    /// The halo.
    pub halo: RawSlice,
    /// The share array.
    pub share: RawSlice,
    /// The chained sweeps' second share array (as long; `None`: the sweeps do not chain).
    pub share_next: Option<RawSlice>,
    /// The inbox.
    pub inbox: RawSlice,
    /// The tails.
    pub tails: RawSlice,
    /// Inbox entries per parity.
    pub capacity: u32,
}

/// The peers block ([`PageRankPeers`], to upload to every device): every device's halo,
/// inbox, tails and share addresses, the partition's bounds and the inbox capacities. Errors
/// when the group is larger than [`PEER_MAX_DEVICES`], a buffer is too small, or some devices
/// have a second share array and others not (the chained sweeps run on every device or none).
pub fn peers_block(bounds: &[u32], inboxes: &[PeerInbox]) -> Result<PageRankPeers, Error> {
    let size = inboxes.len();
    if size == 0 || size > PEER_MAX_DEVICES || bounds.len() != size + 1 {
        return Err(Error::invalid(
            "devices of a fused PageRank run",
            size,
            format!("1..={PEER_MAX_DEVICES} devices, with one partition bound more"),
        ));
    }
    let chained = inboxes.iter().filter(|i| i.share_next.is_some()).count();
    if chained != 0 && chained != size {
        return Err(Error::invalid(
            "second share arrays of a fused PageRank run",
            format!("{chained} of {size} devices"),
            "every device or none",
        ));
    }
    let mut block: PageRankPeers = bytemuck::Zeroable::zeroed();
    for (d, inbox) in inboxes.iter().enumerate() {
        let owned = (bounds[d + 1] - bounds[d]) as usize;
        let cap = inbox.capacity as usize;
        let vertices = bounds[size] as usize;
        if inbox.halo.len / 4 < 2 * owned
            || inbox.inbox.len / 4 < 2 * cap
            || inbox.tails.len < 8
            || inbox.share.len / 4 < vertices
            || inbox
                .share_next
                .as_ref()
                .is_some_and(|s| s.len / 4 < vertices)
        {
            return Err(Error::LengthMismatch {
                operation: "fused PageRank halo (2 x owned f32) / inbox (2 x capacity) / tails (2) / shares (a f32 per vertex)",
                dst: inbox.halo.len / 4,
                src: 2 * owned,
            });
        }
        block.halo[d] = DevicePtr::from_slice(&inbox.halo)?;
        block.share[d] = DevicePtr::from_slice(&inbox.share)?;
        if let Some(next) = &inbox.share_next {
            block.share_next[d] = DevicePtr::from_slice(next)?;
        }
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
    /// The device's mirrors: for every peer, the owned vertices with an out-arc into its
    /// range (u32 vertex ids, ascending, peer after peer), whose shares each sweep posts into
    /// the peers' share arrays.
    pub mirrors: RawSlice,
    /// Where each peer's mirrors start in `mirrors` (`PEER_MAX_DEVICES + 1` bounds).
    pub mirror_bounds: [u32; PEER_MAX_DEVICES + 1],
    /// On this device, the address of every member's postbox (rank order; each of
    /// [`groute_core::cuda::PEER_POSTBOX_WORDS`] u64, zeroed before the run):
    /// [`groute_core::cuda::PeerGroup::peer_table`].
    pub postboxes: RawSlice,
    /// Where no device has pull hubs: this device's second share array (an `f32` per
    /// vertex) of the chained sweeps, whose gathers take the residuals they leave above
    /// epsilon at once (`None`: every sweep takes in a pass of its own). Every member of the
    /// group has one or none does, and the peers block holds them.
    pub share_next: Option<RawSlice>,
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
    let mirror_count = elements::<u32>("fused PageRank mirrors", &l.mirrors)?;
    let bounds = &l.mirror_bounds;
    if bounds.windows(2).any(|w| w[0] > w[1]) || bounds[PEER_MAX_DEVICES] > mirror_count {
        return Err(Error::invalid(
            "fused PageRank mirror bounds",
            format!("{bounds:?} over {mirror_count} mirrors"),
            "ascending bounds within the mirror list",
        ));
    }
    let share_next = match &l.share_next {
        Some(next) => {
            if pull.hubs.is_some() || next.len < pull.share.len {
                return Err(Error::invalid(
                    "fused PageRank chained share array",
                    format!(
                        "{} bytes beside a share array of {}",
                        next.len, pull.share.len
                    ),
                    "a device without pull hubs, as long as the share array",
                ));
            }
            addr::<f32>(next)?
        }
        None => DevicePtr::null(),
    };
    let in_csr = pull.in_csr.device_ptrs()?;
    let in_offsets32 = match &pull.in_offsets32 {
        Some(rows) => {
            let held = pull.in_csr.rows();
            let needed = (held.len() + 1) * 4;
            if rows.len < needed {
                return Err(Error::LengthMismatch {
                    operation: "fused PageRank 32-bit in-CSR rows (one more than its vertices)",
                    dst: rows.len / 4,
                    src: needed / 4,
                });
            }
            addr::<u32>(rows)?.rebased(u64::from(held.start))
        }
        None => DevicePtr::null(),
    };
    let pull_args = PageRankPull {
        in_offsets: in_csr.offsets,
        in_offsets32,
        in_sources: in_csr.targets,
        share: addr::<f32>(&pull.share)?,
        share_next,
        hubs,
        tiles,
        hub_sum,
        hub_degree,
        mirrors: addr::<u32>(&l.mirrors)?,
        mirror_bounds: l.mirror_bounds,
        hub_count,
        tile_count,
        max_in_degree: u32::try_from(pull.max_in_degree).unwrap_or(u32::MAX),
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
    // CSR part holds the owned rows, its pointers (and the in-CSR part's, in the pull
    // topology) rebased to global vertex and arc ids: the kernel reads only owned rows
    // (checked by `args`); the pull topology is the one `launch_pull_take` and
    // `launch_pull_gather` check and read (built at upload; absent hubs are null and never
    // read); the peers block holds every member's halo, inbox, tails and full-length share
    // array (sizes checked by `peers_block`) and the postbox table one address per member
    // (checked above), each reachable from this device (the group checked peer access
    // between every pair); the mirrors are owned vertex ids (built at upload from the
    // partition: they index this device's share array and the peers' full-length ones),
    // `mirror_bounds` ascending within them (checked above); `in_offsets32`, where set, holds
    // the in-CSR part's rows as 32-bit positions (built by `PullStorage` from the same rows,
    // one more than the part's vertices: checked above), rebased as its 64-bit rows are, and
    // is read only where every owned in-list is short; `share_next`, where set, is as long
    // as the share array (checked above), and the peers block then holds every member's
    // second array (the caller builds both from one choice; `peers_block` refuses a mix), so a
    // chained sweep, which every member runs, finds one on every device; `state`
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
    let group = [&l.peers, &l.state, &l.postboxes, &l.mirrors].map(|s| s.memory.clone());
    let next = l.share_next.iter().map(|s| s.memory.clone());
    keep_memory(
        stream,
        &l.pr,
        &l.wl,
        pull.memory().into_iter().chain(group).chain(next),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peers_block_refuses_second_share_arrays_on_some_devices_only() {
        let ctx = groute_core::Context::host(1).unwrap();
        let buffer = ctx.devices()[0].alloc::<u32>(8).unwrap();
        let inbox = |next: bool| PeerInbox {
            halo: buffer.raw(),
            share: buffer.raw(),
            share_next: next.then(|| buffer.raw()),
            inbox: buffer.raw(),
            tails: buffer.raw(),
            capacity: 1,
        };
        // (Host buffers are refused as kernel memory past this check: the blocks built with
        // one choice for every device are the fused runs' on CUDA.)
        for mix in [[true, false], [false, true]] {
            let e = peers_block(&[0, 1, 2], &mix.map(inbox)).unwrap_err();
            assert!(e.to_string().contains("every device or none"), "{e}");
        }
    }

    #[test]
    fn a_peers_block_needs_1_to_8_devices_and_one_bound_more() {
        let ctx = groute_core::Context::host(1).unwrap();
        let buffer = ctx.devices()[0].alloc::<u32>(8).unwrap();
        for (bounds, inboxes) in [(vec![0u32], 0usize), (vec![0, 4], 2), (vec![0; 10], 9)] {
            let inboxes: Vec<PeerInbox> = (0..inboxes)
                .map(|_| PeerInbox {
                    halo: buffer.raw(),
                    share: buffer.raw(),
                    share_next: None,
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
