//! [`DirectionSolver`]: direction-optimizing BFS with its storage kept across runs, on the
//! devices of a context (CUDA or host): the device-driven kernel on any device count where
//! the context supports it and the [`MultiDriver`] asks for it (`fused/`); else, host-driven,
//! one device runs its own steps (`cuda.rs`, `host.rs`), several the multi-device steps
//! (`multi/`).

use std::time::{Duration, Instant};

use groute_core::{Context, Error};
use groute_graph::{Graph, Partition};
use groute_worklist::DeviceCsr;

use groute_core::cuda::{GpuSharing, PeerGroup};

use super::cuda::CudaDirection;
use super::fused::{DirectionTrace, FusedDirection};
use super::host::HostSteps;
use super::multi::{MultiDirection, MultiDriver};
use super::{DirectionStats, SwitchRule, run_levels};
use crate::{BfsError, BfsTuning};

/// The storage, by backend.
enum Storage {
    /// One host device.
    Host(Box<HostStorage>),
    Cuda(Box<CudaDirection>),
    /// Several devices (either backend), host-driven.
    Multi(Box<MultiDirection>),
    /// Any device count, device-driven (CUDA).
    Fused(Box<FusedDirection>),
}

/// The push CSR and, for a directed graph, its transpose, uploaded to the one host device
/// (every row), with the graph's vertex count and the pull CSR's arc count.
struct HostStorage {
    push: DeviceCsr,
    pull: Option<DeviceCsr>,
    n: usize,
    in_arcs: u64,
}

/// Direction-optimizing BFS of one graph on a context.
pub(crate) struct DirectionSolver {
    context: Context,
    storage: Storage,
    rule: SwitchRule,
    /// The driver that runs (never [`MultiDriver::Auto`]).
    driver: MultiDriver,
}

/// The output of one run.
pub(crate) struct DirectionRun {
    /// Levels in the graph's numbering.
    pub levels: Vec<u32>,
    /// What the run did.
    pub stats: DirectionStats,
    /// Time of the level loop (host clock).
    pub elapsed: Duration,
    /// Time between CUDA timing events around the level loop (`None` on the host backend).
    pub device_time: Option<Duration>,
    /// What drove it (never [`MultiDriver::Auto`]; one host-driven device: `per-device`).
    pub driver: MultiDriver,
    /// The per-phase trace of a device-driven run that asked for it.
    pub trace: Option<DirectionTrace>,
}

/// The storage of a run on the one device of `context`: every row of `graph` (and of its
/// transpose when it is not symmetric), on the host backend or on CUDA.
fn one_device(
    context: &Context,
    graph: &Graph,
    partition: &Partition,
) -> Result<Storage, BfsError> {
    let pull = (!graph.symmetric).then(|| graph.csr.transpose());
    let device = &context.devices()[0];
    let rows = partition.range(0);
    Ok(if device.stream().is_host() {
        let upload = |csr| DeviceCsr::upload(device, csr, rows.clone(), false);
        Storage::Host(Box::new(HostStorage {
            push: upload(&graph.csr)?,
            pull: pull.as_ref().map(upload).transpose()?,
            n: graph.num_vertices(),
            in_arcs: pull.as_ref().unwrap_or(&graph.csr).num_edges(),
        }))
    } else {
        Storage::Cuda(Box::new(CudaDirection::new(
            context,
            device,
            (&graph.csr, pull.as_ref()),
            rows,
            graph.num_vertices(),
        )?))
    })
}

impl DirectionSolver {
    /// Uploads `graph` (and its transpose when it is not symmetric) to the devices of the
    /// context, each device `d` the rows of the vertices it owns, `partition.range(d)` (one
    /// device: every row); several devices are driven by `driver`, under `tuning`.
    pub(crate) fn new(
        context: &Context,
        graph: &Graph,
        partition: &Partition,
        (driver, tuning): (MultiDriver, &BfsTuning),
    ) -> Result<Self, BfsError> {
        let rule = tuning.switch_rule;
        if partition.num_parts() != context.num_devices() {
            return Err(Error::invalid(
                "partition",
                partition.num_parts(),
                format!("one part per device ({})", context.num_devices()),
            )
            .into());
        }
        // Ranges of another graph would read past this one's arrays or give wrong levels.
        if partition.num_vertices() != graph.num_vertices() {
            return Err(Error::invalid(
                "partition",
                format!("{} vertices", partition.num_vertices()),
                format!(
                    "the partition must be of the graph being searched ({} vertices); \
                     partition this graph",
                    graph.num_vertices()
                ),
            )
            .into());
        }
        let driver = resolve(driver, context)?;
        let (storage, driver) = if driver == MultiDriver::Fused {
            let fused = FusedDirection::new(context, graph, partition, tuning)?;
            (Storage::Fused(Box::new(fused)), driver)
        } else if context.num_devices() > 1 {
            let multi = MultiDirection::new(context, (graph, partition), tuning)?;
            (Storage::Multi(Box::new(multi)), driver)
        } else {
            (
                one_device(context, graph, partition)?,
                MultiDriver::PerDevice,
            )
        };
        Ok(DirectionSolver {
            context: context.clone(),
            storage,
            rule,
            driver,
        })
    }

    /// BFS from `source` (the graph's numbering, in range).
    pub(crate) fn run(
        &mut self,
        source: u32,
        time_limit: Option<Duration>,
    ) -> Result<DirectionRun, BfsError> {
        match &mut self.storage {
            Storage::Host(host) => {
                let HostStorage {
                    push,
                    pull,
                    n,
                    in_arcs,
                } = host.as_ref();
                let pull = pull.as_ref().unwrap_or(push);
                // SAFETY: the parts are written once, by their uploads (which wait for their
                // copies), and never again: nothing writes them while the views live.
                let views = unsafe { (push.host_view(), pull.host_view()) };
                let (Some(push), Some(pull)) = views else {
                    return Err(Error::Unsupported {
                        operation: "host BFS steps on memory the host cannot address",
                        backend: "this",
                    }
                    .into());
                };
                let started = Instant::now();
                let (mut steps, start) = HostSteps::new((push, pull), *n, source, time_limit);
                let stats = run_levels(&mut steps, start, *n as u64, *in_arcs, &self.rule)?;
                let elapsed = started.elapsed();
                Ok(DirectionRun {
                    levels: steps.into_levels(),
                    stats,
                    elapsed,
                    device_time: None,
                    driver: self.driver,
                    trace: None,
                })
            }
            Storage::Cuda(dev) => {
                let device = &self.context.devices()[0];
                let (stats, run) = dev.run(device, source, &self.rule, time_limit)?;
                Ok(DirectionRun {
                    levels: run.levels,
                    stats,
                    elapsed: run.elapsed,
                    device_time: Some(run.device_time),
                    driver: self.driver,
                    trace: None,
                })
            }
            Storage::Multi(multi) => multi.run(source, time_limit),
            Storage::Fused(fused) => fused.run(source, time_limit),
        }
    }
}

/// The driver `driver` means on `context`: `Auto` is `Fused` where
/// [`PeerGroup::auto_device_driven`] (members sharing GPUs included), else `PerDevice`;
/// `Fused` is refused (naming the fix) where even that is not supported.
fn resolve(driver: MultiDriver, context: &Context) -> Result<MultiDriver, BfsError> {
    match driver {
        MultiDriver::Auto if PeerGroup::auto_device_driven(context) => Ok(MultiDriver::Fused),
        MultiDriver::Auto => Ok(MultiDriver::PerDevice),
        MultiDriver::Fused => match PeerGroup::check_sharing(context, GpuSharing::Split) {
            Ok(()) => Ok(MultiDriver::Fused),
            Err(e) => Err(Error::invalid(
                "--do-driver",
                "fused",
                format!("{e}: use --do-driver per-device (host-driven levels)"),
            )
            .into()),
        },
        host => Ok(host),
    }
}
