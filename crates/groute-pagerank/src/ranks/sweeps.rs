//! One device's share of a [`super::PageRankRanks`] run: the out-degrees of its rows, the
//! in-arcs of its owned vertices, its residual, rank and share arrays, and the passes of a
//! round on its backend (the CUDA kernels `pagerank_pull_take`, `pagerank_pull_gather`,
//! `pagerank_push_taken` and `pagerank_absorb`, or their host mirrors in [`super::host`]).
//!
//! # Push rounds
//!
//! A round that takes few arcs (in a process alone: [`super::rounds`]) pushes instead of
//! gathering: after the take, each vertex taken adds its share to the residual of every head
//! of its out-arcs ([`DeviceSweeps::push`]). The residual is full length, so a head that
//! another device owns collects in this device's slot of it, zeroed first. Each device then
//! absorbs the slots its peers collected for its vertices, copied into its share array's
//! owned entries, and collects the vertices left above epsilon ([`DeviceSweeps::absorb`]).
//! A gather reads every in-arc of the owned vertices whatever the round takes; a push
//! touches only the out-arcs of the vertices taken, an atomic each.

use std::ops::Range;

use groute_core::{BackendKind, Buffer, Context, Device, Error, Stream};
use groute_graph::Csr;
use groute_worklist::DeviceCsr;

use super::host;
use super::sweep_ranges::SweepRanges;
use crate::PageRankTuning;
use crate::cuda::pull_launch::{launch_pull_gather, launch_pull_gather_tiles, launch_pull_take};
use crate::cuda::pull_storage::{PullStorage, PullTopology};
use crate::cuda::push_round_launch::{launch_absorb, launch_push_taken, push_hub_slots};
use crate::cuda::{
    CTRL_PUSHED, CTRL_TAKEN_ARCS, CTRL_WORDS, DeviceWorklistBuffers, PageRankBuffers,
};
use crate::solver::{reset_arrays, residual_sum_and_max};

/// Control word counting the vertices a gather appended to the worklist (those that crossed
/// epsilon): `groute::DeviceWorklist`'s end (`CTRL_WL_END`).
pub(super) const CTRL_CROSSED: usize = 0;
/// Control word where an append past the worklist's capacity records the size it needed.
const CTRL_OVERFLOW: usize = 2;

/// What a round's take and gather counted on one device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SweepCounts {
    /// Owned vertices whose residual the take moved into their rank.
    pub(super) taken: u64,
    /// Their out-arcs.
    pub(super) taken_arcs: u64,
    /// Owned vertices whose residual the gather took past epsilon.
    pub(super) crossed: u64,
}

/// A device's arrays for the sweeps, allocated once.
pub(super) struct DeviceSweeps {
    owned: Range<u32>,
    /// The owned rows of the CSR: their offsets give the out-degrees.
    out_rows: DeviceCsr,
    /// The owned rows of the in-CSR, the full-length share array and the in-hubs.
    pull: PullStorage,
    /// Full-length `f32` residuals, as bits (only the owned ones are used).
    residual: Buffer<u32>,
    /// Owned `f32` ranks, as bits (at least one slot).
    rank: Buffer<u32>,
    /// The gather appends the vertices that crossed epsilon here (a power of two of slots,
    /// at least the owned vertices: a vertex crosses at most once a gather).
    worklist: Buffer<u32>,
    /// [`CTRL_WORDS`] control words, zeroed before each take.
    ctrl: Buffer<u32>,
    /// A push round's hubs, pushed by the whole grid (CUDA; [`push_hub_slots`] of the owned
    /// rows' arcs).
    push_hubs: Buffer<u32>,
    /// Rounds by vertex ranges (`ranks/sweep_ranges.rs`): each range's owned vertices and
    /// the storage of a gather into them (`pull`'s, with their hubs alone; empty:
    /// whole-graph rounds).
    sweep_ranges: Vec<(Range<u32>, PullStorage)>,
    num_vertices: usize,
    alpha: f32,
    epsilon: f32,
}

/// Gives every range of every device's sweeps (`sweeps`, of `context`'s devices in order) its
/// gather tiles from the in-CSR `in_csr`, on CUDA where `tuning` asks
/// ([`PageRankTuning::gather_tiles_for`]). Called once every device's arrays are allocated, so
/// that the tiles, a second copy of the in-arcs, take only memory nothing else needs: a range
/// whose tiles do not fit gathers by vertex.
pub(super) fn add_gather_tiles(
    sweeps: &mut [DeviceSweeps],
    context: &Context,
    in_csr: &Csr,
    tuning: &PageRankTuning,
) -> Result<(), Error> {
    if !tuning.gather_tiles_for(context.backend_kind() == BackendKind::Cuda) {
        return Ok(());
    }
    for (device_sweeps, device) in sweeps.iter_mut().zip(context.devices()) {
        for (range, pull) in &mut device_sweeps.sweep_ranges {
            if let Some(tiled) = pull.with_tiles(device, in_csr, range, tuning)? {
                *pull = tiled;
            }
        }
    }
    Ok(())
}

impl DeviceSweeps {
    /// Uploads the rows `owned` of `csr` and of the in-CSR (`transpose`, or `csr` itself on a
    /// symmetric graph) to `device` and allocates the arrays, with a bitmap of the vertices
    /// taken where `taken_bits` (for [`DeviceSweeps::gather`]'s sparse rounds), the gather
    /// dealing its vertices out over the blocks where `interleave_gather`
    /// ([`crate::PageRankTuning::gather_interleave_for`]), and the hubs of each range of
    /// `sweep_ranges` where given (rounds by vertex ranges; [`add_gather_tiles`] may then
    /// give them gather tiles).
    pub(super) fn upload(
        device: &Device,
        (csr, transpose): (&Csr, Option<&Csr>),
        owned: Range<u32>,
        (alpha, epsilon): (f32, f32),
        (taken_bits, interleave_gather): (bool, bool),
        sweep_ranges: Option<&SweepRanges>,
    ) -> Result<Self, Error> {
        let n = csr.num_vertices();
        let local = owned.len();
        let out_rows = DeviceCsr::upload(device, csr, owned.clone(), false)?;
        let topology = PullTopology {
            transpose,
            cut: None,
            taken_bits,
            interleave_gather,
            offsets32: false,
        };
        let pull = PullStorage::new(device, csr, &out_rows, topology, &owned)?;
        let in_csr = transpose.unwrap_or(csr);
        let ranges = sweep_ranges
            .map(|r| r.split(in_csr.offsets(), &owned))
            .unwrap_or_default()
            .into_iter()
            .map(|part| Ok((part.clone(), pull.for_range(device, in_csr, &part)?)))
            .collect::<Result<Vec<_>, Error>>()?;
        let residual = device.alloc::<u32>(n.max(1))?;
        // As in the one-process storage: the rank of a multiple of 32 at a multiple of 128
        // bytes, so that a warp's 32 ranks fill one line.
        let pad = owned.start as usize % 32;
        let rank = device.alloc::<u32>(pad + local.max(1))?.slice(pad..)?;
        // A vertex crosses epsilon at most once a round (its one gather).
        let slots = local
            .max(1)
            .checked_next_power_of_two()
            .filter(|&s| s <= 1 << 31)
            .ok_or_else(|| Error::invalid("owned vertices", local, "at most 2^31 per device"))?;
        let worklist = device.alloc::<u32>(slots)?;
        let ctrl = device.alloc::<u32>(CTRL_WORDS)?;
        let push_hubs = device.alloc::<u32>(push_hub_slots(out_rows.num_arcs() as u64))?;
        device.stream().synchronize()?;
        Ok(DeviceSweeps {
            owned,
            out_rows,
            pull,
            residual,
            rank,
            worklist,
            ctrl,
            push_hubs,
            sweep_ranges: ranges,
            num_vertices: n,
            alpha,
            epsilon,
        })
    }

    /// The owned vertices.
    pub(super) fn owned(&self) -> &Range<u32> {
        &self.owned
    }

    /// The full-length share array (`f32` bits): the take writes the owned entries, the
    /// exchange the others, the gather reads them (in a sparse round only those marked in
    /// the bitmap of the vertices taken).
    pub(super) fn share(&self) -> &Buffer<u32> {
        self.pull.share()
    }

    /// The owned ranks (`f32` bits), exactly one per owned vertex.
    pub(super) fn ranks(&self) -> Result<Buffer<u32>, Error> {
        self.rank.slice(..self.owned.len())
    }

    /// Enqueues the reset of a run on `device`'s stream: residual `1 - alpha` on the owned
    /// vertices, ranks, counters and shares 0, the hubs' sums 0. A round by vertex ranges
    /// gathers before its first take, so a run that stopped between rounds (its time limit,
    /// a failure) must not leave its shares to the next.
    pub(super) fn reset(&self, device: &Device) -> Result<(), Error> {
        reset_arrays(device, &self.residual, &self.rank, &self.owned, self.alpha)?;
        device.stream().fill(&self.ctrl, 0u32)?;
        device.stream().fill(self.pull.share(), 0u32)?;
        for (_, range) in &self.sweep_ranges {
            range.reset(device)?;
        }
        self.pull.reset(device)
    }

    /// Enqueues a round's take on `stream`: the counters zeroed, then every owned residual
    /// above `floor` moved into its rank and its share per out-arc stored (0 elsewhere in the
    /// owned range).
    pub(super) fn take(&self, stream: &Stream, floor: f32) -> Result<(), Error> {
        self.zero_counts(stream)?;
        if stream.is_host() {
            return host::enqueue_take(stream, self.host_arrays(), &self.out_rows, floor);
        }
        launch_pull_take(
            stream.raw().as_ref(),
            &self.pr_buffers(),
            &self.pull.buffers(),
            &self.wl_buffers(),
            (floor, false),
        )
    }

    /// Enqueues a round's gather on `stream` (after the exchange filled the share array):
    /// every owned vertex adds its in-neighbours' shares to its residual, those that cross
    /// epsilon counted. Where `sparse` and the device keeps the bitmap of the vertices taken,
    /// the gather marks it and reads only their shares (a round that takes few vertices).
    /// Its threads keep several loads in flight (`PullBuffers::batched_loads`), which the
    /// sweeps' dense gathers run faster with too.
    pub(super) fn gather(&self, stream: &Stream, sparse: bool) -> Result<(), Error> {
        if stream.is_host() {
            return host::enqueue_gather(stream, self.host_arrays(), self.pull.in_csr());
        }
        let mut pull = self.pull.buffers();
        if !sparse {
            pull.taken = None;
        }
        pull.batched_loads = true;
        launch_pull_gather(
            stream.raw().as_ref(),
            &self.pr_buffers(),
            &pull,
            &self.wl_buffers(),
        )
    }

    /// Enqueues a push round's pushes on `stream`, after the take: this device's slots of
    /// the other devices' vertices zeroed, then each vertex taken adds its share to the
    /// residual of every head of its out-arcs. On CUDA the vertices taken are the first
    /// `taking` of the worklist (the vertices the last round's gather or absorb left above
    /// epsilon, which the take took); the host backend finds them by their shares.
    pub(super) fn push(&self, stream: &Stream, taking: u64) -> Result<(), Error> {
        let owned = self.owned.start as usize..self.owned.end as usize;
        for others in [0..owned.start, owned.end..self.num_vertices] {
            if !others.is_empty() {
                stream.fill(&self.residual.slice(others)?, 0u32)?;
            }
        }
        if stream.is_host() {
            return host::enqueue_push(stream, self.host_arrays(), &self.out_rows);
        }
        let count = u32::try_from(taking)
            .ok()
            .filter(|&c| c as usize <= owned.len())
            .ok_or_else(|| Error::invalid("vertices taken", taking, "at most the owned ones"))?;
        launch_push_taken(
            stream.raw().as_ref(),
            &self.pr_buffers(),
            &self.pull.share().raw(),
            &self.wl_buffers(),
            count,
            &self.push_hubs.raw(),
        )
    }

    /// This device's slots of the vertices of `owner` (a peer's owned range) in its residual,
    /// where [`DeviceSweeps::push`] collected what they receive from this device.
    pub(super) fn slots_of(&self, owner: &Range<u32>) -> Result<Buffer<u32>, Error> {
        self.residual
            .slice(owner.start as usize..owner.end as usize)
    }

    /// Where a peer's slots of the owned vertices are copied for [`DeviceSweeps::absorb`]:
    /// the share array's owned entries (the push has read them; the next take rewrites
    /// them).
    pub(super) fn incoming(&self) -> Result<Buffer<u32>, Error> {
        self.share()
            .slice(self.owned.start as usize..self.owned.end as usize)
    }

    /// Enqueues a push round's absorb on `stream`: where `incoming`, every owned vertex adds
    /// what [`DeviceSweeps::incoming`] holds to its residual; where `collect`, the vertices
    /// left above epsilon are counted (CUDA: appended to the worklist, whose end counts
    /// them), as a gather counts those that cross.
    pub(super) fn absorb(
        &self,
        stream: &Stream,
        incoming: bool,
        collect: bool,
    ) -> Result<(), Error> {
        if stream.is_host() {
            return host::enqueue_absorb(stream, self.host_arrays(), incoming, collect);
        }
        let share = self.pull.share().raw();
        launch_absorb(
            stream.raw().as_ref(),
            &self.pr_buffers(),
            incoming.then_some(&share),
            &self.wl_buffers(),
            collect,
        )
    }

    /// The vertex ranges of a round ([`super::sweep_ranges`]; 0: whole-graph rounds).
    pub(super) fn sweep_ranges(&self) -> usize {
        self.sweep_ranges.len()
    }

    /// Whether a range's gather goes by tiles ([`add_gather_tiles`]).
    pub(super) fn gathers_by_tiles(&self) -> bool {
        self.sweep_ranges.iter().any(|(_, pull)| pull.has_tiles())
    }

    /// The entries of the share array that range `range`'s take writes (its vertices).
    pub(super) fn range_shares(&self, range: usize) -> Range<usize> {
        let owned = &self.sweep_ranges[range].0;
        owned.start as usize..owned.end as usize
    }

    /// Enqueues the zeroing of the round's counters on `stream` (before a whole-graph take;
    /// once a round by vertex ranges, which counts over all its gathers and takes, and once
    /// the pass that leaves them).
    pub(super) fn zero_counts(&self, stream: &Stream) -> Result<(), Error> {
        stream.fill(&self.ctrl, 0u32)
    }

    /// The host passes' arrays and the kernels' buffers of range `range`'s owned vertices
    /// alone (their ranks), or `None` where it owns none.
    fn range_views(
        &self,
        range: usize,
    ) -> Result<Option<(host::SweepArrays, PageRankBuffers)>, Error> {
        let owned = self.sweep_ranges[range].0.clone();
        if owned.is_empty() {
            return Ok(None);
        }
        let at = (owned.start - self.owned.start) as usize;
        let rank = self.rank.slice(at..at + owned.len())?;
        let pr = PageRankBuffers {
            rank: rank.raw(),
            owned: owned.clone(),
            ..self.pr_buffers()
        };
        let arrays = host::SweepArrays {
            owned,
            rank,
            ..self.host_arrays()
        };
        Ok(Some((arrays, pr)))
    }

    /// Enqueues the take of range `range` on `stream`, after its gather: its owned residuals
    /// above `floor` moved into their ranks and their shares stored (0 elsewhere in the
    /// range), adding to the round's counters.
    pub(super) fn take_range(
        &self,
        stream: &Stream,
        range: usize,
        floor: f32,
    ) -> Result<(), Error> {
        let Some((arrays, pr)) = self.range_views(range)? else {
            return Ok(());
        };
        if stream.is_host() {
            return host::enqueue_take(stream, arrays, &self.out_rows, floor);
        }
        let pull = self.pull.buffers();
        let wl = self.wl_buffers();
        launch_pull_take(stream.raw().as_ref(), &pr, &pull, &wl, (floor, true))
    }

    /// Enqueues the gather of range `range` on `stream`: each of its owned vertices adds
    /// its in-neighbours' shares to its residual, those that cross epsilon counted.
    pub(super) fn gather_range(&self, stream: &Stream, range: usize) -> Result<(), Error> {
        let Some((arrays, pr)) = self.range_views(range)? else {
            return Ok(());
        };
        let pull = &self.sweep_ranges[range].1;
        if stream.is_host() {
            return host::enqueue_gather(stream, arrays, pull.in_csr());
        }
        if let Some(tiles) = pull.tile_buffers() {
            let raw = stream.raw();
            return launch_pull_gather_tiles(raw.as_ref(), &pr, &tiles, &self.wl_buffers());
        }
        let mut buffers = pull.buffers();
        // Every share is read (the bitmap is for the whole-graph rounds after a switch).
        buffers.taken = None;
        buffers.batched_loads = true;
        launch_pull_gather(stream.raw().as_ref(), &pr, &buffers, &self.wl_buffers())
    }

    /// The [`CTRL_WORDS`] control words a round counts into.
    pub(super) fn ctrl(&self) -> &Buffer<u32> {
        &self.ctrl
    }

    /// The round's counts, read back from `device` (waits for its stream).
    pub(super) fn counts(&self, device: &Device) -> Result<SweepCounts, Error> {
        self.counts_of(&device.download(&self.ctrl)?)
    }

    /// The counts in `words`, a copy of the control words ([`DeviceSweeps::ctrl`]).
    pub(super) fn counts_of(&self, words: &[u32]) -> Result<SweepCounts, Error> {
        if words[CTRL_OVERFLOW] != 0 {
            // Cannot happen (a slot per owned vertex): a kernel that appends twice is a bug,
            // reported rather than read past.
            return Err(Error::capacity_exceeded(
                "PageRank sweep worklist",
                self.worklist.len(),
                words[CTRL_OVERFLOW] as usize,
                "none: one slot per owned vertex, and one per hub of a push round, always suffices",
            ));
        }
        Ok(SweepCounts {
            taken: u64::from(words[CTRL_PUSHED]),
            taken_arcs: u64::from(words[CTRL_TAKEN_ARCS])
                | u64::from(words[CTRL_TAKEN_ARCS + 1]) << 32,
            crossed: u64::from(words[CTRL_CROSSED]),
        })
    }

    /// The residual left on the owned vertices: their sum (in `f64`) and the largest (read
    /// back from `device`).
    pub(super) fn residual_left(&self, device: &Device) -> Result<(f64, f32), Error> {
        let owned = self.owned.start as usize..self.owned.end as usize;
        let bits = device.download(&self.residual.slice(owned)?)?;
        Ok(residual_sum_and_max(&bits))
    }

    fn host_arrays(&self) -> host::SweepArrays {
        host::SweepArrays {
            owned: self.owned.clone(),
            residual: self.residual.clone(),
            rank: self.rank.clone(),
            share: self.share().clone(),
            ctrl: self.ctrl.clone(),
            alpha: self.alpha,
            epsilon: self.epsilon,
        }
    }

    fn pr_buffers(&self) -> PageRankBuffers {
        PageRankBuffers {
            csr: self.out_rows.clone(),
            num_vertices: self.num_vertices,
            residual: self.residual.raw(),
            rank: self.rank.raw(),
            owned: self.owned.clone(),
            alpha: self.alpha,
            epsilon: self.epsilon,
        }
    }

    fn wl_buffers(&self) -> DeviceWorklistBuffers {
        DeviceWorklistBuffers {
            data: self.worklist.raw(),
            first: 0,
            ctrl: self.ctrl.raw(),
            hub_capacity: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reset_zeroes_the_shares_a_stopped_run_left() {
        // A round by vertex ranges gathers before it takes: shares a run that stopped
        // between rounds left behind would add their mass to the next run's first gathers.
        let graph = groute_graph::Graph::generated("kron:scale=7,ef=8,sym,seed=2").unwrap();
        let n = graph.num_vertices() as u32;
        let tuning = crate::PageRankTuning {
            sweep_ranges: Some(3),
            ..crate::PageRankTuning::default()
        };
        for tc in groute_core::testing::test_contexts(1, &[]) {
            let shape = (1, true);
            let ranges = SweepRanges::for_run(&tuning, &tc.context, shape, &graph.csr).unwrap();
            let device = &tc.context.devices()[0];
            let sweeps = DeviceSweeps::upload(
                device,
                (&graph.csr, None),
                0..n,
                (0.85, 0.01),
                (false, false),
                Some(&ranges),
            )
            .unwrap();
            assert_eq!(sweeps.sweep_ranges(), 3, "{}", tc.label);
            device
                .stream()
                .fill(sweeps.share(), 1.0f32.to_bits())
                .unwrap();
            sweeps.reset(device).unwrap();
            let shares = device.download(sweeps.share()).unwrap();
            assert!(shares.iter().all(|&s| s == 0), "{}: a share left", tc.label);
        }
    }
}
