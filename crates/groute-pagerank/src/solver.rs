//! The multi-device solver: one [`DeviceProgram`] per device over the generic worklist
//! engine ([`groute_worklist::run`]), which provides the ring, the local worklists, the
//! receive split and the termination count. PageRank contributes its split
//! ([`PageRankSplitOps`]), its push kernel and its first sweep over the owned range
//! ([`DeviceProgram::initial_sweep_len`]).

use std::ops::Range;
use std::sync::Arc;

use groute_core::{Buffer, Context, Device, Error};
use groute_graph::{Csr, Partition};
use groute_worklist::{DeviceProgram, WorklistOptions, WorklistStats, run, run_workers};

use crate::cuda_worker::CudaPageRankWorker;

use crate::host::{PushKernel, ResidualArray};
use crate::split::PageRankSplitOps;

/// One device's share of PageRank (host backend).
struct PageRankProgram {
    offsets: Buffer<u64>,
    targets: Buffer<u32>,
    rank: ResidualArray,
    ops: PageRankSplitOps,
    alpha: f32,
    capacity: usize,
}

impl PageRankProgram {
    fn with_kernel<R>(&self, body: impl FnOnce(&PushKernel<'_>) -> R) -> R {
        // SAFETY: the CSR buffers were uploaded and synchronised before the run started and
        // are never written again.
        let (offsets, targets) = unsafe {
            (
                self.offsets.as_host_slice().unwrap_or(&[]),
                self.targets.as_host_slice().unwrap_or(&[]),
            )
        };
        body(&PushKernel {
            offsets,
            targets,
            residual: &self.ops.residual,
            rank: &self.rank,
            owned: self.ops.owned.clone(),
            alpha: self.alpha,
            epsilon: self.ops.epsilon,
        })
    }
}

impl DeviceProgram for PageRankProgram {
    type Ops = PageRankSplitOps;

    fn split_ops(&self) -> PageRankSplitOps {
        self.ops.clone()
    }

    fn expand(&self, items: &[u32]) -> Vec<u32> {
        self.with_kernel(|k| k.expand(items))
    }

    fn capacity_hint(&self) -> usize {
        self.capacity
    }

    fn initial_sweep_len(&self) -> u64 {
        u64::from(self.ops.owned.end - self.ops.owned.start)
    }

    fn expand_initial_sweep(&self) -> Vec<u32> {
        self.with_kernel(|k| k.sweep())
    }
}

/// The output of [`solve`], in the partitioned numbering.
pub(crate) struct SolveOutput {
    /// One rank per vertex.
    pub ranks: Vec<f32>,
    /// Sum of the residual left on every vertex (after the run, every halo accumulation has
    /// been sent, so this is all the mass not yet pushed).
    pub residual_left: f64,
    /// Largest residual left on one vertex (at most epsilon).
    pub max_residual_left: f32,
    /// The engine's counters.
    pub stats: WorklistStats,
}

/// Runs residual-push PageRank on every device of `context`; device `d` owns
/// `partition.range(d)` of `csr` (already renumbered).
pub(crate) fn solve(
    context: &Context,
    csr: &Csr,
    partition: &Partition,
    alpha: f32,
    epsilon: f32,
    options: &WorklistOptions,
) -> Result<SolveOutput, groute_worklist::WorklistError> {
    let n = csr.num_vertices();
    let devices = context.num_devices();
    if context.devices().iter().any(|d| !d.stream().is_host()) {
        return solve_cuda(context, csr, partition, alpha, epsilon, options);
    }
    let mut programs = Vec::with_capacity(devices);
    for (d, device) in context.devices().iter().enumerate() {
        programs.push(Arc::new(upload_program(
            device,
            csr,
            partition.range(d),
            alpha,
            epsilon,
        )?));
    }
    // A round sends at most one item per remote vertex, but a device also passes on what
    // its predecessors sent, and the host ring drains every queued packet at once, so the
    // items passed per round have no fixed bound. The host worker's outgoing buffer is a
    // growable `Vec`: unless the caller sets `send_capacity`, do not cap it (a cap the caller
    // sets stays an error naming --send-capacity, never a loss).
    let mut options = options.clone();
    if options.send_capacity.is_none() {
        options.send_capacity = Some(usize::MAX);
    }
    let stats = run(context, &programs, vec![Vec::new(); devices], &options)?;
    let mut ranks = vec![0f32; n];
    let mut residual_left = 0f64;
    let mut max_residual_left = 0f32;
    for (d, device) in context.devices().iter().enumerate() {
        let r = partition.range(d);
        let (a, b) = (r.start as usize, r.end as usize);
        if a == b {
            continue;
        }
        let rank = device.download(&programs[d].rank.buffer().slice(0..b - a)?)?;
        for (x, bits) in ranks[a..b].iter_mut().zip(rank) {
            *x = f32::from_bits(bits);
        }
        let res = device.download(&programs[d].ops.residual.buffer().slice(a..b)?)?;
        for bits in res {
            let x = f32::from_bits(bits);
            residual_left += f64::from(x);
            max_residual_left = max_residual_left.max(x);
        }
    }
    Ok(SolveOutput {
        ranks,
        residual_left,
        max_residual_left,
        stats,
    })
}

/// [`solve`] on CUDA devices: one [`CudaPageRankWorker`] per device over the generic driver.
fn solve_cuda(
    context: &Context,
    csr: &Csr,
    partition: &Partition,
    alpha: f32,
    epsilon: f32,
    options: &WorklistOptions,
) -> Result<SolveOutput, groute_worklist::WorklistError> {
    let n = csr.num_vertices();
    let mut workers = Vec::with_capacity(context.num_devices());
    for (d, device) in context.devices().iter().enumerate() {
        if device.stream().is_host() {
            return Err(Error::Unsupported {
                operation: "mixing host and CUDA devices in one PageRank run",
                backend: "cuda",
            }
            .into());
        }
        workers.push(CudaPageRankWorker::new(
            context,
            device,
            csr,
            partition.range(d),
            alpha,
            epsilon,
            options,
        )?);
    }
    // The buffers outlive the workers (shared memory handles).
    let arrays: Vec<(Buffer<u32>, Buffer<u32>)> = workers
        .iter()
        .map(|w| (w.rank.clone(), w.residual.clone()))
        .collect();
    let stats = run_workers(context, workers, options)?;
    let mut ranks = vec![0f32; n];
    let mut residual_left = 0f64;
    let mut max_residual_left = 0f32;
    for (d, device) in context.devices().iter().enumerate() {
        let r = partition.range(d);
        let (a, b) = (r.start as usize, r.end as usize);
        if a == b {
            continue;
        }
        let (rank, residual) = &arrays[d];
        let rank = device.download(&rank.slice(0..b - a)?)?;
        for (x, bits) in ranks[a..b].iter_mut().zip(rank) {
            *x = f32::from_bits(bits);
        }
        let res = device.download(&residual.slice(a..b)?)?;
        for bits in res {
            let x = f32::from_bits(bits);
            residual_left += f64::from(x);
            max_residual_left = max_residual_left.max(x);
        }
    }
    Ok(SolveOutput {
        ranks,
        residual_left,
        max_residual_left,
        stats,
    })
}

fn upload_program(
    device: &Device,
    csr: &Csr,
    owned: Range<u32>,
    alpha: f32,
    epsilon: f32,
) -> Result<PageRankProgram, Error> {
    let n = csr.num_vertices();
    let offsets = device.upload(csr.offsets())?;
    let targets = device.upload(csr.targets())?;
    // Owned vertices start with residual 1 - alpha; halo slots start empty.
    let start = (1.0 - alpha).to_bits();
    let init: Vec<u32> = (0..n as u32)
        .map(|v| if owned.contains(&v) { start } else { 0 })
        .collect();
    let residual = device.upload(&init)?;
    let local = (owned.end - owned.start) as usize;
    let rank = device.upload(&vec![0u32; local.max(1)])?;
    device.stream().synchronize()?;
    Ok(PageRankProgram {
        offsets,
        targets,
        rank: ResidualArray::new(rank)?,
        ops: PageRankSplitOps {
            owned,
            residual: ResidualArray::new(residual)?,
            epsilon,
        },
        alpha,
        // A vertex is pending at most once while its residual stays above epsilon; the
        // margin covers duplicates when epsilon >= 1 - alpha.
        capacity: 2 * local + 1024,
    })
}
