//! One fused run on one device ([`CudaTraversalDevice::run_fused`]): the reset, the state
//! block's first words, one timed persistent launch (shared with the asynchronous kernel and
//! the members of a device-driven run: [`CudaTraversalDevice::timed_run`]), the host's polling
//! against the time limit, and the counters read back ([`FusedRun`]).

use std::time::{Duration, Instant};

use groute_core::{Buffer, Device, Error, Event};
use groute_kernels::abi::TraversalCtrl;
use groute_kernels::abi_word;

use super::kernel::FusedRole;
use super::state::{
    FUSED_PHASE_DONE, FUSED_PHASE_EXPAND, FUSED_PHASE_SOLO, start_words, timed_out,
};
use crate::engine::{DeviceStats, WorklistOptions};
use crate::error::WorklistError;
use crate::traversal::cuda::CudaTraversalDevice;
use crate::traversal::fused_trace::FusedTrace;
use crate::traversal::fused_tuning::{FusedDefaults, fused_kernel_flags};

/// The worklist's end in the control block.
const CTRL_WL_END: usize = abi_word!(TraversalCtrl, wl_end);
/// Control words read back after a run: up to the low list's overflow word.
const CTRL_READ_WORDS: usize = abi_word!(TraversalCtrl, low_overflow) + 1;
/// How often the host checks a time-limited fused run.
const POLL_INTERVAL: Duration = Duration::from_micros(50);

/// The clocks of one persistent launch ([`CudaTraversalDevice::timed_run`]).
struct TimedRun {
    /// Host time from the launch until the kernel completed.
    elapsed: Duration,
    /// The kernel's time between timing events recorded around the launch.
    device_time: Duration,
    /// Whether the host asked the kernel to stop (it saw the time limit pass).
    asked_to_stop: bool,
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
    /// `seeds` in the worklist, then one cooperative launch until no item is left. `defaults`:
    /// the graph's launch shape where `options` leave it open.
    pub(crate) fn run_fused(
        &mut self,
        device: &Device,
        sources: &[u32],
        seeds: &[u32],
        options: &WorklistOptions,
        defaults: FusedDefaults,
    ) -> Result<FusedRun, WorklistError> {
        let trace = FusedTrace::start();
        // The non-fused worker's reset: values, control block, seeds (synchronised).
        drop(self.worker(device, sources, seeds)?);
        trace.mark("reset done");
        let seeds = seeds.len() as u32;
        let shape = self.fused.shape(
            options,
            defaults,
            None,
            Some((self.hubs.max_degree(), self.graph_arcs)),
        )?;
        let barrier = fused_kernel_flags(options, self.graph_arcs)?;
        let solo_max = shape.solo_max;
        // Soft priority as PriorityCounter sets it: the first threshold is the band width.
        let prio_delta = options.prio_delta.unwrap_or(0);
        let threshold = if prio_delta == 0 {
            u32::MAX
        } else {
            prio_delta
        };
        if threshold != u32::MAX {
            self.ensure_low_lists(device)?;
        }
        let phase = match seeds {
            0 => FUSED_PHASE_DONE,
            k if k <= solo_max => FUSED_PHASE_SOLO,
            _ => FUSED_PHASE_EXPAND,
        };
        let words = start_words(phase, seeds, threshold);
        let TimedRun {
            elapsed,
            device_time,
            asked_to_stop,
        } = self.timed_run(
            device,
            &self.fused.state,
            &words,
            options.time_limit,
            &trace,
            || self.launch_fused(shape, barrier, prio_delta, solo_max, &FusedRole::Alone),
        )?;

        let ctrl = device.download(&self.ctrl.slice(0..CTRL_READ_WORDS)?)?;
        let state = self.fused.read_state(device)?;
        // One device owns every vertex: the fused kernel never sends (a send overflow would be
        // a broken invariant, reported rather than ignored).
        self.overflow_error(&ctrl, "device ring send buffer (fused kernel)", 0)?;
        let processed = state.0.processed;
        // Every item the kernel appended reaches the worklist but the cluster mode's
        // intermediate levels, which the kernel counts apart (`FUSED_UNLISTED`).
        let produced =
            u64::from(ctrl[CTRL_WL_END].wrapping_sub(seeds)).wrapping_add(state.0.unlisted);
        trace.mark_with(|| {
            format!(
                "read back: stop word {}, processed {processed} of {}; {}",
                state.0.stop,
                u64::from(seeds) + produced,
                state.trace_summary()
            )
        });
        if timed_out(asked_to_stop, state.0.stop) {
            return Err(WorklistError::TimedOut {
                limit: options.time_limit.unwrap_or_default(),
                outstanding: (u64::from(seeds) + produced).saturating_sub(processed) as i64,
            });
        }
        let stats = state.stats();
        Ok(FusedRun {
            stats: DeviceStats {
                items_produced: produced,
                solo_cluster_rounds: if shape.cluster { stats.solo_rounds } else { 0 },
                ..stats
            },
            elapsed,
            device_time,
        })
    }

    /// One timed run of a persistent kernel: `state` zeroed but for `words` (index, value),
    /// the abort word cleared, the stream synchronised (so that it holds no pinned memory
    /// whose release would wait for the kernel: freeing pinned host memory waits for the
    /// device, and `Device::upload` frees its staging before it returns); then `launch`
    /// between two timing events, and the wait (asking the kernel to stop past
    /// `time_limit`).
    fn timed_run(
        &self,
        device: &Device,
        state: &Buffer<u32>,
        words: &[(usize, u32)],
        time_limit: Option<Duration>,
        trace: &FusedTrace,
        launch: impl FnOnce() -> Result<(), Error>,
    ) -> Result<TimedRun, Error> {
        let s = &self.stream;
        self.prepare_state(state, words)?;
        trace.mark("state set, stream idle");
        let started = Instant::now();
        let t0 = device.record_timing(s)?;
        trace.mark("t0 recorded; launching");
        launch()?;
        trace.mark("launched");
        let t1 = device.record_timing(s)?;
        trace.mark("t1 recorded; waiting");
        let asked_to_stop = self.wait_fused(&t1, time_limit, started, trace)?;
        let elapsed = started.elapsed();
        trace.mark(&format!("kernel done (asked to stop: {asked_to_stop})"));
        let device_time = Event::elapsed(&t0, &t1)?;
        Ok(TimedRun {
            elapsed,
            device_time,
            asked_to_stop,
        })
    }

    /// Zeroes `state` but for `words` (index, value) and clears the abort word; returns with
    /// the stream synchronised.
    pub(in crate::traversal) fn prepare_state(
        &self,
        state: &Buffer<u32>,
        words: &[(usize, u32)],
    ) -> Result<(), Error> {
        let s = &self.stream;
        s.fill(state, 0u32)?;
        for &(word, value) in words {
            s.fill(&state.slice(word..word + 1)?, value)?;
        }
        self.fused.set_abort(0)?;
        s.synchronize()
    }

    /// Waits for the kernel (recorded `done`); past `time_limit`, asks it to stop (it then
    /// returns within `FUSED_ABORT_POLL` levels or phases) and waits for it to do so. Returns
    /// whether it asked: the host saw the limit pass while the kernel was still running.
    pub(in crate::traversal) fn wait_fused(
        &self,
        done: &Event,
        time_limit: Option<Duration>,
        started: Instant,
        trace: &FusedTrace,
    ) -> Result<bool, Error> {
        let Some(limit) = time_limit else {
            done.wait()?;
            return Ok(false);
        };
        let mut poll = 0u32;
        loop {
            let complete = done.is_complete()?;
            trace.poll(poll, complete);
            if complete {
                break;
            }
            poll = poll.saturating_add(1);
            if started.elapsed() > limit {
                self.fused.set_abort(1)?;
                trace.mark("abort word set; waiting for the kernel");
                done.wait()?;
                return Ok(true);
            }
            std::thread::sleep(POLL_INTERVAL);
        }
        Ok(false)
    }
}
