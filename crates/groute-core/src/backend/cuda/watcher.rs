//! The per-device service thread: fires [`crate::backend::RawEvent::notify`] callbacks when
//! events complete, and runs releases that may not happen inside a CUDA host callback.
//!
//! # Latency
//!
//! Completion is detected by polling `cuEventQuery` (about 0.1-0.5 us a call). After a new
//! watch or a completion the thread spins for [`SPIN_WINDOW`], then yields until
//! [`YIELD_WINDOW`], then waits on its channel with a timeout growing up to [`MAX_NAP`]. A
//! notification that follows its recording within the spin window (the link case: a 4 KiB
//! peer copy takes about 11 us end to end) is seen within a query's time, so the watcher adds
//! well under a microsecond to it, against 5-10 us for a `cuLaunchHostFunc` round trip. When
//! nothing is watched, the thread blocks on its channel and costs nothing.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};

use super::event::EventHandle;
use super::sys;
use crate::error::{Error, Result};

/// Spin (busy-poll) this long after the last progress.
pub(crate) const SPIN_WINDOW: Duration = Duration::from_micros(200);
/// Then yield the CPU between polls until this long after the last progress.
pub(crate) const YIELD_WINDOW: Duration = Duration::from_millis(2);
/// Longest sleep between polls once idle.
pub(crate) const MAX_NAP: Duration = Duration::from_micros(500);

type Callback = Box<dyn FnOnce() + Send>;

enum Message {
    /// Call the callback once the handle's recording completes.
    Watch(Arc<EventHandle>, Callback),
    /// Run the closure on this thread (a release deferred out of a host callback).
    Run(Callback),
}

/// The sending side, held by the device. Dropping it (as the device drops) closes the channel
/// and joins the thread, so no service thread outlives its device: every message that leads
/// to a driver call holds an `Arc` to the device, so by then the thread has no work left and
/// is waiting on the channel.
pub(crate) struct WatcherHandle {
    tx: Option<Sender<Message>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for WatcherHandle {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(thread) = self.thread.take() {
            // The device's last `Arc` can go with a message the thread itself ran (a deferred
            // release): it returns on its own once that message is done and must not wait
            // for itself.
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}

impl WatcherHandle {
    /// Calls `callback` on the service thread once `handle`'s recording has completed.
    pub(crate) fn watch(&self, handle: Arc<EventHandle>, callback: Callback) {
        if let Err(channel::SendError(Message::Watch(_, cb))) =
            self.send(Message::Watch(handle, callback))
        {
            // The thread is gone (process teardown): do not lose the callback.
            cb();
        }
    }

    fn send(&self, message: Message) -> Result<(), channel::SendError<Message>> {
        match &self.tx {
            Some(tx) => tx.send(message),
            None => Err(channel::SendError(message)),
        }
    }

    /// Runs `f` on the service thread.
    pub(crate) fn defer(&self, f: Callback) {
        if let Err(channel::SendError(Message::Run(f))) = self.send(Message::Run(f)) {
            // The thread is gone: leak rather than call the driver from a host callback.
            std::mem::forget(f);
        }
    }
}

/// Spawns service threads.
pub(crate) struct Watcher;

impl Watcher {
    /// Starts the service thread of device `ordinal`, bound to `ctx`.
    pub(crate) fn spawn(ordinal: usize, ctx: sys::CUcontext) -> Result<WatcherHandle> {
        let (tx, rx) = channel::unbounded();
        let ctx_addr = ctx as usize;
        let thread = std::thread::Builder::new()
            .name(format!("groute-cuda{ordinal}"))
            .spawn(move || {
                let ctx = ctx_addr as sys::CUcontext;
                // SAFETY: the device retains `ctx` until its `DeviceInner` drops, and every
                // message that leads to a driver call holds an `Arc` to that device.
                let _ = unsafe { sys::ctx_make_current(ctx) };
                run(rx);
            })
            .map_err(|e| {
                Error::ThreadPanicked(format!("could not start a CUDA service thread: {e}"))
            })?;
        Ok(WatcherHandle {
            tx: Some(tx),
            thread: Some(thread),
        })
    }
}

fn call(cb: Callback) {
    // A panicking callback must not take the service thread (and every later notification)
    // down with it.
    let _ = catch_unwind(AssertUnwindSafe(cb));
}

fn run(rx: Receiver<Message>) {
    let mut pending: Vec<(Arc<EventHandle>, Callback)> = Vec::new();
    let mut last_progress = Instant::now();
    let mut connected = true;
    loop {
        if pending.is_empty() {
            if !connected {
                return;
            }
            match rx.recv() {
                Ok(m) => accept(m, &mut pending),
                Err(_) => return,
            }
            last_progress = Instant::now();
        }
        loop {
            match rx.try_recv() {
                Ok(m) => {
                    accept(m, &mut pending);
                    last_progress = Instant::now();
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    connected = false;
                    break;
                }
            }
        }
        // Poll; an error (a sticky context error) counts as completion, so that nobody waits
        // forever: the next operation on the stream reports the error.
        let mut done = Vec::new();
        let mut i = 0;
        while i < pending.len() {
            if pending[i].0.query().unwrap_or(true) {
                done.push(pending.swap_remove(i));
            } else {
                i += 1;
            }
        }
        if !done.is_empty() {
            last_progress = Instant::now();
            for (handle, cb) in done {
                call(cb);
                drop(handle);
            }
            continue;
        }
        if pending.is_empty() {
            continue;
        }
        let idle = last_progress.elapsed();
        if idle < SPIN_WINDOW {
            std::hint::spin_loop();
        } else if idle < YIELD_WINDOW {
            std::thread::yield_now();
        } else {
            let nap = (idle / 16).min(MAX_NAP);
            match rx.recv_timeout(nap) {
                Ok(m) => {
                    accept(m, &mut pending);
                    last_progress = Instant::now();
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => connected = false,
            }
        }
    }
}

fn accept(m: Message, pending: &mut Vec<(Arc<EventHandle>, Callback)>) {
    match m {
        Message::Watch(h, cb) => pending.push((h, cb)),
        Message::Run(f) => call(f),
    }
}
