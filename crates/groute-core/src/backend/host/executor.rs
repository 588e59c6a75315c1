//! One executor thread per host-backend device.
//!
//! An executor owns one ordered queue per stream. It repeatedly picks a stream whose next
//! operation can run (a piece of work, an event recording, or a wait whose event has
//! completed), pops that operation and runs it outside its lock. Streams therefore complete
//! out of order with respect to each other, as on a GPU, while each stream stays in order.
//! High-priority streams are served first unless jitter is on, in which case the choice is
//! random and work is delayed at random (see [`super::Jitter`]).
//!
//! Wake-ups use an epoch counter bumped (under the lock) by every enqueue and every event
//! completion an executor is waiting on, so a completion between a scan and the wait is
//! never lost.
//!
//! A closure that panics fails the device: its queued and later work is discarded, and the
//! events it would have completed complete with the failure ([`Error::DeviceFailed`] for
//! their waiters), as do those of a device whose stream waited on such an event. Each
//! stream counts the operations it ran, which the stall watchdog of host waits reads
//! ([`Executor::activity`]). Injected faults ([`super::FaultPlan`]) stop or crash the device
//! after a number of operations, or block a stream for good ([`Op::Stall`]).

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

use super::event::{Failure, HostEvent};
use super::faults::DeviceFaults;
use super::jitter::{Jitter, JitterState};
use crate::backend::StreamPriority;
use crate::error::{Error, Result};

pub(crate) type Work = Box<dyn FnOnce() + Send>;

/// One queued operation.
pub(crate) enum Op {
    /// Run a closure (a copy, a fill, a kernel, a host callback).
    Run(Work),
    /// Complete `event`'s generation.
    Record(Arc<HostEvent>, u64),
    /// Block the stream until `event` reaches the generation.
    Wait(Arc<HostEvent>, u64),
    /// Block the stream for good (an injected link stall); discarded at shutdown.
    Stall,
}

struct StreamQueue {
    priority: StreamPriority,
    ops: VecDeque<Op>,
    /// (event address, generation) of the wait we registered a wake-up for.
    registered: Option<(usize, u64)>,
    /// Operations of this stream started or finished (the stall watchdog's progress).
    progress: u64,
}

struct State {
    streams: Vec<StreamQueue>,
    epoch: u64,
    shutdown: bool,
    jitter: Option<JitterState>,
    /// Set when the device failed: its work is discarded, its events complete with it.
    failed: Option<Failure>,
    /// The stream whose operation the thread is running.
    running: Option<usize>,
    faults: DeviceFaults,
    /// Operations run (counted only with injected faults).
    ops_run: u64,
    /// An injected fault stopped the device: it runs nothing until shutdown.
    stopped: bool,
    next_round_robin: usize,
}

/// What a stream of an executor is doing, for the stall watchdog.
#[derive(Clone, Debug)]
pub(crate) struct Activity {
    /// Operations it started or finished so far.
    pub(crate) progress: u64,
    /// Whether one of its operations is running now.
    pub(crate) running: bool,
    /// The event it waits for, when a wait heads its queue.
    pub(crate) blocked_on: Option<Arc<HostEvent>>,
}

/// What the thread does next.
enum Next {
    /// Run an operation (after the jitter delay, or as an injected panic).
    Run(Op, Option<std::time::Duration>, bool),
    /// Discard operations of a failed, stopped or stalled device.
    Discard(Vec<Op>, Failure),
    /// Shut down.
    Exit,
}

/// Shared state of one executor.
pub(crate) struct Executor {
    pub(crate) device: usize,
    state: Mutex<State>,
    wake: Condvar,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("device", &self.device)
            .finish()
    }
}

impl Executor {
    /// Starts an executor thread for `device`; [`Error::Spawn`] if the system cannot start it.
    pub(crate) fn start(
        device: usize,
        jitter: Option<Jitter>,
        faults: DeviceFaults,
    ) -> Result<(Arc<Self>, JoinHandle<()>)> {
        let exec = Arc::new(Executor {
            device,
            state: Mutex::new(State {
                streams: Vec::new(),
                epoch: 0,
                shutdown: false,
                jitter: jitter.map(|j| JitterState::new(j, device)),
                failed: None,
                running: None,
                faults,
                ops_run: 0,
                stopped: false,
                next_round_robin: 0,
            }),
            wake: Condvar::new(),
        });
        let runner = Arc::clone(&exec);
        let name = format!("groute-host-dev{device}");
        let handle = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || runner.run())
            .map_err(|source| Error::Spawn { name, source })?;
        Ok((exec, handle))
    }

    /// Adds a stream; returns its index.
    pub(crate) fn add_stream(&self, priority: StreamPriority) -> usize {
        let mut st = self.state.lock();
        st.streams.push(StreamQueue {
            priority,
            ops: VecDeque::new(),
            registered: None,
            progress: 0,
        });
        st.streams.len() - 1
    }

    /// What `stream` is doing (see [`Activity`]).
    pub(crate) fn activity(&self, stream: usize) -> Activity {
        let st = self.state.lock();
        let queue = st.streams.get(stream);
        Activity {
            progress: queue.map_or(0, |q| q.progress),
            running: st.running == Some(stream),
            blocked_on: match queue.and_then(|q| q.ops.front()) {
                Some(Op::Wait(ev, _)) => Some(Arc::clone(ev)),
                _ => None,
            },
        }
    }

    /// Enqueues `op` on `stream`. After shutdown, runs it inline so nothing ever hangs; on a
    /// failed device, discards it.
    pub(crate) fn enqueue(&self, stream: usize, op: Op) {
        let mut st = self.state.lock();
        if let Some(failure) = st.failed.clone() {
            drop(st);
            discard(vec![op], &failure);
            return;
        }
        if st.shutdown {
            drop(st);
            run_inline(op);
            return;
        }
        st.streams[stream].ops.push_back(op);
        st.epoch += 1;
        drop(st);
        self.wake.notify_one();
    }

    /// Asks the thread to finish the queued work and exit.
    pub(crate) fn shutdown(&self) {
        let mut st = self.state.lock();
        st.shutdown = true;
        st.epoch += 1;
        drop(st);
        self.wake.notify_one();
    }

    fn bump(&self) {
        let mut st = self.state.lock();
        st.epoch += 1;
        drop(st);
        self.wake.notify_one();
    }

    fn run(self: Arc<Self>) {
        loop {
            match self.next_op() {
                Next::Exit => return,
                Next::Discard(ops, failure) => discard(ops, &failure),
                Next::Run(op, delay, inject_panic) => match op {
                    Op::Run(work) => {
                        if let Some(d) = delay {
                            std::thread::sleep(d);
                        }
                        let device = self.device;
                        let outcome = if inject_panic {
                            drop(work);
                            catch_unwind(|| -> () {
                                panic!("injected fault: host device {device} panics")
                            })
                        } else {
                            catch_unwind(AssertUnwindSafe(work))
                        };
                        if let Err(panic) = outcome {
                            self.fail(format!("a kernel panicked: {}", panic_message(&panic)));
                        }
                    }
                    Op::Record(event, generation) if inject_panic => {
                        let device = self.device;
                        let _ = catch_unwind(|| -> () {
                            panic!("injected fault: host device {device} panics")
                        });
                        let failure = self.fail(format!(
                            "it panicked (injected fault on host device {device})"
                        ));
                        event.complete(generation, Some(failure));
                    }
                    Op::Record(event, generation) => event.complete(generation, None),
                    Op::Wait(..) | Op::Stall => {}
                },
            }
        }
    }

    /// Marks the device failed (the first failure stays); returns the failure.
    fn fail(&self, reason: String) -> Failure {
        let mut st = self.state.lock();
        let failure = st
            .failed
            .get_or_insert(Failure {
                device: self.device,
                reason,
            })
            .clone();
        st.epoch += 1;
        failure
    }

    /// Picks the next runnable operation, blocking until there is one: [`Next::Exit`] on
    /// shutdown with empty queues.
    fn next_op(self: &Arc<Self>) -> Next {
        let mut st = self.state.lock();
        // The operation the thread ran last has finished.
        if let Some(s) = st.running.take() {
            st.streams[s].progress += 1;
        }
        loop {
            let epoch = st.epoch;
            if let Some(failure) = st.failed.clone() {
                let ops: Vec<Op> = st
                    .streams
                    .iter_mut()
                    .flat_map(|q| q.ops.drain(..))
                    .collect();
                if !ops.is_empty() {
                    return Next::Discard(ops, failure);
                }
                if st.shutdown {
                    return Next::Exit;
                }
                while st.epoch == epoch {
                    self.wake.wait(&mut st);
                }
                continue;
            }
            if st.stopped {
                if st.shutdown {
                    let ops: Vec<Op> = st
                        .streams
                        .iter_mut()
                        .flat_map(|q| q.ops.drain(..))
                        .collect();
                    if ops.is_empty() {
                        return Next::Exit;
                    }
                    let failure = Failure {
                        device: self.device,
                        reason: "it stopped executing its operations (injected fault)".into(),
                    };
                    return Next::Discard(ops, failure);
                }
                while st.epoch == epoch {
                    self.wake.wait(&mut st);
                }
                continue;
            }
            let mut runnable: Vec<usize> = Vec::new();
            // Blocked streams whose wake-up is not registered yet: (stream, event, generation).
            let mut to_register: Vec<(usize, Arc<HostEvent>, u64)> = Vec::new();
            let mut any_left = false;
            let mut stalled: Vec<Op> = Vec::new();
            let mut inherited: Option<Failure> = None;
            let shutdown = st.shutdown;
            for (i, q) in st.streams.iter_mut().enumerate() {
                // Waits that are already satisfied are dropped at inspection.
                while let Some(Op::Wait(ev, g)) = q.ops.front() {
                    if ev.is_complete(*g) {
                        if let Some(f) = ev.failure() {
                            inherited.get_or_insert(f);
                        }
                        q.ops.pop_front();
                        q.registered = None;
                    } else {
                        let key = (Arc::as_ptr(ev) as usize, *g);
                        if q.registered != Some(key) {
                            to_register.push((i, Arc::clone(ev), *g));
                        }
                        break;
                    }
                }
                match q.ops.front() {
                    None => {}
                    Some(Op::Stall) if shutdown => stalled.extend(q.ops.drain(..)),
                    Some(Op::Wait(..) | Op::Stall) => any_left = true,
                    Some(_) => runnable.push(i),
                }
            }
            if let Some(failure) = inherited {
                // A stream waited on the work of a failed device: this device's later work
                // cannot be trusted either.
                st.failed = Some(failure);
                continue;
            }
            if !stalled.is_empty() {
                let failure = Failure {
                    device: self.device,
                    reason: "a copy stalled (injected fault)".into(),
                };
                return Next::Discard(stalled, failure);
            }
            if !runnable.is_empty() {
                let pick = match st.jitter.as_mut() {
                    Some(j) => runnable[j.pick(runnable.len())],
                    None => {
                        let high: Vec<usize> = runnable
                            .iter()
                            .copied()
                            .filter(|&i| st.streams[i].priority == StreamPriority::High)
                            .collect();
                        let pool = if high.is_empty() { &runnable } else { &high };
                        st.next_round_robin = st.next_round_robin.wrapping_add(1);
                        pool[st.next_round_robin % pool.len()]
                    }
                };
                let mut inject_panic = false;
                if st.faults.any() {
                    if st.faults.stop_after.is_some_and(|n| st.ops_run >= n) {
                        st.stopped = true;
                        continue;
                    }
                    st.ops_run += 1;
                    inject_panic = st.faults.panic_after.is_some_and(|n| st.ops_run > n);
                }
                let op = st.streams[pick]
                    .ops
                    .pop_front()
                    .expect("runnable stream has an op");
                let delay = match (&op, st.jitter.as_mut()) {
                    (Op::Run(_), Some(j)) => j.delay(),
                    _ => None,
                };
                st.streams[pick].progress += 1;
                st.running = Some(pick);
                return Next::Run(op, delay, inject_panic);
            }
            if st.shutdown && !any_left {
                return Next::Exit;
            }
            if !to_register.is_empty() {
                // Mark the registrations only now that we are about to sleep: a scan that
                // returned a runnable op above registers nothing, and the next scan sees
                // these waits unregistered again (marking them earlier lost the wake-up).
                for (i, ev, g) in &to_register {
                    st.streams[*i].registered = Some((Arc::as_ptr(ev) as usize, *g));
                }
                drop(st);
                for (_, ev, g) in to_register {
                    let me = Arc::downgrade(self);
                    ev.notify_at(
                        g,
                        Box::new(move || {
                            if let Some(me) = me.upgrade() {
                                me.bump();
                            }
                        }),
                    );
                }
                st = self.state.lock();
            }
            while st.epoch == epoch {
                self.wake.wait(&mut st);
            }
        }
    }
}

/// Drops the work of a failed device; its event recordings complete with the failure.
fn discard(ops: Vec<Op>, failure: &Failure) {
    for op in ops {
        if let Op::Record(event, generation) = op {
            event.complete(generation, Some(failure.clone()));
        }
    }
}

fn run_inline(op: Op) {
    match op {
        Op::Run(work) => work(),
        Op::Record(event, generation) => event.complete(generation, None),
        Op::Stall => {}
        Op::Wait(event, generation) => {
            let (lock, cv) = (Mutex::new(false), Condvar::new());
            let pair = Arc::new((lock, cv));
            let signal = Arc::clone(&pair);
            event.notify_at(
                generation,
                Box::new(move || {
                    *signal.0.lock() = true;
                    signal.1.notify_all();
                }),
            );
            let mut done = pair.0.lock();
            while !*done {
                pair.1.wait(&mut done);
            }
        }
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}
