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

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

use super::event::HostEvent;
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
}

struct StreamQueue {
    priority: StreamPriority,
    ops: VecDeque<Op>,
    /// (event address, generation) of the wait we registered a wake-up for.
    registered: Option<(usize, u64)>,
}

struct State {
    streams: Vec<StreamQueue>,
    epoch: u64,
    shutdown: bool,
    jitter: Option<JitterState>,
    /// Set when a closure panicked: later event completions carry the message.
    poisoned: Option<String>,
    next_round_robin: usize,
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
    ) -> Result<(Arc<Self>, JoinHandle<()>)> {
        let exec = Arc::new(Executor {
            device,
            state: Mutex::new(State {
                streams: Vec::new(),
                epoch: 0,
                shutdown: false,
                jitter: jitter.map(|j| JitterState::new(j, device)),
                poisoned: None,
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
        });
        st.streams.len() - 1
    }

    /// Enqueues `op` on `stream`. After shutdown, runs it inline so nothing ever hangs.
    pub(crate) fn enqueue(&self, stream: usize, op: Op) {
        let mut st = self.state.lock();
        if st.shutdown {
            let poison = st.poisoned.clone();
            drop(st);
            run_inline(op, poison);
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
            let Some((op, delay, poison)) = self.next_op() else {
                return;
            };
            match op {
                Op::Run(work) => {
                    if let Some(d) = delay {
                        std::thread::sleep(d);
                    }
                    if let Err(panic) = catch_unwind(AssertUnwindSafe(work)) {
                        let msg = panic_message(&panic);
                        self.state.lock().poisoned = Some(msg);
                    }
                }
                Op::Record(event, generation) => event.complete(generation, poison),
                Op::Wait(..) => {}
            }
        }
    }

    /// Picks the next runnable operation, blocking until there is one. `None` on shutdown
    /// with empty queues.
    #[allow(clippy::type_complexity)]
    fn next_op(self: &Arc<Self>) -> Option<(Op, Option<std::time::Duration>, Option<String>)> {
        let mut st = self.state.lock();
        loop {
            let epoch = st.epoch;
            let mut runnable: Vec<usize> = Vec::new();
            // Blocked streams whose wake-up is not registered yet: (stream, event, generation).
            let mut to_register: Vec<(usize, Arc<HostEvent>, u64)> = Vec::new();
            let mut any_left = false;
            for (i, q) in st.streams.iter_mut().enumerate() {
                // Waits that are already satisfied are dropped at inspection.
                while let Some(Op::Wait(ev, g)) = q.ops.front() {
                    if ev.is_complete(*g) {
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
                    Some(Op::Wait(..)) => any_left = true,
                    Some(_) => runnable.push(i),
                }
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
                let op = st.streams[pick]
                    .ops
                    .pop_front()
                    .expect("runnable stream has an op");
                let delay = match (&op, st.jitter.as_mut()) {
                    (Op::Run(_), Some(j)) => j.delay(),
                    _ => None,
                };
                return Some((op, delay, st.poisoned.clone()));
            }
            if st.shutdown && !any_left {
                return None;
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

fn run_inline(op: Op, poison: Option<String>) {
    match op {
        Op::Run(work) => work(),
        Op::Record(event, generation) => event.complete(generation, poison),
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
