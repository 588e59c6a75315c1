//! The `--json` form of a device-driven direction-optimizing run's per-phase trace
//! (`--do-trace`): per device, its kernel's start and end after device 0's start (each GPU
//! reads its own clock: across GPUs they are only as comparable as the clocks agree), and
//! per level step its kind, frontier sizes and phase times, all in microseconds.

use groute::bfs::{DeviceTrace, DirectionTrace, StepTrace};
use serde::Serialize;

/// One device's trace.
#[derive(Serialize)]
pub struct DeviceTraceJson {
    /// Rank of the device.
    pub device: usize,
    /// Its kernel's start, microseconds after device 0's (negative: before).
    pub start_us: f64,
    /// Its kernel's end, microseconds after device 0's start.
    pub end_us: f64,
    /// Steps run past the 64 traced.
    pub steps_dropped: u64,
    /// The level steps, in order.
    pub steps: Vec<StepTraceJson>,
}

/// One level step on one device.
#[derive(Serialize)]
pub struct StepTraceJson {
    /// `source` (the count of the source's level), `push` or `pull`.
    pub step: &'static str,
    /// The level expanded.
    pub level: u32,
    /// Vertices found at level + 1 on every device.
    pub found: u64,
    /// Of them, owned by this device.
    pub found_here: u64,
    /// Hubs a push step listed.
    pub hubs: u64,
    /// The sum of the phases.
    pub total_us: f64,
    /// Each phase's time (null: not run): step, hubs, send, exchange, scan, decide.
    pub phases_us: PhasesJson,
}

/// Phase times in microseconds (`None`: the step did not run the phase).
#[derive(Serialize)]
pub struct PhasesJson {
    step: Option<f64>,
    hubs: Option<f64>,
    send: Option<f64>,
    exchange: Option<f64>,
    scan: Option<f64>,
    decide: Option<f64>,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn step_json(s: &StepTrace) -> StepTraceJson {
    let p = s.phases;
    StepTraceJson {
        step: s.kind.as_str(),
        level: s.level,
        found: s.found,
        found_here: s.found_here,
        hubs: s.hubs,
        total_us: us(p.named().iter().filter_map(|(_, t)| *t).sum()),
        phases_us: PhasesJson {
            step: p.step.map(us),
            hubs: p.hubs.map(us),
            send: p.send.map(us),
            exchange: p.exchange.map(us),
            scan: p.scan.map(us),
            decide: p.decide.map(us),
        },
    }
}

fn device_json(device: usize, d: &DeviceTrace) -> DeviceTraceJson {
    DeviceTraceJson {
        device,
        start_us: d.start_ns as f64 / 1e3,
        end_us: d.end_ns as f64 / 1e3,
        steps_dropped: d.steps_dropped,
        steps: d.steps.iter().map(step_json).collect(),
    }
}

/// The JSON form of `trace`, by device.
pub fn trace_json(trace: &DirectionTrace) -> Vec<DeviceTraceJson> {
    trace
        .devices
        .iter()
        .enumerate()
        .map(|(d, t)| device_json(d, t))
        .collect()
}

/// Prints `trace` as a table, one line per device and step (the human-readable report).
pub fn print_trace(trace: &DirectionTrace) {
    for (d, t) in trace.devices.iter().enumerate() {
        // Each GPU's clock has its own origin: a device's span is exact, its start
        // against device 0's only as good as their clocks agree.
        println!(
            "trace dev {d}: kernel ran {:.1} us (from {:.1} us on device 0's clock, which \
             other GPUs' clocks may not match)",
            (t.end_ns - t.start_ns) as f64 / 1e3,
            t.start_ns as f64 / 1e3
        );
        for s in &t.steps {
            let phases: Vec<String> = s
                .phases
                .named()
                .iter()
                .filter_map(|(name, t)| t.map(|t| format!("{name} {:.1}", us(t))))
                .collect();
            println!(
                "  {:6} L{:<3} found {:>9} (here {:>9}) | {} us",
                s.kind.as_str(),
                s.level,
                s.found,
                s.found_here,
                phases.join(", ")
            );
        }
    }
}
