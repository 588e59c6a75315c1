//! The multi-device solver. On the host backend, PageRank is a [`WorklistAlgorithm`]
//! ([`PageRank`]) run by the worklist's host executor ([`HostAlgorithm`] over
//! [`groute_worklist::run`], which provides the ring, the local worklists, the receive split
//! and the termination count), with the pull sweep as its first round where asked. On CUDA,
//! its own worker ([`CudaPageRankStorage`]) under the driver, or the device-driven kernel.
//! [`Driver::Sweeps`] on either backend: [`PageRankRanks`] in one process.
//! [`DeviceSolver`] keeps every device's storage across runs and only resets the residual and
//! rank arrays per run.
//!
//! [`WorklistAlgorithm`]: groute_worklist::WorklistAlgorithm

use std::ops::Range;
use std::sync::Arc;

use groute_core::{Buffer, Context, Device, Error};
use groute_graph::{Csr, HeldRows, Partition};
use groute_worklist::algorithm::{HostAlgorithm, HostSolver};
use groute_worklist::traversal::{FusedDriver, FusedMode};
use groute_worklist::{
    DeviceCsr, DeviceStats, OneProcess, WorklistOptions, WorklistStats, run_workers,
};
use rayon::prelude::*;

use crate::algorithm::PageRank;
use crate::cuda::device_driven::FusedRuns;
use crate::cuda::pull_storage::PullTopology;
use crate::cuda::storage::{CudaPageRankStorage, PushSettings};
use crate::host_pull::HostPull;
use crate::profile::DeviceProfile;
use crate::sweep::{CutArcs, SweepMode};
use crate::{DENSE_MIN_AVERAGE_DEGREE, Driver, PageRankError, PageRankRanks, PageRankTuning};

/// The output of [`DeviceSolver::run`], in the partitioned numbering.
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
    /// CUDA: each device's profile of the run (empty on the host backend).
    pub profiles: Vec<DeviceProfile>,
    /// The driver that ran.
    pub driver: Driver,
    /// [`crate::PageRankStats::sparse_gather_rounds`].
    pub sparse_gather_rounds: u64,
    /// [`crate::PageRankStats::push_rounds`].
    pub push_rounds: u64,
    /// [`crate::PageRankStats::ranged_rounds`].
    pub ranged_rounds: u64,
    /// [`crate::PageRankStats::ranged_rounds_ahead`].
    pub ranged_rounds_ahead: u64,
    /// [`crate::PageRankStats::sweep_round_times`].
    pub sweep_round_times: crate::SweepRoundTimes,
}

/// One device's rank and residual arrays (`f32` bits).
type RankAndResidual = (Buffer<u32>, Buffer<u32>);

/// Every device's storage, kept across runs.
enum Storage {
    /// Host backend: the worklist's host executor (its arrays are reset before each run),
    /// and whether it runs device-driven (one persistent member per device, [`Driver::Fused`]).
    Host(HostSolver<PageRank>, bool),
    /// CUDA: one storage per device, lent to a worker per run (host-driven) or read by the
    /// persistent kernels (device-driven: `Some` runs).
    Cuda(Vec<CudaPageRankStorage>, Option<FusedRuns>),
    /// Either backend: synchronous pull sweeps ([`Driver::Sweeps`]).
    Sweeps(Box<PageRankRanks>),
}

/// Residual-push PageRank with its device storage kept across runs: each device's rows of the
/// CSR are uploaded ([`DeviceCsr`]) and the arrays allocated once ([`DeviceSolver::new`]);
/// each [`DeviceSolver::run`] resets the residual and rank arrays and runs.
pub(crate) struct DeviceSolver {
    context: Context,
    partition: Partition,
    num_vertices: usize,
    storage: Storage,
    /// The worklist options of every run: those given to [`DeviceSolver::new`], on the host
    /// backend with its driver's execution mode set.
    options: WorklistOptions,
}

impl DeviceSolver {
    /// Uploads to each device `d` of `context` the rows of `csr` that it owns (`csr` is
    /// already renumbered so that device `d` owns `partition.range(d)`; with pull sweeps, also
    /// the same rows of the transpose, unless `symmetric`: then the CSR is its own transpose)
    /// and allocates the run storage.
    pub(crate) fn new(
        context: &Context,
        csr: &Csr,
        symmetric: bool,
        partition: &Partition,
        push: PushSettings,
        driver: Driver,
        options: &WorklistOptions,
    ) -> Result<Self, PageRankError> {
        let PushSettings { alpha, epsilon, .. } = push;
        let cuda = context.devices().iter().any(|d| !d.stream().is_host());
        let driver = match driver {
            Driver::Auto if cuda => auto_driver(context, csr, partition, push),
            asked => asked,
        };
        if driver == Driver::Sweeps {
            if push.sweep != SweepMode::Pull {
                return Err(Error::invalid(
                    "driver (--driver)",
                    "sweeps",
                    "pull sweeps (--sweep pull), or --driver host for push sweeps",
                )
                .into());
            }
            let n = csr.num_vertices() as u32;
            let rows = HeldRows::some(csr, 0..n, symmetric)?;
            let algorithm = PageRank { alpha, epsilon };
            // The solver has renumbered the graph already where the order applies.
            let tuning = PageRankTuning {
                degree_order: Some(false),
                gather_interleave: Some(push.interleave_gather),
                sweep_ranges: Some(push.sweep_ranges),
                ..push.tuning
            };
            let mut sweeps = PageRankRanks::with_tuning(
                context,
                (&rows, partition),
                algorithm,
                &tuning,
                &mut OneProcess,
            )?;
            sweeps.set_time_limit(options.time_limit);
            return Ok(DeviceSolver {
                context: context.clone(),
                partition: partition.clone(),
                num_vertices: csr.num_vertices(),
                storage: Storage::Sweeps(Box::new(sweeps)),
                options: options.clone(),
            });
        }
        // Each device's cut arcs, for the sweeps that push along them: pull sweeps of the host
        // backend and of host-driven CUDA runs (device-driven sweeps post mirrors instead).
        let cuts_of = || -> Vec<Option<CutArcs>> {
            (0..context.num_devices())
                .map(|d| match push.sweep {
                    SweepMode::Pull => CutArcs::of(csr, &partition.range(d)),
                    SweepMode::Push => None,
                })
                .collect()
        };
        let mut run_options = options.clone();
        let storage = if cuda {
            // Built once on the host and uploaded to every device.
            let transpose = (push.sweep == SweepMode::Pull && !symmetric).then(|| csr.transpose());
            let cuts = match driver {
                Driver::Fused => vec![None; context.num_devices()],
                _ => cuts_of(),
            };
            let mut devices = Vec::with_capacity(context.num_devices());
            for (d, device) in context.devices().iter().enumerate() {
                if device.stream().is_host() {
                    return Err(Error::Unsupported {
                        operation: "mixing host and CUDA devices in one PageRank run",
                        backend: "cuda",
                    }
                    .into());
                }
                devices.push(CudaPageRankStorage::new(
                    context,
                    device,
                    csr,
                    PullTopology {
                        transpose: transpose.as_ref(),
                        cut: cuts[d].as_ref(),
                        taken_bits: false,
                        interleave_gather: push.interleave_gather,
                        offsets32: driver == Driver::Fused,
                    },
                    partition.range(d),
                    push,
                    options,
                )?);
            }
            let fused = fused_runs(context, csr, partition, &devices, push, driver, options)?;
            Storage::Cuda(devices, fused)
        } else {
            // Built once on the host; each device uploads its owned rows of it.
            let transpose = (push.sweep == SweepMode::Pull && !symmetric).then(|| csr.transpose());
            let algorithm = Arc::new(PageRank { alpha, epsilon });
            let mut programs = Vec::with_capacity(context.num_devices());
            for ((d, device), cut) in context.devices().iter().enumerate().zip(cuts_of()) {
                let owned = partition.range(d);
                let capacity = HostAlgorithm::<PageRank>::default_capacity(csr, &owned);
                let mut program = HostAlgorithm::upload(
                    device,
                    Arc::clone(&algorithm),
                    csr,
                    owned.clone(),
                    capacity,
                )?;
                if push.sweep == SweepMode::Pull {
                    let in_csr = match &transpose {
                        Some(t) => DeviceCsr::upload(device, t, owned, false)?,
                        None => program.csr().clone(),
                    };
                    device.stream().synchronize()?;
                    let pull = HostPull { in_csr, cut };
                    program = program.with_first_round(move |round| pull.sweep(round));
                }
                programs.push(program);
            }
            // Auto is host-driven here: the host backend's rounds are as asynchronous as its
            // members, and its tests run both.
            let device_driven = driver == Driver::Fused;
            (run_options.fused, run_options.fused_driver) = if device_driven {
                (FusedMode::On, FusedDriver::Device)
            } else {
                (FusedMode::Off, FusedDriver::Host)
            };
            Storage::Host(
                HostSolver::from_programs(context, partition, programs)?,
                device_driven,
            )
        };
        Ok(DeviceSolver {
            context: context.clone(),
            partition: partition.clone(),
            num_vertices: csr.num_vertices(),
            storage,
            options: run_options,
        })
    }

    /// The vertex ranges of the sweeps' rounds ([`PageRankRanks::sweep_ranges`]); 1 for
    /// the other drivers.
    pub(crate) fn sweep_ranges(&self) -> u32 {
        match &self.storage {
            Storage::Sweeps(sweeps) => sweeps.sweep_ranges(),
            _ => 1,
        }
    }

    /// Whether the sweeps' ranged gathers go by tiles ([`PageRankRanks::gathers_by_tiles`]);
    /// false for the other drivers.
    pub(crate) fn gathers_by_tiles(&self) -> bool {
        matches!(&self.storage, Storage::Sweeps(sweeps) if sweeps.gathers_by_tiles())
    }

    /// Resets the run state and runs PageRank on every device, with the options given to
    /// [`DeviceSolver::new`]; the statistics' elapsed time covers the run only (reset and
    /// download excluded).
    pub(crate) fn run(&mut self) -> Result<SolveOutput, PageRankError> {
        let (context, options) = (&self.context, &self.options);
        let (stats, arrays, profiles, driver): (WorklistStats, Vec<RankAndResidual>, _, _) =
            match &mut self.storage {
                Storage::Sweeps(sweeps) => {
                    let result = sweeps.run(&mut OneProcess)?;
                    return Ok(sweeps_output(result, &self.partition));
                }
                Storage::Host(host, device_driven) => {
                    // Without a send_capacity the host executor does not cap the sends.
                    let out = host.run(&[], options)?;
                    let (residual_left, max_residual_left) =
                        residual_sum_and_max(bytemuck::cast_slice(&out.left));
                    return Ok(SolveOutput {
                        ranks: out.values,
                        residual_left,
                        max_residual_left,
                        stats: out.stats,
                        profiles: Vec::new(),
                        driver: if *device_driven {
                            Driver::Fused
                        } else {
                            Driver::Host
                        },
                        sparse_gather_rounds: 0,
                        push_rounds: 0,
                        ranged_rounds: 0,
                        ranged_rounds_ahead: 0,
                        sweep_round_times: Default::default(),
                    });
                }
                Storage::Cuda(devices, Some(fused)) => {
                    let (stats, profiles) = fused.run(context, devices, options)?;
                    let arrays = devices
                        .iter()
                        .map(|s| (s.rank.clone(), s.residual.clone()))
                        .collect();
                    (stats, arrays, profiles, Driver::Fused)
                }
                Storage::Cuda(devices, None) => {
                    let workers = devices
                        .iter()
                        .zip(context.devices())
                        .map(|(storage, device)| storage.worker(device))
                        .collect::<Result<Vec<_>, _>>()?;
                    // The workers are dropped by the time it returns, their profiles stored
                    // (`run_workers` holds PeerGroup::share_gpus on several devices).
                    let stats = run_workers(context, workers, options)?;
                    let profiles = devices.iter().map(|s| s.profile.load()).collect();
                    let arrays = devices
                        .iter()
                        .map(|s| (s.rank.clone(), s.residual.clone()))
                        .collect();
                    (stats, arrays, profiles, Driver::Host)
                }
            };
        let mut out = collect(context, &self.partition, self.num_vertices, &arrays, stats)?;
        out.profiles = profiles;
        out.driver = driver;
        Ok(out)
    }
}

/// The device-driven runs' storage when `driver` ([`Driver::Auto`] already resolved by
/// [`auto_driver`]) is [`Driver::Fused`] (an error naming `--driver host` where they
/// cannot run: push sweeps, or a context that `PeerGroup::check_sharing` refuses with
/// `GpuSharing::Split`); else `None`.
fn fused_runs(
    context: &Context,
    csr: &Csr,
    partition: &Partition,
    devices: &[CudaPageRankStorage],
    push: PushSettings,
    driver: Driver,
    options: &WorklistOptions,
) -> Result<Option<FusedRuns>, Error> {
    match driver {
        Driver::Host | Driver::Auto | Driver::Sweeps => return Ok(None),
        Driver::Fused if push.sweep != SweepMode::Pull => {
            return Err(Error::invalid(
                "driver (--driver)",
                "fused",
                "pull sweeps (--sweep pull), or --driver host for push sweeps",
            ));
        }
        Driver::Fused => {}
    }
    FusedRuns::new(context, csr, partition, devices, push, options).map(Some)
}

/// What [`Driver::Auto`] runs on CUDA (crate docs, "Choosing a driver"): with push sweeps,
/// host-driven rounds; on several devices whose partition cuts at least
/// [`SWEEPS_CUT_FRACTION`] of the arcs, [`Driver::Sweeps`]; on one device, the sweeps where
/// [`synchronous_sweeps_win`] holds, else host-driven rounds where [`launched_sweeps_win`]
/// holds (a dense graph past the L2 not in degree order, or whose sweeps would not go by
/// ranges);
/// else device-driven where
/// `groute_core::cuda::PeerGroup::auto_device_driven` holds (one device, distinct GPUs with
/// peer access, or members sharing GPUs), host-driven otherwise.
fn auto_driver(context: &Context, csr: &Csr, partition: &Partition, push: PushSettings) -> Driver {
    let (vertices, arcs) = (csr.num_vertices() as u64, csr.num_edges());
    let l2 = context.smallest_l2_cache_bytes();
    if push.sweep != SweepMode::Pull {
        Driver::Host
    } else if (context.num_devices() > 1
        && arcs > 0
        && partition.edge_cut(csr) as f64 >= SWEEPS_CUT_FRACTION * arcs as f64)
        || (context.num_devices() == 1
            && synchronous_sweeps_win(vertices, arcs, (push.degree_ordered, push.sweep_ranges), l2))
    {
        Driver::Sweeps
    } else if context.num_devices() == 1 && launched_sweeps_win(vertices, arcs, l2) {
        Driver::Host
    } else if groute_core::cuda::PeerGroup::auto_device_driven(context) {
        Driver::Fused
    } else {
        Driver::Host
    }
}

/// Whether one CUDA device whose L2 holds `l2_cache_bytes` runs a graph of `vertices` and
/// `arcs`, uploaded in degree order or not (`degree_ordered`), faster in [`Driver::Sweeps`]'
/// synchronous sweeps than in the device-driven loop or host-driven rounds: where the graph
/// is dense (at least [`DENSE_MIN_AVERAGE_DEGREE`] arcs per vertex), in degree order, and
/// either a share per vertex fits the L2 (a Kronecker graph of scale 21: the heavy vertices'
/// shares stay in the L1, and the sweeps' gathers, which keep several loads in flight per
/// thread, beat the loop's) or the sweeps' rounds go by `ranges` vertex ranges (more than
/// one: [`crate::PageRankTuning::sweep_ranges_for`]) and need fewer rounds (scale 25: 31
/// rounds against the host-driven rounds' 75).
fn synchronous_sweeps_win(
    vertices: u64,
    arcs: u64,
    (degree_ordered, ranges): (bool, u32),
    l2_cache_bytes: u64,
) -> bool {
    degree_ordered
        && arcs > 0
        && l2_cache_bytes > 0
        && (!crate::tuning::shares_outgrow_l2(vertices, l2_cache_bytes) || ranges > 1)
        && arcs as f64 >= DENSE_MIN_AVERAGE_DEGREE * vertices as f64
}

/// Whether one CUDA device whose L2 holds `l2_cache_bytes` runs a graph of `vertices` and
/// `arcs` faster in host-driven rounds than in the device-driven loop: where the graph is
/// dense (at least [`DENSE_MIN_AVERAGE_DEGREE`] arcs per vertex, so that its sweeps' gathers
/// are most of a run) and a share per vertex (4 bytes) outgrows the L2 (so that most of
/// those gathers' random share reads go to DRAM). There a sweep's gather and hub tiles
/// launched as kernels of their own, over a grid sized by the range, run faster than as
/// phases of the persistent loop, whose resident grid strides over the range, by more than
/// the host's launch and read-back per round cost (a Kronecker graph of scale 25). Where the
/// shares fit the L2 (scale 21: [`synchronous_sweeps_win`]) or the graph is sparse (road
/// networks), the host-driven rounds are the slower.
fn launched_sweeps_win(vertices: u64, arcs: u64, l2_cache_bytes: u64) -> bool {
    crate::tuning::shares_outgrow_l2(vertices, l2_cache_bytes)
        && arcs as f64 >= DENSE_MIN_AVERAGE_DEGREE * vertices as f64
}

/// The share of a partition's arcs that must be cut (lead to another part's vertex) for
/// [`Driver::Auto`] to run [`Driver::Sweeps`] on several devices.
const SWEEPS_CUT_FRACTION: f64 = 0.1;

/// The words a device owning `owned` vertices (of a graph of `n`) received in a
/// [`Driver::Sweeps`] run of `stats`: in a round that gathers, every other device's shares
/// (`n - owned`); in a push round, every peer's slots of its own vertices (`owned` from each).
fn received_by(stats: &crate::PageRankRanksStats, n: u64, owned: u64) -> u64 {
    let peers = stats.pushes_per_device.len().saturating_sub(1) as u64;
    (stats.rounds - stats.push_rounds) * (n - owned) + stats.push_rounds * peers * owned
}

/// A [`Driver::Sweeps`] run as the solver's output, counted per device as the other drivers
/// count: every round, device `d` pushes its taken vertices, copies its owned shares to each
/// other device (`segments_sent`, one copy each) and receives theirs (`items_received`, one
/// value a share; in a push round, one copy of its slots to each other device and one value
/// a slot of its own vertices from each: [`received_by`]).
fn sweeps_output(result: crate::PageRankRanksResult, partition: &Partition) -> SolveOutput {
    let s = result.stats;
    let n = partition.num_vertices() as u64;
    let stats = WorklistStats {
        devices: s
            .pushes_per_device
            .iter()
            .enumerate()
            .map(|(d, &pushes)| DeviceStats {
                rounds: s.rounds,
                items_processed: pushes,
                items_received: received_by(&s, n, partition.range(d).len() as u64),
                segments_sent: s.rounds * (s.pushes_per_device.len() as u64 - 1),
                ..DeviceStats::default()
            })
            .collect(),
        elapsed: s.elapsed,
        device_time: s.device_time,
        ..WorklistStats::default()
    };
    SolveOutput {
        ranks: result.ranks,
        residual_left: s.residual_left,
        max_residual_left: s.max_residual_left,
        stats,
        profiles: Vec::new(),
        driver: Driver::Sweeps,
        sparse_gather_rounds: s.sparse_gather_rounds,
        push_rounds: s.push_rounds,
        ranged_rounds: s.ranged_rounds,
        ranged_rounds_ahead: s.ranged_rounds_ahead,
        sweep_round_times: s.round_times,
    }
}

/// Resets one device's run state on its stream: residual `1 - alpha` on the owned vertices
/// and 0 in the halo, ranks 0.
pub(crate) fn reset_arrays(
    device: &Device,
    residual: &Buffer<u32>,
    rank: &Buffer<u32>,
    owned: &Range<u32>,
    alpha: f32,
) -> Result<(), Error> {
    let s = device.stream();
    s.fill(residual, 0u32)?;
    if !owned.is_empty() {
        s.fill(
            &residual.slice(owned.start as usize..owned.end as usize)?,
            (1.0 - alpha).to_bits(),
        )?;
    }
    s.fill(rank, 0u32)
}

/// Downloads every device's owned ranks and residuals (`arrays[d]` = (rank, residual) of
/// device `d`) into the partitioned numbering.
fn collect(
    context: &Context,
    partition: &Partition,
    n: usize,
    arrays: &[RankAndResidual],
    stats: WorklistStats,
) -> Result<SolveOutput, PageRankError> {
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
        // f32 ranks travel as their bits.
        device.download_into(
            &rank.slice(0..b - a)?,
            bytemuck::cast_slice_mut(&mut ranks[a..b]),
        )?;
        let (sum, max) = residual_sum_and_max(&device.download(&residual.slice(a..b)?)?);
        residual_left += sum;
        max_residual_left = max_residual_left.max(max);
    }
    Ok(SolveOutput {
        ranks,
        residual_left,
        max_residual_left,
        stats,
        profiles: Vec::new(),
        driver: Driver::Host,
        sparse_gather_rounds: 0,
        push_rounds: 0,
        ranged_rounds: 0,
        ranged_rounds_ahead: 0,
        sweep_round_times: Default::default(),
    })
}

/// The sum (in `f64`) and the largest of residuals given as `f32` bits. Summed in fixed
/// pieces on rayon's threads and the pieces' sums added in order, so the total does not
/// depend on the thread count.
pub(crate) fn residual_sum_and_max(bits: &[u32]) -> (f64, f32) {
    const PIECE: usize = 1 << 16;
    let pieces: Vec<(f64, f32)> = bits
        .par_chunks(PIECE)
        .map(|piece| {
            piece.iter().fold((0f64, 0f32), |(sum, max), &b| {
                let x = f32::from_bits(b);
                (sum + f64::from(x), max.max(x))
            })
        })
        .collect();
    pieces
        .into_iter()
        .fold((0f64, 0f32), |(sum, max), (s, m)| (sum + s, max.max(m)))
}

#[cfg(test)]
mod tests {
    use super::{DENSE_MIN_AVERAGE_DEGREE, launched_sweeps_win, synchronous_sweeps_win};

    /// An L2 of 50 MiB, about an H100's or H200's.
    const L2: u64 = 50 << 20;

    #[test]
    fn launched_sweeps_win_on_dense_graphs_whose_shares_outgrow_the_l2() {
        // A Kronecker graph of scale 25, edge factor 16 (symmetric: ~32 arcs per vertex).
        assert!(launched_sweeps_win(1 << 25, 1 << 30, L2));
        // Scale 21, edge factor 48: its 8 MiB of shares fit the L2.
        assert!(!launched_sweeps_win(1 << 21, 181 << 20, L2));
        // A road network of 24 M vertices, 2.4 arcs per vertex: its shares outgrow the L2,
        // but sweeps are a small part of its runs.
        assert!(!launched_sweeps_win(24 << 20, 58 << 20, L2));
        // The bounds: exactly DENSE_MIN_AVERAGE_DEGREE arcs per vertex is dense; shares of
        // exactly the L2's size fit it.
        let (fits, outgrows) = (L2 / 4, L2 / 4 + 1);
        let dense = |v: u64| (DENSE_MIN_AVERAGE_DEGREE as u64) * v;
        assert!(launched_sweeps_win(outgrows, dense(outgrows), L2));
        assert!(!launched_sweeps_win(outgrows, dense(outgrows) - 1, L2));
        assert!(!launched_sweeps_win(fits, dense(fits), L2));
        // The host backend (no L2) and an empty graph.
        assert!(!launched_sweeps_win(1 << 25, 1 << 30, 0));
        assert!(!launched_sweeps_win(0, 0, L2));
    }

    #[test]
    fn synchronous_sweeps_win_on_dense_degree_ordered_graphs_in_the_l2_or_by_ranges() {
        // A Kronecker graph of scale 21, edge factor 48, in degree order, whole-graph rounds
        // or by ranges.
        for ranges in [1, 4] {
            assert!(synchronous_sweeps_win(
                1 << 21,
                181 << 20,
                (true, ranges),
                L2
            ));
            // The same in its input order.
            assert!(!synchronous_sweeps_win(
                1 << 21,
                181 << 20,
                (false, ranges),
                L2
            ));
        }
        // Scale 25: its shares outgrow the L2; by ranges only (in its input order, or by
        // whole-graph rounds, launched_sweeps_win's case).
        assert!(synchronous_sweeps_win(1 << 25, 1 << 30, (true, 8), L2));
        assert!(!synchronous_sweeps_win(1 << 25, 1 << 30, (true, 1), L2));
        assert!(!synchronous_sweeps_win(1 << 25, 1 << 30, (false, 8), L2));
        // The bounds, as launched_sweeps_win's.
        let (fits, outgrows) = (L2 / 4, L2 / 4 + 1);
        let dense = |v: u64| (DENSE_MIN_AVERAGE_DEGREE as u64) * v;
        assert!(synchronous_sweeps_win(fits, dense(fits), (true, 1), L2));
        assert!(!synchronous_sweeps_win(
            fits,
            dense(fits) - 1,
            (true, 1),
            L2
        ));
        assert!(!synchronous_sweeps_win(
            outgrows,
            dense(outgrows),
            (true, 1),
            L2
        ));
        assert!(synchronous_sweeps_win(
            outgrows,
            dense(outgrows),
            (true, 8),
            L2
        ));
        // The host backend (no L2) and an empty graph.
        assert!(!synchronous_sweeps_win(1 << 21, 181 << 20, (true, 1), 0));
        assert!(!synchronous_sweeps_win(0, 0, (true, 1), L2));
    }
}
