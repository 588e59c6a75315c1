//! Timing one run on N devices: the algorithm (the headline) and the full run.
//!
//! **Algorithm** ([`Timer::algorithm_time`]): CUDA: the solver's own device-event time
//! (`stats.device_time`, from `groute_core::DeviceTimer`: timing events on every device's
//! stream after the per-run reset, and before the result's download, max over devices); the
//! host backend has no device clock, so there it is the solver's own host clock.
//!
//! **Full run** ([`time_run`]): CUDA: every device's stream is synchronised, a timing event
//! is recorded on it, the run executes (reset, algorithm, download), and a second event is
//! recorded on every stream; the time is the largest elapsed time over the devices (events
//! of different devices cannot be compared, so each device is measured against its own
//! start). The host backend times it with the wall clock.

use std::time::{Duration, Instant};

use groute::prelude::*;

use crate::workload::RunReport;

/// What timed a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// Device events (CUDA).
    DeviceEvents,
    /// Host clocks (host backend).
    HostClock,
}

impl Timer {
    /// The timer of `ctx`'s backend.
    pub fn of(ctx: &Context) -> Timer {
        match ctx.backend_kind() {
            BackendKind::Host => Timer::HostClock,
            _ => Timer::DeviceEvents,
        }
    }

    /// How the algorithm time was taken, as written to the JSON record's `timer`.
    pub fn name(self) -> &'static str {
        match self {
            Timer::DeviceEvents => "device events",
            Timer::HostClock => "solver clock",
        }
    }

    /// The algorithm time of a run that reported `report`; an error when a solver on a GPU
    /// reported no device time (a solver missing its timing hook, never silently replaced by
    /// another clock).
    pub fn algorithm_time(self, report: &RunReport) -> Result<Duration, String> {
        match (self, report.device_time) {
            (Timer::DeviceEvents, Some(t)) => Ok(t),
            (Timer::DeviceEvents, None) => Err(
                "the solver reported no device time on a GPU backend; its stats.device_time \
                 must be set from groute_core::DeviceTimer"
                    .into(),
            ),
            (Timer::HostClock, _) => Ok(report.solver_time),
        }
    }
}

/// Runs `body` and returns its value with the time of the whole call under
/// [`Timer::of`]`(ctx)`.
pub fn time_run<T>(
    ctx: &Context,
    body: impl FnOnce() -> Result<T, Box<dyn std::error::Error>>,
) -> Result<(T, Duration), Box<dyn std::error::Error>> {
    if Timer::of(ctx) == Timer::HostClock {
        let start = Instant::now();
        let value = body()?;
        return Ok((value, start.elapsed()));
    }
    let mut starts = Vec::with_capacity(ctx.num_devices());
    for device in ctx.devices() {
        device.stream().synchronize()?;
        starts.push(device.record_timing(device.stream())?);
    }
    let value = body()?;
    let mut spans = Vec::with_capacity(starts.len());
    for (device, start) in ctx.devices().iter().zip(starts) {
        let end = device.record_timing(device.stream())?;
        device.stream().synchronize()?;
        spans.push((start, end));
    }
    Ok((value, Event::longest_span(&spans)?))
}
