//! The fused kernel's grid barrier alone (`kernels/runtime/fused_barrier.cu`): a cooperative launch of
//! `barriers` barriers back to back, timed between CUDA events, with every block checking
//! after each release that it saw exactly the barriers it passed. The time per barrier is the
//! floor of one fused level's synchronisation (`examples/fused_barrier.rs` prints it per
//! [`FusedBarrier`] variant); the check makes it a test of the barrier too.

use std::time::Duration;

use groute_core::cuda::{CudaModule, DevicePtr, LaunchConfig};
use groute_core::{Device, Error, Event};
use groute_kernels::abi::{FusedStateBlock, words_of};
use groute_kernels::abi_word;
use groute_kernels::runtime::FUSED_BARRIER;

use super::FusedBarrier;
use super::fused_tuning::{FUSED_BLOCK, fused_block};

/// The bench's state block: a [`FusedStateBlock`]'s words.
const STATE_WORDS: usize = words_of::<FusedStateBlock>();
/// `BENCH_ERRORS` (the state block's `stop` word) and `BENCH_PASSED` (its `rounds` word) of
/// fused_barrier.cu.
const BENCH_ERRORS: usize = abi_word!(FusedStateBlock, stop);
const BENCH_PASSED: usize = abi_word!(FusedStateBlock, rounds);

/// One timed run of the barrier micro-benchmark.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BarrierTiming {
    /// Blocks of the launch.
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// Barriers the kernel was asked to run.
    pub barriers: u32,
    /// Barriers whose action ran (equal to `barriers` when the barrier works).
    pub passed: u32,
    /// Times a block saw another count of barriers than it had passed (0 when the barrier
    /// works).
    pub errors: u32,
    /// The kernel's time between CUDA events.
    pub device_time: Duration,
}

impl BarrierTiming {
    /// Microseconds per barrier (launch overhead included, amortised over `barriers`).
    pub fn micros_per_barrier(&self) -> f64 {
        self.device_time.as_secs_f64() * 1e6 / f64::from(self.barriers.max(1))
    }
}

/// Runs `barriers` grid barriers of configuration `barrier` on `device` (CUDA) in one
/// cooperative launch of `grid` blocks (`None`: one per multiprocessor) of `block` threads.
/// Errors: not a CUDA device, a block that is not a multiple of 32 in 32..=1024, a grid that is
/// 0 or larger than every resident block, a sleep past [`FUSED_MAX_SPIN_NS`](super::FUSED_MAX_SPIN_NS).
pub fn time_fused_barrier(
    device: &Device,
    grid: Option<u32>,
    block: u32,
    barrier: FusedBarrier,
    barriers: u32,
) -> Result<BarrierTiming, Error> {
    // The checks are the fused kernel's; their errors name this benchmark's settings.
    let block =
        fused_block(Some(block), FUSED_BLOCK).map_err(|e| renamed(e, "block (--blocks)"))?;
    let (spin_ns, flags) = barrier
        .kernel_args()
        .map_err(|e| renamed(e, "spin_ns (--spins)"))?;
    let stream = device.stream();
    let module = CudaModule::load(stream.raw().as_ref(), &FUSED_BARRIER)?;
    let function = module.function("fused_barrier_bench")?;
    let max_grid = function.max_resident_grid(block, 0)?;
    let grid = match grid {
        None if max_grid > 0 => device.properties().multiprocessors.clamp(1, max_grid),
        Some(g) if g >= 1 && g <= max_grid => g,
        g => {
            return Err(Error::invalid(
                "grid (--grids)",
                g.map_or_else(
                    || "one block per multiprocessor".to_string(),
                    |g| g.to_string(),
                ),
                format!(
                    "give 1..={max_grid} blocks of {block} threads: a cooperative launch needs \
                     every block resident at once"
                ),
            ));
        }
    };
    let state = device.alloc::<u32>(STATE_WORDS)?;
    stream.fill(&state, 0u32)?;
    stream.synchronize()?;
    let t0 = device.record_timing(stream)?;
    let args = (
        DevicePtr::<u32>::from_slice(&state.raw())?,
        barriers,
        spin_ns,
        flags,
    );
    // SAFETY: fused_barrier_bench(unsigned* state, unsigned barriers, unsigned spin_ns,
    // unsigned barrier_flags): the tuple matches it field by field; `state` holds STATE_WORDS
    // (FUSED_WORDS) zeroed u32 of this device and lives until the download below, after the
    // kernel completed. The block is a multiple of 32 of at most 1,024 threads (the kernel's
    // launch bounds) and the grid at most the resident maximum at that block, launched
    // cooperatively, so every block is resident and the barrier cannot deadlock.
    unsafe {
        function.launch_cooperative(
            stream.raw().as_ref(),
            LaunchConfig::linear(grid, block),
            args,
        )?
    };
    let t1 = device.record_timing(stream)?;
    t1.wait()?;
    let device_time = Event::elapsed(&t0, &t1)?;
    let words = device.download(&state)?;
    Ok(BarrierTiming {
        grid,
        block,
        barriers,
        passed: words[BENCH_PASSED],
        errors: words[BENCH_ERRORS],
        device_time,
    })
}

/// `error` with its setting renamed to `setting` (an invalid setting; other errors unchanged).
fn renamed(error: Error, setting: &'static str) -> Error {
    match error {
        Error::InvalidSetting { value, reason, .. } => Error::InvalidSetting {
            setting,
            value,
            reason,
        },
        other => other,
    }
}
