//! Host-backend events: completion flags with generations.

use std::any::Any;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::executor::Executor;
use crate::backend::{PhysicalDevice, RawEvent, downcast};
use crate::error::{Error, Result};

type Callback = Box<dyn FnOnce() + Send>;

/// Why a device failed: carried by the events it completes from then on.
#[derive(Clone, Debug)]
pub(crate) struct Failure {
    pub(crate) device: PhysicalDevice,
    pub(crate) reason: String,
}

impl Failure {
    pub(crate) fn to_error(&self) -> Error {
        Error::DeviceFailed {
            device: self.device,
            reason: self.reason.clone(),
        }
    }
}

/// An event of the host backend.
///
/// Each recording gets a generation number when it is *enqueued*; executing the recording
/// marks that generation complete. Waiters capture the generation current when they start
/// waiting, which gives CUDA's "latest recording at the time of the wait" semantics even
/// when the event is recorded again later.
#[derive(Debug)]
pub struct HostEvent {
    device: PhysicalDevice,
    /// How long a host wait lets the recording stream make no progress (`None`: forever).
    stall_timeout: Option<Duration>,
    state: Mutex<EventState>,
    done: Condvar,
}

struct EventState {
    recorded: u64,
    completed: u64,
    completed_at: Option<Instant>,
    poisoned: Option<Failure>,
    /// The executor and stream of the latest recording (the stall watchdog asks them).
    recorder: Option<(Weak<Executor>, usize)>,
    callbacks: Vec<(u64, Callback)>,
}

impl std::fmt::Debug for EventState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventState")
            .field("recorded", &self.recorded)
            .field("completed", &self.completed)
            .field("callbacks", &self.callbacks.len())
            .finish()
    }
}

impl HostEvent {
    pub(crate) fn new(device: PhysicalDevice, stall_timeout: Option<Duration>) -> Arc<Self> {
        Arc::new(HostEvent {
            device,
            stall_timeout,
            state: Mutex::new(EventState {
                recorded: 0,
                completed: 0,
                completed_at: None,
                poisoned: None,
                recorder: None,
                callbacks: Vec::new(),
            }),
            done: Condvar::new(),
        })
    }

    /// Starts a new recording on `stream` of `exec`; returns its generation.
    pub(crate) fn begin_record(&self, exec: &Arc<Executor>, stream: usize) -> u64 {
        let mut st = self.state.lock();
        st.recorded += 1;
        if self.stall_timeout.is_some() {
            st.recorder = Some((Arc::downgrade(exec), stream));
        }
        st.recorded
    }

    /// The failure this event's completion carries, if any.
    pub(crate) fn failure(&self) -> Option<Failure> {
        self.state.lock().poisoned.clone()
    }

    /// The generation a waiter starting now must wait for.
    pub(crate) fn current_generation(&self) -> u64 {
        self.state.lock().recorded
    }

    /// Whether generation `generation` has completed.
    pub(crate) fn is_complete(&self, generation: u64) -> bool {
        self.state.lock().completed >= generation
    }

    /// Marks `generation` complete (and, if `poison` is set, every waiter sees that error).
    pub(crate) fn complete(&self, generation: u64, poison: Option<Failure>) {
        let ready: Vec<Callback> = {
            let mut st = self.state.lock();
            if generation > st.completed {
                st.completed = generation;
                st.completed_at = Some(Instant::now());
            }
            if poison.is_some() {
                st.poisoned = poison;
            }
            let completed = st.completed;
            let (now, later): (Vec<_>, Vec<_>) =
                st.callbacks.drain(..).partition(|(g, _)| *g <= completed);
            st.callbacks = later;
            now.into_iter().map(|(_, cb)| cb).collect()
        };
        self.done.notify_all();
        for cb in ready {
            cb();
        }
    }

    /// Calls `callback` once `generation` has completed.
    pub(crate) fn notify_at(&self, generation: u64, callback: Callback) {
        let mut st = self.state.lock();
        if st.completed >= generation {
            drop(st);
            callback();
        } else {
            st.callbacks.push((generation, callback));
        }
    }

    fn check_poison(st: &EventState) -> Result<()> {
        match &st.poisoned {
            Some(failure) => Err(failure.to_error()),
            None => Ok(()),
        }
    }
}

/// The end of the chain of waits that starts at `device`, blocked on `blocked_on`: the device
/// whose stream the chain ends at (running nothing and waiting for nothing), with the progress
/// counts of every stream along the chain; `None` while a stream on the chain runs an
/// operation. A stall is a chain whose progress counts stay the same for a whole timeout: a
/// stream seen between two operations (it finished one and has not started the next) is not
/// stalled.
fn upstream_chain(
    mut device: PhysicalDevice,
    mut blocked_on: Option<Arc<HostEvent>>,
) -> Option<(PhysicalDevice, Vec<u64>)> {
    let mut progress = Vec::new();
    // A chain of waits runs through a few streams; the bound only guards against a cycle.
    for _ in 0..16 {
        let Some(event) = blocked_on.take() else {
            break;
        };
        let recorder = event.state.lock().recorder.clone();
        let Some((exec, stream)) = recorder else {
            break;
        };
        let Some(exec) = exec.upgrade() else {
            break;
        };
        let a = exec.activity(stream);
        if a.running {
            return None;
        }
        progress.push(a.progress);
        device = exec.device;
        blocked_on = a.blocked_on;
    }
    Some((device, progress))
}

impl RawEvent for HostEvent {
    fn device(&self) -> PhysicalDevice {
        self.device
    }

    fn query(&self) -> Result<bool> {
        let st = self.state.lock();
        Self::check_poison(&st)?;
        Ok(st.completed >= st.recorded)
    }

    fn synchronize(&self) -> Result<()> {
        let mut st = self.state.lock();
        let target = st.recorded;
        let Some(timeout) = self.stall_timeout.filter(|_| st.completed < target) else {
            while st.completed < target {
                self.done.wait(&mut st);
            }
            return Self::check_poison(&st);
        };
        // The stall watchdog: the wait fails once the recording stream has neither run an
        // operation nor been running one for `timeout`.
        let recorder = st.recorder.clone();
        drop(st);
        let activity = || {
            recorder
                .as_ref()
                .and_then(|(exec, stream)| exec.upgrade().map(|e| (e.device, e.activity(*stream))))
        };
        let mut last = activity().map(|(_, a)| a.progress);
        // The progress counts of the chain of streams the recorder waits on, as last seen.
        let mut last_chain: Option<Vec<u64>> = None;
        let mut since = Instant::now();
        let mut st = self.state.lock();
        while st.completed < target {
            if !self.done.wait_until(&mut st, since + timeout).timed_out() {
                continue;
            }
            if st.completed >= target {
                break;
            }
            drop(st);
            match activity() {
                Some((_, a)) if a.running || Some(a.progress) != last => {
                    last = Some(a.progress);
                    since = Instant::now();
                }
                Some((device, a)) => match upstream_chain(device, a.blocked_on) {
                    Some((device, chain)) if last_chain.as_ref() == Some(&chain) => {
                        return Err(Error::DeviceStalled { device, timeout });
                    }
                    chain => {
                        last_chain = chain.map(|(_, progress)| progress);
                        since = Instant::now();
                    }
                },
                None => {
                    return Err(Error::DeviceStalled {
                        device: self.device,
                        timeout,
                    });
                }
            }
            st = self.state.lock();
        }
        Self::check_poison(&st)
    }

    fn notify(&self, callback: Box<dyn FnOnce() + Send>) -> Result<()> {
        let generation = self.current_generation();
        self.notify_at(generation, callback);
        Ok(())
    }

    fn elapsed_ms_since(&self, start: &dyn RawEvent) -> Result<f32> {
        let start: &HostEvent = downcast(
            start.as_any(),
            "elapsed time between events of different backends",
            "host",
        )?;
        let begin = start.state.lock().completed_at;
        let end = self.state.lock().completed_at;
        match (begin, end) {
            (Some(b), Some(e)) => Ok(e.saturating_duration_since(b).as_secs_f32() * 1e3),
            _ => Err(Error::invalid(
                "event",
                "not completed",
                "both events must have completed before measuring elapsed time; synchronize first",
            )),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
