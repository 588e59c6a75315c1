//! The level steps of direction-optimizing BFS on one CUDA device.
//!
//! Storage (allocated once per solver): the device's rows of the push CSR and, when the graph
//! is directed, of the pull CSR (its transpose; a symmetric graph pulls over the push CSR)
//! ([`DeviceCsr`]: one device owns every row, each device of a multi-device run its own
//! range; the kernels index them by global vertex and arc ids through rebased pointers), the
//! level array, a worklist of
//! at least one slot per vertex (every vertex is appended once, by the step that reaches it,
//! so the frontier of each level is a range of it and it never wraps), the traversal control
//! block with its hub list (`kernels/include/traversal.cuh`), and four u64 counters
//! (`kernels/bfs/bfs_direction.cu`). Each level launches its step and `bfs_frontier_arcs` over the
//! new frontier, then reads the control block and the counters back (one synchronisation per
//! level).

use std::time::{Duration, Instant};

use groute_core::cuda::{CudaFunction, CudaModule, CudaStream, DevicePtr, LaunchConfig};
use groute_core::{Buffer, Context, Device, Error, Event, Stream};
use groute_graph::Csr;
use groute_kernels::abi::TraversalCtrl;
use groute_kernels::abi_word;
use groute_kernels::bfs::{BFS, DIRECTION};
use groute_worklist::traversal::HubPolicy;
use groute_worklist::{CsrPtrs, DeviceCsr, VertexValue, WorklistError};

use super::{LevelSteps, StepCounts};
use crate::{BfsError, UNREACHED};

use super::readback::{COUNTERS, CTRL_WL_END, CTRL_WORDS, EXAMINED, IN_ARCS, OUT_ARCS};

/// Threads per block of every launch.
pub(super) const BLOCK: u32 = 256;
/// The hub list's 64-bit counter (two words) and its capacity in the control block.
const CTRL_HUB_COUNT: usize = abi_word!(TraversalCtrl, hub_counts);
const CTRL_HUB_CAP: usize = abi_word!(TraversalCtrl, hub_capacity);

/// One device's storage for direction-optimizing BFS.
pub(super) struct CudaDirection {
    pub(super) stream: Stream,
    pub(super) n: u32,
    /// Arcs of the whole pull CSR (the switch rule's count).
    in_arcs: u64,
    /// The device's rows of the push CSR.
    pub(super) push: DeviceCsr,
    /// Its rows of the transpose of a directed graph (`None`: symmetric, pull over the push
    /// CSR).
    pull: Option<DeviceCsr>,
    pub(super) levels: Buffer<u32>,
    pub(super) wl: Buffer<u32>,
    pub(super) ctrl: Buffer<u32>,
    pub(super) counters: Buffer<u64>,
    pub(super) ctrl_host: Buffer<u32>,
    pub(super) counters_host: Buffer<u64>,
    expand: CudaFunction,
    expand_hubs: CudaFunction,
    pull_step: CudaFunction,
    frontier_arcs: CudaFunction,
    expand_grid: u32,
    hubs_grid: u32,
    pull_grid: u32,
    arcs_grid: u32,
    hubs: HubPolicy,
}

/// What a CUDA run returns besides the step counts.
pub(super) struct CudaRun {
    /// Levels in the solver's numbering.
    pub levels: Vec<u32>,
    /// Host time of the level loop.
    pub elapsed: Duration,
    /// Time between timing events around the level loop.
    pub device_time: Duration,
}

impl CudaDirection {
    /// Uploads the rows `rows` of `push` (and of `pull` when it is a distinct transpose) to
    /// `device` and loads the kernels; the worklist holds at least `wl_slots` items (one
    /// device appends each vertex once per run: `n`). The kernels then read only the rows of
    /// `rows` (one device: every vertex).
    pub(super) fn new(
        context: &Context,
        device: &Device,
        (push, pull): (&Csr, Option<&Csr>),
        rows: std::ops::Range<u32>,
        wl_slots: usize,
    ) -> Result<Self, BfsError> {
        let n = u32::try_from(push.num_vertices()).map_err(|_| {
            Error::invalid("graph", push.num_vertices(), "at most u32::MAX vertices")
        })?;
        let stream = device.stream().clone();
        let [traversal, direction] =
            CudaModule::load_all(stream.raw().as_ref(), [&BFS, &DIRECTION])?;
        let expand = traversal.function("bfs_expand")?;
        let expand_hubs = traversal.function("bfs_expand_hubs")?;
        let pull_step = direction.function("bfs_pull_step")?;
        let frontier_arcs = direction.function("bfs_frontier_arcs")?;
        let expand_grid = expand.max_resident_grid(BLOCK, 0)?.max(1);
        let hubs = HubPolicy::for_rows(push, rows.clone(), expand_grid, BLOCK);
        let wl_len = wl_slots.max(1024).next_power_of_two();
        let upload = |csr: &Csr| DeviceCsr::upload(device, csr, rows.clone(), false);
        let storage = CudaDirection {
            n,
            in_arcs: pull.unwrap_or(push).num_edges(),
            push: upload(push)?,
            pull: pull.map(upload).transpose()?,
            levels: device.alloc::<u32>(push.num_vertices().max(1))?,
            wl: device.alloc::<u32>(wl_len)?,
            ctrl: device.alloc::<u32>(CTRL_WORDS + 2 * hubs.capacity() as usize)?,
            counters: device.alloc::<u64>(COUNTERS)?,
            ctrl_host: context.alloc_host::<u32>(CTRL_WORDS)?,
            counters_host: context.alloc_host::<u64>(COUNTERS)?,
            hubs_grid: expand_hubs.max_resident_grid(BLOCK, 0)?.max(1),
            pull_grid: pull_step.max_resident_grid(BLOCK, 0)?.max(1),
            arcs_grid: frontier_arcs.max_resident_grid(BLOCK, 0)?.max(1),
            expand_grid,
            expand,
            expand_hubs,
            pull_step,
            frontier_arcs,
            hubs,
            stream,
        };
        storage.stream.synchronize()?;
        Ok(storage)
    }

    /// Runs BFS from `source` (< the vertex count) with `rule`.
    pub(super) fn run(
        &mut self,
        device: &Device,
        source: u32,
        rule: &super::SwitchRule,
        time_limit: Option<Duration>,
    ) -> Result<(super::DirectionStats, CudaRun), BfsError> {
        self.reset(source)?;
        let s = &self.stream;
        s.fill(&self.ctrl.slice(CTRL_WL_END..CTRL_WL_END + 1)?, 1u32)?;
        s.fill(&self.wl.slice(0..1)?, source)?;
        s.synchronize()?;

        let started = Instant::now();
        let t0 = device.record_timing(&self.stream)?;
        let in_arcs = self.in_arcs;
        let n = u64::from(self.n);
        let mut steps = CudaSteps {
            storage: self,
            start: 0,
            end: 0,
            last: [0; COUNTERS],
            frontier_out_arcs: 0,
            started,
            time_limit,
        };
        let first = steps.finish_step(0)?;
        let stats = super::run_levels(&mut steps, first, n, in_arcs, rule)?;
        let t1 = device.record_timing(&self.stream)?;
        self.stream.synchronize()?;
        let elapsed = started.elapsed();
        let device_time = Event::elapsed(&t0, &t1)?;
        let levels = device.download(&self.levels.slice(0..self.n as usize)?)?;
        Ok((
            stats,
            CudaRun {
                levels,
                elapsed,
                device_time,
            },
        ))
    }

    /// Enqueues the reset of a run from `source`: every level UNREACHED but the source's 0,
    /// the control block (hub capacity set) and the counters zeroed.
    pub(super) fn reset(&self, source: u32) -> Result<(), Error> {
        let s = &self.stream;
        s.fill(&self.levels, UNREACHED)?;
        let src = source as usize;
        s.fill(&self.levels.slice(src..src + 1)?, 0u32)?;
        s.fill(&self.ctrl, 0u32)?;
        s.fill(
            &self.ctrl.slice(CTRL_HUB_CAP..CTRL_HUB_CAP + 1)?,
            self.hubs.capacity(),
        )?;
        s.fill(&self.counters, 0u64)
    }

    /// The device's rows of the pull CSR (of the push CSR when the graph is symmetric).
    pub(super) fn pull_csr(&self) -> &DeviceCsr {
        self.pull.as_ref().unwrap_or(&self.push)
    }

    /// The kernels' pointers to the push CSR's rows (rebased: global vertex and arc ids).
    pub(super) fn push_ptrs(&self) -> Result<CsrPtrs, Error> {
        self.push.device_ptrs()
    }

    /// The kernels' pointers to the pull CSR's rows (rebased: global vertex and arc ids).
    pub(super) fn pull_ptrs(&self) -> Result<CsrPtrs, Error> {
        self.pull_csr().device_ptrs()
    }

    pub(super) fn cuda_stream(&self) -> Result<&CudaStream, Error> {
        CudaStream::from_raw(self.stream.raw().as_ref())
    }

    /// Keeps every buffer the kernels touch alive until the work enqueued so far completes.
    pub(super) fn keep_alive(&self) -> Result<(), Error> {
        self.keep_alive_with(&[])
    }

    /// [`CudaDirection::keep_alive`], with `extra` buffers too (one event for all).
    pub(super) fn keep_alive_with(&self, extra: &[&Buffer<u32>]) -> Result<(), Error> {
        let (push_offsets, push_targets, _) = self.push.buffers();
        let (pull_offsets, pull_sources, _) = self.pull_csr().buffers();
        let memory = [
            &self.levels,
            &self.wl,
            &self.ctrl,
            push_targets,
            pull_sources,
        ]
        .iter()
        .chain(extra)
        .map(|b| b.raw().memory)
        .chain([push_offsets, pull_offsets, &self.counters].map(|b| b.raw().memory))
        .collect();
        self.cuda_stream()?.keep_alive(memory)
    }

    /// Enqueues the push step: `bfs_expand` (and `bfs_expand_hubs`) over worklist positions
    /// `[first, first + count)`.
    pub(super) fn launch_push(&self, first: u32, count: u32) -> Result<(), Error> {
        let config = LaunchConfig::for_elements(count as usize, BLOCK, Some(self.expand_grid));
        let hub_min_degree = self.hubs.min_degree(config.grid.0);
        let lists_hubs = self.hubs.lists_hubs(hub_min_degree);
        if lists_hubs {
            self.stream
                .fill(&self.ctrl.slice(CTRL_HUB_COUNT..CTRL_HUB_COUNT + 2)?, 0u32)?;
        }
        let push = self.push_ptrs()?;
        let args = (
            DevicePtr::<u32>::from_slice(&self.levels.raw())?,
            push.offsets,
            push.targets,
            DevicePtr::<u32>::null(),
            DevicePtr::<u32>::from_slice(&self.wl.raw())?,
            (self.wl.len() - 1) as u32,
            first,
            count,
            DevicePtr::<u32>::from_slice(&self.ctrl.raw())?,
            DevicePtr::<VertexValue>::null(),
            0u32,
            0u32,
            0u32,
            self.n,
            DevicePtr::<VertexValue>::null(),
            0u32,
            u32::MAX,
            hub_min_degree,
        );
        let stream = self.stream.raw();
        // SAFETY: bfs_expand(unsigned* values, const unsigned long long* offsets,
        // const unsigned* targets, const unsigned* weights, unsigned* wl_data, unsigned wl_mask,
        // unsigned first, unsigned count, unsigned* ctrl, VertexValue* send_data,
        // unsigned send_capacity, unsigned send_base, unsigned owned_begin, unsigned owned_end,
        // VertexValue* low_data, unsigned low_capacity, unsigned threshold,
        // unsigned hub_min_degree) (GROUTE_TRAVERSAL_KERNELS in traversal.cuh): the tuple
        // matches it field by field. `levels` holds one u32 per vertex, so every CSR target
        // indexes it in bounds; `offsets` and `targets` are the device's rows, rebased so that
        // they index by global ids: every worklist item in [first, first + count) is a vertex
        // of those rows (one device: all of them; several: the frontier list appends only
        // owned vertices), so its row and arcs are there; BFS reads no weights (null); the
        // worklist has wl_mask + 1 slots (a power of two, the kernel masks positions) and
        // [first, first + count) are items appended by earlier steps; owned_end is n (every
        // head is appended, none sent), so the null send buffer of capacity 0 is never written
        // (an append would only set the overflow word); the low list is null
        // (soft priority off, threshold u32::MAX); `ctrl` holds CTRL_WORDS u32 and then the hub
        // list of ctrl[CTRL_HUB_CAP] two-word slots (bounds-checked by the kernel). All are
        // device memory of this stream's device, kept alive below.
        unsafe { self.expand.launch(stream.as_ref(), config, args)? };
        if lists_hubs {
            let hubs_config = LaunchConfig::linear(self.hubs_grid, BLOCK);
            // SAFETY: bfs_expand_hubs has bfs_expand's parameters (`count` and
            // `hub_min_degree` unused) and reads the hub list the launch above wrote, in stream
            // order; each listed hub is a worklist vertex and its tiles stay inside its list.
            unsafe {
                self.expand_hubs
                    .launch(stream.as_ref(), hubs_config, args)?
            };
        }
        self.keep_alive()
    }

    /// Enqueues the pull step of `level` over the vertices `owned` (items appended from
    /// worklist position `first`).
    pub(super) fn launch_pull(
        &self,
        level: u32,
        first: u32,
        owned: std::ops::Range<u32>,
    ) -> Result<(), Error> {
        let span = owned.end.saturating_sub(owned.start) as usize;
        let config = LaunchConfig::for_elements(span, BLOCK, Some(self.pull_grid));
        let pull = self.pull_ptrs()?;
        let args = (
            DevicePtr::<u32>::from_slice(&self.levels.raw())?,
            pull.offsets,
            pull.targets,
            owned.start,
            owned.end.min(self.n),
            level,
            DevicePtr::<u32>::from_slice(&self.wl.raw())?,
            (self.wl.len() - 1) as u32,
            first,
            DevicePtr::<u32>::from_slice(&self.ctrl.raw())?,
            DevicePtr::<u64>::from_slice(&self.counters.raw())?,
        );
        // SAFETY: bfs_pull_step(unsigned* levels, const unsigned long long* pull_offsets,
        // const unsigned* pull_sources, unsigned begin, unsigned end, unsigned level,
        // unsigned* wl_data, unsigned wl_mask, unsigned first, unsigned* ctrl,
        // unsigned long long* counters) (kernels/bfs/bfs_direction.cu): the tuple matches it field
        // by field. The kernel reads vertices [begin, end) (end clamped to n) of `levels`
        // (n entries) and the rows of `pull_offsets` and `pull_sources` (rebased to global
        // ids; `owned` is within the device's rows), whose sources are vertices; it appends at most one item per vertex behind the frontier, and the
        // worklist has at least n slots counted from position 0 (every vertex is appended
        // once per run), bounds-checked against wl_mask + 1 all the same; `counters` holds
        // COUNTERS u64. Kept alive below.
        unsafe {
            self.pull_step
                .launch(self.stream.raw().as_ref(), config, args)?
        };
        self.keep_alive()
    }

    /// Enqueues the degree sums of the worklist items from position `from` to the end.
    fn launch_frontier_arcs(&self, from: u32) -> Result<(), Error> {
        let config = LaunchConfig::linear(self.arcs_grid, BLOCK);
        let args = (
            self.push_ptrs()?.offsets,
            self.pull_ptrs()?.offsets,
            DevicePtr::<u32>::from_slice(&self.wl.raw())?,
            (self.wl.len() - 1) as u32,
            from,
            DevicePtr::<u32>::from_slice(&self.ctrl.raw())?,
            DevicePtr::<u64>::from_slice(&self.counters.raw())?,
        );
        // SAFETY: bfs_frontier_arcs(const unsigned long long* push_offsets,
        // const unsigned long long* pull_offsets, const unsigned* wl_data, unsigned wl_mask,
        // unsigned from, const unsigned* ctrl, unsigned long long* counters): the tuple matches
        // it field by field. Worklist positions [from, ctrl[CTRL_WL_END]) hold vertices
        // appended by the step enqueued before (masked into the wl_mask + 1 slots); this is the
        // one-device run, whose rows are every vertex, so they index both offset arrays
        // (rebased by 0) in bounds. Kept alive below.
        unsafe {
            self.frontier_arcs
                .launch(self.stream.raw().as_ref(), config, args)?
        };
        self.keep_alive()
    }
}

/// One CUDA run's position: the frontier is worklist positions `[start, end)`.
struct CudaSteps<'a> {
    storage: &'a CudaDirection,
    start: u32,
    end: u32,
    /// The counters as last read back (cumulative).
    last: [u64; COUNTERS],
    /// The current frontier's out-arcs (what its push step reads).
    frontier_out_arcs: u64,
    started: Instant,
    time_limit: Option<Duration>,
}

impl CudaSteps<'_> {
    /// After a step's launches: sums the new frontier's degrees, reads the control block and
    /// the counters back, and moves the frontier to the new items; `items` is the step's work.
    fn finish_step(&mut self, items: u64) -> Result<StepCounts, BfsError> {
        let st = self.storage;
        st.launch_frontier_arcs(self.end)?;
        let (ctrl, counters) = super::readback::read_back(
            &st.stream,
            (&st.ctrl, &st.ctrl_host),
            (&st.counters, &st.counters_host),
            st.wl.len(),
        )?;
        let delta = |i: usize| counters[i] - self.last[i];
        let step = StepCounts {
            frontier: u64::from(ctrl[CTRL_WL_END] - self.end),
            frontier_out_arcs: delta(OUT_ARCS),
            frontier_in_arcs: delta(IN_ARCS),
            items,
            arcs_examined: delta(EXAMINED),
        };
        self.last.copy_from_slice(&counters[..COUNTERS]);
        self.start = self.end;
        self.end = ctrl[CTRL_WL_END];
        self.frontier_out_arcs = step.frontier_out_arcs;
        Ok(step)
    }
}

impl LevelSteps for CudaSteps<'_> {
    fn push(&mut self, _level: u32) -> Result<StepCounts, BfsError> {
        let count = self.end - self.start;
        self.storage.launch_push(self.start, count)?;
        let read = self.frontier_out_arcs;
        let mut step = self.finish_step(u64::from(count))?;
        step.arcs_examined += read;
        Ok(step)
    }

    fn pull(&mut self, level: u32) -> Result<StepCounts, BfsError> {
        // Every reached vertex was appended once: the rest are the unvisited ones it scans.
        let unvisited = u64::from(self.storage.n - self.end);
        self.storage
            .launch_pull(level, self.start, 0..self.storage.n)?;
        self.finish_step(unvisited)
    }

    fn check_time(&self) -> Result<(), BfsError> {
        match self.time_limit {
            Some(limit) if self.started.elapsed() > limit => Err(WorklistError::TimedOut {
                limit,
                outstanding: i64::from(self.end - self.start),
            }
            .into()),
            _ => Ok(()),
        }
    }
}
