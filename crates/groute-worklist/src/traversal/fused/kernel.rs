//! One device's fused kernel, kept across runs: its builds (narrow, wide, the members' and the
//! cluster builds), its state and abort words, and the launch shape of a run ([`FusedShape`],
//! chosen by [`FusedKernel::shape`]) with the role the launch plays in it ([`FusedRole`]).

use groute_core::cuda::{CudaFunction, CudaModule, DevicePtr};
use groute_core::{Buffer, Context, Device, Error};

use super::state::{FUSED_WORDS, StateBlock};
use crate::engine::WorklistOptions;
use crate::split::VertexValue;
use crate::traversal::fused_peer::FusedMember;
use crate::traversal::fused_tuning::{
    FUSED_NARROW_MAX_BLOCK, FusedDefaults, FusedGrid, MemberShare, SOLO_CLUSTER, cluster_grid,
    cooperative_grid, fused_block as fused_block_size, fused_kernel_flags, uses_cluster,
};

/// One device's fused kernel and its state, kept across runs.
pub(crate) struct FusedKernel {
    /// `<algo>_fused`: blocks of at most [`FUSED_NARROW_MAX_BLOCK`] threads.
    narrow: CudaFunction,
    /// `<algo>_fused_wide`: the same kernel for blocks of up to 1,024 threads.
    wide: CudaFunction,
    /// `<algo>_fused_peer` and `<algo>_fused_peer_wide`: the builds for the members of a
    /// device-driven run (`fused_peer.rs`; the others compile those paths out).
    peer_narrow: CudaFunction,
    peer_wide: CudaFunction,
    /// `<algo>_fused_cluster`: the wide build launched in clusters of [`SOLO_CLUSTER`] blocks,
    /// its single-block mode on cluster 0 (`kernels/include/cluster_solo.cuh`); `None` where
    /// the device has no thread-block clusters (compute capability below 9.0: the module has
    /// no such entry).
    cluster: Option<CudaFunction>,
    /// `<algo>_fused_peer_cluster`: the same for the members of a device-driven run.
    peer_cluster: Option<CudaFunction>,
    /// Multiprocessors of the device: the default grid of sparse graphs (one block per
    /// multiprocessor, [`FusedDefaults`]): the grid barrier costs more with more blocks, and
    /// per-level work on such graphs is small, so more blocks than multiprocessors only slow
    /// the levels down.
    multiprocessors: u32,
    /// The state block ([`FUSED_WORDS`] u32 of device memory): barrier words and the kernel's
    /// snapshots.
    pub(in crate::traversal) state: Buffer<u32>,
    /// [`FUSED_WORDS`] u32 of pinned host memory: a bounded launch's state block, written here
    /// and copied in before the launch, copied back after it.
    pub(in crate::traversal) state_host: Buffer<u32>,
    /// One u32 of device-mapped pinned host memory: nonzero asks the kernel to stop.
    pub(in crate::traversal) abort: Buffer<u32>,
}

/// The launch shape of one fused run.
#[derive(Clone, Copy, Debug)]
pub(in crate::traversal) struct FusedShape {
    pub(super) grid: u32,
    pub(super) block: u32,
    /// The single-block mode's bound (0: off).
    pub(in crate::traversal) solo_max: u32,
    /// The cluster build runs it (`uses_cluster`): its single-block mode on cluster 0.
    pub(in crate::traversal) cluster: bool,
}

/// How one launch of the fused kernel takes part in its run.
#[derive(Clone, Debug)]
pub(in crate::traversal) enum FusedRole {
    /// The whole run on one device.
    Alone,
    /// One batch of levels of a host-driven run on several devices (`fused_rounds.rs`).
    Bounded(FusedBounds),
    /// One member of a device-driven run on several devices (`fused_peer.rs`).
    Member(FusedMember),
}

/// What a bounded launch (one batch of levels of a run on several devices, `fused_rounds.rs`)
/// adds to the kernel's arguments: the outgoing buffer and when to return.
#[derive(Clone, Copy, Debug)]
pub(in crate::traversal) struct FusedBounds {
    /// The current outgoing buffer, its capacity and the position of its first item.
    pub(in crate::traversal) send: DevicePtr<VertexValue>,
    pub(in crate::traversal) send_capacity: u32,
    pub(in crate::traversal) send_base: u32,
    /// Levels after which the kernel returns (at least 1).
    pub(in crate::traversal) level_budget: u32,
    /// Outgoing items at which the kernel returns early.
    pub(in crate::traversal) send_yield: u32,
}

impl FusedKernel {
    /// Looks `name` and `name_wide` up in `module` (loaded for `device`) and allocates the
    /// state.
    pub(crate) fn new(
        context: &Context,
        device: &Device,
        module: &CudaModule,
        name: &str,
    ) -> Result<Self, Error> {
        let narrow = module.function(name)?;
        let wide = module.function(&format!("{name}_wide"))?;
        let peer_narrow = module.function(&format!("{name}_peer"))?;
        let peer_wide = module.function(&format!("{name}_peer_wide"))?;
        let cluster = module.function(&format!("{name}_cluster")).ok();
        let peer_cluster = module.function(&format!("{name}_peer_cluster")).ok();
        // Load every build now: under the driver's lazy loading (the default since CUDA 12.2)
        // a function is loaded on its first use, which may wait for the device's running
        // kernels; an occupancy query is such a use, here and never while a run is timed.
        for f in [&narrow, &wide, &peer_narrow, &peer_wide]
            .into_iter()
            .chain(cluster.as_ref())
            .chain(peer_cluster.as_ref())
        {
            f.max_active_blocks_per_multiprocessor(32, 0)?;
        }
        let multiprocessors = device.properties().multiprocessors.max(1);
        let kernel = FusedKernel {
            narrow,
            wide,
            peer_narrow,
            peer_wide,
            cluster,
            peer_cluster,
            multiprocessors,
            state: device.alloc::<u32>(FUSED_WORDS)?,
            state_host: context.alloc_host::<u32>(FUSED_WORDS)?,
            abort: context.alloc_mapped::<u32>(1)?,
        };
        // Mapped host memory comes uninitialised: the kernels poll this word.
        kernel.set_abort(0)?;
        Ok(kernel)
    }

    /// The cluster build for a member of a device-driven run (`peer`) or a run on one device,
    /// where the module has it.
    fn cluster_build(&self, peer: bool) -> Option<&CudaFunction> {
        if peer {
            self.peer_cluster.as_ref()
        } else {
            self.cluster.as_ref()
        }
    }

    /// The build of the kernel for blocks of `block` threads, for a member of a device-driven
    /// run (`peer`) or not; the cluster build (`cluster`) where the module has it.
    pub(super) fn function(&self, block: u32, peer: bool, cluster: bool) -> &CudaFunction {
        if let (true, Some(f)) = (cluster, self.cluster_build(peer)) {
            return f;
        }
        match (block <= FUSED_NARROW_MAX_BLOCK, peer) {
            (true, false) => &self.narrow,
            (false, false) => &self.wide,
            (true, true) => &self.peer_narrow,
            (false, true) => &self.peer_wide,
        }
    }

    /// The shape of a run: `options`' block, grid and single-block bound where set, else
    /// `defaults` (the grid at least 1, at most every resident block of the build a launch
    /// uses: a member of a device-driven run's or the other). `member`: `Some(k)` for a member
    /// of a device-driven run, `k` members sharing its GPU (1: the GPU is its own), whose
    /// grid is its share of the GPU (`MemberShare`). `cluster_graph`: the longest list and the
    /// arcs of the device's rows, for the single-block mode on a cluster (`uses_cluster`; `None`: never, as
    /// for bounded launches).
    pub(in crate::traversal) fn shape(
        &self,
        options: &WorklistOptions,
        defaults: FusedDefaults,
        member: Option<u32>,
        cluster_graph: Option<(u64, usize)>,
    ) -> Result<FusedShape, Error> {
        let peer = member.is_some();
        let share = MemberShare::new(member.unwrap_or(1));
        let block = fused_block_size(options.fused_tuning.block, defaults.block)?;
        let solo_on = options
            .fused_tuning
            .solo_max
            .unwrap_or(if defaults.solo { 1 } else { 0 })
            != 0;
        let cluster = match cluster_graph {
            Some((max_degree, arcs)) => uses_cluster(
                options,
                self.cluster_build(peer).is_some(),
                block,
                solo_on,
                fused_kernel_flags(options, arcs)?,
                max_degree,
            ),
            None => false,
        };
        let default_grid = |max: u32| match defaults.grid {
            FusedGrid::PerMultiprocessor => share.of_multiprocessors(self.multiprocessors).min(max),
            FusedGrid::Resident => max,
        };
        // The cluster build where its clusters fit the grid asked for (a grid that is not whole
        // clusters, or larger than the resident clusters, runs the build without them).
        let cluster_grid = match (cluster, self.cluster_build(peer)) {
            (true, Some(f)) => cluster_grid(
                f,
                block,
                options.fused_tuning.grid,
                default_grid(u32::MAX),
                share,
            )?,
            _ => None,
        };
        let cluster = cluster_grid.is_some();
        let grid = match cluster_grid {
            Some(grid) => grid,
            None => cooperative_grid(
                self.function(block, peer, false),
                block,
                options.fused_tuning.grid,
                default_grid,
                share,
            )?,
        };
        // The cluster's frontiers hold one item per thread of each of its blocks.
        let solo_threads = if cluster { SOLO_CLUSTER * block } else { block };
        let solo_max =
            options
                .fused_tuning
                .solo_max
                .unwrap_or(if defaults.solo { solo_threads } else { 0 });
        Ok(FusedShape {
            grid,
            block,
            solo_max,
            cluster,
        })
    }

    /// The state block after a run (`device` holds it; synchronous).
    pub(in crate::traversal) fn read_state(&self, device: &Device) -> Result<StateBlock, Error> {
        Ok(StateBlock::from_words(&device.download(&self.state)?))
    }

    pub(in crate::traversal) fn set_abort(&self, value: u32) -> Result<(), Error> {
        let word =
            self.abort
                .host_atomic_u32()
                .and_then(|w| w.first())
                .ok_or(Error::Unsupported {
                    operation: "writing the fused kernel's abort word from the host",
                    backend: "cuda",
                })?;
        word.store(value, std::sync::atomic::Ordering::SeqCst);
        // The word is cacheable host memory (never write-combined: `mem_host_alloc`), which the
        // GPU's system-scope reads snoop; the full fence makes the store globally visible before
        // anything the caller does next (blocking on the kernel), so no later poll misses it.
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}
