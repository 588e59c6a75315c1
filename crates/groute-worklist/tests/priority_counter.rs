//! The soft-priority counter's state machine: termination, epoch advances, tokens, stale
//! steps racing with an advance, and a multi-threaded model of the drivers' protocol.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam::channel::{Receiver, Sender, unbounded};
use groute_worklist::{PriorityCounter, StepCounts, StepOutcome, defers};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn consume(n: u64) -> StepCounts {
    StepCounts {
        consumed: n,
        ..StepCounts::default()
    }
}

/// The outcome of an update that advanced the run to `epoch`, at `threshold`.
fn advanced(epoch: u64, threshold: u32) -> StepOutcome {
    StepOutcome::Advanced { epoch, threshold }
}

/// A step that consumed one item and deferred `added` items, the smallest of priority
/// `min_prio`.
fn deferring(added: u64, min_prio: u32) -> StepCounts {
    StepCounts {
        consumed: 1,
        deferred_added: added,
        min_deferred_prio: min_prio,
        ..StepCounts::default()
    }
}

/// A step that consumed one item and took `taken` deferred items back, producing `produced`.
fn taking_back(taken: u64, produced: u64) -> StepCounts {
    StepCounts {
        consumed: 1,
        produced,
        deferred_taken: taken,
        ..StepCounts::default()
    }
}

#[test]
fn priority_off_behaves_like_the_single_count() {
    for delta in [None, Some(0)] {
        let c = PriorityCounter::new(3, delta);
        assert!(!c.enabled());
        assert_eq!(c.threshold(), u32::MAX);
        assert_eq!(c.report(StepCounts::produced(1)), StepOutcome::Continue);
        let step = StepCounts {
            consumed: 1,
            produced: 2,
            ..StepCounts::default()
        };
        assert_eq!(c.report(step), StepOutcome::Continue);
        assert_eq!(c.report(consume(1)), StepOutcome::Continue);
        assert!(!c.is_done());
        assert_eq!(c.report(consume(1)), StepOutcome::Ended);
        assert!(c.is_done());
        assert_eq!(c.epoch(), 0);
    }
}

#[test]
fn nothing_is_deferred_at_the_top_threshold() {
    assert!(!defers(u32::MAX, u32::MAX));
    assert!(!defers(7, 8));
    assert!(defers(8, 8));
    assert!(defers(u32::MAX, 8));
}

#[test]
fn an_empty_step_changes_nothing() {
    let c = PriorityCounter::new(1, Some(4));
    assert_eq!(c.report(StepCounts::default()), StepOutcome::Continue);
    assert!(!c.is_done());
}

#[test]
fn advance_adds_one_token_per_device_and_jumps_to_the_smallest_deferred_band() {
    let c = PriorityCounter::new(4, Some(10));
    assert_eq!(c.current().threshold, 10);
    c.report(StepCounts::produced(1));
    // The seed's step defers two items, the smallest of priority 57.
    let step = deferring(2, 57);
    assert_eq!(c.report(step), advanced(1, 60));
    assert_eq!((c.active(), c.deferred(), c.epoch()), (4, 2, 1));
    // Three devices consume their tokens with empty low lists: no advance, no end.
    for _ in 0..3 {
        assert_eq!(c.report(consume(1)), StepOutcome::Continue);
    }
    // The fourth re-examines: one item moves, one stays (priority 75).
    let reexamined = StepCounts {
        consumed: 1,
        produced: 1,
        deferred_taken: 2,
        deferred_added: 1,
        min_deferred_prio: 75,
    };
    assert_eq!(c.report(reexamined), StepOutcome::Continue);
    assert_eq!(c.report(consume(1)), advanced(2, 80));
}

#[test]
fn advance_moves_at_least_one_band_when_the_minimum_is_stale() {
    // A deferral reported with a priority below the threshold (a stale step) still moves
    // the threshold up by a whole band.
    let c = PriorityCounter::new(1, Some(10));
    c.report(StepCounts::produced(1));
    let step = deferring(1, 0);
    assert_eq!(c.report(step), advanced(1, 20));
}

#[test]
fn threshold_saturates_at_the_top() {
    let c = PriorityCounter::new(1, Some(u32::MAX / 2 + 1));
    c.report(StepCounts::produced(1));
    let step = deferring(1, u32::MAX - 1);
    assert_eq!(c.report(step), advanced(1, u32::MAX));
}

#[test]
fn a_stale_step_after_an_advance_cannot_end_the_run_early() {
    let c = PriorityCounter::new(2, Some(5));
    c.report(StepCounts::produced(2)); // one item per device
    // Device 0 finishes its item and defers one (priority 7); device 1 is still expanding.
    let d0 = deferring(1, 7);
    assert_eq!(c.report(d0), StepOutcome::Continue);
    // Device 1's step, split with the threshold 5 of epoch 0, defers one item of priority 6:
    // its update brings `active` to 0 and advances.
    let d1 = deferring(1, 6);
    assert_eq!(c.report(d1), advanced(1, 10));
    // Device 0 re-examines at once, moves its item, expands it, and the expansion (split
    // with the new threshold) produces nothing. Device 1 still holds its token.
    let re0 = taking_back(1, 1);
    assert_eq!(c.report(re0), StepOutcome::Continue);
    assert_eq!(c.report(consume(1)), StepOutcome::Continue);
    assert!(!c.is_done());
    // Device 1, before noticing the epoch, runs one more stale step: a received item of
    // priority 8 is deferred under the old threshold 5. Still no end, no advance.
    c.report(StepCounts::produced(1)); // (the item arrived: produced by a sender)
    let stale = deferring(1, 8);
    assert_eq!(c.report(stale), StepOutcome::Continue);
    assert_eq!((c.active(), c.deferred(), c.epoch()), (1, 2, 1));
    // Now device 1 re-examines both of its items under threshold 10 and consumes its token.
    let re1 = taking_back(2, 2);
    assert_eq!(c.report(re1), StepOutcome::Continue);
    assert_eq!(c.report(consume(1)), StepOutcome::Continue);
    assert_eq!(c.report(consume(1)), StepOutcome::Ended);
    assert_eq!(c.epoch(), 1);
}

#[test]
#[should_panic(expected = "retired twice")]
fn retiring_an_unreported_item_is_a_caller_bug() {
    let c = PriorityCounter::new(1, Some(3));
    c.report(StepCounts::produced(1));
    c.report(StepCounts {
        deferred_taken: 1,
        ..StepCounts::default()
    });
}

/// One device of the model: a worklist, a low list and an inbox, following the drivers'
/// protocol with the counter. Items are priorities; expanding item `p` below `limit` makes
/// up to two children of priority `p + 1..=p + 8`, sent to random devices.
struct ModelDevice {
    id: usize,
    rng: ChaCha8Rng,
    local: VecDeque<u32>,
    low: Vec<u32>,
    seen_epoch: u64,
    threshold: u32,
}

struct Model {
    counter: PriorityCounter,
    inboxes: Vec<(Sender<u32>, Receiver<u32>)>,
    limit: u32,
    expanded: AtomicU64,
    created: AtomicU64,
    /// Items expanded at or above the threshold of their device (must stay 0).
    out_of_band: AtomicU64,
}

impl ModelDevice {
    fn split(&mut self, items: &[u32], step: &mut StepCounts) {
        for &p in items {
            if defers(p, self.threshold) {
                self.low.push(p);
                step.deferred_added += 1;
                step.min_deferred_prio = step.min_deferred_prio.min(p);
            } else {
                self.local.push_back(p);
                step.produced += 1;
            }
        }
    }

    /// Runs the driver loop; returns whether this device's update ended the run.
    fn run(&mut self, m: &Model) -> bool {
        loop {
            if m.counter.is_done() {
                return false;
            }
            if m.counter.epoch() != self.seen_epoch {
                let now = m.counter.current();
                self.threshold = now.threshold;
                let taken = std::mem::take(&mut self.low);
                let mut step = StepCounts {
                    consumed: now.epoch - self.seen_epoch,
                    deferred_taken: taken.len() as u64,
                    ..StepCounts::default()
                };
                self.seen_epoch = now.epoch;
                self.split(&taken, &mut step);
                if m.counter.report(step) == StepOutcome::Ended {
                    return true;
                }
            }
            let received: Vec<u32> = m.inboxes[self.id].1.try_iter().collect();
            if !received.is_empty() {
                let mut step = StepCounts {
                    consumed: received.len() as u64,
                    ..StepCounts::default()
                };
                self.split(&received, &mut step);
                if m.counter.report(step) == StepOutcome::Ended {
                    return true;
                }
            }
            if let Some(p) = self.local.pop_front() {
                if defers(p, self.threshold) {
                    m.out_of_band.fetch_add(1, Ordering::Relaxed);
                }
                m.expanded.fetch_add(1, Ordering::Relaxed);
                let mut step = consume(1);
                let mut mine = Vec::new();
                let mut remote = Vec::new();
                if p < m.limit {
                    for _ in 0..self.rng.random_range(0..=2) {
                        let child = p + self.rng.random_range(1..=8);
                        let to = self.rng.random_range(0..m.inboxes.len());
                        if to == self.id {
                            mine.push(child);
                        } else {
                            remote.push((to, child));
                        }
                    }
                }
                m.created
                    .fetch_add((mine.len() + remote.len()) as u64, Ordering::Relaxed);
                self.split(&mine, &mut step);
                step.produced += remote.len() as u64;
                // Report first, then make the remote items visible.
                if m.counter.report(step) == StepOutcome::Ended {
                    return true;
                }
                for (to, child) in remote {
                    m.inboxes[to].0.send(child).expect("inbox open");
                }
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[test]
fn threaded_model_of_the_protocol_loses_nothing_and_ends_once() {
    for seed in 0..24u64 {
        let devices = 1 + (seed as usize % 8);
        let delta = [1, 3, 8, 40][(seed / 8) as usize % 4];
        let model = Arc::new(Model {
            counter: PriorityCounter::new(devices, Some(delta)),
            inboxes: (0..devices).map(|_| unbounded()).collect(),
            limit: 60,
            expanded: AtomicU64::new(0),
            created: AtomicU64::new(0),
            out_of_band: AtomicU64::new(0),
        });
        let seeds = 3 * devices as u64;
        model.counter.report(StepCounts::produced(seeds));
        model.created.store(seeds, Ordering::Relaxed);
        let endings: usize = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..devices)
                .map(|id| {
                    let model = &model;
                    scope.spawn(move || {
                        let mut dev = ModelDevice {
                            id,
                            rng: ChaCha8Rng::seed_from_u64(seed * 100 + id as u64),
                            local: VecDeque::from(vec![0u32; 3]),
                            low: Vec::new(),
                            seen_epoch: 0,
                            threshold: model.counter.current().threshold,
                        };
                        let ended = dev.run(model);
                        assert!(dev.local.is_empty(), "seed {seed}: work left on {id}");
                        assert!(
                            dev.low.is_empty(),
                            "seed {seed}: deferred work left on {id}"
                        );
                        usize::from(ended)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("model device"))
                .sum()
        });
        assert_eq!(endings, 1, "seed {seed}: exactly one update ends the run");
        for (_, rx) in &model.inboxes {
            assert!(rx.is_empty(), "seed {seed}: an item was left in flight");
        }
        assert_eq!(
            model.expanded.load(Ordering::Relaxed),
            model.created.load(Ordering::Relaxed),
            "seed {seed}: every item created was expanded exactly once"
        );
        assert_eq!(model.out_of_band.load(Ordering::Relaxed), 0);
        assert_eq!((model.counter.active(), model.counter.deferred()), (0, 0));
        assert!(
            model.counter.epoch() >= 1,
            "seed {seed}: priorities up to 60+ with delta {delta} need advances"
        );
    }
}
