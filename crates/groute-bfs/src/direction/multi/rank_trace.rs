//! [`LeaderTrace`]: the per-level phases of a rank leader's run across processes
//! (`BfsRanks::set_trace`, the example's `--do-trace` under `mpirun`), from timing events on
//! device 0's stream: the step (a push's with the listing of its frontier), counting a push's
//! finds and marking the process's discoveries (with several devices per process, also
//! their exchange within it), the gather between the processes, applying
//! the others' bitmaps, and the gap until the next step starts (the host's wait for the
//! counts, their sum over the processes and the next launch). Only CUDA devices record;
//! events cost no synchronisation.

use groute_core::{Context, Error, Event, Stream};

use crate::direction::{DeviceTrace, DirectionTrace, PhaseTimes, StepKind, StepTrace};

/// Levels traced (the rest are counted as dropped), as in the device-driven trace.
const TRACED_LEVELS: usize = 64;

/// The phases' boundaries on device 0's stream, in order.
#[derive(Clone, Copy)]
pub(super) enum Mark {
    /// Before the step's launch.
    StepStart,
    /// After the step.
    StepEnd,
    /// After the process's bitmap is marked.
    Marked,
    /// After the gather between the processes.
    Gathered,
    /// After the others' bitmaps are applied (the frontier counted).
    Scanned,
}

/// One level's events and counts.
struct Level {
    kind: StepKind,
    level: u32,
    events: [Option<Event>; 5],
    found: u64,
    found_here: u64,
}

/// A rank leader's trace of one run.
pub(super) struct LeaderTrace {
    context: Context,
    levels: Vec<Level>,
    dropped: u64,
}

impl LeaderTrace {
    /// A trace of device 0 of `context`'s run.
    pub(super) fn new(context: &Context) -> Self {
        LeaderTrace {
            context: context.clone(),
            levels: Vec::new(),
            dropped: 0,
        }
    }

    /// A new level step of `kind` expanding `level`.
    pub(super) fn begin(&mut self, kind: StepKind, level: u32) {
        if self.levels.len() == TRACED_LEVELS {
            self.dropped += 1;
            return;
        }
        self.levels.push(Level {
            kind,
            level,
            events: Default::default(),
            found: 0,
            found_here: 0,
        });
    }

    /// Records `mark` of the current level on `stream` (device 0's).
    pub(super) fn mark(&mut self, mark: Mark, stream: &Stream) -> Result<(), Error> {
        if self.dropped > 0 {
            return Ok(());
        }
        let Some(level) = self.levels.last_mut() else {
            return Ok(());
        };
        level.events[mark as usize] = Some(self.context.devices()[0].record_timing(stream)?);
        Ok(())
    }

    /// The current level's discoveries: over every process, and device 0's own.
    pub(super) fn found(&mut self, found: u64, found_here: u64) {
        if self.dropped == 0
            && let Some(level) = self.levels.last_mut()
        {
            (level.found, level.found_here) = (found, found_here);
        }
    }

    /// The trace, once the stream has passed every event.
    pub(super) fn finish(self) -> Result<DirectionTrace, Error> {
        let ns = |a: &Option<Event>, b: &Option<Event>| -> Result<Option<u64>, Error> {
            match (a, b) {
                (Some(a), Some(b)) => Ok(Some(Event::elapsed(a, b)?.as_nanos() as u64)),
                _ => Ok(None),
            }
        };
        let mut steps = Vec::with_capacity(self.levels.len());
        for (i, level) in self.levels.iter().enumerate() {
            let e = &level.events;
            let next_start = self.levels.get(i + 1).map(|l| &l.events[0]);
            steps.push(StepTrace {
                kind: level.kind,
                level: level.level,
                found: level.found,
                found_here: level.found_here,
                hubs: 0,
                phases: PhaseTimes {
                    step: ns(&e[0], &e[1])?,
                    hubs: None,
                    send: ns(&e[1], &e[2])?,
                    exchange: ns(&e[2], &e[3])?,
                    scan: ns(&e[3], &e[4])?,
                    decide: match next_start {
                        Some(next) => ns(&e[4], next)?,
                        None => None,
                    },
                },
            });
        }
        let first = self.levels.first().and_then(|l| l.events[0].clone());
        let last = self.levels.last().and_then(|l| l.events[4].clone());
        let end_ns = ns(&first, &last)?.unwrap_or(0);
        Ok(DirectionTrace {
            devices: vec![DeviceTrace {
                start_ns: 0,
                end_ns: i64::try_from(end_ns).unwrap_or(i64::MAX),
                steps,
                steps_dropped: self.dropped,
            }],
        })
    }
}
