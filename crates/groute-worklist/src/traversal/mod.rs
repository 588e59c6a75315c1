//! The executors of min-combined [`WorklistAlgorithm`]s (label-correcting traversals: BFS,
//! SSSP), with their CUDA forms.
//!
//! Each device holds the rows of the vertices it owns ([`DeviceCsr`](crate::DeviceCsr)) and a
//! **full-length** value array. Local items are vertex ids; remote items are
//! [`VertexValue`] pairs. An expand round relaxes every out-arc of its items with
//! `fetch_min` on the device's value array, which is also the halo filter: an update to a
//! vertex of another device is sent only if it improves what this device already knows of
//! that vertex. On receipt, the owner applies the update with `fetch_min` and keeps the
//! vertex only if it improved; a device that is not the owner updates its halo copy and
//! passes the item on only if it improved.
//!
//! The host backend runs any [`WorklistAlgorithm`] ([`HostSolver`]); the CUDA executors
//! run those of `u32` values that combine by [`Combine::Min`] and name their instantiation of
//! `kernels/include/traversal.cuh` ([`WorklistAlgorithm::CUDA_KERNELS`]): BFS relaxes to
//! `value + 1`, SSSP to `value + weight`, label propagation (connected components, started
//! from every vertex) to the label itself.
//!
//! A solver may hold one process's share of a graph spanning several processes
//! ([`MinTraversalSolver::for_parts`], [`MinTraversalSolver::run_shared`]: the `groute-dist`
//! crate's ranks).
//!
//! The algorithm crates' traversals from one source report a run's [`TraversalStats`]
//! ([`TraversalOutput::into_values_and_stats`]) and summarise its values with
//! [`count_reached`] and [`max_reached`].
//!
//! [`MinTraversalSolver`] keeps every device's storage (CSR, value array, and on CUDA the
//! device worklist, outgoing buffers and loaded kernels) across runs, so a run only resets
//! the values and traverses; [`solve_min_traversal`] is the one-shot form.
//!
//! On CUDA, a run on one device is by default one fused persistent kernel (`fused.rs`,
//! `kernels/include/fused.cuh`; [`FusedMode`]); runs on several devices are, where the
//! devices can run it, one persistent kernel per device for the whole run at any density
//! (`fused_peer.rs`, [`FusedDriver`]); else they run rounds under the driver (`cuda.rs`): one
//! bounded fused launch of many levels per round on sparse graphs (`fused_rounds.rs`), one
//! expand launch per level on dense ones.

mod barrier_bench;
mod cuda;
mod from_source;
mod fused;
mod fused_knobs;
mod fused_peer;
mod fused_rounds;
mod fused_trace;
mod fused_tuning;
mod hub_policy;

pub use barrier_bench::{BarrierTiming, time_fused_barrier};
pub use cuda::TraversalKernels;
pub use from_source::{TraversalStats, count_reached, max_reached};
pub use fused::FusedMode;
pub use fused_knobs::{FusedBarrier, FusedTuning};
pub use fused_peer::FusedDriver;
pub use fused_rounds::FUSED_ROUND_LEVELS;
use fused_tuning::FusedDefaults;
pub use fused_tuning::{
    CLUSTER_MAX_DEGREE, FUSED_BLOCK, FUSED_MAX_SPIN_NS, FUSED_SPARSE_BLOCK,
    FUSED_SPARSE_MAX_AVERAGE_DEGREE, FUSED_SPIN_NS, SOLO_CLUSTER,
};
pub use hub_policy::{HUB_MIN_DEGREE, HubPolicy, SMALL_GRID_HUB_MIN_DEGREE};

use std::any::TypeId;
use std::borrow::Cow;
use std::ops::Range;
use std::time::Duration;

use groute_core::cuda::{GpuSharing, PeerGroup};
use groute_core::{Context, Error};
use groute_graph::{Csr, HeldRows, Partition};

use crate::algorithm::{
    AtomicValue, Combine, HostSolver, Start, WorklistAlgorithm, check_weights, download_owned,
    for_owned_ranges,
};
use crate::band::{BandQuery, GraphShape};
use crate::device_parts::DeviceParts;
use crate::driver::{SharedRun, run_workers, run_workers_shared};
use crate::engine::{WorklistOptions, WorklistStats};
use crate::error::WorklistError;
use crate::ring::RingTransport;
use crate::share::{ShareOutput, ShareSolver, for_every_part};
use crate::split::VertexValue;

/// The smallest default inbox ring of a device-driven run (`fused_peer.rs`), in items (512 KiB
/// per outgoing buffer): small graphs can have a few hubs' worth of items in flight.
const MIN_INBOX_RING: usize = 1 << 16;

/// The value of a vertex not reached (yet).
pub const UNREACHED: u32 = u32::MAX;

/// The result of a min traversal.
#[derive(Clone, Debug)]
pub struct TraversalOutput<V = u32> {
    /// One value per vertex, in the partitioned numbering ([`UNREACHED`] where unreached; a
    /// process's share of a run spanning several returns a [`ShareOutput`] instead).
    pub values: Vec<V>,
    /// Worklist counters.
    pub stats: WorklistStats,
    /// Whether the run was one fused persistent kernel ([`FusedMode`]).
    pub fused: bool,
    /// The traversal's time on the devices, between CUDA timing events recorded after the
    /// reset and before the download (the fused kernel alone when fused; the drivers' rounds,
    /// max over devices, otherwise; `None` on the host backend). Equals `stats.device_time`.
    pub device_time: Option<Duration>,
}

/// Every device's storage, by backend.
enum Storage<A: WorklistAlgorithm> {
    /// The host backend's executor, which runs any algorithm.
    Host(HostSolver<A>),
    /// Each CUDA device's storage and loaded kernels.
    Cuda(Vec<cuda::CudaTraversalDevice>),
}

/// A min traversal of one partitioned graph on every device of a context, with the devices'
/// storage allocated once ([`MinTraversalSolver::new`]) and reused by every
/// [`MinTraversalSolver::run`].
pub struct MinTraversalSolver<A: WorklistAlgorithm> {
    /// The parts this context's devices hold (all of them, unless the solver is one
    /// process's share: [`MinTraversalSolver::for_parts`]).
    held: DeviceParts,
    /// The rows held: their arcs per vertex (what the fused kernel's default launch shape
    /// follows, [`FUSED_SPARSE_MAX_AVERAGE_DEGREE`]) and weights (with the degree, what the
    /// algorithm's default band may follow, [`WorklistAlgorithm::default_band`]).
    shape: GraphShape,
    storage: Storage<A>,
    /// The devices' group for device-driven runs (`fused_peer.rs`), made by the first one.
    peers: Option<PeerGroup>,
}

impl<A: WorklistAlgorithm> std::fmt::Debug for MinTraversalSolver<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MinTraversalSolver")
            .field("devices", &self.held.context().num_devices())
            .field("num_vertices", &self.held.num_vertices())
            .finish()
    }
}

impl<A: WorklistAlgorithm> MinTraversalSolver<A> {
    /// Uploads `csr` (already renumbered so that device `d` owns `partition.range(d)`) to
    /// every device of `context` and allocates the run storage of `algorithm` (capacities
    /// from `options`, or sized from the graph). CUDA devices need an algorithm they can run
    /// (see [`WorklistAlgorithm::CUDA_KERNELS`]).
    pub fn new(
        context: &Context,
        algorithm: A,
        csr: &Csr,
        partition: &Partition,
        options: &WorklistOptions,
    ) -> Result<Self, WorklistError> {
        for_every_part(context, algorithm, csr, partition, options)
    }

    /// Runs the traversal from `sources` (partitioned ids, valued `init(v, true)`; ignored by algorithms that start from every vertex). The statistics' elapsed
    /// time covers the traversal only (storage reset and result download excluded).
    ///
    /// On CUDA, a device worklist or outgoing buffer that the options leave to the solver
    /// starts small (sized by the device's vertices, not its arcs) and grows: a run that
    /// overflows one starts again with it at least doubled (the storage keeps the larger size
    /// for later runs). One the options set is a fixed capacity: overflowing it fails the run
    /// with [`Error::CapacityExceeded`] naming the setting.
    ///
    /// Options that leave the band of soft priority open (`prio_delta: None`) run with the
    /// algorithm's [`default_band`](WorklistAlgorithm::default_band) for this graph and run
    /// (`stats.prio_delta` says which band ran).
    pub fn run(
        &mut self,
        sources: &[u32],
        options: &WorklistOptions,
    ) -> Result<TraversalOutput<A::Value>, WorklistError> {
        self.held.check_whole_run("MinTraversalSolver::run")?;
        let options = &self.with_default_band(options)?;
        let mut restarts = 0;
        loop {
            match self.run_sized(sources, options) {
                Err(WorklistError::Runtime(Error::CapacityExceeded {
                    setting, needed, ..
                })) if self.grow(setting, needed as usize, options)? => restarts += 1,
                Ok(mut out) => {
                    out.stats.restarts = restarts;
                    out.stats.prio_delta = options.prio_delta.unwrap_or(0);
                    return Ok(out);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether a run with `options` is device-driven on several CUDA devices, as
    /// [`run`](Self::run) decides it: one persistent kernel per device where the fused kernel
    /// may run ([`FusedMode::fuses_device_driven`]) and the fused driver allows it
    /// ([`FusedDriver`]). False on one device and on the host backend.
    pub fn runs_device_driven(&self, options: &WorklistOptions) -> Result<bool, WorklistError> {
        if !matches!(self.storage, Storage::Cuda(_)) {
            return Ok(false);
        }
        let context = self.held.context();
        Ok(options.fused.fuses_device_driven(context.num_devices())
            && options
                .fused_driver
                .device_driven(|sharing| PeerGroup::check_sharing(context, sharing))?)
    }

    /// `options`, their band of soft priority filled in, where they leave it open, by the
    /// algorithm's default for this graph and run ([`WorklistAlgorithm::default_band`]).
    fn with_default_band<'o>(
        &self,
        options: &'o WorklistOptions,
    ) -> Result<Cow<'o, WorklistOptions>, WorklistError> {
        if options.prio_delta.is_some() {
            return Ok(Cow::Borrowed(options));
        }
        let run = BandQuery {
            graph: self.shape,
            cuda: matches!(self.storage, Storage::Cuda(_)),
            devices: self.held.context().num_devices(),
            fused: options.fused,
            device_driven: self.runs_device_driven(options)?,
        };
        Ok(Cow::Owned(WorklistOptions {
            prio_delta: A::default_band(&run),
            ..options.clone()
        }))
    }

    /// Each device's first items: the sources its part owns, or (an algorithm started from
    /// every vertex) its whole part.
    fn seeds(&self, sources: &[u32]) -> Vec<Vec<u32>> {
        match A::START {
            Start::Sources => self.held.sources(sources),
            Start::EveryVertex => self.held.owned_ranges().map(Iterator::collect).collect(),
        }
    }

    /// Grows what overflowed (`setting` names it) where the options leave its size to the
    /// solver; whether anything grew.
    fn grow(
        &mut self,
        setting: &str,
        needed: usize,
        options: &WorklistOptions,
    ) -> Result<bool, WorklistError> {
        let worklist = setting == cuda::WL_SETTING && options.wl_capacity.is_none();
        let outgoing = setting == cuda::SEND_SETTING && options.send_capacity.is_none();
        let mut grew = false;
        let Storage::Cuda(devices) = &mut self.storage else {
            return Ok(false);
        };
        for (dev, device) in devices.iter_mut().zip(self.held.context().devices()) {
            if worklist {
                grew |= dev.grow_worklist(device, needed)?;
            }
            if outgoing {
                grew |= dev.grow_outgoing(device, needed)?;
            }
        }
        Ok(grew)
    }

    /// One run with the storage as it is.
    fn run_sized(
        &mut self,
        sources: &[u32],
        options: &WorklistOptions,
    ) -> Result<TraversalOutput<A::Value>, WorklistError> {
        let n = self.held.num_vertices();
        let options = &options.for_graph(n);
        // Refused on every backend: the tuning is checked whether it applies or not.
        fused_rounds::round_levels(options)?;
        if let Storage::Host(host) = &mut self.storage {
            let out = host.run(sources, options)?;
            // The host's device-driven members are its form of the fused run.
            let fused = out.stats.device_driven;
            return Ok(TraversalOutput {
                values: out.values,
                stats: out.stats,
                fused,
                device_time: None,
            });
        }
        let num_devices = self.held.context().num_devices();
        let seeds = self.seeds(sources);
        let context = self.held.context().clone();
        if options.fused.fuses(num_devices) {
            // One device (`fuses` says so only there). Under FusedDriver::Device, the members'
            // kernel in a group of one (FusedDriver says why).
            if options.fused_driver == FusedDriver::Device {
                return self.run_device_driven(sources, &seeds, options);
            }
            let defaults = FusedDefaults::for_graph(self.shape.average_degree());
            let dev = self.cuda_device(0)?;
            let device = &context.devices()[0];
            let done = dev.run_fused(device, sources, &seeds[0], options, defaults)?;
            let values = device.download(&dev.values.slice(0..n)?)?;
            return Ok(TraversalOutput {
                values: bytemuck::allocation::cast_vec(values),
                stats: WorklistStats {
                    epochs: done.stats.epochs,
                    devices: vec![done.stats],
                    elapsed: done.elapsed,
                    device_time: Some(done.device_time),
                    ..WorklistStats::default()
                },
                fused: true,
                device_time: Some(done.device_time),
            });
        }
        // Several devices: device-driven wherever the fused kernel may run and the driver
        // allows it (FusedMode::fuses_device_driven), else host-driven, in bounded fused
        // rounds on sparse graphs or one launch per level.
        if self.runs_device_driven(options)? {
            return self.run_device_driven(sources, &seeds, options);
        }
        let bounded = options
            .fused
            .bounded_rounds(num_devices, self.shape.average_degree());
        let defaults = FusedDefaults::for_graph(self.shape.average_degree());
        let devices = self.cuda_devices()?;
        let workers = round_workers(
            devices, &context, sources, &seeds, bounded, options, defaults,
        )?;
        let stats = run_workers(&context, workers, options)?;
        let mut values = for_owned_ranges(n)?;
        let Storage::Cuda(devices) = &self.storage else {
            return Err(mixed_backends().into());
        };
        for (d, dev) in devices.iter().enumerate() {
            let owned = self.held.partition().range(d);
            download_owned(&context.devices()[d], &dev.values, owned, (&mut values, 0))?;
        }
        Ok(TraversalOutput {
            values: bytemuck::allocation::cast_vec(values),
            device_time: stats.device_time,
            stats,
            fused: bounded,
        })
    }

    /// Every device's CUDA storage.
    fn cuda_devices(&mut self) -> Result<&mut Vec<cuda::CudaTraversalDevice>, Error> {
        match &mut self.storage {
            Storage::Cuda(devices) => Ok(devices),
            Storage::Host(_) => Err(mixed_backends()),
        }
    }

    /// Device `d`'s CUDA storage.
    fn cuda_device(&mut self, d: usize) -> Result<&mut cuda::CudaTraversalDevice, Error> {
        self.cuda_devices()?.get_mut(d).ok_or_else(mixed_backends)
    }
}

/// One process's share of a run spanning several (the `groute-dist` crate): the min
/// traversals on CUDA devices (a host-backend context runs [`HostSolver`]'s share).
impl<A: WorklistAlgorithm> ShareSolver for MinTraversalSolver<A> {
    type Algorithm = A;
    type Packed = VertexValue;

    /// One process's share of a run spanning several (the `groute-dist` crate): `context`'s
    /// devices hold parts `first_part..first_part + context.num_devices()` of `partition`
    /// (device `d` part `first_part + d`), uploaded from their rows of `rows` as
    /// [`MinTraversalSolver::new`] does; [`ShareSolver::run_shared`] runs them (CUDA devices;
    /// a host-backend share is [`HostSolver::for_parts`]). Tuned by the held rows' average
    /// degree.
    fn for_parts(
        context: &Context,
        algorithm: A,
        rows: &HeldRows<'_>,
        partition: &Partition,
        first_part: usize,
        options: &WorklistOptions,
    ) -> Result<Self, WorklistError> {
        let held = DeviceParts::check(context, rows, partition, first_part)?;
        let csr = rows.csr();
        check_weights::<A>(csr)?;
        if A::COMBINE != Combine::Min {
            return Err(Error::Unsupported {
                operation: "a sum-combined algorithm in the min traversals' solver (run it with \
                            groute_worklist::algorithm::HostSolver, or on CUDA devices with the \
                            algorithm's own executor: PageRank's is groute_pagerank::PageRankSolver, \
                            and across ranks DistSolver::with_device_solver with its ShareSolver, \
                            groute_pagerank::PageRankShare)",
                backend: "any",
            }
            .into());
        }
        let n = csr.num_vertices();
        let num_devices = context.num_devices();
        let hosts = context
            .devices()
            .iter()
            .filter(|d| d.stream().is_host())
            .count();
        if hosts == num_devices {
            return Ok(MinTraversalSolver {
                held,
                shape: GraphShape::of_rows(rows),
                storage: Storage::Host(HostSolver::for_parts(
                    context, algorithm, rows, partition, first_part, options,
                )?),
                peers: None,
            });
        }
        if hosts > 0 {
            return Err(mixed_backends().into());
        }
        let kernels = cuda_kernels(&algorithm)?;
        let mut devices = Vec::with_capacity(num_devices);
        for (owned, device) in held.owned_ranges().zip(context.devices()) {
            let local_vertices = (owned.end - owned.start) as usize;
            // A vertex sits in the worklist once per improvement not yet expanded: rare
            // unweighted, common weighted (label correcting), hence the larger default. Sized
            // by the owned vertices, not their arcs, and grown when a run needs more (`run`):
            // label-correcting SSSP keeps a vertex once per improvement, so the arcs bound the
            // worklist, but sizing it so held ten times the graph.
            let per_element = if A::WEIGHTED { 4 } else { 2 };
            let capacity = options
                .wl_capacity
                .unwrap_or(per_element * local_vertices + 1024);
            // Each remote vertex is sent once per improvement of this device's halo copy:
            // twice the remote vertices to start with, grown when a round sends more
            // (weighted, a remote vertex can improve once per arc reaching it from this device
            // in one round). Bounded fused rounds (`fused_rounds.rs`) return at half the
            // buffer, so they get twice the room: the level that crosses the half still fits.
            // A device-driven run (`fused_peer.rs`) uses the first buffer as the device's
            // inbox ring, whose capacity is a power of two: the default is rounded up to one,
            // and at least MIN_INBOX_RING (a hub ladder of a few thousand vertices on 2 GPUs
            // had 4,436 items in flight, unread, in a ring of 4,096). A group of one (one
            // device, FusedDriver::Device) sends nothing: it keeps one device's sizing. A
            // run that may be fused on several devices (FusedMode::fuses_device_driven) is
            // sized for both: a dense graph's host-driven fallback, one launch per level on
            // GPUs without peer access, gets the larger buffer too.
            let per_round = 2 * (n - local_vertices) + 1024;
            let fused = options.fused.fuses_device_driven(partition.num_parts());
            let send = options.send_capacity.unwrap_or(if fused {
                (2 * per_round).next_power_of_two().max(MIN_INBOX_RING)
            } else {
                per_round
            });
            devices.push(cuda::CudaTraversalDevice::new(
                context,
                device,
                &kernels,
                csr,
                A::WEIGHTED,
                owned,
                capacity,
                send,
            )?);
        }
        if A::START == Start::EveryVertex {
            // Every vertex's own value, halo copies included: a remote vertex's copy starts
            // where its owner starts it, so only an improvement on it is sent.
            let mut initial = for_owned_ranges(n)?;
            for (v, word) in initial.iter_mut().enumerate() {
                *word = algorithm.init(v as u32, false).to_bits();
            }
            for (dev, device) in devices.iter_mut().zip(context.devices()) {
                dev.set_initial_values(device.upload(&initial)?)?;
            }
        }
        Ok(MinTraversalSolver {
            held,
            shape: GraphShape::of_rows(rows),
            storage: Storage::Cuda(devices),
            peers: None,
        })
    }

    /// The vertices this solver's parts own.
    fn owned_vertices(&self) -> Range<u32> {
        self.held.owned_vertices()
    }

    /// Runs this process's share of a traversal spanning several processes ([`SharedRun`]:
    /// the caller holds the count open until every process is done), its devices linked to
    /// the other processes' by `transport`; `sources` are the whole run's (each process seeds
    /// the ones its parts own). Every device runs rounds under its driver (bounded fused
    /// rounds on sparse graphs, as on several devices of one process). CUDA storage only
    /// (a host-backend share is [`HostSolver::run_shared`]). A run that overflows a device
    /// worklist or outgoing buffer fails with [`Error::CapacityExceeded`]; the caller grows
    /// them ([`MinTraversalSolver::grow_after`]) and runs again, on every process. The output
    /// covers this process's parts' vertices.
    fn run_shared<T: RingTransport<VertexValue>>(
        &mut self,
        sources: &[u32],
        options: &WorklistOptions,
        transport: &T,
        shared: SharedRun<'_>,
    ) -> Result<ShareOutput<A::Value>, WorklistError> {
        let options = &options.for_graph(self.held.num_vertices());
        fused_rounds::round_levels(options)?;
        let seeds = self.seeds(sources);
        let bounded = options
            .fused
            .bounded_rounds(shared.ring_devices, self.shape.average_degree());
        let defaults = FusedDefaults::for_graph(self.shape.average_degree());
        let context = self.held.context().clone();
        let vertices = self.held.owned_vertices();
        let Storage::Cuda(devices) = &mut self.storage else {
            return Err(Error::Unsupported {
                operation: "MinTraversalSolver::run_shared on the host backend (run the \
                            share with HostSolver::run_shared)",
                backend: "host",
            }
            .into());
        };
        let workers = round_workers(
            devices, &context, sources, &seeds, bounded, options, defaults,
        )?;
        let stats = run_workers_shared(&context, workers, transport, shared, options)?;
        let mut values = for_owned_ranges((vertices.end - vertices.start) as usize)?;
        for (owned, (dev, device)) in self
            .held
            .owned_ranges()
            .zip(devices.iter().zip(context.devices()))
        {
            download_owned(device, &dev.values, owned, (&mut values, vertices.start))?;
        }
        Ok(ShareOutput {
            vertices,
            values: bytemuck::allocation::cast_vec(values),
            left: Vec::new(),
            stats,
        })
    }

    /// After a run that failed with `error`: when it was an overflow of a device worklist or
    /// outgoing buffer whose size the options leave to the solver, grows it (at least
    /// doubled) and says so; the run can then be started again. `false` for any other error.
    fn grow_after(
        &mut self,
        error: &WorklistError,
        options: &WorklistOptions,
    ) -> Result<bool, WorklistError> {
        match error {
            WorklistError::Runtime(Error::CapacityExceeded {
                setting, needed, ..
            }) => self.grow(setting, *needed as usize, options),
            _ => Ok(false),
        }
    }
}

impl<A: WorklistAlgorithm> MinTraversalSolver<A> {
    /// A fused run device-driven (`fused_peer.rs`): on several devices, or on one in a group
    /// of one.
    fn run_device_driven(
        &mut self,
        sources: &[u32],
        seeds: &[Vec<u32>],
        options: &WorklistOptions,
    ) -> Result<TraversalOutput<A::Value>, WorklistError> {
        if self.peers.is_none() {
            // Reached under Auto on distinct GPUs, or under Device, whose members may share
            // GPUs (FusedDriver; fused_peer sizes their grids).
            self.peers = Some(PeerGroup::new_sharing(
                self.held.context(),
                GpuSharing::Split,
            )?);
        }
        let group = self.peers.as_ref().ok_or(Error::Unsupported {
            operation: "a device-driven run without its peer group",
            backend: "cuda",
        })?;
        let Storage::Cuda(storage) = &mut self.storage else {
            return Err(mixed_backends().into());
        };
        let mut devices: Vec<&mut cuda::CudaTraversalDevice> = storage.iter_mut().collect();
        let context_devices = self.held.context().devices();
        let out = fused_peer::run_device_driven(
            group,
            context_devices,
            &mut devices,
            sources,
            seeds,
            options,
            FusedDefaults::for_graph(self.shape.average_degree()),
        )?;
        let mut values = for_owned_ranges(self.held.num_vertices())?;
        for (d, dev) in devices.iter().enumerate() {
            let owned = self.held.partition().range(d);
            download_owned(&context_devices[d], &dev.values, owned, (&mut values, 0))?;
        }
        Ok(TraversalOutput {
            values: bytemuck::allocation::cast_vec(values),
            stats: WorklistStats {
                epochs: out.stats.iter().map(|s| s.epochs).max().unwrap_or(0),
                devices: out.stats,
                elapsed: out.elapsed,
                device_time: Some(out.device_time),
                device_driven: true,
                ..WorklistStats::default()
            },
            fused: true,
            device_time: Some(out.device_time),
        })
    }
}

/// Runs a min traversal of `csr` (already renumbered so that device `d` owns
/// `partition.range(d)`) from `sources` (partitioned ids, valued `init(v, true)`) on every device of
/// `context` (one-shot [`MinTraversalSolver`]).
pub fn solve_min_traversal<A: WorklistAlgorithm>(
    context: &Context,
    algorithm: A,
    csr: &Csr,
    partition: &Partition,
    sources: &[u32],
    options: &WorklistOptions,
) -> Result<TraversalOutput<A::Value>, WorklistError> {
    MinTraversalSolver::new(context, algorithm, csr, partition, options)?.run(sources, options)
}

/// The CUDA kernels of `A`, or the error of an algorithm the CUDA executors cannot run.
fn cuda_kernels<A: WorklistAlgorithm>(algorithm: &A) -> Result<TraversalKernels, Error> {
    let unsupported = |operation| Error::Unsupported {
        operation,
        backend: "cuda",
    };
    if A::COMBINE != Combine::Min {
        return Err(unsupported(
            "an algorithm whose updates add up in the min traversals' CUDA executors",
        ));
    }
    if TypeId::of::<A::Value>() != TypeId::of::<u32>() {
        return Err(unsupported(
            "values other than u32 in the min traversals' CUDA executors",
        ));
    }
    // Started from sources, the kernels' reset sets UNREACHED and 0 at the sources; started
    // from every vertex, the values are uploaded from `init`.
    if A::START == Start::Sources
        && (algorithm.init(0, false).to_bits() != UNREACHED
            || algorithm.init(0, true).to_bits() != 0)
    {
        return Err(unsupported(
            "initial values other than UNREACHED (and 0 at the sources) in the min \
             traversals' CUDA executors",
        ));
    }
    A::CUDA_KERNELS.ok_or(unsupported(
        "this algorithm on CUDA devices (it names no CUDA kernels)",
    ))
}

/// One worker per device for a run of rounds under the drivers (each round one launch per
/// level, or with `bounded`, one bounded fused launch), its storage reset for `sources` and
/// seeded with `seeds[d]`.
fn round_workers<'a>(
    devices: &'a mut [cuda::CudaTraversalDevice],
    context: &'a Context,
    sources: &[u32],
    seeds: &[Vec<u32>],
    bounded: bool,
    options: &WorklistOptions,
    defaults: FusedDefaults,
) -> Result<Vec<cuda::CudaTraversalWorker<'a>>, WorklistError> {
    let mut workers = Vec::with_capacity(devices.len());
    for ((dev, device), seeds) in devices.iter_mut().zip(context.devices()).zip(seeds) {
        let worker = dev.worker(device, sources, seeds)?;
        workers.push(if bounded {
            let rounds = worker.storage.fused_rounds(options, defaults)?;
            worker.with_fused_rounds(rounds)
        } else {
            worker
        });
    }
    Ok(workers)
}

/// The error of a context whose devices are not all of one backend.
fn mixed_backends() -> Error {
    Error::Unsupported {
        operation: "mixing host and CUDA devices in one traversal",
        backend: "cuda",
    }
}
