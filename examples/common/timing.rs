//! Repeated timed runs of a solver whose graph is already uploaded.

use std::time::{Duration, Instant};

use super::AnyError;
use super::report::{Spread, Times};

/// `repeat` timed runs: one untimed warm-up first when `repeat > 1` (kernel compilation,
/// first touch), then the runs.
pub struct TimedRuns<R> {
    /// The last run's result.
    pub last: R,
    /// The solver's own clock of each timed run, ms.
    pub run_ms: Vec<f64>,
    /// The device-event time of each run, ms (`None` on the host backend).
    pub device_ms: Option<Vec<f64>>,
    /// The whole call of each run by the host clock, ms.
    pub full_run_ms: Vec<f64>,
}

impl<R> TimedRuns<R> {
    /// The same runs with `f` of the last run's result.
    pub fn map_last<T>(self, f: impl FnOnce(R) -> T) -> TimedRuns<T> {
        TimedRuns {
            last: f(self.last),
            run_ms: self.run_ms,
            device_ms: self.device_ms,
            full_run_ms: self.full_run_ms,
        }
    }

    /// The median of the solver's clock, ms.
    pub fn median_ms(&self) -> f64 {
        Spread::of(&self.run_ms).map_or(0.0, |s| s.median)
    }

    /// The median device time, ms, if every run had one.
    pub fn device_median_ms(&self) -> Option<f64> {
        self.device_ms
            .as_deref()
            .and_then(Spread::of)
            .map(|s| s.median)
    }

    /// The report's times of these runs, with the load and stage times given.
    pub fn times(&self, load_ms: f64, stage_ms: f64) -> Times {
        Times {
            load_ms,
            stage_ms,
            run_ms: Spread::of(&self.run_ms),
            device_ms: self.device_ms.as_deref().and_then(Spread::of),
            full_run_ms: Spread::of(&self.full_run_ms),
        }
    }
}

/// Runs `run` as [`TimedRuns`] describes (`repeat` >= 1, else an error); `clocks` gives each
/// result's solver time and device-event time (`stats.elapsed`, `stats.device_time`).
pub fn timed_runs<R, E: Into<AnyError>>(
    repeat: usize,
    mut run: impl FnMut() -> Result<R, E>,
    clocks: impl Fn(&R) -> (Duration, Option<Duration>),
) -> Result<TimedRuns<R>, AnyError> {
    if repeat == 0 {
        return Err("--repeat 0: give at least 1".into());
    }
    if repeat > 1 {
        run().map_err(Into::into)?;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut run_ms = Vec::with_capacity(repeat);
    let mut device = Vec::with_capacity(repeat);
    let mut full_run_ms = Vec::with_capacity(repeat);
    let mut last = None;
    for _ in 0..repeat {
        let start = Instant::now();
        let r = run().map_err(Into::into)?;
        full_run_ms.push(ms(start.elapsed()));
        let (host, dev) = clocks(&r);
        run_ms.push(ms(host));
        device.push(dev.map(ms));
        last = Some(r);
    }
    let last = last.ok_or("--repeat 0: give at least 1")?;
    Ok(TimedRuns {
        last,
        run_ms,
        device_ms: device.into_iter().collect(),
        full_run_ms,
    })
}
