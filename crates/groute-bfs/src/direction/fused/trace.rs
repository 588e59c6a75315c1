//! The per-phase trace of a device-driven run ([`BfsTuning::trace`]): where each
//! device spent each level step, from the `%globaltimer` stamps of
//! `kernels/include/direction_trace.cuh` (whose layout the constants below mirror). A stamp is
//! taken when the whole grid of a device has finished a phase (by the thread that runs the
//! grid barrier's action), so a phase's time includes its grid barrier and any wait for the
//! slowest block. `%globaltimer` is one clock per GPU, not synchronised across GPUs (two
//! H200s of one host read up to several hundred microseconds apart): a device's phases and
//! span are exact, its start against another device's is not.
//!
//! [`BfsTuning::trace`]: crate::BfsTuning::trace

/// u64 words of the trace buffer's header (`groute::TRACE_HEADER`).
const HEADER: usize = 4;
/// Rows stored (`groute::TRACE_ROWS`); later steps are counted, not stored.
pub(crate) const ROWS: usize = 64;
/// u64 words per row (`groute::TRACE_SLOTS`).
const SLOTS: usize = 11;
/// u64 words of one device's trace buffer.
pub(crate) const TRACE_WORDS: usize = HEADER + ROWS * SLOTS;

// Header words (`groute::TraceHeader`).
const START: usize = 0;
const END: usize = 1;
const STEPS: usize = 2;

// Row words (`groute::TraceSlot`).
const KIND: usize = 0;
const LEVEL: usize = 1;
const FOUND: usize = 2;
const FOUND_HERE: usize = 3;
const HUBS: usize = 4;
const STEP_END: usize = 5;
const HUBS_END: usize = 6;
const SEND_END: usize = 7;
const EXCHANGE_END: usize = 8;
const SCAN_END: usize = 9;
const DECIDE_END: usize = 10;

/// What a traced step was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepKind {
    /// The count of the source's level (the first row: the source, seeded into its owner's
    /// worklist).
    #[default]
    Source,
    /// A top-down push step.
    Push,
    /// A bottom-up pull step.
    Pull,
}

impl StepKind {
    /// `source`, `push` or `pull`.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Source => "source",
            StepKind::Push => "push",
            StepKind::Pull => "pull",
        }
    }
}

/// The time of each phase of one step on one device, in nanoseconds; `None` where the step
/// did not run the phase. Each phase ends when the whole grid has finished it (its grid
/// barrier included) and starts where the previous one ended (the first at the previous
/// step's decide, or the kernel's start).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    /// The push expand or the pull (a pull that builds the frontier: with its peer stores).
    pub step: Option<u64>,
    /// A push step's hub phase (when it listed hubs).
    pub hubs: Option<u64>,
    /// A dense push's exchange of the devices' append counts and the pass that stores its
    /// discoveries into the peers' inboxes (as lists where it found few, else as words).
    pub send: Option<u64>,
    /// The cross-device exchange that makes them visible (a sparse push's: of its lists'
    /// lengths).
    pub exchange: Option<u64>,
    /// Building the next frontier: counting a push's appends on one device (and the source's
    /// push on several, which every device expands itself); on several, otherwise,
    /// applying the received words (after a pull), the received lists (after a sparse push,
    /// or a dense one that sent lists), or the received words and the discovery bitmap with
    /// the count of the appended vertices (after a dense push that sent words).
    pub scan: Option<u64>,
    /// Summing the counters across the devices (after a pull, or a push that sent words: its
    /// last exchange; none after a push that sent lists) and the switch rule.
    pub decide: Option<u64>,
}

impl PhaseTimes {
    /// The phases' names and times in the kernel's order.
    pub fn named(&self) -> [(&'static str, Option<u64>); 6] {
        [
            ("step", self.step),
            ("hubs", self.hubs),
            ("send", self.send),
            ("exchange", self.exchange),
            ("scan", self.scan),
            ("decide", self.decide),
        ]
    }
}

/// One level step on one device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepTrace {
    /// What the step was.
    pub kind: StepKind,
    /// The level it expanded (its discoveries have level + 1; the source's count: 0).
    pub level: u32,
    /// Vertices it found on every device (the source's count: the source).
    pub found: u64,
    /// Of them, this device's next frontier: those it owns.
    pub found_here: u64,
    /// Hubs a push step listed for its hub phase.
    pub hubs: u64,
    /// Where the time went.
    pub phases: PhaseTimes,
}

/// One device's trace of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceTrace {
    /// The kernel's start, in nanoseconds after device 0's (negative: before it) as the two
    /// GPUs' clocks read: across GPUs only as good as their clocks agree (see the module
    /// docs); `end_ns - start_ns` is the kernel's span on its own clock.
    pub start_ns: i64,
    /// The kernel's end, in nanoseconds after device 0's start (as `start_ns`).
    pub end_ns: i64,
    /// The steps, in order (at most the first 64).
    pub steps: Vec<StepTrace>,
    /// Steps run past the stored ones (not traced).
    pub steps_dropped: u64,
}

/// Every device's trace of a device-driven run, by device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirectionTrace {
    /// By device (rank order).
    pub devices: Vec<DeviceTrace>,
}

/// Decodes the trace buffers of every device (rank order, [`TRACE_WORDS`] each; shorter ones
/// read as zeros). Never panics: stamps out of order give zero-length phases.
pub(crate) fn decode(buffers: &[Vec<u64>]) -> DirectionTrace {
    let word = |b: &[u64], i: usize| b.get(i).copied().unwrap_or(0);
    let origin = buffers.first().map_or(0, |b| word(b, START));
    let relative = |t: u64| (i128::from(t) - i128::from(origin)).clamp(-1 << 62, 1 << 62) as i64;
    let devices = buffers
        .iter()
        .map(|b| {
            let start = word(b, START);
            let produced = word(b, STEPS);
            let stored = produced.min(ROWS as u64) as usize;
            let mut previous = start;
            let steps = (0..stored)
                .map(|r| {
                    let row = |slot: usize| word(b, HEADER + r * SLOTS + slot);
                    let mut since = |slot: usize| {
                        let t = row(slot);
                        (t != 0).then(|| {
                            let d = t.saturating_sub(previous);
                            previous = previous.max(t);
                            d
                        })
                    };
                    let phases = PhaseTimes {
                        step: since(STEP_END),
                        hubs: since(HUBS_END),
                        send: since(SEND_END),
                        exchange: since(EXCHANGE_END),
                        scan: since(SCAN_END),
                        decide: since(DECIDE_END),
                    };
                    StepTrace {
                        kind: match row(KIND) {
                            1 => StepKind::Push,
                            2 => StepKind::Pull,
                            _ => StepKind::Source,
                        },
                        level: row(LEVEL).min(u64::from(u32::MAX)) as u32,
                        found: row(FOUND),
                        found_here: row(FOUND_HERE),
                        hubs: row(HUBS),
                        phases,
                    }
                })
                .collect();
            DeviceTrace {
                start_ns: relative(start),
                end_ns: relative(word(b, END)),
                steps,
                steps_dropped: produced.saturating_sub(stored as u64),
            }
        })
        .collect();
    DirectionTrace { devices }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A buffer with `rows` (kind, level, found, found_here, hubs, [stamps]) starting at
    /// `start`.
    fn buffer(start: u64, end: u64, produced: u64, rows: &[[u64; SLOTS]]) -> Vec<u64> {
        let mut b = vec![0u64; TRACE_WORDS];
        b[START] = start;
        b[END] = end;
        b[STEPS] = produced;
        for (r, row) in rows.iter().enumerate() {
            b[HEADER + r * SLOTS..HEADER + (r + 1) * SLOTS].copy_from_slice(row);
        }
        b
    }

    #[test]
    fn phases_run_from_the_previous_stamp_and_absent_ones_are_none() {
        let source = [0, 0, 1, 1, 0, 0, 0, 0, 0, 1_100, 1_300];
        let push = [1, 0, 40, 25, 3, 2_300, 2_500, 2_600, 3_000, 3_500, 4_000];
        let pull = [2, 1, 900, 500, 0, 5_000, 0, 0, 0, 6_000, 6_500];
        let t = decode(&[
            buffer(1_000, 7_000, 3, &[source, push, pull]),
            buffer(1_200, 6_900, 3, &[]),
        ]);
        let d0 = &t.devices[0];
        assert_eq!((d0.start_ns, d0.end_ns, d0.steps_dropped), (0, 6_000, 0));
        assert_eq!(d0.steps.len(), 3);
        let s = d0.steps[0];
        assert_eq!((s.kind, s.found, s.found_here), (StepKind::Source, 1, 1));
        assert_eq!(s.phases.scan, Some(100));
        assert_eq!(s.phases.decide, Some(200));
        assert_eq!(s.phases.step, None);
        let p = d0.steps[1].phases;
        assert_eq!(d0.steps[1].kind, StepKind::Push);
        assert_eq!(d0.steps[1].hubs, 3);
        assert_eq!(
            [p.step, p.hubs, p.send, p.exchange, p.scan, p.decide],
            [1_000, 200, 100, 400, 500, 500].map(Some)
        );
        let q = d0.steps[2];
        assert_eq!(
            (q.kind, q.level, q.found, q.found_here),
            (StepKind::Pull, 1, 900, 500)
        );
        assert_eq!(q.phases.step, Some(1_000));
        assert_eq!((q.phases.hubs, q.phases.send), (None, None));
        assert_eq!(q.phases.scan, Some(1_000));
        let d1 = &t.devices[1];
        assert_eq!((d1.start_ns, d1.end_ns), (200, 5_900));
    }

    #[test]
    fn steps_past_the_stored_rows_are_counted_as_dropped() {
        let t = decode(&[buffer(5, 9, ROWS as u64 + 7, &[])]);
        assert_eq!(t.devices[0].steps.len(), ROWS);
        assert_eq!(t.devices[0].steps_dropped, 7);
    }

    proptest! {
        /// Any buffer decodes without panicking, into the steps it says it produced (those
        /// stored, the rest counted as dropped).
        #[test]
        fn any_buffer_decodes(words in proptest::collection::vec(any::<u64>(), 0..TRACE_WORDS + 8)) {
            let t = decode(std::slice::from_ref(&words));
            prop_assert_eq!(t.devices.len(), 1);
            let produced = words.get(STEPS).copied().unwrap_or(0);
            let d = &t.devices[0];
            prop_assert_eq!(d.steps.len() as u64, produced.min(ROWS as u64));
            prop_assert_eq!(d.steps.len() as u64 + d.steps_dropped, produced);
        }

        /// Increasing stamps give phases that sum to the row's span.
        #[test]
        fn increasing_stamps_sum_to_the_span(gaps in proptest::collection::vec(1u64..1_000_000, 6)) {
            let mut t = 10u64;
            let mut stamps = [0u64; 6];
            for (s, g) in stamps.iter_mut().zip(&gaps) {
                t += g;
                *s = t;
            }
            let row = [1, 0, 0, 0, 0, stamps[0], stamps[1], stamps[2], stamps[3], stamps[4], stamps[5]];
            let d = decode(&[buffer(10, t, 1, &[row])]);
            let phases = d.devices[0].steps[0].phases.named();
            let sum: u64 = phases.iter().filter_map(|(_, x)| *x).sum();
            prop_assert_eq!(sum, t - 10);
        }
    }
}
