//! One device's PageRank storage on CUDA ([`CudaPageRankStorage`]), allocated once and reused
//! by every run, with the push parameters it is built from ([`PushSettings`]) and the buffer
//! views the launch wrappers take.

use std::collections::VecDeque;
use std::ops::Range;

use groute_core::{Buffer, Context, Device, Error};
use groute_graph::Csr;
use groute_worklist::{DeviceCsr, WorklistError, WorklistOptions};

use crate::VertexResidual;
use crate::cuda::host_driven::{CTRL_WL_OVERFLOW, CudaPageRankWorker, WL_SETTING};
use crate::cuda::pull_launch::PullBuffers;
use crate::cuda::pull_storage::{PullStorage, PullTopology};
use crate::cuda::{
    CTRL_WORDS, DeviceWorklistBuffers, HUB_MIN_DEGREE, HUB_SLOT_WORDS, PageRankBuffers,
};
use crate::profile::{DeviceProfile, ProfileSink};
use crate::solver::reset_arrays;
use crate::sweep::SweepMode;

/// The push parameters of a CUDA run ([`crate::PageRankOptions`]' alpha, epsilon, sweep
/// divisor and sweep mode).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PushSettings {
    /// [`crate::PageRankTuning::sweep`].
    pub(crate) sweep: SweepMode,
    /// Damping factor.
    pub(crate) alpha: f32,
    /// Scheduling threshold.
    pub(crate) epsilon: f32,
    /// [`crate::PageRankTuning::sweep_divisor`].
    pub(crate) sweep_divisor: u32,
    /// [`crate::PageRankTuning::lazy_receive`].
    pub(crate) lazy_receive: bool,
    /// [`crate::PageRankTuning::fused_fence_per_round`] (read by the device-driven runs).
    pub(crate) fused_fence_per_round: bool,
    /// [`crate::PageRankTuning::fused_blocks_per_sm`] (read by the device-driven runs).
    pub(crate) fused_blocks_per_sm: u32,
    /// The tuning asked for, which [`crate::Driver::Sweeps`] reads (its degree order, gather
    /// interleaving and vertex ranges as the solver decides them, the fields below).
    pub(crate) tuning: crate::PageRankTuning,
    /// The sweeps' gather deals its vertices out over the blocks
    /// ([`crate::PageRankTuning::gather_interleave_for`]; false until the solver decides).
    pub(crate) interleave_gather: bool,
    /// The graph was uploaded in degree order ([`crate::PageRankSolver::degree_ordered`];
    /// false until the solver decides). [`crate::Driver::Auto`] weighs it.
    pub(crate) degree_ordered: bool,
    /// The sweeps' vertex ranges ([`crate::PageRankTuning::sweep_ranges_for`]; 1 until
    /// the solver decides).
    pub(crate) sweep_ranges: u32,
}

impl PushSettings {
    /// The settings `options` ask for, on a graph of `average_degree` arcs per vertex (which
    /// picks the sweep divisor where `options` leave it open).
    pub(crate) fn of(options: &crate::PageRankOptions, average_degree: f64) -> Self {
        PushSettings {
            sweep: options.tuning.sweep,
            alpha: options.alpha,
            epsilon: options.epsilon,
            sweep_divisor: options.tuning.sweep_divisor_for(average_degree),
            lazy_receive: options.tuning.lazy_receive,
            fused_fence_per_round: options.tuning.fused_fence_per_round,
            fused_blocks_per_sm: options.tuning.fused_blocks_per_sm,
            tuning: options.tuning,
            interleave_gather: false,
            degree_ordered: false,
            sweep_ranges: 1,
        }
    }
}

/// One device's PageRank storage on CUDA, allocated once and reused by every run: the owned
/// rows of the CSR ([`DeviceCsr`]), the residual and rank arrays, the worklist, the remote
/// list, the outgoing buffers and the control block. [`CudaPageRankStorage::worker`] resets
/// the run state and lends it to a [`CudaPageRankWorker`].
#[derive(Clone)]
pub(crate) struct CudaPageRankStorage {
    pub(super) owned: Range<u32>,
    /// The owned rows of the CSR.
    pub(super) csr: DeviceCsr,
    /// Vertices of the whole graph.
    pub(super) num_vertices: usize,
    /// Full-length `f32` residual, as bits.
    pub(crate) residual: Buffer<u32>,
    /// Owned `f32` ranks, as bits (at least one slot).
    pub(crate) rank: Buffer<u32>,
    pub(super) alpha: f32,
    pub(super) epsilon: f32,
    /// [`crate::PageRankTuning::sweep_divisor`].
    pub(super) sweep_divisor: u32,
    /// [`crate::PageRankTuning::lazy_receive`].
    pub(super) lazy_receive: bool,
    pub(super) wl: Buffer<u32>,
    pub(super) remote: Buffer<u32>,
    pub(super) outgoing: Vec<Buffer<VertexResidual>>,
    pub(super) ctrl: Buffer<u32>,
    pub(super) ctrl_host: Buffer<u32>,
    /// Slots of the hub list after the control block's [`CTRL_WORDS`] words (0 when no owned
    /// vertex is a hub: then no hub launch either).
    pub(super) hub_capacity: u32,
    /// Whether the caller fixed `send_capacity` (then an overflow is an error naming it;
    /// otherwise a current buffer that could overflow is enlarged before the kernel runs).
    pub(super) fixed_send: bool,
    /// The pull sweep's storage ([`SweepMode::Pull`]; `None`: sweeps push).
    pub(super) pull: Option<PullStorage>,
    /// Whether another device owns any vertex (then every round packs its remote list).
    pub(super) has_remote: bool,
    /// The last run's [`DeviceProfile`].
    pub(crate) profile: ProfileSink,
}

impl CudaPageRankStorage {
    /// Uploads the owned rows of the CSR and allocates the residual, the ranks, the worklist, the remote list
    /// and the first outgoing buffer (capacities from `options`, or sized from the graph; a
    /// run adds up to three more, which return to the pool's cache after it); with
    /// [`SweepMode::Pull`], also the pull topology (`transpose`: the in-CSR of a directed
    /// graph, `None` on a symmetric one; its owned rows are uploaded).
    pub(crate) fn new(
        context: &Context,
        device: &Device,
        csr: &Csr,
        pull: PullTopology<'_>,
        owned: Range<u32>,
        push: PushSettings,
        options: &WorklistOptions,
    ) -> Result<Self, WorklistError> {
        let PushSettings {
            sweep,
            alpha,
            epsilon,
            sweep_divisor,
            lazy_receive,
            ..
        } = push;
        let n = csr.num_vertices();
        let local = (owned.end - owned.start) as usize;
        let remote_vertices = n - local;
        let wl_cap = options
            .wl_capacity
            .unwrap_or(2 * local + 1024)
            .clamp(1, 1 << 31)
            .checked_next_power_of_two()
            .unwrap_or(1 << 31);
        // A round sends at most one item per remote vertex; a receive passes on at most what
        // the ring delivers at once.
        let send_cap = options
            .send_capacity
            .unwrap_or(
                remote_vertices
                    + options
                        .packet_size
                        .saturating_mul(options.ring_buffers.max(1))
                    + 1024,
            )
            .clamp(1, u32::MAX as usize);
        let part = DeviceCsr::upload(device, csr, owned.clone(), false)?;
        let residual = device.alloc::<u32>(n.max(1))?;
        // Rank of vertex v at rank[v - owned.start]: the allocation starts owned.start % 32
        // slots earlier, so that the rank of a multiple of 32 sits at a multiple of 128 bytes,
        // like its residual, and a warp's 32 ranks fill one line (the passes over the owned
        // range start at a multiple of 32; see warp_aligned_begin in pagerank_push.cuh).
        let pad = owned.start as usize % 32;
        let rank = device.alloc::<u32>(pad + local.max(1))?.slice(pad..)?;
        let wl = device.alloc::<u32>(wl_cap)?;
        let remote = device.alloc::<u32>(remote_vertices.max(1))?;
        // The first outgoing buffer; a run adds more (up to OUTGOING_BUFFERS) when a send
        // finds every buffer in flight.
        let outgoing = vec![device.alloc::<VertexResidual>(send_cap)?];
        // A hub is listed at most once per round (only its own item takes its residual), so
        // twice the owned hubs never fills; a full list would only fall back to block pushes.
        let owned_hubs = csr.offsets()[owned.start as usize..=owned.end as usize]
            .windows(2)
            .filter(|w| w[1] - w[0] >= HUB_MIN_DEGREE)
            .count();
        let hub_capacity = if owned_hubs == 0 {
            0
        } else {
            (2 * owned_hubs + 64).min(1 << 24)
        };
        let ctrl = device.alloc::<u32>(CTRL_WORDS + HUB_SLOT_WORDS * hub_capacity)?;
        let ctrl_host = context.alloc_host::<u32>(CTRL_WORDS)?;
        let pull = match sweep {
            SweepMode::Push => None,
            SweepMode::Pull => Some(PullStorage::new(device, csr, &part, pull, &owned)?),
        };
        device.stream().synchronize()?;
        Ok(CudaPageRankStorage {
            owned,
            csr: part,
            num_vertices: n,
            residual,
            rank,
            alpha,
            epsilon,
            sweep_divisor,
            lazy_receive,
            wl,
            remote,
            outgoing,
            ctrl,
            ctrl_host,
            hub_capacity: hub_capacity as u32,
            fixed_send: options.send_capacity.is_some(),
            pull,
            has_remote: remote_vertices > 0,
            profile: ProfileSink::default(),
        })
    }

    /// Resets the run state (residual `1 - alpha` on owned vertices and 0 in the halo, ranks
    /// and control block 0, pull hub sums 0) on `device`'s stream and returns a worker over
    /// this storage.
    pub(crate) fn worker<'a>(&self, device: &'a Device) -> Result<CudaPageRankWorker<'a>, Error> {
        self.reset(device)?;
        device.stream().synchronize()?;
        Ok(CudaPageRankWorker {
            device,
            store: self.clone(),
            outgoing: self.outgoing.clone(),
            start: 0,
            end: 0,
            send_count: 0,
            pushed: 0,
            round_first: 0,
            unsettled: 0,
            current: 0,
            free: (1..self.outgoing.len()).rev().collect(),
            in_flight: VecDeque::new(),
            profile: DeviceProfile::default(),
        })
    }
}

impl CudaPageRankStorage {
    /// Enqueues the reset of the run state on `device`'s stream: residual `1 - alpha` on owned
    /// vertices and 0 in the halo, ranks and control block 0, pull hub sums 0.
    pub(crate) fn reset(&self, device: &Device) -> Result<(), Error> {
        reset_arrays(device, &self.residual, &self.rank, &self.owned, self.alpha)?;
        device.stream().fill(&self.ctrl, 0u32)?;
        if let Some(pull) = &self.pull {
            pull.reset(device)?;
        }
        Ok(())
    }

    /// The graph and PageRank arrays, as the launch wrappers take them.
    pub(crate) fn pr_buffers(&self) -> PageRankBuffers {
        PageRankBuffers {
            csr: self.csr.clone(),
            num_vertices: self.num_vertices,
            residual: self.residual.raw(),
            rank: self.rank.raw(),
            owned: self.owned.clone(),
            alpha: self.alpha,
            epsilon: self.epsilon,
        }
    }

    /// The worklist from position 0 with the control block and its hub slots.
    pub(crate) fn wl_buffers(&self) -> DeviceWorklistBuffers {
        DeviceWorklistBuffers {
            data: self.wl.raw(),
            first: 0,
            ctrl: self.ctrl.raw(),
            hub_capacity: self.hub_capacity,
        }
    }

    /// The pull sweep's buffers (`None`: sweeps push).
    pub(crate) fn pull_buffers(&self) -> Option<PullBuffers> {
        self.pull.as_ref().map(PullStorage::buffers)
    }

    /// [`crate::PageRankTuning::sweep_divisor`].
    pub(crate) fn sweep_divisor(&self) -> u32 {
        self.sweep_divisor
    }

    /// The worklist-overflow error, when the control block (downloaded from `device`) records one.
    pub(crate) fn worklist_overflow(&self, device: &Device) -> Result<Option<Error>, Error> {
        let w = device.download(&self.ctrl.slice(CTRL_WL_OVERFLOW..CTRL_WL_OVERFLOW + 1)?)?;
        Ok((w[0] != 0).then(|| {
            Error::capacity_exceeded(
                "device local worklist",
                self.wl.len(),
                w[0] as usize,
                WL_SETTING,
            )
        }))
    }
}
