//! [`PageRankShare`]: PageRank's CUDA executor of one process's share of a run spanning
//! several processes (the `groute-dist` crate's ranks), the same host-driven worker
//! ([`CudaPageRankStorage`]) that one process runs on several devices, its ring continuing
//! on the other processes' devices.

use std::ops::Range;

use groute_core::{Context, Device, Error};
use groute_graph::{HeldRows, InArcs, Partition};
use groute_worklist::{
    DeviceParts, RingTransport, ShareOutput, ShareSolver, SharedRun, WorklistError,
    WorklistOptions, run_workers_shared,
};

use crate::algorithm::{PageRank, VertexResidual};
use crate::cuda::pull_storage::PullTopology;
use crate::cuda::storage::{CudaPageRankStorage, PushSettings};
use crate::sweep::{CutArcs, SweepMode};
use crate::tuning::PageRankTuning;
use crate::{PageRankError, PageRankOptions};

/// Residual-push PageRank on the CUDA devices of one process that holds some consecutive
/// parts of a graph whose other parts other processes hold: each device keeps its part's
/// storage across runs (as [`crate::PageRankSolver`] on several devices), runs host-driven
/// rounds (sweeps as [`PageRankTuning::sweep`] says, pull by default; a pull reads the
/// in-arcs, so a process holding only some rows of a directed graph sweeps by pushes, which
/// need only its out-arcs: [`HeldRows::in_arcs`]), and its remote
/// updates, merged per vertex before they leave the device, travel the ring of every
/// process's devices. The `groute-dist` crate runs it:
/// `DistSolver::<PageRank, _, PageRankShare>::with_device_solver`. The device-driven kernel
/// ([`crate::Driver::Fused`]) runs within one process only.
///
/// Its buffers are sized for the worst case (each vertex pending once, one item per remote
/// vertex per round): an overflow is an error naming the setting to raise, and nothing grows
/// after it ([`ShareSolver::grow_after`]'s default).
pub struct PageRankShare {
    /// The parts this process's devices hold.
    held: DeviceParts,
    devices: Vec<CudaPageRankStorage>,
}

impl std::fmt::Debug for PageRankShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageRankShare")
            .field("parts", &self.held.parts())
            .finish_non_exhaustive()
    }
}

impl PageRankShare {
    /// [`ShareSolver::for_parts`] with `tuning` (sweep mode and divisor, lazy receives;
    /// the device-driven settings do not apply); `for_parts` takes the defaults. Alpha,
    /// epsilon and the tuning are checked as [`PageRankOptions::validate`] checks them.
    pub fn with_tuning(
        context: &Context,
        algorithm: PageRank,
        tuning: &PageRankTuning,
        rows: &HeldRows<'_>,
        partition: &Partition,
        first_part: usize,
        options: &WorklistOptions,
    ) -> Result<Self, WorklistError> {
        let settings = PageRankOptions {
            alpha: algorithm.alpha,
            epsilon: algorithm.epsilon,
            tuning: *tuning,
            ..PageRankOptions::default()
        };
        settings.validate().map_err(|e| match e {
            PageRankError::InvalidParameter {
                name,
                value,
                expected,
            } => Error::invalid(name, value, expected),
            other => Error::invalid("PageRank parameters", other, "valid parameters"),
        })?;
        let held = DeviceParts::check(context, rows, partition, first_part)?;
        let csr = rows.csr();
        if context.devices().iter().any(|d| d.stream().is_host()) {
            return Err(Error::Unsupported {
                operation: "PageRankShare on host devices (a host-backend share runs on \
                            groute_worklist::algorithm::HostSolver)",
                backend: "host",
            }
            .into());
        }
        // Pull sweeps read the in-arcs: the CSR itself where the graph is symmetric, else
        // its transpose (built once here where the whole graph is held; each device uploads
        // its owned rows of it). Without them, pushes.
        let (sweep, in_arcs) = match tuning.sweep {
            SweepMode::Push => (SweepMode::Push, None),
            SweepMode::Pull => match rows.in_arcs() {
                InArcs::OwnRows => (SweepMode::Pull, None),
                InArcs::Transpose(t) => (SweepMode::Pull, Some(t)),
                InArcs::Unavailable => (SweepMode::Push, None),
            },
        };
        let push = PushSettings {
            sweep,
            ..PushSettings::of(&settings, rows.average_degree())
        };
        let mut devices = Vec::with_capacity(context.num_devices());
        for (owned, device) in held.owned_ranges().zip(context.devices()) {
            let cut = match sweep {
                SweepMode::Pull => CutArcs::of(csr, &owned),
                SweepMode::Push => None,
            };
            let pull = PullTopology {
                transpose: in_arcs.as_ref(),
                cut: cut.as_ref(),
                taken_bits: false,
                interleave_gather: push.interleave_gather,
                offsets32: false,
            };
            devices.push(CudaPageRankStorage::new(
                context, device, csr, pull, owned, push, options,
            )?);
        }
        Ok(PageRankShare { held, devices })
    }
}

impl ShareSolver for PageRankShare {
    type Algorithm = PageRank;
    type Packed = VertexResidual;

    fn for_parts(
        context: &Context,
        algorithm: PageRank,
        rows: &HeldRows<'_>,
        partition: &Partition,
        first_part: usize,
        options: &WorklistOptions,
    ) -> Result<Self, WorklistError> {
        let tuning = PageRankTuning::default();
        Self::with_tuning(
            context, algorithm, &tuning, rows, partition, first_part, options,
        )
    }

    fn owned_vertices(&self) -> Range<u32> {
        self.held.owned_vertices()
    }

    /// Every vertex starts with its residual (PageRank has no sources: `sources` is
    /// ignored). The output's values are the owned vertices' ranks, `left` their residuals.
    fn run_shared<T: RingTransport<VertexResidual>>(
        &mut self,
        _sources: &[u32],
        options: &WorklistOptions,
        transport: &T,
        shared: SharedRun<'_>,
    ) -> Result<ShareOutput<f32>, WorklistError> {
        let context = self.held.context();
        let workers = self
            .devices
            .iter()
            .zip(context.devices())
            .map(|(storage, device)| storage.worker(device))
            .collect::<Result<Vec<_>, _>>()?;
        let stats = run_workers_shared(context, workers, transport, shared, options)?;
        let vertices = self.held.owned_vertices();
        let len = (vertices.end - vertices.start) as usize;
        let mut ranks = zeroed(len)?;
        let mut left = zeroed(len)?;
        for (owned, (storage, device)) in self
            .held
            .owned_ranges()
            .zip(self.devices.iter().zip(context.devices()))
        {
            let to = (owned.start - vertices.start) as usize..(owned.end - vertices.start) as usize;
            download_part(
                device,
                storage,
                &owned,
                (&mut ranks[to.clone()], &mut left[to]),
            )?;
        }
        Ok(ShareOutput {
            vertices,
            values: ranks,
            left,
            stats,
        })
    }
}

/// `len` zeroed ranks, or an error when the host cannot hold them.
fn zeroed(len: usize) -> Result<Vec<f32>, Error> {
    bytemuck::allocation::try_zeroed_vec(len).map_err(|()| Error::OutOfMemory {
        bytes: len.saturating_mul(std::mem::size_of::<f32>()),
        location: format!("the host for the ranks of {len} vertices"),
        source: None,
    })
}

/// Downloads one device's owned ranks and residuals (`owned`: its part's vertices).
fn download_part(
    device: &Device,
    storage: &CudaPageRankStorage,
    owned: &Range<u32>,
    (ranks, residuals): (&mut [f32], &mut [f32]),
) -> Result<(), Error> {
    if owned.is_empty() {
        return Ok(());
    }
    let (a, b) = (owned.start as usize, owned.end as usize);
    device.download_into(
        &storage.rank.slice(0..b - a)?,
        bytemuck::cast_slice_mut(ranks),
    )?;
    device.download_into(
        &storage.residual.slice(a..b)?,
        bytemuck::cast_slice_mut(residuals),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use groute_graph::{Csr, GenSpec, NoProgress, block_partition, generate};

    fn graph() -> Csr {
        let spec: GenSpec = "road:side=8,p=0.6,seed=1".parse().expect("spec");
        generate(&spec, &NoProgress).expect("graph").csr
    }

    const ALGORITHM: PageRank = PageRank {
        alpha: 0.85,
        epsilon: 0.01,
    };

    /// The test graph, a host context of `devices` and a block partition into `parts`.
    fn setup(devices: usize, parts: usize) -> (Csr, Context, Partition) {
        let csr = graph();
        let context = Context::host(devices).expect("host context");
        let partition = block_partition(&csr, parts).expect("partition");
        (csr, context, partition)
    }

    #[test]
    fn host_devices_are_refused_with_the_executor_to_use() {
        let (csr, context, partition) = setup(2, 4);
        let options = WorklistOptions::default();
        let rows = HeldRows::whole(&csr);
        let err = PageRankShare::for_parts(&context, ALGORITHM, &rows, &partition, 2, &options)
            .expect_err("host devices");
        assert!(err.to_string().contains("HostSolver"), "{err}");
    }

    #[test]
    fn rows_that_miss_the_parts_are_refused() {
        let (csr, context, partition) = setup(2, 4);
        // Parts 2 and 3 are this process's; it holds the rows of parts 0 and 1 only.
        let rows = HeldRows::some(&csr, partition.range(0).start..partition.range(1).end, true)
            .expect("a range of vertices");
        let err = PageRankShare::for_parts(
            &context,
            ALGORITHM,
            &rows,
            &partition,
            2,
            &WorklistOptions::default(),
        )
        .expect_err("rows missing");
        assert!(err.to_string().contains("held rows"), "{err}");
    }

    #[test]
    fn bad_parameters_are_refused_before_any_upload() {
        let (csr, context, partition) = setup(1, 2);
        let options = WorklistOptions::default();
        for (alpha, epsilon, what) in [(1.5, 0.01, "alpha"), (0.85, -1.0, "epsilon")] {
            let err = PageRankShare::for_parts(
                &context,
                PageRank { alpha, epsilon },
                &HeldRows::whole(&csr),
                &partition,
                0,
                &options,
            )
            .expect_err(what);
            assert!(err.to_string().contains(what), "{err}");
        }
    }
}
