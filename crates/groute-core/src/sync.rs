//! Small synchronisation primitives usable from both threads and async code.
//!
//! [`Oneshot`] carries one value from a producer to a consumer; [`Mailbox`] is an unbounded
//! multi-producer queue with a close flag. Both can be waited on by blocking (`recv_blocking`)
//! or awaited (`recv`), so the runtime's own threads and async applications (tokio or any
//! other executor) share one implementation.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// How long a blocking receive polls before it parks the thread, when it may poll (fewer
/// threads polling than [`available_cores`]).
pub const SPIN_BEFORE_PARKING: Duration = Duration::from_micros(20);

/// The cores this process may use (`std::thread::available_parallelism`, read once; 1 where
/// it cannot be read).
pub fn available_cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The right to poll a mailbox before parking: at most one per core are held at a time,
/// process-wide ([`SPIN_SLOTS_HELD`]). With more waiting threads than cores (many virtual
/// devices on a small host), pollers would take the cores from the threads that make their
/// items.
struct SpinSlot {
    held: &'static AtomicUsize,
}

/// Spin slots held now, process-wide.
static SPIN_SLOTS_HELD: AtomicUsize = AtomicUsize::new(0);

impl SpinSlot {
    /// A process-wide slot, if one of the cores is free of pollers.
    fn take() -> Option<SpinSlot> {
        Self::take_from(&SPIN_SLOTS_HELD, available_cores())
    }

    /// A slot of the `capacity` that `held` counts, if one is free (a refused take leaves
    /// the count as it was).
    fn take_from(held: &'static AtomicUsize, capacity: usize) -> Option<SpinSlot> {
        held.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n < capacity).then_some(n + 1)
        })
        .ok()
        .map(|_| SpinSlot { held })
    }
}

impl Drop for SpinSlot {
    fn drop(&mut self) {
        self.held.fetch_sub(1, Ordering::Relaxed);
    }
}

struct MailboxState<T> {
    items: VecDeque<T>,
    closed: bool,
    wakers: Vec<Waker>,
}

/// An unbounded multi-producer multi-consumer queue that can be closed.
///
/// After [`Mailbox::close`], receivers drain what is queued and then see `None`.
pub struct Mailbox<T> {
    state: Mutex<MailboxState<T>>,
    ready: Condvar,
}

impl<T> std::fmt::Debug for Mailbox<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state.lock();
        f.debug_struct("Mailbox")
            .field("queued", &st.items.len())
            .field("closed", &st.closed)
            .finish()
    }
}

impl<T> Default for Mailbox<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Mailbox<T> {
    /// An empty, open mailbox.
    pub fn new() -> Self {
        Mailbox {
            state: Mutex::new(MailboxState {
                items: VecDeque::new(),
                closed: false,
                wakers: Vec::new(),
            }),
            ready: Condvar::new(),
        }
    }

    /// Queues `item`; gives it back if the mailbox is closed.
    pub fn push(&self, item: T) -> Result<(), T> {
        let wakers = {
            let mut st = self.state.lock();
            if st.closed {
                return Err(item);
            }
            st.items.push_back(item);
            std::mem::take(&mut st.wakers)
        };
        self.ready.notify_one();
        wakers.into_iter().for_each(Waker::wake);
        Ok(())
    }

    /// Closes the mailbox: no more pushes; receivers see `None` once it is drained.
    pub fn close(&self) {
        let wakers = {
            let mut st = self.state.lock();
            st.closed = true;
            std::mem::take(&mut st.wakers)
        };
        self.ready.notify_all();
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Whether [`Mailbox::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// Items queued now.
    pub fn len(&self) -> usize {
        self.state.lock().items.len()
    }

    /// Whether nothing is queued now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes an item if one is queued.
    pub fn try_recv(&self) -> Option<T> {
        self.state.lock().items.pop_front()
    }

    /// Polls for up to [`SPIN_BEFORE_PARKING`] before a blocking receive parks the thread:
    /// when the producer is busy (packets streaming through a link), the next item usually
    /// arrives within microseconds, and a park/unpark pair costs more than that. Only while
    /// fewer threads poll than the machine has cores ([`SpinSlot`]): past that, a poller only
    /// takes the core from the thread it waits for.
    fn spin_for_item(&self) -> Option<Option<T>> {
        let Some(_slot) = SpinSlot::take() else {
            return self.try_take_or_closed();
        };
        let start = Instant::now();
        let mut rounds = 0u32;
        loop {
            if let Some(done) = self.try_take_or_closed() {
                return Some(done);
            }
            rounds += 1;
            if rounds % 16 == 0 && start.elapsed() >= SPIN_BEFORE_PARKING {
                return None;
            }
            std::hint::spin_loop();
        }
    }

    /// An item (`Some(Some)`), or the mailbox closed and drained (`Some(None)`), if either
    /// holds now.
    fn try_take_or_closed(&self) -> Option<Option<T>> {
        let mut st = self.state.lock();
        match st.items.pop_front() {
            Some(item) => Some(Some(item)),
            None if st.closed => Some(None),
            None => None,
        }
    }

    /// Blocks until an item arrives (`Some`) or the mailbox is closed and drained (`None`).
    pub fn recv_blocking(&self) -> Option<T> {
        if let Some(done) = self.spin_for_item() {
            return done;
        }
        let mut st = self.state.lock();
        loop {
            if let Some(item) = st.items.pop_front() {
                return Some(item);
            }
            if st.closed {
                return None;
            }
            self.ready.wait(&mut st);
        }
    }

    /// Like [`Mailbox::recv_blocking`] but gives up after `timeout` (`Err(())`).
    #[allow(clippy::result_unit_err)]
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Option<T>, ()> {
        let deadline = Instant::now() + timeout;
        if let Some(done) = self.spin_for_item() {
            return Ok(done);
        }
        let mut st = self.state.lock();
        loop {
            if let Some(item) = st.items.pop_front() {
                return Ok(Some(item));
            }
            if st.closed {
                return Ok(None);
            }
            if self.ready.wait_until(&mut st, deadline).timed_out() {
                return Err(());
            }
        }
    }

    /// Awaits an item (`Some`) or close-and-drained (`None`).
    pub fn recv(&self) -> MailboxRecv<'_, T> {
        MailboxRecv { mailbox: self }
    }

    fn poll_recv(&self, cx: &mut TaskContext<'_>) -> Poll<Option<T>> {
        let mut st = self.state.lock();
        if let Some(item) = st.items.pop_front() {
            return Poll::Ready(Some(item));
        }
        if st.closed {
            return Poll::Ready(None);
        }
        if !st.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            st.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// Future returned by [`Mailbox::recv`].
#[must_use = "futures do nothing unless awaited"]
#[derive(Debug)]
pub struct MailboxRecv<'a, T> {
    mailbox: &'a Mailbox<T>,
}

impl<T> Future for MailboxRecv<'_, T> {
    type Output = Option<T>;
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<T>> {
        self.mailbox.poll_recv(cx)
    }
}

/// A single-value channel: [`OneshotSender::send`] once, receive by blocking or awaiting.
///
/// Cloning shares the same slot. If every sender side is dropped without sending, the
/// receiver sees `None` (see [`OneshotSender`]).
pub struct Oneshot<T> {
    inner: Arc<Mailbox<T>>,
}

impl<T> Clone for Oneshot<T> {
    fn clone(&self) -> Self {
        Oneshot {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> std::fmt::Debug for Oneshot<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oneshot").finish_non_exhaustive()
    }
}

/// The sending half of a [`Oneshot`]; dropping it unsent closes the channel.
pub struct OneshotSender<T> {
    inner: Option<Arc<Mailbox<T>>>,
}

impl<T> std::fmt::Debug for OneshotSender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OneshotSender").finish_non_exhaustive()
    }
}

impl<T> OneshotSender<T> {
    /// Delivers the value.
    pub fn send(mut self, value: T) {
        if let Some(inner) = self.inner.take() {
            let _ = inner.push(value);
            inner.close();
        }
    }
}

impl<T> Drop for OneshotSender<T> {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            inner.close();
        }
    }
}

/// A new one-shot channel.
pub fn oneshot<T>() -> (OneshotSender<T>, Oneshot<T>) {
    let inner = Arc::new(Mailbox::new());
    (
        OneshotSender {
            inner: Some(Arc::clone(&inner)),
        },
        Oneshot { inner },
    )
}

impl<T> Oneshot<T> {
    /// Blocks until the value arrives; `None` if the sender was dropped.
    pub fn recv_blocking(self) -> Option<T> {
        self.inner.recv_blocking()
    }

    /// Takes the value if it has arrived (`Ok(Some)`), `Ok(None)` if the sender was dropped,
    /// `Err(self)` if it is still pending.
    pub fn try_recv(self) -> Result<Option<T>, Self> {
        if let Some(v) = self.inner.try_recv() {
            return Ok(Some(v));
        }
        if self.inner.is_closed() {
            return Ok(self.inner.try_recv());
        }
        Err(self)
    }

    pub(crate) fn poll_recv(&self, cx: &mut TaskContext<'_>) -> Poll<Option<T>> {
        self.inner.poll_recv(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mailbox_drains_before_reporting_close() {
        let m = Mailbox::new();
        m.push(1).unwrap();
        m.push(2).unwrap();
        m.close();
        assert_eq!(m.push(3), Err(3));
        assert_eq!(m.recv_blocking(), Some(1));
        assert_eq!(m.recv_blocking(), Some(2));
        assert_eq!(m.recv_blocking(), None);
    }

    #[test]
    fn mailbox_wakes_a_blocked_receiver() {
        let m = Arc::new(Mailbox::new());
        let r = Arc::clone(&m);
        let t = std::thread::spawn(move || r.recv_blocking());
        std::thread::sleep(Duration::from_millis(10));
        m.push(7u32).unwrap();
        assert_eq!(t.join().unwrap(), Some(7));
    }

    #[test]
    fn oneshot_reports_a_dropped_sender() {
        let (tx, rx) = oneshot::<u8>();
        drop(tx);
        assert_eq!(rx.recv_blocking(), None);
        let (tx, rx) = oneshot::<u8>();
        tx.send(5);
        assert_eq!(rx.recv_blocking(), Some(5));
    }

    #[tokio::test]
    async fn mailbox_is_awaitable() {
        let m = Arc::new(Mailbox::new());
        let p = Arc::clone(&m);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            p.push(3u8).unwrap();
            p.close();
        });
        assert_eq!(m.recv().await, Some(3));
        assert_eq!(m.recv().await, None);
    }

    #[test]
    fn spin_slots_are_at_most_their_capacity_and_free_when_dropped() {
        let held: &'static AtomicUsize = Box::leak(Box::new(AtomicUsize::new(0)));
        let first = SpinSlot::take_from(held, 2).expect("a first slot");
        let second = SpinSlot::take_from(held, 2).expect("a second slot");
        assert!(SpinSlot::take_from(held, 2).is_none(), "a third of two");
        assert_eq!(
            held.load(Ordering::Relaxed),
            2,
            "a refused take leaves the count"
        );
        drop(first);
        let third = SpinSlot::take_from(held, 2).expect("the freed slot");
        drop((second, third));
        assert_eq!(held.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_receive_without_a_spin_slot_still_gets_its_item() {
        // Every slot held: receives park at once and still see items and the close.
        let held: Vec<SpinSlot> = std::iter::from_fn(SpinSlot::take).collect();
        let m = Arc::new(Mailbox::new());
        let p = Arc::clone(&m);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            p.push(9u32).unwrap();
            p.close();
        });
        assert_eq!(m.recv_timeout(Duration::from_secs(10)), Ok(Some(9)));
        assert_eq!(m.recv_blocking(), None);
        t.join().unwrap();
        drop(held);
    }
}
