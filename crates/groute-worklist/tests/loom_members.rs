//! Model checks of the device-driven members' termination count ([`MemberCount`], the rules
//! of `docs/device-protocol.md`, "Termination of the members"), with loom.
//!
//! Two members (loom threads) run the members' loop on a small scripted workload:
//! take what was published into their inbox, expand one item at a time, publish its children
//! into the next member's inbox (counted before they are visible), count themselves out with
//! nothing left, and poll. loom runs every interleaving up to a preemption bound, and the
//! model asserts:
//!
//! - (a) the count reaches zero and every member sees it and returns (a member spinning
//!   forever exceeds loom's branch limit);
//! - (b) when a member sees zero, no item exists: none in an inbox, a worklist or being
//!   expanded, and every item of the script was expanded exactly once.
//!
//! The truth is a ghost record updated under one lock when an item is created (before it
//! is published) and when its expansion ends. A broken protocol, counting out while still
//! publishing, is the negative control: the model must find its premature termination.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p groute-worklist --test loom_members`
//! (`.ci/run` does); `LOOM_MAX_PREEMPTIONS` overrides the bounds. Without `--cfg loom` this
//! file is empty.
#![cfg(loom)]

#[path = "common/loom_model.rs"]
mod loom_model;

use std::collections::VecDeque;

use groute_worklist::MemberCount;
use loom::sync::{Arc, Mutex};
use loom::thread;
use loom_model::model_builder;

/// A scripted workload: item `i`, expanded, produces `children[i]` for the next member.
#[derive(Clone, Copy, Debug)]
struct Workload {
    /// (item, member) pairs in the members' worklists at the start.
    seeds: &'static [(usize, usize)],
    children: &'static [&'static [usize]],
    members: usize,
    preemptions: usize,
}

/// How a member orders its count-out against its last publication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
    /// The rules: count out only with no work and the sends published.
    Rules,
    /// Broken: after expanding its last item, count out first and publish after.
    CountOutBeforePublishing,
}

#[derive(Debug)]
struct Ghost {
    /// Items created and not yet fully expanded.
    alive: u64,
    expanded: Vec<u32>,
}

struct Shared {
    count: MemberCount,
    inboxes: Vec<Mutex<Vec<usize>>>,
    ghost: Mutex<Ghost>,
    workload: Workload,
    protocol: Protocol,
}

impl Shared {
    /// Asserts (b) at the moment a member sees the count at zero.
    fn check_nothing_left(&self) {
        let ghost = self.ghost.lock().unwrap();
        assert_eq!(ghost.alive, 0, "premature termination: {ghost:?}");
        assert!(
            ghost.expanded.iter().all(|&n| n == 1),
            "an item was lost or expanded twice: {ghost:?}"
        );
    }

    /// Member `me`'s loop, until it sees the count at zero.
    fn member(&self, me: usize) {
        let wl = self.workload;
        let next = (me + 1) % wl.members;
        let mut counted_in = true;
        let mut local: VecDeque<usize> = wl
            .seeds
            .iter()
            .filter(|&&(_, m)| m == me)
            .map(|&(item, _)| item)
            .collect();
        loop {
            let received: Vec<usize> = std::mem::take(&mut *self.inboxes[me].lock().unwrap());
            if !received.is_empty() {
                self.count.take(received.len() as u64, &mut counted_in);
                local.extend(received);
            }
            if let Some(item) = local.pop_front() {
                let children = wl.children[item];
                {
                    let mut ghost = self.ghost.lock().unwrap();
                    ghost.alive += children.len() as u64;
                }
                let broken = self.protocol == Protocol::CountOutBeforePublishing
                    && local.is_empty()
                    && !children.is_empty();
                if broken && self.count.count_out(&mut counted_in) {
                    self.check_nothing_left();
                    return;
                }
                self.count.publish(children.len() as u64);
                self.inboxes[next]
                    .lock()
                    .unwrap()
                    .extend_from_slice(children);
                let mut ghost = self.ghost.lock().unwrap();
                ghost.alive -= 1;
                ghost.expanded[item] += 1;
                continue;
            }
            if self.count.count_out(&mut counted_in) {
                // This member's update ended the run, or it saw the end while idle.
                self.check_nothing_left();
                return;
            }
            thread::yield_now();
        }
    }
}

fn model(workload: Workload, protocol: Protocol) {
    model_builder(workload.preemptions).check(move || {
        let wl = workload;
        let shared = Arc::new(Shared {
            count: MemberCount::new(wl.members),
            inboxes: (0..wl.members).map(|_| Mutex::new(Vec::new())).collect(),
            ghost: Mutex::new(Ghost {
                alive: wl.seeds.len() as u64,
                expanded: vec![0; wl.children.len()],
            }),
            workload: wl,
            protocol,
        });
        let threads: Vec<_> = (0..wl.members)
            .map(|me| {
                let shared = Arc::clone(&shared);
                thread::spawn(move || shared.member(me))
            })
            .collect();
        // (a) every member sees the end and returns.
        for t in threads {
            t.join().expect("a member panicked");
        }
        assert!(shared.count.is_done());
        shared.check_nothing_left_at_exit();
    });
}

impl Shared {
    fn check_nothing_left_at_exit(&self) {
        let ghost = self.ghost.lock().unwrap();
        assert_eq!(ghost.alive, 0, "items left at the end: {ghost:?}");
        assert!(
            self.inboxes.iter().all(|i| i.lock().unwrap().is_empty()),
            "an inbox still holds items"
        );
    }
}

/// One seed on each member; the first expands into two items for the second, one of which
/// expands into an item for the first again.
const TWO_MEMBERS: Workload = Workload {
    seeds: &[(0, 0), (1, 1)],
    children: &[&[2, 3], &[], &[4], &[], &[]],
    members: 2,
    preemptions: 3,
};

/// Work starting on one member: the other starts idle and counts out at once, so the first
/// publication must keep the count above zero.
const ONE_SEED: Workload = Workload {
    seeds: &[(0, 0)],
    children: &[&[1], &[2], &[]],
    members: 2,
    preemptions: 3,
};

#[test]
fn members_end_exactly_once_with_nothing_left_on_two_members() {
    model(TWO_MEMBERS, Protocol::Rules);
}

#[test]
fn members_end_exactly_once_with_nothing_left_from_one_seed() {
    model(ONE_SEED, Protocol::Rules);
}

#[test]
#[should_panic(expected = "premature termination")]
fn model_finds_premature_termination_when_a_member_counts_out_before_publishing() {
    model(ONE_SEED, Protocol::CountOutBeforePublishing);
}
