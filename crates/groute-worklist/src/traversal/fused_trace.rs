//! Host-side tracing of one fused run, for diagnosing where the host thread waits while the
//! kernel runs (a time limit is only honoured if the host sees the kernel running).
//!
//! Set `GROUTE_TRACE_FUSED=1` (read once per process) and every fused run prints, to stderr,
//! lines `[fused-trace] +<us> us <step>`: microseconds since the start of the run for the
//! reset, the launch, each timing record, the first [`TRACED_POLLS`] completion polls of a
//! time-limited run, the abort request and the kernel's end, and after it the phases and
//! levels it ran (per member of a device-driven run; `fused.rs` says which diagnostic builds
//! add to them). Off (the default), a run pays one cached flag test per step.

use std::sync::OnceLock;
use std::time::Instant;

/// The environment variable that turns the trace on (`1`).
pub(crate) const TRACE_FUSED_ENV: &str = "GROUTE_TRACE_FUSED";

/// Completion polls traced per run (later polls are counted, not printed).
pub(crate) const TRACED_POLLS: u32 = 8;

/// Whether `GROUTE_TRACE_FUSED=1` was set when first asked.
fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var(TRACE_FUSED_ENV).is_ok_and(|v| v == "1"))
}

/// The trace of one fused run: a no-op unless [`TRACE_FUSED_ENV`] is set.
pub(crate) struct FusedTrace {
    start: Instant,
    on: bool,
}

impl FusedTrace {
    /// Starts a run's trace (its time origin is now).
    pub(crate) fn start() -> Self {
        let trace = FusedTrace {
            start: Instant::now(),
            on: enabled(),
        };
        trace.mark("run started");
        trace
    }

    /// Prints the step `describe` returns, calling it only when the trace is on (for steps
    /// that cost something to describe).
    pub(crate) fn mark_with(&self, describe: impl FnOnce() -> String) {
        if self.on {
            self.mark(&describe());
        }
    }

    /// Prints `step` with the time since the start of the run.
    pub(crate) fn mark(&self, step: &str) {
        if self.on {
            eprintln!(
                "[fused-trace] +{} us {step}",
                self.start.elapsed().as_micros()
            );
        }
    }

    /// Prints the result of completion poll `index` (0-based), up to [`TRACED_POLLS`] of them.
    pub(crate) fn poll(&self, index: u32, complete: bool) {
        if self.on && index < TRACED_POLLS {
            self.mark(&format!("poll {index}: is_complete = {complete}"));
        }
    }
}
