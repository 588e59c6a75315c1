//! [`DirectionSolver`]: direction-optimizing BFS with its storage kept across runs, on the
//! one device of a context (CUDA or host).

use std::time::{Duration, Instant};

use groute_core::{Context, Error};
use groute_graph::{Csr, Graph};

use super::cuda::CudaDirection;
use super::host::HostSteps;
use super::{DirectionStats, SwitchRule, run_levels};
use crate::BfsError;

/// The storage, by backend.
enum Storage {
    /// The push CSR and, for a directed graph, its transpose.
    Host {
        push: Csr,
        pull: Option<Csr>,
    },
    Cuda(Box<CudaDirection>),
}

/// Direction-optimizing BFS of one graph on a one-device context.
pub(crate) struct DirectionSolver {
    context: Context,
    storage: Storage,
    rule: SwitchRule,
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
}

impl DirectionSolver {
    /// Uploads `graph` (and its transpose when it is not symmetric) to the context's one
    /// device.
    pub(crate) fn new(
        context: &Context,
        graph: &Graph,
        rule: SwitchRule,
    ) -> Result<Self, BfsError> {
        if context.num_devices() != 1 {
            return Err(Error::invalid(
                "direction (--direction)",
                format!("pull-push, with {} devices", context.num_devices()),
                "direction-optimizing BFS runs on one device",
            )
            .into());
        }
        let pull = (!graph.symmetric).then(|| graph.csr.transpose());
        let device = &context.devices()[0];
        let storage = if device.stream().is_host() {
            Storage::Host {
                push: graph.csr.clone(),
                pull,
            }
        } else {
            Storage::Cuda(Box::new(CudaDirection::new(
                context,
                device,
                &graph.csr,
                pull.as_ref(),
            )?))
        };
        Ok(DirectionSolver {
            context: context.clone(),
            storage,
            rule,
        })
    }

    /// BFS from `source` (the graph's numbering, in range).
    pub(crate) fn run(
        &mut self,
        source: u32,
        time_limit: Option<Duration>,
    ) -> Result<DirectionRun, BfsError> {
        match &mut self.storage {
            Storage::Host { push, pull } => {
                let pull = pull.as_ref().unwrap_or(push);
                let started = Instant::now();
                let (mut steps, start) = HostSteps::new(push, pull, source, time_limit);
                let n = push.num_vertices() as u64;
                let stats = run_levels(&mut steps, start, n, pull.num_edges(), &self.rule)?;
                let elapsed = started.elapsed();
                Ok(DirectionRun {
                    levels: steps.into_levels(),
                    stats,
                    elapsed,
                    device_time: None,
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
                })
            }
        }
    }
}
