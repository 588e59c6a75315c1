//! The generic label-correcting traversal shared by BFS and SSSP.
//!
//! Each device holds the rows of the vertices it owns ([`DeviceCsr`]) and a
//! **full-length** value array. Local items are vertex ids; remote items are
//! [`VertexValue`](crate::split::VertexValue) pairs. An expand round relaxes every out-arc of its items with
//! `fetch_min` on the device's value array, which is also the halo filter: an update to a
//! vertex of another device is sent only if it improves what this device already knows of
//! that vertex. On receipt, the owner applies the update with `fetch_min` and keeps the
//! vertex only if it improved; a device that is not the owner updates its halo copy and
//! passes the item on only if it improved.
//!
//! An algorithm supplies only [`MinTraversal::relax`] and, for CUDA, the names of its
//! instantiation of `kernels/include/traversal.cuh` ([`MinTraversal::CUDA_KERNELS`]): BFS is
//! `value + 1`, SSSP `value + weight`.
//!
//! [`MinTraversalSolver`] keeps every device's storage (CSR, value array, and on CUDA the
//! device worklist, outgoing buffers and loaded kernels) across runs, so a run only resets
//! the values and traverses; [`solve_min_traversal`] is the one-shot form.
//!
//! On CUDA, a run on one device is by default one fused persistent kernel (`fused.rs`,
//! `kernels/include/fused.cuh`; [`FusedMode`]); runs on several devices run rounds under the
//! driver (`cuda.rs`): one expand launch per level, or on sparse graphs fused: one persistent
//! kernel per device for the whole run where the devices have peer access
//! (`fused_peer.rs`, [`FusedDriver`]), else one bounded fused launch of many levels per round
//! (`fused_rounds.rs`).

mod barrier_bench;
mod cuda;
mod fused;
mod fused_peer;
mod fused_rounds;
mod fused_trace;
mod fused_tuning;
mod hub_policy;
mod split_ops;

pub use barrier_bench::{BarrierTiming, time_fused_barrier};
pub use cuda::TraversalKernels;
pub use fused::FusedMode;
pub use fused_peer::FusedDriver;
pub use fused_rounds::FUSED_ROUND_LEVELS;
use fused_tuning::FusedDefaults;
pub use fused_tuning::{
    CLUSTER_MAX_DEGREE, FUSED_BLOCK, FUSED_MAX_SPIN_NS, FUSED_SPARSE_BLOCK,
    FUSED_SPARSE_MAX_AVERAGE_DEGREE, FUSED_SPIN_NS, FusedBarrier, SOLO_CLUSTER,
};
pub use hub_policy::{HUB_MIN_DEGREE, HubPolicy, SMALL_GRID_HUB_MIN_DEGREE};
pub use split_ops::MinSplitOps;
use split_ops::ValueArray;

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use groute_core::cuda::{GpuSharing, PeerGroup};
use groute_core::{Buffer, Context, Error};
use groute_graph::{Csr, Partition};
use rayon::prelude::*;

use crate::driver::run_workers;
use crate::engine::{DeviceProgram, WorklistOptions, WorklistStats, run};
use crate::error::WorklistError;
use crate::part::DeviceCsr;

/// The smallest default inbox ring of a device-driven run (`fused_peer.rs`), in items (512 KiB
/// per outgoing buffer): small graphs can have a few hubs' worth of items in flight.
const MIN_INBOX_RING: usize = 1 << 16;

/// The value of a vertex not reached (yet).
pub const UNREACHED: u32 = u32::MAX;

/// A monotone min-label traversal: values only decrease, `relax` proposes a neighbour's value.
pub trait MinTraversal: Send + Sync + 'static {
    /// Whether the traversal reads arc weights.
    const WEIGHTED: bool;
    /// The value proposed for the head of an arc of weight `weight` (1 when unweighted) whose
    /// tail has value `value` (never [`UNREACHED`]); saturate rather than wrap.
    fn relax(value: u32, weight: u32) -> u32;
    /// The CUDA kernels of this traversal (`None`: host backend only).
    const CUDA_KERNELS: Option<TraversalKernels> = None;
}

/// One device's share of a min traversal (host backend).
struct MinProgram<A> {
    /// The owned rows of the CSR (and their weights when the traversal reads them).
    csr: DeviceCsr,
    ops: MinSplitOps,
    capacity: usize,
    _algo: std::marker::PhantomData<fn() -> A>,
}

impl<A: MinTraversal> DeviceProgram for MinProgram<A> {
    type Ops = MinSplitOps;

    fn split_ops(&self) -> MinSplitOps {
        self.ops.clone()
    }

    fn expand(&self, items: &[u32]) -> Vec<u32> {
        // SAFETY: the part was uploaded and synchronised before the run started and is never
        // written again.
        let Some(rows) = (unsafe { self.csr.host_view() }) else {
            return Vec::new();
        };
        let values = self.ops.values.atomics();
        items
            .par_iter()
            .with_min_len(64)
            .fold(Vec::new, |mut out, &v| {
                let value = match values.get(v as usize) {
                    Some(a) => a.load(Ordering::Acquire),
                    None => return out,
                };
                if value == UNREACHED {
                    return out;
                }
                // Items are owned vertices (the split keeps no other): `row` panics otherwise.
                let (targets, weights) = rows.row(v);
                for (i, &u) in targets.iter().enumerate() {
                    let w = weights.map_or(1, |w| w[i]);
                    let cand = A::relax(value, w);
                    if let Some(a) = values.get(u as usize) {
                        if a.fetch_min(cand, Ordering::AcqRel) > cand {
                            out.push(u);
                        }
                    }
                }
                out
            })
            .reduce(Vec::new, |mut a, b| {
                a.extend(b);
                a
            })
    }

    fn capacity_hint(&self) -> usize {
        self.capacity
    }
}

/// The result of a min traversal.
#[derive(Clone, Debug)]
pub struct TraversalOutput {
    /// One value per vertex, in the partitioned numbering ([`UNREACHED`] where unreached).
    pub values: Vec<u32>,
    /// Worklist counters.
    pub stats: WorklistStats,
    /// Whether the run was one fused persistent kernel ([`FusedMode`]).
    pub fused: bool,
    /// The traversal's time on the devices, between CUDA timing events recorded after the
    /// reset and before the download (the fused kernel alone when fused; the drivers' rounds,
    /// max over devices, otherwise; `None` on the host backend). Equals `stats.device_time`.
    pub device_time: Option<Duration>,
}

/// One device's storage, by backend.
enum DeviceStorage {
    Host {
        csr: DeviceCsr,
        owned: Range<u32>,
        capacity: usize,
    },
    Cuda(Box<cuda::CudaTraversalDevice>),
}

/// A min traversal of one partitioned graph on every device of a context, with the devices'
/// storage allocated once ([`MinTraversalSolver::new`]) and reused by every
/// [`MinTraversalSolver::run`].
pub struct MinTraversalSolver<A> {
    context: Context,
    partition: Partition,
    num_vertices: usize,
    /// Arcs per vertex of the graph (what the fused kernel's default launch shape follows,
    /// [`FUSED_SPARSE_MAX_AVERAGE_DEGREE`]).
    average_degree: f64,
    devices: Vec<DeviceStorage>,
    /// The devices' group for device-driven runs (`fused_peer.rs`), made by the first one.
    peers: Option<PeerGroup>,
    _algo: std::marker::PhantomData<fn() -> A>,
}

impl<A> std::fmt::Debug for MinTraversalSolver<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MinTraversalSolver")
            .field("devices", &self.devices.len())
            .field("num_vertices", &self.num_vertices)
            .finish()
    }
}

impl<A: MinTraversal> MinTraversalSolver<A> {
    /// Uploads `csr` (already renumbered so that device `d` owns `partition.range(d)`) to
    /// every device of `context` and allocates the run storage (capacities from `options`,
    /// or sized from the graph).
    pub fn new(
        context: &Context,
        csr: &Csr,
        partition: &Partition,
        options: &WorklistOptions,
    ) -> Result<Self, WorklistError> {
        let n = csr.num_vertices();
        let num_devices = context.num_devices();
        if partition.num_parts() != num_devices || partition.num_vertices() != n {
            return Err(Error::invalid(
                "partition",
                format!(
                    "{} parts over {} vertices",
                    partition.num_parts(),
                    partition.num_vertices()
                ),
                format!(
                    "partition the graph of {n} vertices into {num_devices} parts, one per device"
                ),
            )
            .into());
        }
        if A::WEIGHTED && csr.weights().is_none() {
            return Err(Error::invalid(
                "graph weights",
                "none",
                "this traversal needs arc weights",
            )
            .into());
        }
        let average_degree = csr.num_edges() as f64 / n.max(1) as f64;
        let mut devices = Vec::with_capacity(num_devices);
        for (d, device) in context.devices().iter().enumerate() {
            let owned = partition.range(d);
            let local_vertices = (owned.end - owned.start) as usize;
            let local_arcs =
                (csr.offsets()[owned.end as usize] - csr.offsets()[owned.start as usize]) as usize;
            // A vertex sits in the worklist once per improvement not yet expanded: rare
            // unweighted, common weighted (label correcting), hence the larger default.
            let per_element = if A::WEIGHTED { 4 } else { 2 };
            if device.stream().is_host() {
                // Host memory, not the device's: the bound that never overflows.
                let capacity = options
                    .wl_capacity
                    .unwrap_or(per_element * (local_vertices + local_arcs) + 1024);
                devices.push(DeviceStorage::Host {
                    csr: DeviceCsr::upload(device, csr, owned.clone(), A::WEIGHTED)?,
                    owned,
                    capacity,
                });
            } else {
                let kernels = A::CUDA_KERNELS.ok_or(Error::Unsupported {
                    operation: "this traversal on CUDA devices (it names no CUDA kernels)",
                    backend: "cuda",
                })?;
                // Sized by the owned vertices, not their arcs, and grown when a run needs
                // more (`run`): label-correcting SSSP keeps a vertex once per improvement, so
                // the arcs bound the worklist, but sizing it so held ten times the graph.
                let capacity = options
                    .wl_capacity
                    .unwrap_or(per_element * local_vertices + 1024);
                // Each remote vertex is sent once per improvement of this device's halo
                // copy: twice the remote vertices to start with, grown when a round sends
                // more (weighted, a remote vertex can improve once per arc reaching it from
                // this device in one round). Bounded fused rounds (`fused_rounds.rs`)
                // return at half the buffer, so they get twice the room: the level that
                // crosses the half still fits. A
                // device-driven run (`fused_peer.rs`) uses the first buffer as the device's
                // inbox ring, whose capacity is a power of two: the default is rounded up to
                // one, and at least MIN_INBOX_RING (a hub ladder of a few thousand vertices on
                // 2 GPUs had 4,436 items in flight, unread, in a ring of 4,096). A group of
                // one (one device, FusedDriver::Device) sends nothing: it keeps one device's
                // sizing.
                let per_round = 2 * (n - local_vertices) + 1024;
                let bounded = options.fused.bounded_rounds(num_devices, average_degree);
                let send = options.send_capacity.unwrap_or(if bounded {
                    (2 * per_round).next_power_of_two().max(MIN_INBOX_RING)
                } else {
                    per_round
                });
                devices.push(DeviceStorage::Cuda(Box::new(
                    cuda::CudaTraversalDevice::new(
                        context,
                        device,
                        &kernels,
                        csr,
                        A::WEIGHTED,
                        owned,
                        capacity,
                        send,
                    )?,
                )));
            }
        }
        Ok(MinTraversalSolver {
            context: context.clone(),
            partition: partition.clone(),
            num_vertices: n,
            average_degree,
            devices,
            peers: None,
            _algo: std::marker::PhantomData,
        })
    }

    /// Runs the traversal from `sources` (partitioned ids, value 0). The statistics' elapsed
    /// time covers the traversal only (storage reset and result download excluded).
    ///
    /// On CUDA, a device worklist or outgoing buffer that the options leave to the solver
    /// starts small (sized by the device's vertices, not its arcs) and grows: a run that
    /// overflows one starts again with it at least doubled (the storage keeps the larger size
    /// for later runs). One the options set is a fixed capacity: overflowing it fails the run
    /// with [`Error::CapacityExceeded`] naming the setting.
    pub fn run(
        &mut self,
        sources: &[u32],
        options: &WorklistOptions,
    ) -> Result<TraversalOutput, WorklistError> {
        let mut restarts = 0;
        loop {
            match self.run_sized(sources, options) {
                Err(WorklistError::Runtime(Error::CapacityExceeded {
                    setting, needed, ..
                })) if self.grow(setting, needed as usize, options)? => restarts += 1,
                Ok(mut out) => {
                    out.stats.restarts = restarts;
                    return Ok(out);
                }
                Err(e) => return Err(e),
            }
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
        for (storage, device) in self.devices.iter_mut().zip(self.context.devices()) {
            if let DeviceStorage::Cuda(dev) = storage {
                if worklist {
                    grew |= dev.grow_worklist(device, needed)?;
                }
                if outgoing {
                    grew |= dev.grow_outgoing(device, needed)?;
                }
            }
        }
        Ok(grew)
    }

    /// One run with the storage as it is.
    fn run_sized(
        &mut self,
        sources: &[u32],
        options: &WorklistOptions,
    ) -> Result<TraversalOutput, WorklistError> {
        let n = self.num_vertices;
        let options = &options.for_graph(n);
        fused_rounds::round_levels(options)?;
        let num_devices = self.devices.len();
        let mut seeds = vec![Vec::new(); num_devices];
        for &s in sources {
            if (s as usize) < n {
                seeds[self.partition.owner(s)].push(s);
            }
        }
        let context = self.context.clone();
        let cuda = self
            .devices
            .iter()
            .any(|d| matches!(d, DeviceStorage::Cuda(_)));
        if cuda && options.fused.fuses(num_devices) {
            // One device (`fuses` says so only there). Under FusedDriver::Device, the members'
            // kernel in a group of one (FusedDriver says why).
            if options.fused_driver == FusedDriver::Device {
                return self.run_device_driven(sources, &seeds, options);
            }
            let DeviceStorage::Cuda(dev) = &mut self.devices[0] else {
                return Err(mixed_backends().into());
            };
            let device = &context.devices()[0];
            let defaults = FusedDefaults::for_graph(self.average_degree);
            let done = dev.run_fused(device, sources, &seeds[0], options, defaults)?;
            let values = device.download(&dev.values.slice(0..n)?)?;
            return Ok(TraversalOutput {
                values,
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
        if cuda {
            let bounded = options
                .fused
                .bounded_rounds(num_devices, self.average_degree);
            if bounded
                && options
                    .fused_driver
                    .device_driven(|sharing| PeerGroup::check_sharing(&context, sharing))?
            {
                return self.run_device_driven(sources, &seeds, options);
            }
            let defaults = FusedDefaults::for_graph(self.average_degree);
            let mut workers = Vec::with_capacity(num_devices);
            for (d, storage) in self.devices.iter_mut().enumerate() {
                let DeviceStorage::Cuda(dev) = storage else {
                    return Err(mixed_backends().into());
                };
                let worker = dev.worker(&context.devices()[d], sources, &seeds[d])?;
                workers.push(if bounded {
                    let rounds = worker.storage.fused_rounds(options, defaults)?;
                    worker.with_fused_rounds(rounds)
                } else {
                    worker
                });
            }
            let stats = run_workers(&context, workers, options)?;
            let mut values = for_owned_ranges(n)?;
            for (d, storage) in self.devices.iter().enumerate() {
                if let DeviceStorage::Cuda(dev) = storage {
                    let owned = self.partition.range(d);
                    download_owned(&context.devices()[d], &dev.values, owned, &mut values)?;
                }
            }
            return Ok(TraversalOutput {
                values,
                device_time: stats.device_time,
                stats,
                fused: bounded,
            });
        }
        let mut init = filled_values(n, UNREACHED)?;
        for &s in sources {
            if let Some(x) = init.get_mut(s as usize) {
                *x = 0;
            }
        }
        let mut programs = Vec::with_capacity(num_devices);
        for (d, storage) in self.devices.iter().enumerate() {
            let DeviceStorage::Host {
                csr,
                owned,
                capacity,
            } = storage
            else {
                return Err(mixed_backends().into());
            };
            let device = &context.devices()[d];
            let buffer = device.upload(&init)?;
            device.stream().synchronize()?;
            programs.push(Arc::new(MinProgram::<A> {
                csr: csr.clone(),
                ops: MinSplitOps {
                    owned: owned.clone(),
                    values: ValueArray::new(buffer)?,
                },
                capacity: *capacity,
                _algo: std::marker::PhantomData,
            }));
        }
        let stats = run(&context, &programs, seeds, options)?;
        let mut values = for_owned_ranges(n)?;
        for (d, device) in context.devices().iter().enumerate() {
            let owned = self.partition.range(d);
            download_owned(device, &programs[d].ops.values.buffer, owned, &mut values)?;
        }
        Ok(TraversalOutput {
            values,
            stats,
            fused: false,
            device_time: None,
        })
    }
}

impl<A: MinTraversal> MinTraversalSolver<A> {
    /// A fused run device-driven (`fused_peer.rs`): on several devices, or on one in a group
    /// of one.
    fn run_device_driven(
        &mut self,
        sources: &[u32],
        seeds: &[Vec<u32>],
        options: &WorklistOptions,
    ) -> Result<TraversalOutput, WorklistError> {
        if self.peers.is_none() {
            // Reached under Auto on distinct GPUs, or under Device, whose members may share
            // GPUs (FusedDriver; fused_peer sizes their grids).
            self.peers = Some(PeerGroup::new_sharing(&self.context, GpuSharing::Split)?);
        }
        let group = self.peers.as_ref().ok_or(Error::Unsupported {
            operation: "a device-driven run without its peer group",
            backend: "cuda",
        })?;
        let mut devices = Vec::with_capacity(self.devices.len());
        for storage in self.devices.iter_mut() {
            let DeviceStorage::Cuda(dev) = storage else {
                return Err(mixed_backends().into());
            };
            devices.push(&mut **dev);
        }
        let context_devices = self.context.devices();
        let out = fused_peer::run_device_driven(
            group,
            context_devices,
            &mut devices,
            sources,
            seeds,
            options,
            FusedDefaults::for_graph(self.average_degree),
        )?;
        let mut values = for_owned_ranges(self.num_vertices)?;
        for (d, dev) in devices.iter().enumerate() {
            let owned = self.partition.range(d);
            download_owned(&context_devices[d], &dev.values, owned, &mut values)?;
        }
        Ok(TraversalOutput {
            values,
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
/// `partition.range(d)`) from `sources` (partitioned ids, value 0) on every device of
/// `context` (one-shot [`MinTraversalSolver`]).
pub fn solve_min_traversal<A: MinTraversal>(
    context: &Context,
    csr: &Csr,
    partition: &Partition,
    sources: &[u32],
    options: &WorklistOptions,
) -> Result<TraversalOutput, WorklistError> {
    MinTraversalSolver::<A>::new(context, csr, partition, options)?.run(sources, options)
}

/// The error of a context whose devices are not all of one backend.
fn mixed_backends() -> Error {
    Error::Unsupported {
        operation: "mixing host and CUDA devices in one traversal",
        backend: "cuda",
    }
}

/// The value array that every device's owned range is downloaded into: zeroed lazily (no
/// pass over it), since the partition's ranges tile `0..n` (checked by `new`), so the
/// downloads, which touch its pages on rayon's threads, overwrite every value. An error, not
/// an abort, when the host cannot hold it.
fn for_owned_ranges(n: usize) -> Result<Vec<u32>, groute_core::Error> {
    bytemuck::allocation::try_zeroed_vec(n).map_err(|()| result_out_of_memory(n))
}

/// The host's value array of `n` vertices all at `value`, or an error naming its size.
fn filled_values(n: usize, value: u32) -> Result<Vec<u32>, groute_core::Error> {
    let mut values = Vec::new();
    reserve_values(&mut values, n)?;
    values.resize(n, value);
    Ok(values)
}

/// Reserves room for `n` values, or [`groute_core::Error::OutOfMemory`] naming the bytes.
fn reserve_values(values: &mut Vec<u32>, n: usize) -> Result<(), groute_core::Error> {
    values
        .try_reserve_exact(n)
        .map_err(|_| result_out_of_memory(n))
}

/// The host could not hold a result of `n` vertices.
fn result_out_of_memory(n: usize) -> groute_core::Error {
    groute_core::Error::OutOfMemory {
        bytes: n.saturating_mul(std::mem::size_of::<u32>()),
        location: format!(
            "the host for the result of {n} vertices (a smaller graph, or a machine with more \
             memory)"
        ),
        source: None,
    }
}

/// Copies the `owned` range of `buffer` (a value array on `device`) into `values` (the whole
/// graph's, in the partitioned numbering).
fn download_owned(
    device: &groute_core::Device,
    buffer: &Buffer<u32>,
    owned: Range<u32>,
    values: &mut [u32],
) -> Result<(), Error> {
    let range = owned.start as usize..owned.end as usize;
    device.download_into(&buffer.slice(range.clone())?, &mut values[range])
}
