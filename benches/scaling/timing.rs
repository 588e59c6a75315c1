//! Timing one run on N devices.
//!
//! CUDA: every device's stream is synchronised, a timing event is recorded on it, the run
//! executes, and a second event is recorded on every stream; the run's time is the largest
//! elapsed time over the devices (events of different devices cannot be compared, so each
//! device is measured against its own start). The host backend times with the wall clock.

use std::time::{Duration, Instant};

use groute::prelude::*;

/// What timed a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// Device events, max over devices.
    DeviceEvents,
    /// The host's wall clock (host backend).
    Wall,
}

impl Timer {
    /// The timer of `ctx`'s backend.
    pub fn of(ctx: &Context) -> Timer {
        match ctx.backend_kind() {
            BackendKind::Host => Timer::Wall,
            _ => Timer::DeviceEvents,
        }
    }

    /// The name written to the JSON record.
    pub fn name(self) -> &'static str {
        match self {
            Timer::DeviceEvents => "device events",
            Timer::Wall => "wall",
        }
    }
}

/// Runs `body` and returns its value with the time it took under [`Timer::of`]`(ctx)`.
pub fn time_run<T>(
    ctx: &Context,
    body: impl FnOnce() -> Result<T, Box<dyn std::error::Error>>,
) -> Result<(T, Duration), Box<dyn std::error::Error>> {
    if Timer::of(ctx) == Timer::Wall {
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
    let mut longest = 0f32;
    for (device, start) in ctx.devices().iter().zip(&starts) {
        let end = device.record_timing(device.stream())?;
        device.stream().synchronize()?;
        longest = longest.max(Event::elapsed_ms(start, &end)?);
    }
    Ok((value, Duration::from_secs_f64(f64::from(longest) / 1e3)))
}
