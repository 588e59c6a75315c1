//! [`DeviceTimer`]: the time an algorithm took on the devices, measured with device events.
//!
//! A solver starts the timer once its per-run reset has been enqueued (and its host-side
//! setup is done), and stops it once the algorithm has finished on every device, before the
//! results are downloaded. Starting records a timing event on every device's stream; each
//! device's end is a second timing event on its stream, recorded by [`DeviceTimer::mark_end`]
//! where a device finishes on its own thread, or by [`DeviceTimer::stop`] for every device not
//! marked. The time is the largest `elapsed(start_d, end_d)` over the devices `d`: events of
//! different devices cannot be compared, so each device is measured against its own start.
//!
//! Only device work enqueued on [`crate::Device::stream`] between the two events is covered,
//! which is where the solvers of this workspace run their kernels (copies on link streams are
//! covered through the waits that order the kernels after them).
//!
//! **Host backend:** there is no device clock, so the timer records nothing and
//! [`DeviceTimer::stop`] returns `None`; the solvers' host-clock `elapsed` is the measurement
//! there. (Reporting the wall clock under the same name would make host and GPU figures look
//! comparable when they are not.)
//!
//! ```
//! use groute_core::{Context, DeviceTimer};
//!
//! let ctx = Context::host(2)?;
//! let timer = DeviceTimer::start(&ctx)?;
//! // ... enqueue the algorithm on every device's stream, wait for it ...
//! assert_eq!(timer.stop()?, None); // the host backend has no device clock
//! # Ok::<(), groute_core::Error>(())
//! ```

use std::fmt;
use std::time::Duration;

use parking_lot::Mutex;

use crate::backend::BackendKind;
use crate::context::{Context, DeviceId};
use crate::error::Result;
use crate::event::Event;

/// One device's events: the start, and the end once marked.
struct DeviceMarks {
    start: Event,
    end: Mutex<Option<Event>>,
}

/// Device-event timing of one run on every device of a context (see the module docs).
///
/// `Sync`: device threads may call [`DeviceTimer::mark_end`] through a shared reference.
pub struct DeviceTimer {
    context: Context,
    /// One entry per device, in device order; empty on the host backend (timing off).
    marks: Vec<DeviceMarks>,
}

impl fmt::Debug for DeviceTimer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceTimer")
            .field("devices", &self.marks.len())
            .field("enabled", &self.is_enabled())
            .finish()
    }
}

impl DeviceTimer {
    /// Records a start event on every device's stream of `context` (nothing on the host
    /// backend, whose timer is disabled).
    pub fn start(context: &Context) -> Result<DeviceTimer> {
        if context.backend_kind() == BackendKind::Host {
            return Ok(DeviceTimer {
                context: context.clone(),
                marks: Vec::new(),
            });
        }
        Self::start_recording(context)
    }

    /// Records the start events on any backend (the host backend's events complete in
    /// stream order too, which is what the unit tests use to check the bookkeeping).
    fn start_recording(context: &Context) -> Result<DeviceTimer> {
        let marks = context
            .devices()
            .iter()
            .map(|device| {
                Ok(DeviceMarks {
                    start: device.record_timing(device.stream())?,
                    end: Mutex::new(None),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(DeviceTimer {
            context: context.clone(),
            marks,
        })
    }

    /// Whether the timer records events (false on the host backend).
    pub fn is_enabled(&self) -> bool {
        !self.marks.is_empty()
    }

    /// Records `device`'s end event on its stream now: the device's share of the algorithm
    /// is everything enqueued on that stream before this call. A later mark of the same
    /// device replaces the earlier one. Does nothing when the timer is disabled.
    pub fn mark_end(&self, device: DeviceId) -> Result<()> {
        let dev = self.context.device(device)?;
        let Some(marks) = self.marks.get(device.0) else {
            return Ok(());
        };
        let end = dev.record_timing(dev.stream())?;
        *marks.end.lock() = Some(end);
        Ok(())
    }

    /// Records the end event of every device not marked yet, waits for every end event, and
    /// returns the largest elapsed time over the devices (`None` when the timer is disabled).
    pub fn stop(self) -> Result<Option<Duration>> {
        if !self.is_enabled() {
            return Ok(None);
        }
        let mut longest = Duration::ZERO;
        for (device, marks) in self.context.devices().iter().zip(&self.marks) {
            let end = match marks.end.lock().take() {
                Some(end) => end,
                None => device.record_timing(device.stream())?,
            };
            end.wait()?;
            longest = longest.max(Event::elapsed(&marks.start, &end)?);
        }
        Ok(Some(longest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sleep_on(context: &Context, device: usize, ms: u64) {
        context.devices()[device]
            .stream()
            .launch_host(move || std::thread::sleep(Duration::from_millis(ms)))
            .expect("host kernel");
    }

    #[test]
    fn host_backend_timer_is_disabled_and_reports_none() {
        let ctx = Context::host(2).expect("host context");
        let timer = DeviceTimer::start(&ctx).expect("start");
        assert!(!timer.is_enabled());
        timer.mark_end(DeviceId(1)).expect("marking is a no-op");
        assert_eq!(timer.stop().expect("stop"), None);
    }

    #[test]
    fn mark_end_rejects_a_device_outside_the_context() {
        let ctx = Context::host(2).expect("host context");
        for timer in [
            DeviceTimer::start(&ctx).expect("start"),
            DeviceTimer::start_recording(&ctx).expect("start"),
        ] {
            assert!(timer.mark_end(DeviceId(2)).is_err());
        }
    }

    #[test]
    fn the_slowest_device_sets_the_time() {
        let ctx = Context::host(3).expect("host context");
        let timer = DeviceTimer::start_recording(&ctx).expect("start");
        sleep_on(&ctx, 1, 60);
        sleep_on(&ctx, 2, 5);
        let t = timer.stop().expect("stop").expect("recording timer");
        assert!(t >= Duration::from_millis(55), "{t:?}");
    }

    #[test]
    fn the_longest_span_is_the_slowest_devices_own() {
        let ctx = Context::host(2).expect("host context");
        let spans: Vec<(Event, Event)> = [(0, 5), (1, 40)]
            .into_iter()
            .map(|(d, ms)| {
                let device = &ctx.devices()[d];
                let start = device.record_timing(device.stream()).expect("start");
                sleep_on(&ctx, d, ms);
                let end = device.record_timing(device.stream()).expect("end");
                end.wait().expect("wait");
                (start, end)
            })
            .collect();
        let t = Event::longest_span(&spans).expect("spans");
        assert!(t >= Duration::from_millis(35), "{t:?}");
        assert!(t < Duration::from_millis(400), "{t:?}");
        assert_eq!(Event::longest_span(&[]).expect("none"), Duration::ZERO);
    }

    #[test]
    fn a_marked_end_excludes_later_work_of_that_device() {
        let ctx = Context::host(2).expect("host context");
        let timer = DeviceTimer::start_recording(&ctx).expect("start");
        sleep_on(&ctx, 0, 20);
        timer.mark_end(DeviceId(0)).expect("mark");
        // After the mark: what a solver's result download would be.
        sleep_on(&ctx, 0, 400);
        let t = timer.stop().expect("stop").expect("recording timer");
        assert!(t >= Duration::from_millis(15), "{t:?}");
        assert!(t < Duration::from_millis(400), "{t:?}");
    }

    #[test]
    fn work_before_the_start_is_not_timed() {
        let ctx = Context::host(1).expect("host context");
        // Not synchronised: the start event completes when the stream reaches it.
        sleep_on(&ctx, 0, 300);
        let timer = DeviceTimer::start_recording(&ctx).expect("start");
        let t = timer.stop().expect("stop").expect("recording timer");
        assert!(t < Duration::from_millis(300), "{t:?}");
    }
}
