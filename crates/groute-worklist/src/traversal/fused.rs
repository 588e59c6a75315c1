//! The fused persistent kernel of the CUDA min traversals (one device): the whole round loop
//! runs in one cooperative launch of `<algo>_fused` (`kernels/include/fused.cuh`), rounds
//! separated by a grid-wide barrier instead of a launch and a control-block read-back (the
//! non-fused worker costs one launch, one 32-byte copy and one stream synchronisation per
//! round, which dominates on graphs of thousands of shallow rounds: road networks).
//!
//! ## Protocol
//!
//! - **Start.** The run is reset exactly as for the non-fused worker (values, control block,
//!   seeds at worklist positions `[0, k)`), the state block is zeroed with its batch end at `k`
//!   and the abort word cleared; then one cooperative launch with every block resident
//!   ([`groute_core::cuda::CudaFunction::max_resident_grid`], or `fused_grid`).
//! - **Rounds.** Each round expands the batch `[start, end)` with the nested load balancing of
//!   the non-fused expand (block / warp / thread, hubs over the whole grid after a barrier)
//!   and appends improved vertices behind `end`. The block that arrives last at the barrier
//!   snapshots the new end (and the overflow and abort words) for everyone; the next batch is
//!   `[end, new end)`. An empty batch ends the kernel: no item exists anywhere (one device
//!   holds every item, and an improved vertex is appended before the barrier that closes its
//!   round), so the traversal is complete.
//! - **Safety of the barrier.** The launch is cooperative: the driver refuses a grid whose
//!   blocks cannot all be resident, so every block a barrier waits for is running.
//! - **Errors.** A worklist overflow stops the kernel at the next barrier and fails the run
//!   with [`Error::CapacityExceeded`] naming `wl_capacity (--wl-capacity)`; nothing is lost
//!   silently. With a time limit the host polls the kernel's completion; past the limit it
//!   sets the abort word (device-mapped pinned host memory, [`Context::alloc_mapped`]) that
//!   the kernel reads every 64 rounds, and the run fails with [`WorklistError::TimedOut`].
//!
//! ## Several devices (not fused yet)
//!
//! A run on several devices uses the non-fused worker ([`FusedMode::Auto`]) or is refused
//! ([`FusedMode::On`]). The design for it: the kernel keeps running while the host driver
//! only moves packets. Remote output goes to a circular send buffer; after each round the
//! kernel publishes a seqlock snapshot (cumulative produced counters before consumed ones,
//! `send_end`, round, idle bit) to mapped host memory with `__threadfence_system()` between
//! data and counters; the driver reports the deltas to the termination counter before it
//! sends `[sent, send_end)`, and hands back the free send space once the ring's send future
//! resolves; received packets are posted (device pointer, count) to a mapped mailbox that the
//! kernel drains at round boundaries with the split-receive body and acknowledges before the
//! host releases them; the host writes the exit word when the counter reaches zero. The grid
//! must then leave room for the copy engines only (the split runs inside the kernel).
//!
//! ## Soft priority (not fused yet)
//!
//! The fused kernel runs plain label correcting and ignores `prio_delta` (SSSP reports a
//! band width of 0 for a fused run). The design for one device, all inside the kernel: a
//! split pass at the top of each round copies the batch's items whose value is below the
//! threshold `T` behind the worklist end and the others to a flat low list (atomicMin of
//! their values gives the smallest deferred band); barrier; expand only the copied items.
//! When that high batch is empty and the low list is not, the action advances `T` by
//! `prio_delta` or to the smallest deferred band, and one pass (between two barriers)
//! compacts the low list into its ping-pong twin, moving items now below `T` back to the
//! worklist (an item whose vertex improved since it was deferred moves too: a duplicate
//! expansion, never a loss). The low list's overflow names `wl_capacity`, as the worklist's.

use std::time::{Duration, Instant};

use groute_core::cuda::{CudaFunction, CudaModule, DevicePtr, LaunchConfig};
use groute_core::{Buffer, Context, Device, Error, Event};

use super::cuda::{BLOCK, CudaTraversalDevice, SEND_SETTING, WL_SETTING, capacity};
use crate::engine::{DeviceStats, WorklistOptions};
use crate::error::WorklistError;

/// Whether a CUDA min traversal runs as one fused persistent kernel (`--fused` /
/// `--no-fused`). The host backend ignores it. A fused round expands the whole worklist, so
/// `max_batch` does not apply to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FusedMode {
    /// Fused where the fused kernel supports the run (CUDA, one device, soft priority off:
    /// `prio_delta` `None` or `Some(0)`), else one launch per round (which honours soft
    /// priority).
    #[default]
    Auto,
    /// Fused; a CUDA run the fused kernel does not support (several devices) is an error.
    /// Soft priority does not apply to a fused run (it runs plain label correcting).
    On,
    /// One launch per round.
    Off,
}

impl FusedMode {
    /// Whether a CUDA run on `devices` devices with soft priority `prio_delta` is fused.
    pub(crate) fn fuses(self, devices: usize, prio_delta: Option<u32>) -> Result<bool, Error> {
        let priority = prio_delta.is_some_and(|d| d != 0);
        match (self, devices) {
            (FusedMode::Off, _) => Ok(false),
            (FusedMode::Auto, 1) => Ok(!priority),
            (FusedMode::On, 1) => Ok(true),
            (FusedMode::Auto, _) => Ok(false),
            (FusedMode::On, n) => Err(Error::invalid(
                "fused (--fused)",
                format!("on, with {n} devices"),
                "the fused kernel runs on one device: pass --no-fused (or leave the mode to \
                 auto) for several devices, or run on --devices 1",
            )),
        }
    }
}

/// Words of the fused state block (`groute::FUSED_WORDS`) and the ones the host reads.
const FUSED_WORDS: usize = 96;
const FUSED_BATCH_END: usize = 64;
const FUSED_STOP: usize = 65;
const FUSED_ROUNDS: usize = 66;
const FUSED_PROCESSED: usize = 68;
/// `groute::FUSED_STOP_ABORTED`.
const FUSED_STOP_ABORTED: u32 = 2;
/// Words of the control block the host reads (`groute::CTRL_*`).
const CTRL_WL_END: usize = 0;
const CTRL_WL_OVERFLOW: usize = 2;
const CTRL_SEND_OVERFLOW: usize = 3;
/// How often the host checks a time-limited fused run.
const POLL_INTERVAL: Duration = Duration::from_micros(50);

/// One device's fused kernel and its state, kept across runs.
pub(crate) struct FusedKernel {
    function: CudaFunction,
    /// Blocks of `BLOCK` threads that fit resident at once: the largest cooperative grid.
    max_grid: u32,
    /// `FUSED_WORDS` u32 of device memory: barrier words and the kernel's snapshots.
    state: Buffer<u32>,
    /// One u32 of device-mapped pinned host memory: nonzero asks the kernel to stop.
    abort: Buffer<u32>,
}

impl FusedKernel {
    /// Looks `name` up in `module` (loaded for `device`) and allocates its state.
    pub(crate) fn new(
        context: &Context,
        device: &Device,
        module: &CudaModule,
        name: &str,
    ) -> Result<Self, Error> {
        let function = module.function(name)?;
        let max_grid = function.max_resident_grid(BLOCK, 0)?;
        Ok(FusedKernel {
            function,
            max_grid,
            state: device.alloc::<u32>(FUSED_WORDS)?,
            abort: context.alloc_mapped::<u32>(1)?,
        })
    }

    /// The grid of a run: every resident block, or `requested` (at least 1, at most that).
    fn grid(&self, requested: Option<u32>) -> Result<u32, Error> {
        match requested {
            None if self.max_grid > 0 => Ok(self.max_grid),
            None => Err(Error::Unsupported {
                operation: "the fused traversal kernel (no block of it fits on this device)",
                backend: "cuda",
            }),
            Some(g) if g >= 1 && g <= self.max_grid => Ok(g),
            Some(g) => Err(Error::invalid(
                "fused_grid (--fused-grid)",
                g,
                format!(
                    "give 1..={} blocks: a cooperative launch needs every block resident at once",
                    self.max_grid
                ),
            )),
        }
    }

    fn set_abort(&self, value: u32) -> Result<(), Error> {
        let word =
            self.abort
                .host_atomic_u32()
                .and_then(|w| w.first())
                .ok_or(Error::Unsupported {
                    operation: "writing the fused kernel's abort word from the host",
                    backend: "cuda",
                })?;
        word.store(value, std::sync::atomic::Ordering::Release);
        Ok(())
    }
}

/// What one fused run did.
pub(crate) struct FusedRun {
    /// The device's counters.
    pub(crate) stats: DeviceStats,
    /// Host time from the launch until the kernel completed.
    pub(crate) elapsed: Duration,
    /// The kernel's time between CUDA timing events recorded around the launch.
    pub(crate) device_time: Duration,
}

impl CudaTraversalDevice {
    /// Runs the traversal as one fused persistent kernel: values reset (`sources` at 0),
    /// `seeds` in the worklist, then one cooperative launch until no item is left.
    pub(crate) fn run_fused(
        &mut self,
        device: &Device,
        sources: &[u32],
        seeds: &[u32],
        options: &WorklistOptions,
    ) -> Result<FusedRun, WorklistError> {
        // The non-fused worker's reset: values, control block, seeds (synchronised).
        drop(self.worker(device, sources, seeds)?);
        let seeds = seeds.len() as u32;
        let grid = self.fused.grid(options.fused_grid)?;
        let s = &self.stream;
        s.fill(&self.fused.state, 0u32)?;
        s.fill(
            &self
                .fused
                .state
                .slice(FUSED_BATCH_END..FUSED_BATCH_END + 1)?,
            seeds,
        )?;
        self.fused.set_abort(0)?;
        s.synchronize()?;

        let started = Instant::now();
        let t0 = device.record_timing(s)?;
        self.launch_fused(grid)?;
        let t1 = device.record_timing(s)?;
        self.wait_fused(&t1, options.time_limit, started)?;
        let elapsed = started.elapsed();
        let device_time = Duration::from_secs_f64(f64::from(Event::elapsed_ms(&t0, &t1)?) / 1e3);

        let ctrl = device.download(&self.ctrl.slice(0..CTRL_SEND_OVERFLOW + 1)?)?;
        let state = device.download(&self.fused.state.slice(FUSED_BATCH_END..FUSED_WORDS)?)?;
        let word = |w: usize| state[w - FUSED_BATCH_END];
        if ctrl[CTRL_WL_OVERFLOW] != 0 {
            return Err(capacity(
                "device local worklist",
                self.wl.len(),
                ctrl[CTRL_WL_OVERFLOW] as usize,
                WL_SETTING,
            )
            .into());
        }
        if ctrl[CTRL_SEND_OVERFLOW] != 0 {
            // One device owns every vertex: the fused kernel never sends (a broken invariant,
            // reported rather than ignored).
            return Err(capacity(
                "device ring send buffer (fused kernel)",
                0,
                ctrl[CTRL_SEND_OVERFLOW] as usize,
                SEND_SETTING,
            )
            .into());
        }
        let processed =
            u64::from(word(FUSED_PROCESSED)) | (u64::from(word(FUSED_PROCESSED + 1)) << 32);
        let produced = u64::from(ctrl[CTRL_WL_END].wrapping_sub(seeds));
        // Asked to stop but done anyway: the traversal is complete, so the run succeeds.
        if word(FUSED_STOP) == FUSED_STOP_ABORTED {
            return Err(WorklistError::TimedOut {
                limit: options.time_limit.unwrap_or_default(),
                outstanding: (u64::from(seeds) + produced).saturating_sub(processed) as i64,
            });
        }
        Ok(FusedRun {
            stats: DeviceStats {
                rounds: u64::from(word(FUSED_ROUNDS)),
                items_processed: processed,
                items_produced: produced,
                ..DeviceStats::default()
            },
            elapsed,
            device_time,
        })
    }

    /// Waits for the kernel (recorded `done`); past `time_limit`, asks it to stop (it then
    /// returns within `FUSED_ABORT_POLL` rounds) and waits for it to do so.
    fn wait_fused(
        &self,
        done: &Event,
        time_limit: Option<Duration>,
        started: Instant,
    ) -> Result<(), Error> {
        let Some(limit) = time_limit else {
            return done.wait();
        };
        while !done.is_complete()? {
            if started.elapsed() > limit {
                self.fused.set_abort(1)?;
                return done.wait();
            }
            std::thread::sleep(POLL_INTERVAL);
        }
        Ok(())
    }

    /// Enqueues `<algo>_fused` cooperatively with `grid` blocks.
    fn launch_fused(&self, grid: u32) -> Result<(), Error> {
        let (values, offsets, targets, weights) = self.graph_args()?;
        let args = (
            values,
            offsets,
            targets,
            weights,
            DevicePtr::<u32>::from_slice(&self.wl.raw())?,
            (self.wl.len() - 1) as u32,
            DevicePtr::<u32>::from_slice(&self.ctrl.raw())?,
            DevicePtr::<u32>::from_slice(&self.fused.state.raw())?,
            DevicePtr::<u32>::from_slice(&self.fused.abort.raw())?,
            self.owned.start,
            self.owned.end,
        );
        // SAFETY: <algo>_fused(unsigned* values, const unsigned long long* offsets,
        // const unsigned* targets, const unsigned* weights, unsigned* wl_data, unsigned wl_mask,
        // unsigned* ctrl, unsigned* fused, const unsigned* abort, unsigned owned_begin,
        // unsigned owned_end) (GROUTE_FUSED_TRAVERSAL_KERNEL in fused.cuh): the tuple matches it
        // field by field. CSR, values, weights, worklist and control block as in
        // `launch_expand` (the same buffers; the worklist holds the seeds at [0, k) and
        // ctrl[CTRL_WL_END] = k, the hub capacity is set); `fused` holds FUSED_WORDS u32 zeroed
        // except FUSED_BATCH_END = k; `abort` is one u32 of mapped host memory, a device
        // address of this context. The owned range is the whole graph (one device), so the
        // kernel never appends to its (empty) send buffer. The grid is at most the resident
        // maximum of this kernel (`FusedKernel::grid`) and the launch is cooperative, so every
        // block is resident and the grid barrier cannot deadlock. Memory is kept alive below.
        unsafe {
            self.fused.function.launch_cooperative(
                self.stream.raw().as_ref(),
                LaunchConfig::linear(grid, BLOCK),
                args,
            )?
        };
        self.keep_alive(&[])?;
        self.cuda_stream()?.keep_alive(vec![
            self.fused.state.raw().memory,
            self.fused.abort.raw().memory,
        ])
    }
}
