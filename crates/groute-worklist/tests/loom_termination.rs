//! Model checks of the host termination protocol and the soft-priority consensus, with loom.
//!
//! Two or three "devices" (loom threads) run the drivers' protocol on a small scripted
//! workload: seed items, each expanded item producing 0 to 2 items sent to the next device's
//! inbox. Every step reports what it consumed and produced in ONE update
//! ([`TerminationCounter::report`], [`PriorityCounter::report`]) before anything it produced
//! becomes visible. loom runs every interleaving of the threads (and every outcome its memory
//! model allows for the atomics) up to a preemption bound, and the model asserts:
//!
//! - (a) the count reaches zero exactly once;
//! - (b) when it does, no item exists anywhere: none in an inbox, a worklist, a low list or a
//!   step, and every item of the script was expanded (no premature termination);
//! - (c) every execution ends: all threads see the end and join (a thread spinning forever
//!   makes loom fail the model for exceeding its branch limit);
//! - (d) with soft priority: an epoch advances only when no active item of an earlier epoch
//!   exists and every deferred item is at or above the old threshold, thresholds only rise,
//!   every device re-examines every epoch exactly once and in order, and no item is lost by
//!   deferral (every item is expanded exactly once).
//!
//! The truth the assertions compare with is a ghost record updated eagerly, under one lock,
//! at the moment an item is created or retired (before the protocol's update). Two broken
//! protocols are negative controls: the model must find their premature termination.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p groute-worklist --test loom_termination`
//! (`.ci/run` does, in its own target directory); `LOOM_MAX_PREEMPTIONS` overrides the bounds
//! (3 preemptions on two devices, 1 on three). Without `--cfg loom` this file is empty.
#![cfg(loom)]

#[path = "common/loom_model.rs"]
mod loom_model;

use std::collections::VecDeque;

use groute_worklist::{
    PriorityCounter, PriorityEpoch, StepCounts, StepOutcome, TerminationCounter, defers,
};
use loom::sync::{Arc, Mutex};
use loom::thread;
use loom_model::model_builder;

/// A scripted workload: item `i` has priority `prio[i]` and, when expanded, produces the
/// items `children[i]`, sent to the next device in ring order.
#[derive(Clone, Copy, Debug)]
struct Workload {
    /// (item, device) pairs, in the devices' inboxes before the drivers start.
    seeds: &'static [(usize, usize)],
    children: &'static [&'static [usize]],
    prio: &'static [u32],
    devices: usize,
    /// loom's preemption bound for this workload (`LOOM_MAX_PREEMPTIONS` overrides it).
    preemptions: usize,
}

impl Workload {
    fn items(&self) -> usize {
        self.children.len()
    }
}

/// How a driver reports a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reporting {
    /// The protocol: one update per step, after the step and before anything it produced
    /// is visible to another step.
    OneUpdate,
    /// Broken: the consumption and the production of a step reported in two updates,
    /// consumption first.
    ConsumedFirst,
    /// Broken: the produced items sent before the update that reports them.
    SentFirst,
}

/// The two counters, seen by the model through one interface.
trait Counter: Send + Sync + 'static {
    fn report(&self, step: StepCounts) -> StepOutcome;
    fn is_done(&self) -> bool;
    fn epoch(&self) -> u64;
    fn current(&self) -> PriorityEpoch;
    fn note_late(&self, n: u64);
    fn late_items(&self) -> u64;
}

impl Counter for TerminationCounter {
    fn report(&self, step: StepCounts) -> StepOutcome {
        assert_eq!(
            (step.deferred_added, step.deferred_taken),
            (0, 0),
            "nothing is deferred without soft priority"
        );
        if TerminationCounter::report(self, step.produced, step.consumed) {
            StepOutcome::Ended
        } else {
            StepOutcome::Continue
        }
    }
    fn is_done(&self) -> bool {
        TerminationCounter::is_done(self)
    }
    fn epoch(&self) -> u64 {
        0
    }
    fn current(&self) -> PriorityEpoch {
        PriorityEpoch {
            epoch: 0,
            threshold: u32::MAX,
        }
    }
    fn note_late(&self, n: u64) {
        TerminationCounter::note_late(self, n);
    }
    fn late_items(&self) -> u64 {
        TerminationCounter::late_items(self)
    }
}

impl Counter for PriorityCounter {
    fn report(&self, step: StepCounts) -> StepOutcome {
        PriorityCounter::report(self, step)
    }
    fn is_done(&self) -> bool {
        PriorityCounter::is_done(self)
    }
    fn epoch(&self) -> u64 {
        PriorityCounter::epoch(self)
    }
    fn current(&self) -> PriorityEpoch {
        PriorityCounter::current(self)
    }
    fn note_late(&self, n: u64) {
        PriorityCounter::note_late(self, n);
    }
    fn late_items(&self) -> u64 {
        PriorityCounter::late_items(self)
    }
}

/// An active item in an inbox or a worklist, tagged with the latest epoch it descends from
/// (items created after an advance carry its epoch or a later one).
#[derive(Clone, Copy, Debug)]
struct Held {
    item: usize,
    tag: u64,
}

/// The truth: what exists, updated eagerly when an item is created or retired.
#[derive(Debug)]
struct Ghost {
    /// Active items that exist (in an inbox, a worklist or a step), by tag.
    active: Vec<u64>,
    /// Priorities of the items in the low lists.
    deferred: Vec<u32>,
    /// How many times each item was expanded.
    expanded: Vec<u32>,
}

impl Ghost {
    fn add_active(&mut self, tag: u64, n: usize) {
        let tag = tag as usize;
        if self.active.len() <= tag {
            self.active.resize(tag + 1, 0);
        }
        self.active[tag] += n as u64;
    }

    fn retire_active(&mut self, tag: u64) {
        self.active[tag as usize] -= 1;
    }

    fn retire_deferred(&mut self, prio: u32) {
        let at = self.deferred.iter().position(|&p| p == prio);
        let at = at.unwrap_or_else(|| panic!("no deferred item of priority {prio}"));
        self.deferred.swap_remove(at);
    }
}

/// What one device saw.
#[derive(Debug, Default)]
struct DeviceLog {
    /// Updates of this device that ended the run.
    ended: usize,
    /// The epochs this device re-examined, in order.
    reexamined: Vec<u64>,
    /// The advances this device's updates made: (epoch, threshold).
    advances: Vec<(u64, u32)>,
}

struct Shared<C> {
    counter: C,
    inboxes: Vec<Mutex<VecDeque<Held>>>,
    ghost: Mutex<Ghost>,
    workload: Workload,
    reporting: Reporting,
}

impl<C: Counter> Shared<C> {
    /// (b): the update that ended the run found nothing outstanding.
    fn check_ended(&self) {
        let g = self.ghost.lock().unwrap();
        let nothing_left = g.active.iter().all(|&n| n == 0) && g.deferred.is_empty();
        let all_expanded = g.expanded.iter().all(|&n| n == 1);
        assert!(
            nothing_left && all_expanded,
            "premature termination: the count reached zero while items remain ({g:?})"
        );
        for (device, inbox) in self.inboxes.iter().enumerate() {
            let inbox = inbox.lock().unwrap();
            assert!(
                inbox.is_empty(),
                "premature termination: device {device}'s inbox holds {inbox:?}"
            );
        }
    }

    /// (d): an advance from `old_threshold` to epoch `epoch` found no earlier active work
    /// and nothing deferred below the old threshold.
    fn check_advanced(&self, epoch: u64, threshold: u32, old_threshold: u32) {
        assert!(
            threshold > old_threshold,
            "the threshold fell from {old_threshold} to {threshold}"
        );
        let g = self.ghost.lock().unwrap();
        let earlier = g.active.iter().take(epoch as usize).sum::<u64>();
        assert!(
            earlier == 0,
            "premature advance to epoch {epoch}: {earlier} active items of earlier epochs exist ({g:?})"
        );
        assert!(
            g.deferred.iter().all(|&p| p >= old_threshold),
            "advance to epoch {epoch} with work below the old threshold {old_threshold} deferred ({g:?})"
        );
    }

    fn handle(&self, outcome: StepOutcome, old_threshold: u32, log: &mut DeviceLog) {
        match outcome {
            StepOutcome::Continue => {}
            StepOutcome::Ended => {
                log.ended += 1;
                self.check_ended();
            }
            StepOutcome::Advanced { epoch, threshold } => {
                self.check_advanced(epoch, threshold, old_threshold);
                log.advances.push((epoch, threshold));
            }
        }
    }

    /// Reports a step that consumed `consumed` items and produced `produced`, sends `out` to
    /// `dst`, in the order `self.reporting` says.
    fn report_and_send(
        &self,
        step: StepCounts,
        out: Vec<Held>,
        dst: usize,
        old_threshold: u32,
        log: &mut DeviceLog,
    ) {
        let send = |out: Vec<Held>| {
            if !out.is_empty() {
                self.inboxes[dst].lock().unwrap().extend(out);
            }
        };
        match self.reporting {
            Reporting::OneUpdate => {
                self.handle(self.counter.report(step), old_threshold, log);
                send(out);
            }
            Reporting::ConsumedFirst => {
                let consumed = StepCounts {
                    consumed: step.consumed,
                    ..StepCounts::default()
                };
                let produced = StepCounts {
                    consumed: 0,
                    ..step
                };
                self.handle(self.counter.report(consumed), old_threshold, log);
                self.handle(self.counter.report(produced), old_threshold, log);
                send(out);
            }
            Reporting::SentFirst => {
                send(out);
                self.handle(self.counter.report(step), old_threshold, log);
            }
        }
    }

    /// One device's driver loop.
    fn device(&self, me: usize) -> DeviceLog {
        let wl = self.workload;
        let dst = (me + 1) % wl.devices;
        let mut log = DeviceLog::default();
        let mut seen = 0;
        let mut threshold = self.counter.current().threshold;
        let mut worklist = VecDeque::new();
        let mut low: Vec<usize> = Vec::new();
        loop {
            if self.counter.is_done() {
                return log;
            }
            // A new epoch: re-examine the low list under its threshold, consume the token.
            if self.counter.epoch() != seen {
                let now = self.counter.current();
                assert_eq!(
                    now.epoch,
                    seen + 1,
                    "premature advance: device {me} missed an epoch: it saw {seen}, the counter is at {}",
                    now.epoch
                );
                let old_threshold = threshold;
                (seen, threshold) = (now.epoch, now.threshold);
                log.reexamined.push(seen);
                let taken = low.len() as u64;
                let (still_low, moved): (Vec<usize>, Vec<usize>) =
                    low.drain(..).partition(|&i| defers(wl.prio[i], threshold));
                {
                    let mut g = self.ghost.lock().unwrap();
                    for &i in &moved {
                        g.retire_deferred(wl.prio[i]);
                    }
                    g.add_active(seen, moved.len());
                }
                worklist.extend(moved.iter().map(|&item| Held { item, tag: seen }));
                let step = StepCounts {
                    produced: moved.len() as u64,
                    consumed: 1,
                    deferred_taken: taken,
                    deferred_added: still_low.len() as u64,
                    min_deferred_prio: still_low
                        .iter()
                        .map(|&i| wl.prio[i])
                        .min()
                        .unwrap_or(u32::MAX),
                };
                low = still_low;
                self.report_and_send(step, Vec::new(), dst, old_threshold, &mut log);
                continue;
            }
            // One step: the next worklist item, else the next received one.
            let from_worklist = worklist.pop_front();
            let next = match from_worklist {
                Some(held) => Some((held, true)),
                None => self.inboxes[me]
                    .lock()
                    .unwrap()
                    .pop_front()
                    .map(|h| (h, false)),
            };
            let Some((held, kept)) = next else {
                thread::yield_now();
                continue;
            };
            if self.counter.is_done() {
                self.counter.note_late(1);
                return log;
            }
            let prio = wl.prio[held.item];
            let tag = held.tag.max(seen);
            if !kept && defers(prio, threshold) {
                // The receive split defers it: active -> deferred in one update.
                {
                    let mut g = self.ghost.lock().unwrap();
                    g.retire_active(held.tag);
                    g.deferred.push(prio);
                }
                low.push(held.item);
                let step = StepCounts {
                    consumed: 1,
                    deferred_added: 1,
                    min_deferred_prio: prio,
                    ..StepCounts::default()
                };
                self.report_and_send(step, Vec::new(), dst, threshold, &mut log);
                continue;
            }
            // Expand: consume the item, produce its children for the next device.
            let children = wl.children[held.item];
            {
                let mut g = self.ghost.lock().unwrap();
                g.retire_active(held.tag);
                g.add_active(tag, children.len());
                g.expanded[held.item] += 1;
            }
            let out = children.iter().map(|&item| Held { item, tag }).collect();
            let step = StepCounts {
                produced: children.len() as u64,
                consumed: 1,
                ..StepCounts::default()
            };
            self.report_and_send(step, out, dst, threshold, &mut log);
        }
    }
}

/// Runs `workload` under every interleaving up to the bound and checks (a) to (d).
fn model<C: Counter>(workload: Workload, reporting: Reporting, counter: fn(usize) -> C) {
    model_builder(workload.preemptions).check(move || {
        let wl = workload;
        let shared = Arc::new(Shared {
            counter: counter(wl.devices),
            inboxes: (0..wl.devices)
                .map(|_| Mutex::new(VecDeque::new()))
                .collect(),
            ghost: Mutex::new(Ghost {
                active: vec![wl.seeds.len() as u64],
                deferred: Vec::new(),
                expanded: vec![0; wl.items()],
            }),
            workload: wl,
            reporting,
        });
        // The seeds are reported before any driver starts.
        assert_eq!(
            shared
                .counter
                .report(StepCounts::produced(wl.seeds.len() as u64)),
            StepOutcome::Continue
        );
        for &(item, device) in wl.seeds {
            shared.inboxes[device]
                .lock()
                .unwrap()
                .push_back(Held { item, tag: 0 });
        }
        let threads: Vec<_> = (0..wl.devices)
            .map(|me| {
                let shared = Arc::clone(&shared);
                thread::spawn(move || shared.device(me))
            })
            .collect();
        // (c) every driver sees the end and returns.
        let logs: Vec<DeviceLog> = threads
            .into_iter()
            .map(|t| t.join().expect("a device thread panicked"))
            .collect();
        // (a) zero exactly once.
        let ended: usize = logs.iter().map(|l| l.ended).sum();
        assert_eq!(ended, 1, "the count reached zero {ended} times ({logs:?})");
        assert!(shared.counter.is_done());
        assert_eq!(shared.counter.late_items(), 0, "items seen after the end");
        // (d) nothing lost: every item expanded exactly once.
        let g = shared.ghost.lock().unwrap();
        assert!(
            g.expanded.iter().all(|&n| n == 1),
            "an item was lost or expanded twice: {g:?}"
        );
        // (d) epochs 1..=k, thresholds rising, every device re-examined each exactly once.
        let mut advances: Vec<(u64, u32)> = logs
            .iter()
            .flat_map(|l| l.advances.iter().copied())
            .collect();
        advances.sort_unstable();
        let epochs: Vec<u64> = advances.iter().map(|&(e, _)| e).collect();
        let expected: Vec<u64> = (1..=advances.len() as u64).collect();
        assert_eq!(epochs, expected, "advances out of order: {advances:?}");
        assert!(
            advances.windows(2).all(|w| w[0].1 < w[1].1),
            "thresholds must rise: {advances:?}"
        );
        for (device, log) in logs.iter().enumerate() {
            assert_eq!(
                log.reexamined, expected,
                "device {device} did not re-examine every epoch once, in order"
            );
        }
    });
}

fn termination_counter(_devices: usize) -> TerminationCounter {
    TerminationCounter::new()
}

fn priority_counter(devices: usize) -> PriorityCounter {
    PriorityCounter::new(devices, Some(10))
}

/// Two seeds, one per device; the first expands into two items for the other device.
const TWO_DEVICES: Workload = Workload {
    seeds: &[(0, 0), (1, 1)],
    children: &[&[2, 3], &[], &[], &[]],
    prio: &[0; 4],
    devices: 2,
    preemptions: 3,
};

/// Soft priority (bands of 10): the seeds' children fall in three bands, so the run needs
/// two advances, one of them jumping over an empty band.
const PRIORITIES: Workload = Workload {
    seeds: &[(0, 0), (1, 1)],
    children: &[&[2, 3], &[4], &[], &[], &[]],
    prio: &[0, 0, 15, 3, 35],
    devices: 2,
    preemptions: 3,
};

#[test]
fn termination_ends_exactly_once_with_nothing_left_on_two_devices() {
    model(TWO_DEVICES, Reporting::OneUpdate, termination_counter);
}

#[test]
fn priority_consensus_advances_only_when_no_earlier_work_exists_and_ends_once() {
    model(PRIORITIES, Reporting::OneUpdate, priority_counter);
}

#[test]
#[should_panic(expected = "premature termination")]
fn model_finds_premature_termination_when_consumption_is_reported_before_production() {
    model(TWO_DEVICES, Reporting::ConsumedFirst, termination_counter);
}

#[test]
#[should_panic(expected = "premature termination")]
fn model_finds_premature_termination_when_items_are_sent_before_they_are_reported() {
    model(TWO_DEVICES, Reporting::SentFirst, termination_counter);
}

#[test]
#[should_panic(expected = "premature")]
fn model_finds_premature_advance_or_end_when_priority_steps_split_their_update() {
    model(PRIORITIES, Reporting::ConsumedFirst, priority_counter);
}
