//! The asynchronous fused kernel of the CUDA min traversals (one device,
//! [`FusedMode::Async`](super::FusedMode::Async), `--fused-async`): one persistent launch of
//! `<algo>_fused_async` (`kernels/include/fused_async.cuh`) with no barrier at all, the
//! Groute model's asynchronous worklist. Every lane claims a worklist position, waits until a
//! producer stores a vertex there, expands it (label correcting, as the non-fused rounds) and
//! claims the next; a vertex improved by one warp can be expanded by another within a few
//! memory round trips, where the barrier kernel (`fused.rs`) waits for the level to end.
//!
//! ## Protocol
//!
//! - **Start.** The run is reset as for the non-fused worker (values, control block, seeds at
//!   worklist positions `[0, k)`); positions `[k, capacity)` are filled with the empty marker
//!   (`0xFFFFFFFF`, no vertex id), the state block zeroed with its pending count and its
//!   tail (the next position to append to) at `k`, the
//!   abort word cleared; then one cooperative launch (every block resident, so warps that wait
//!   for work never keep a block of the grid from starting).
//! - **Worklist.** Positions are filled once each (no wrap-around): a producer counts its
//!   vertices in the pending count, reserves positions at the tail and stores each vertex
//!   with a release; a lane claims the next position at the head and polls it with an
//!   acquire. Each position is claimed by exactly one lane, so every stored vertex is
//!   expanded exactly once; a vertex stored twice (improved again before its first copy was
//!   expanded) is expanded twice, the later copy with the value of the moment (the non-fused
//!   rounds' label correcting).
//! - **Termination** is race-free by construction: the pending count covers every vertex
//!   stored and not yet expanded, and every vertex being expanded (its expansion adds the
//!   vertices it is about to store before storing them, and subtracts itself after its last
//!   store). It is positive while any work exists and, once 0, stays 0: nobody holds a vertex
//!   that could append another. A warp whose lanes all wait reads it and leaves at 0.
//! - **Errors.** An append past the capacity stores nothing, records the positions needed and
//!   stops the kernel; the run fails with [`Error::CapacityExceeded`] naming
//!   `wl_capacity (--wl-capacity)`. The time limit works as in the barrier kernel (the host
//!   sets the abort word; idle warps poll it and stop the kernel; the run fails with
//!   [`WorklistError::TimedOut`]).
//! - **Not supported:** soft priority (a band other than 0 is refused: there are no epochs to
//!   advance without a barrier), several devices (refused as `--fused` is).
//!
//! The run reports no rounds (there are none); `items_processed` counts expansions and
//! `items_produced` appends.
//!
//! ## Measured (one H200, median device ms, `--repeat 5`)
//!
//! Without an order on the expansions, label correcting re-expands vertices that a path
//! running ahead of the wave reached first, so this mode is slower than the barrier kernel
//! everywhere measured, and it is not a default: road grid of 4.2M vertices, BFS 27.5 (7.9M
//! expansions, 32 blocks of 1,024 threads) against 25.5 (4.0M) for the barrier kernel; SSSP
//! kron21 (weights 1..100) 27.7 (11.3M expansions, 528 blocks of 256) against 7.5 (1.7M); BFS
//! kron21 (push) 1,376 ms, where one warp expands each hub's list alone, again and again.
//! These were measured without the warp barriers and fences that order the pending count
//! around the release stores and acquires (see fused_async.cuh); with them, on one GPU of a
//! 2 x H200 machine, road BFS took 36.0 ms (8.2M expansions, the default 33 blocks). What
//! would bound the re-expansions is soft priority without a barrier (the Groute design: a
//! threshold advanced when no vertex under it is pending, counted per priority class), which
//! this kernel does not have yet.

use groute_core::cuda::{CudaFunction, CudaModule, DevicePtr, LaunchConfig};
use groute_core::{Buffer, Device, Error};

use super::cuda::{CudaTraversalDevice, WL_SETTING, capacity};
use super::fused::{FusedRun, TimedRun, timed_out};
use super::fused_trace::FusedTrace;
use super::fused_tuning::{
    FUSED_DIRECT_MIN, FUSED_NARROW_MAX_BLOCK, FUSED_SPARSE_BLOCK, MemberShare, cooperative_grid,
    fused_block as fused_block_size,
};
use crate::engine::{DeviceStats, WorklistOptions};
use crate::error::WorklistError;

/// Words of the asynchronous kernel's state block (`groute::ASYNC_*` of fused_async.cuh).
const ASYNC_WORDS: usize = 128;
const ASYNC_HEAD: usize = 0;
const ASYNC_TAIL: usize = 32;
const ASYNC_PENDING: usize = 64;
const ASYNC_PROCESSED: usize = 96;
const ASYNC_OVERFLOW: usize = 98;
const ASYNC_STOP: usize = 99;
/// `groute::ASYNC_EMPTY`: a worklist position not stored yet.
const ASYNC_EMPTY: u32 = u32::MAX;
/// `groute::FUSED_STOP_OVERFLOW`.
const FUSED_STOP_OVERFLOW: u32 = 1;

/// Threads per block of the asynchronous kernel when
/// [`WorklistOptions::fused_block`](crate::WorklistOptions::fused_block) is `None`.
pub const ASYNC_DEFAULT_BLOCK: u32 = FUSED_SPARSE_BLOCK;

/// The asynchronous kernel's default grid is the multiprocessors divided by this (at least one
/// block).
///
/// Fewer lanes race less: measured on one H200 (BFS, road grid of 4.2M vertices, 1,024-thread
/// blocks), 32 blocks expanded 7.9M vertices (1.98 per vertex reached) in 27.5 ms; 132 blocks
/// re-expanded so many that the default worklist (33.5M positions) overflowed; 132 blocks of
/// 256 threads: 14.1M in 110 ms. A lane expands whatever position it claimed, so with many
/// more lanes than frontier vertices some paths run ahead of the wave and their vertices are
/// improved again (label correcting without an order: what soft priority would bound).
pub const ASYNC_GRID_DIVISOR: u32 = 4;

/// One device's asynchronous fused kernel and its state block, kept across runs.
pub(crate) struct AsyncKernel {
    /// `<algo>_fused_async`: blocks of at most [`FUSED_NARROW_MAX_BLOCK`] threads.
    narrow: CudaFunction,
    /// `<algo>_fused_async_wide`: blocks of up to 1,024 threads.
    wide: CudaFunction,
    multiprocessors: u32,
    /// `ASYNC_WORDS` u32 of device memory.
    state: Buffer<u32>,
}

impl AsyncKernel {
    /// Looks `<fused>_async` and `<fused>_async_wide` up in `module` and loads both (an
    /// occupancy query: the driver's lazy loading would otherwise load them at the first
    /// launch, which may wait for running kernels).
    pub(crate) fn new(
        device: &Device,
        module: &CudaModule,
        fused: &str,
        multiprocessors: u32,
    ) -> Result<Self, Error> {
        let narrow = module.function(&format!("{fused}_async"))?;
        let wide = module.function(&format!("{fused}_async_wide"))?;
        narrow.max_active_blocks_per_multiprocessor(32, 0)?;
        wide.max_active_blocks_per_multiprocessor(32, 0)?;
        Ok(AsyncKernel {
            narrow,
            wide,
            multiprocessors,
            state: device.alloc::<u32>(ASYNC_WORDS)?,
        })
    }

    fn function(&self, block: u32) -> &CudaFunction {
        if block <= FUSED_NARROW_MAX_BLOCK {
            &self.narrow
        } else {
            &self.wide
        }
    }

    /// `(grid, block)` of a run: `options`' block and grid where set, else
    /// [`ASYNC_DEFAULT_BLOCK`]-thread blocks on a quarter of the multiprocessors
    /// ([`ASYNC_GRID_DIVISOR`]).
    fn shape(&self, options: &WorklistOptions) -> Result<(u32, u32), Error> {
        let block = fused_block_size(options.fused_block, ASYNC_DEFAULT_BLOCK)?;
        let grid = cooperative_grid(
            self.function(block),
            block,
            options.fused_grid,
            |_| self.multiprocessors / ASYNC_GRID_DIVISOR,
            MemberShare::WHOLE,
        )?;
        Ok((grid, block))
    }
}

impl CudaTraversalDevice {
    /// The asynchronous kernel, or the error saying the traversal has none.
    fn asynchronous(&self) -> Result<&AsyncKernel, Error> {
        self.fused.asynchronous.as_ref().ok_or(Error::Unsupported {
            operation: "the asynchronous fused kernel (--fused-async): this traversal's CUDA \
                        module has no <fused>_async entry points (GROUTE_ASYNC_TRAVERSAL_KERNEL)",
            backend: "cuda",
        })
    }

    /// Runs the traversal as one asynchronous persistent kernel: values reset (`sources` at
    /// 0), `seeds` in the worklist, the rest of the worklist empty, then one launch until no
    /// vertex is left (module docs).
    pub(crate) fn run_fused_async(
        &mut self,
        device: &Device,
        sources: &[u32],
        seeds: &[u32],
        options: &WorklistOptions,
    ) -> Result<FusedRun, WorklistError> {
        if let Some(band) = options.prio_delta.filter(|&d| d != 0) {
            return Err(Error::invalid(
                "prio_delta (--prio-delta)",
                band,
                "the asynchronous fused kernel (--fused-async) has no soft priority: give \
                 --prio-delta 0, or use --fused for soft priority",
            )
            .into());
        }
        let trace = FusedTrace::start();
        drop(self.worker(device, sources, seeds)?);
        trace.mark("reset done");
        let k = seeds.len();
        let wl_len = self.wl.len();
        let kernel = self.asynchronous()?;
        let (grid, block) = kernel.shape(options)?;
        let spin_ns = options.fused_barrier.kernel_args()?.0;
        let flags = if options.fused_direct_min {
            FUSED_DIRECT_MIN
        } else {
            0
        };
        if k < wl_len {
            self.stream.fill(&self.wl.slice(k..wl_len)?, ASYNC_EMPTY)?;
        }
        // The seeds are pending and fill [0, k): appends start at k.
        let k32 = u32::try_from(k)
            .map_err(|_| Error::invalid("sources", k, "give fewer than 2^32 sources"))?;
        let TimedRun {
            elapsed,
            device_time,
            asked_to_stop,
        } = self.timed_run(
            device,
            &self.asynchronous()?.state,
            &[(ASYNC_PENDING, k32), (ASYNC_TAIL, k32)],
            options.time_limit,
            &trace,
            || match k {
                0 => Ok(()),
                _ => self.launch_fused_async(grid, block, spin_ns, flags),
            },
        )?;
        let words = device.download(&self.asynchronous()?.state)?;
        let wide = |w: usize| u64::from(words[w]) | (u64::from(words[w + 1]) << 32);
        let stop = words[ASYNC_STOP];
        if stop == FUSED_STOP_OVERFLOW || words[ASYNC_OVERFLOW] != 0 {
            return Err(capacity(
                "device local worklist (asynchronous fused kernel)",
                wl_len,
                words[ASYNC_OVERFLOW] as usize,
                WL_SETTING,
            )
            .into());
        }
        let processed = wide(ASYNC_PROCESSED);
        let produced = u64::from(words[ASYNC_TAIL].saturating_sub(k32));
        trace.mark(&format!(
            "read back: stop word {stop}, processed {processed} of {}, head {}",
            k as u64 + produced,
            words[ASYNC_HEAD]
        ));
        if timed_out(asked_to_stop, stop) {
            return Err(WorklistError::TimedOut {
                limit: options.time_limit.unwrap_or_default(),
                outstanding: i64::from(words[ASYNC_PENDING]),
            });
        }
        Ok(FusedRun {
            stats: DeviceStats {
                items_processed: processed,
                items_produced: produced,
                ..DeviceStats::default()
            },
            elapsed,
            device_time,
        })
    }

    fn launch_fused_async(
        &self,
        grid: u32,
        block: u32,
        spin_ns: u32,
        flags: u32,
    ) -> Result<(), Error> {
        let (values, offsets, targets, weights) = self.graph_args()?;
        let kernel = self.asynchronous()?;
        let args = (
            values,
            offsets,
            targets,
            weights,
            DevicePtr::<u32>::from_slice(&self.wl.raw())?,
            self.wl.len() as u32,
            DevicePtr::<u32>::from_slice(&kernel.state.raw())?,
            DevicePtr::<u32>::from_slice(&self.fused.abort.raw())?,
            spin_ns,
            flags,
        );
        // SAFETY: <algo>_fused_async(unsigned* values, const unsigned long long* offsets,
        // const unsigned* targets, const unsigned* weights, unsigned* wl, unsigned capacity,
        // unsigned* state, const unsigned* abort, unsigned spin_ns, unsigned flags)
        // (GROUTE_ASYNC_TRAVERSAL_ENTRY in fused_async.cuh, both builds): the tuple matches it
        // field by field. CSR, values and weights as in `launch_expand`; the worklist holds
        // `capacity` u32 (the seeds first, then the empty marker; the kernel never writes past
        // `capacity`); `state` holds ASYNC_WORDS u32 zeroed but the pending count; `abort` is
        // one u32 of mapped host memory, a device address of this context. The block is a
        // multiple of 32 of at most 1,024 threads, run by the build whose launch bounds admit
        // it, and the grid at most the resident maximum of that build (`AsyncKernel::shape`);
        // the launch is cooperative. Memory is kept alive below.
        unsafe {
            kernel.function(block).launch_cooperative(
                self.stream.raw().as_ref(),
                LaunchConfig::linear(grid, block),
                args,
            )?
        };
        self.keep_alive(&[])?;
        self.cuda_stream()?.keep_alive(vec![
            kernel.state.raw().memory,
            self.fused.abort.raw().memory,
        ])
    }
}
