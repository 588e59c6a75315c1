//! The send queue of one link output, with claimable offers.
//!
//! A message assigned by availability is *offered* to several output queues at once: each
//! candidate queue holds an `Arc` of the same [`Offer`], and the first consumer to pop it and
//! win the claim flag (one compare-and-swap) takes the message. The others find it already
//! claimed and drop the stale duplicate on inspection. There is no lock shared between
//! outputs: every queue is its own crossbeam channel.
//!
//! A queue is finished (its consumer sees end-of-stream) once every input feeding it has
//! closed and it is drained.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crossbeam::channel::{self, Receiver, Sender, TryRecvError};
use parking_lot::Mutex;

/// A message offered to one or more queues; exactly one consumer claims it.
pub(crate) struct Offer<M> {
    claimed: AtomicBool,
    message: Mutex<Option<M>>,
}

impl<M> Offer<M> {
    pub(crate) fn new(message: M) -> Arc<Self> {
        Arc::new(Offer {
            claimed: AtomicBool::new(false),
            message: Mutex::new(Some(message)),
        })
    }

    /// Takes the message if nobody has claimed it yet.
    pub(crate) fn claim(&self) -> Option<M> {
        if self
            .claimed
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.message.lock().take()
        } else {
            None
        }
    }
}

/// End-of-stream state shared by the inputs and outputs of one link or router.
pub(crate) struct InputsState {
    open: AtomicUsize,
    closed: AtomicBool,
    wakes: Vec<Sender<()>>,
}

impl InputsState {
    /// Closes one input; the last one closes every queue and wakes their consumers.
    pub(crate) fn close_one(&self) {
        if self.open.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.closed.store(true, Ordering::Release);
            for w in &self.wakes {
                let _ = w.send(());
            }
        }
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

/// The producing side of one output queue (held by the multiplexer).
pub(crate) struct QueueSender<M> {
    tx: Sender<Arc<Offer<M>>>,
    waiting: Arc<AtomicBool>,
}

impl<M> QueueSender<M> {
    /// Queues `offer`; false if the consumer is gone.
    pub(crate) fn push(&self, offer: &Arc<Offer<M>>) -> bool {
        self.tx.send(Arc::clone(offer)).is_ok()
    }

    /// Takes the consumer's "waiting for work" flag (true if it was waiting).
    pub(crate) fn reserve_waiting(&self) -> bool {
        self.waiting
            .compare_exchange(true, false, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

/// What taking from an [`OutputQueue`] gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Take<M> {
    /// A message, claimed by this queue's consumer.
    Message(M),
    /// Nothing queued now (or the wait timed out).
    Empty,
    /// Every input has closed and the queue is drained: end-of-stream.
    Finished,
    /// Woken without a message (a close elsewhere, or the consumer's owner going away);
    /// only returned by the pump's internal wait.
    Woken,
}

/// The consuming side of one output of a [`crate::router::Multiplexer`]: a queue of offers
/// that skips the ones already claimed elsewhere.
pub struct OutputQueue<M> {
    rx: Receiver<Arc<Offer<M>>>,
    waiting: Arc<AtomicBool>,
    inputs: Arc<InputsState>,
    wake_rx: Receiver<()>,
    wake_tx: Sender<()>,
}

impl<M> fmt::Debug for OutputQueue<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutputQueue")
            .field("queued", &self.rx.len())
            .field("waiting", &self.is_waiting())
            .field("inputs_closed", &self.inputs.is_closed())
            .finish()
    }
}

/// Builds `outputs` queues fed by `inputs` inputs.
pub(crate) fn output_queues<M>(
    inputs: usize,
    outputs: usize,
) -> (Arc<InputsState>, Vec<QueueSender<M>>, Vec<OutputQueue<M>>) {
    let mut senders = Vec::with_capacity(outputs);
    let mut parts = Vec::with_capacity(outputs);
    let mut wakes = Vec::with_capacity(outputs);
    for _ in 0..outputs {
        let (tx, rx) = channel::unbounded();
        let (wake_tx, wake_rx) = channel::unbounded();
        let waiting = Arc::new(AtomicBool::new(false));
        senders.push(QueueSender {
            tx,
            waiting: Arc::clone(&waiting),
        });
        wakes.push(wake_tx.clone());
        parts.push((rx, waiting, wake_rx, wake_tx));
    }
    let state = Arc::new(InputsState {
        open: AtomicUsize::new(inputs),
        closed: AtomicBool::new(inputs == 0),
        wakes,
    });
    let queues = parts
        .into_iter()
        .map(|(rx, waiting, wake_rx, wake_tx)| OutputQueue {
            rx,
            waiting,
            inputs: Arc::clone(&state),
            wake_rx,
            wake_tx,
        })
        .collect();
    (state, senders, queues)
}

impl<M> OutputQueue<M> {
    /// Takes the next unclaimed message without blocking.
    pub fn try_take(&self) -> Take<M> {
        loop {
            match self.rx.try_recv() {
                Ok(offer) => {
                    if let Some(m) = offer.claim() {
                        return Take::Message(m);
                    }
                    // A stale duplicate, claimed by another output: dropped on inspection.
                }
                Err(TryRecvError::Disconnected) => return Take::Finished,
                Err(TryRecvError::Empty) => {
                    // Every push happens before its input closes, so once `closed` is seen
                    // an empty channel stays empty.
                    if self.inputs.is_closed() && self.rx.is_empty() {
                        return Take::Finished;
                    }
                    if self.rx.is_empty() {
                        return Take::Empty;
                    }
                }
            }
        }
    }

    /// Waits up to `timeout` for a message, counting as "waiting for work" for
    /// priority assignment meanwhile. [`Take::Empty`] on timeout.
    pub fn take_timeout(&self, timeout: Duration) -> Take<M> {
        let deadline = Instant::now() + timeout;
        self.waiting.store(true, Ordering::Release);
        let out = loop {
            match self.wait_once(Some(deadline)) {
                Take::Woken => continue,
                other => break other,
            }
        };
        self.waiting.store(false, Ordering::Release);
        out
    }

    /// Whether the consumer is blocked waiting for work (priority assignment prefers it).
    pub fn is_waiting(&self) -> bool {
        self.waiting.load(Ordering::Acquire)
    }

    /// Whether every input has closed and nothing is queued.
    pub fn is_finished(&self) -> bool {
        self.inputs.is_closed() && self.rx.is_empty()
    }

    /// Whether every input feeding this queue has closed (messages may still be queued).
    pub(crate) fn inputs_closed(&self) -> bool {
        self.inputs.is_closed()
    }

    /// Marks the consumer as waiting (or not) for work.
    pub(crate) fn set_waiting(&self, waiting: bool) {
        self.waiting.store(waiting, Ordering::Release);
    }

    /// A handle that wakes a consumer blocked in this queue or on its wake channel.
    pub(crate) fn waker(&self) -> Sender<()> {
        self.wake_tx.clone()
    }

    /// The wake channel (for consumers that also wait on something else).
    pub(crate) fn wake_channel(&self) -> &Receiver<()> {
        &self.wake_rx
    }

    /// Blocks until a message, end-of-stream, a wake-up or the deadline ([`Take::Empty`]).
    pub(crate) fn wait_once(&self, deadline: Option<Instant>) -> Take<M> {
        match self.try_take() {
            Take::Empty => {}
            other => return other,
        }
        let mut sel = channel::Select::new();
        let data = sel.recv(&self.rx);
        let wake = sel.recv(&self.wake_rx);
        let op = match deadline {
            Some(d) => match sel.select_deadline(d) {
                Ok(op) => op,
                Err(_) => return self.try_take(),
            },
            None => sel.select(),
        };
        match op.index() {
            i if i == data => match op.recv(&self.rx) {
                Ok(offer) => match offer.claim() {
                    Some(m) => Take::Message(m),
                    None => Take::Woken,
                },
                Err(_) => Take::Finished,
            },
            i if i == wake => {
                let _ = op.recv(&self.wake_rx);
                Take::Woken
            }
            _ => Take::Woken,
        }
    }
}
