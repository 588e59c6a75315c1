//! The control plane, written once: one driver thread per device runs receive -> split,
//! expand round, send, and the termination count, over any [`DeviceWorker`].
//!
//! The driver knows nothing of the backend: a worker owns the device's storage (local
//! worklist, outgoing buffers, the application's arrays) and runs its kernels (host closures
//! on the host backend, NVRTC kernels on CUDA), and reports what each step consumed and
//! produced; the driver does the accounting ([`PriorityCounter::report`], once per step),
//! the ring traffic, the soft-priority epochs (re-examining the worker's low-priority list
//! when the epoch advances) and the end of the run.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use bytemuck::Pod;
use groute_core::{
    BackendKind, Context, DeviceId, DeviceTimer, Error, Event, EventFuture, PendingSegment, Segment,
};

use crate::crowded_wait::crowded_wait;
use crate::engine::{DeviceStats, WorklistOptions, WorklistStats};
use crate::error::WorklistError;
use crate::priority_counter::{PriorityCounter, StepCounts, StepOutcome};
use crate::ring::{RingTransport, RouterRing};

/// What a step that received packets did: `received` items consumed, `kept` pushed to the
/// local worklist, `deferred` to the low-priority list, `passed` appended to the outgoing
/// buffer (the rest were dropped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiveCounts {
    /// Items received (consumed by the step).
    pub received: u64,
    /// Copies kept in the local worklist.
    pub kept: u64,
    /// Copies passed on (appended to the outgoing buffer).
    pub passed: u64,
    /// Kept copies deferred to the low-priority list instead (soft priority; 0 when off).
    pub deferred: u64,
    /// The smallest priority among the deferred copies (0 when unknown: the next advance
    /// then moves by one band).
    pub deferred_min_prio: u32,
}

/// What an expand round (or the initial sweep) did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundCounts {
    /// Items the round consumed (for the termination count).
    pub consumed: u64,
    /// Items it processed (statistics; the sweep processes a range but consumes one token).
    pub processed: u64,
    /// Items the expansion produced before the split (statistics).
    pub produced: u64,
    /// Produced copies kept in the local worklist.
    pub kept: u64,
    /// Produced copies appended to the outgoing buffer.
    pub sent: u64,
    /// Produced copies of this device deferred to the low-priority list (soft priority).
    pub deferred: u64,
    /// The smallest priority among the deferred copies (0 when unknown).
    pub deferred_min_prio: u32,
    /// Arcs to other devices' vertices the round relaxed; `None` where not counted.
    pub cut_arcs: Option<u64>,
}

/// What a re-examination of the low-priority list did ([`DeviceWorker::reexamine`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reexamined {
    /// Items taken out of the low list (all of it).
    pub taken: u64,
    /// Items now below the threshold, moved to the local worklist.
    pub moved: u64,
    /// Items still not below it, put back in the low list.
    pub still_low: u64,
    /// The smallest priority among the `still_low` items (0 when unknown).
    pub still_low_min_prio: u32,
}

impl Reexamined {
    /// Stale items dropped: their vertex improved after they were deferred, so a newer
    /// copy was queued already (`taken - moved - still_low`).
    pub fn dropped(&self) -> u64 {
        self.taken.saturating_sub(self.moved + self.still_low)
    }
}

/// A segment ready to send: the outgoing items on the worker's device and the event after
/// which they are valid.
pub type Outgoing<P> = (Segment<P>, Event);

/// At most this many outgoing buffers a CUDA device worker holds (sends in flight plus the
/// current one).
pub const MAX_OUTGOING_BUFFERS: usize = 64;

/// Checks that a device worker holding `held` outgoing buffers, all of them in flight, may
/// allocate one more: past [`MAX_OUTGOING_BUFFERS`] an [`Error::CapacityExceeded`] naming the
/// settings that bound the sends in flight.
pub fn check_another_outgoing_buffer(held: usize) -> Result<(), Error> {
    if held >= MAX_OUTGOING_BUFFERS {
        return Err(Error::capacity_exceeded(
            "device ring send buffers in flight",
            held,
            held + 1,
            "packet_size (--packet-size) and ring_buffers",
        ));
    }
    Ok(())
}

/// One device's storage and kernels, driven by the backend-agnostic driver.
///
/// Every method enqueues its device work and returns when the counts it reports are known
/// (a host kernel's result, or a CUDA counter block read back once per step). Items a step
/// produces must not be visible to another device before the step returns: the driver
/// reports them to the termination counter first, then sends.
pub trait DeviceWorker: Send {
    /// The item that travels over the ring.
    type Packed: Pod + Send + Sync;

    /// Items this worker starts with (seeds, plus one token per initial sweep); counted
    /// before any driver starts.
    fn initial_items(&self) -> u64;

    /// The initial sweep, if the program has one (run once, before anything else).
    fn initial_sweep(&mut self) -> Result<Option<RoundCounts>, WorklistError> {
        Ok(None)
    }

    /// SplitReceive over `packets` (all from the ring predecessor, on this device): keep,
    /// pass or drop every item. The packets are released once the split no longer reads them.
    fn split_receive(
        &mut self,
        packets: Vec<PendingSegment<Self::Packed>>,
    ) -> Result<ReceiveCounts, WorklistError>;

    /// Items in the local worklist.
    fn local_len(&self) -> usize;

    /// One expand round over up to `max_batch` items of the local worklist.
    fn expand_round(&mut self, max_batch: usize) -> Result<RoundCounts, WorklistError>;

    /// Items in the outgoing buffer (not yet sent).
    fn outgoing_len(&self) -> usize;

    /// The outgoing items as one segment on this device plus the event after which it is
    /// valid; the worker moves on to a fresh outgoing buffer.
    fn take_outgoing(&mut self) -> Result<Option<Outgoing<Self::Packed>>, WorklistError>;

    /// Whether the worker reuses its outgoing buffers: then the driver tracks every send's
    /// future and, as each one resolves (in send order), hands its event back with
    /// [`DeviceWorker::reclaim`]. The driver never blocks on a send (on a ring, a device
    /// waiting for its successor's receive buffers while its own predecessor waits for it
    /// would deadlock), so such a worker takes a fresh buffer when none is free.
    fn reuses_outgoing(&self) -> bool {
        false
    }

    /// Whether a free outgoing buffer is ready for the next send (only asked when
    /// [`DeviceWorker::reuses_outgoing`]). While it is not, the driver keeps receiving and
    /// splitting (which frees its predecessor's sends) but neither expands nor sends, so the
    /// device's output is bounded and the ring cannot wait in a circle.
    fn outgoing_available(&self) -> bool {
        true
    }

    /// The oldest outgoing buffer in flight may be reused after `done` completes.
    fn reclaim(&mut self, done: Event) -> Result<(), WorklistError> {
        let _ = done;
        Ok(())
    }

    /// Soft priority: from now on, kept items (produced or received) whose priority is not
    /// below `threshold` ([`defers`](crate::defers)) go to this device's low-priority list
    /// instead of the local worklist. The driver calls it before the first step and after
    /// every epoch advance. Default: ignored (a worker without a low list never defers).
    fn set_threshold(&mut self, threshold: u32) -> Result<(), WorklistError> {
        let _ = threshold;
        Ok(())
    }

    /// Soft priority: takes the whole low-priority list and re-splits it under the
    /// threshold last set: items now below it go to the local worklist, the others back to
    /// the low list; an item may be dropped if a newer copy of it was queued since it was
    /// deferred. Default: nothing to re-examine.
    fn reexamine(&mut self) -> Result<Reexamined, WorklistError> {
        Ok(Reexamined::default())
    }

    /// The run is over: wait for this device's work.
    fn finish(&mut self) -> Result<(), WorklistError> {
        Ok(())
    }
}

/// Runs one worker per device over the runtime's ring router until the termination count
/// reaches zero (see the crate docs for the protocol). The statistics' `device_time` is
/// timed with [`DeviceTimer`] from after the workers were made (their reset done) until
/// every driver has finished (the ring's construction and the results' download excluded).
pub fn run_workers<W: DeviceWorker>(
    context: &Context,
    workers: Vec<W>,
    options: &WorklistOptions,
) -> Result<WorklistStats, WorklistError> {
    // A ring of one device carries nothing (every item is its own): packets of one item.
    let (packet_size, buffers) = if context.num_devices() == 1 {
        (1, 1)
    } else {
        (options.packet_size, options.ring_buffers.max(1))
    };
    let transport = RouterRing::<W::Packed>::new(context, packet_size, buffers)?;
    let stats = run_workers_on(context, workers, &transport, options);
    transport.shutdown();
    stats
}

/// [`run_workers`] over a given transport (tests swap in their own).
pub fn run_workers_on<W: DeviceWorker, T: RingTransport<W::Packed>>(
    context: &Context,
    workers: Vec<W>,
    transport: &T,
    options: &WorklistOptions,
) -> Result<WorklistStats, WorklistError> {
    let n = context.num_devices();
    let term = PriorityCounter::new(n, options.prio_delta);
    drive(context, workers, transport, &term, None, options)
}

/// One process's share of a run whose ring spans several processes (the `groute-dist`
/// crate's ranks): what [`run_workers_shared`] needs besides the workers and the transport.
#[derive(Clone, Copy, Debug)]
pub struct SharedRun<'a> {
    /// This process's counts, made with [`PriorityCounter::held`]: they reaching zero makes
    /// the process idle, not done; the caller calls [`PriorityCounter::finish`] once every
    /// process is known to be idle with nothing in flight (a termination wave across the
    /// processes). The items this process's transport receives from another process are
    /// reported as produced before a driver sees them, and those it hands to another
    /// process retired after. Soft priority advances within the process.
    pub counter: &'a PriorityCounter,
    /// Devices on the whole ring, over every process.
    pub ring_devices: usize,
    /// Set once this process's initial items are counted: until then counts of zero do not
    /// mean that this process is idle.
    pub started: &'a AtomicBool,
}

/// [`run_workers_on`] as one process's share of a run spanning several ([`SharedRun`]): the
/// drivers run until the caller finishes `shared.counter`, and a process that starts with no
/// items still runs (items come over the ring). The check that items circle the ring
/// forever counts only this process's traffic, so it is off here: set
/// [`WorklistOptions::time_limit`] to bound a run whose split never keeps an item.
pub fn run_workers_shared<W: DeviceWorker, T: RingTransport<W::Packed>>(
    context: &Context,
    workers: Vec<W>,
    transport: &T,
    shared: SharedRun<'_>,
    options: &WorklistOptions,
) -> Result<WorklistStats, WorklistError> {
    if !shared.counter.is_held() {
        return Err(Error::invalid(
            "SharedRun::counter",
            "a counter whose run ends when its counts reach zero",
            "make it with PriorityCounter::held, and finish it once every process is done",
        )
        .into());
    }
    drive(
        context,
        workers,
        transport,
        shared.counter,
        Some((shared.ring_devices, shared.started)),
        options,
    )
}

/// The drivers over `term`; `shared`: the devices on the whole ring and the started flag of
/// a share of a run spanning processes ([`SharedRun`]).
fn drive<W: DeviceWorker, T: RingTransport<W::Packed>>(
    context: &Context,
    workers: Vec<W>,
    transport: &T,
    term: &PriorityCounter,
    shared: Option<(usize, &AtomicBool)>,
    options: &WorklistOptions,
) -> Result<WorklistStats, WorklistError> {
    let ring_devices = shared.map(|(devices, _)| devices);
    let n = context.num_devices();
    if workers.len() != n {
        return Err(Error::invalid(
            "workers per device",
            workers.len(),
            format!("give one worker per device ({n} devices)"),
        )
        .into());
    }
    if options.max_batch == 0 {
        return Err(Error::invalid(
            "max_batch (--max-batch)",
            0,
            "pop at least one item per round",
        )
        .into());
    }
    // On several CUDA devices the drivers make one device's stream wait for another's work:
    // no device-driven run of this process may start beside them (PeerGroup::share_gpus).
    let _share = (n > 1 && context.backend_kind() == BackendKind::Cuda)
        .then(groute_core::cuda::PeerGroup::share_gpus);
    let total: u64 = workers.iter().map(|w| w.initial_items()).sum();
    // The workers have reset their state (synchronised) when they were made; the drivers'
    // `finish` synchronises each device's work, so the end events follow the algorithm.
    let timer = DeviceTimer::start(context)?;
    let start = Instant::now();
    if total == 0 && ring_devices.is_none() {
        return Ok(WorklistStats {
            devices: vec![DeviceStats::default(); n],
            elapsed: start.elapsed(),
            late_items: 0,
            epochs: 0,
            device_time: timer.stop()?,
            ..WorklistStats::default()
        });
    }
    if total > 0 {
        term.report(StepCounts::produced(total));
    }
    if let Some((_, started)) = shared {
        started.store(true, Ordering::SeqCst);
    }
    let deadline = options.time_limit.map(|t| start + t);
    let traffic = RingTraffic {
        devices: ring_devices.unwrap_or(n),
        local_only: ring_devices.is_some(),
        ..RingTraffic::default()
    };
    let priority_idle_wait = priority_idle_wait(n);
    let results: Vec<Result<DeviceStats, WorklistError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .into_iter()
            .enumerate()
            .map(|(d, worker)| {
                let traffic = &traffic;
                scope.spawn(move || {
                    let mut driver = Driver {
                        id: DeviceId(d),
                        worker,
                        transport,
                        term,
                        options,
                        deadline,
                        stats: DeviceStats::default(),
                        in_flight: VecDeque::new(),
                        seen_epoch: 0,
                        traffic,
                        priority_idle_wait,
                    };
                    let outcome =
                        catch_unwind(AssertUnwindSafe(|| driver.run())).unwrap_or_else(|_| {
                            Err(
                                Error::ThreadPanicked(format!("worklist driver of device {d}"))
                                    .into(),
                            )
                        });
                    if outcome.is_err() {
                        term.abort();
                        transport.shutdown();
                    }
                    outcome.map(|()| driver.stats)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::ThreadPanicked("worklist driver".into()).into()))
            })
            .collect()
    });
    let elapsed = start.elapsed();
    // Report the root cause, not the disconnections and aborts it caused elsewhere.
    let mut errors = Vec::new();
    let mut devices = Vec::with_capacity(n);
    for r in results {
        match r {
            Ok(s) => devices.push(s),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        // A failed or stalled device first: the others' errors are its consequences.
        let root = errors
            .iter()
            .position(|e| matches!(e, WorklistError::Runtime(e) if e.is_device_fault()))
            .or_else(|| {
                errors.iter().position(|e| {
                    !matches!(
                        e,
                        WorklistError::Runtime(
                            Error::Disconnected(_) | Error::SendAfterShutdown(_)
                        )
                    )
                })
            })
            .unwrap_or(0);
        return Err(errors.swap_remove(root));
    }
    Ok(WorklistStats {
        devices,
        elapsed,
        late_items: term.late_items(),
        epochs: term.epoch(),
        // Only after a successful run: a failed one may have left work on the streams.
        device_time: timer.stop()?,
        ..WorklistStats::default()
    })
}

struct Driver<'a, W: DeviceWorker, T> {
    id: DeviceId,
    worker: W,
    transport: &'a T,
    term: &'a PriorityCounter,
    options: &'a WorklistOptions,
    deadline: Option<Instant>,
    stats: DeviceStats,
    /// Sends whose outgoing buffer the worker will reuse, oldest first.
    in_flight: VecDeque<EventFuture>,
    /// The soft-priority epoch whose threshold the worker splits with.
    seen_epoch: u64,
    /// Items on the ring, counted by every driver: the no-progress check.
    traffic: &'a RingTraffic,
    /// How long an idle driver waits for a packet with soft priority on.
    priority_idle_wait: Duration,
}

/// Items sent onto the ring by expand rounds and items passed on by receivers, over all
/// devices. An item that its owner keeps is passed on at most `devices - 2` times (it visits
/// each other device once), so more than `(devices - 1) * sent` passes means items circle the
/// ring: the split never keeps them, and the run would never end.
#[derive(Default)]
struct RingTraffic {
    sent: AtomicU64,
    passed: AtomicU64,
    devices: usize,
    /// This process holds only part of the ring ([`SharedRun`]): items from other processes
    /// are passed too, so the circling check cannot be made here.
    local_only: bool,
}

impl RingTraffic {
    /// Counts items an expand round sends onto the ring. On a ring of one device they would
    /// come back to the only device, which just declined them: no progress.
    fn count_sent(&self, sent: u64) -> Result<(), WorklistError> {
        let total = self.sent.fetch_add(sent, Ordering::SeqCst) + sent;
        if self.devices == 1 && sent > 0 {
            return Err(self.no_progress(self.passed.load(Ordering::SeqCst), total));
        }
        Ok(())
    }

    fn no_progress(&self, passed: u64, sent: u64) -> WorklistError {
        WorklistError::NoProgress {
            passed,
            sent,
            devices: self.devices,
        }
    }

    /// Counts `passed` items and fails if items must be circling.
    fn check_passed(&self, passed: u64) -> Result<(), WorklistError> {
        let devices = self.devices;
        // A sender counts its items before sending them, so `sent` covers every received item.
        let passed = self.passed.fetch_add(passed, Ordering::SeqCst) + passed;
        let sent = self.sent.load(Ordering::SeqCst);
        if !self.local_only && passed > sent.saturating_mul(devices.saturating_sub(1) as u64) {
            return Err(self.no_progress(passed, sent));
        }
        Ok(())
    }
}

/// How long a driver whose outgoing buffers are all in flight waits for a packet before
/// polling its sends again.
const BLOCKED_WAIT: Duration = Duration::from_micros(100);

/// How long an idle driver waits for a packet when soft priority is on, where its process's
/// drivers do not outnumber the cores several times ([`priority_idle_wait`]): an epoch advance
/// made by another driver is noticed within this (the ring cannot wake a receive).
const PRIORITY_IDLE_WAIT: Duration = Duration::from_micros(100);

/// [`PRIORITY_IDLE_WAIT`] times half the drivers per core (rounded up, at least 1) of this
/// process's `drivers` ([`crowded_wait`]): an epoch waits for every driver's poll anyway, so
/// many drivers on few cores poll less often (32 on 2 cores: every 800 us; up to 2 drivers per
/// core, every 100 us).
fn priority_idle_wait(drivers: usize) -> Duration {
    let cores = groute_core::sync::available_cores();
    crowded_wait(PRIORITY_IDLE_WAIT, drivers, cores, 2)
}

/// The driver polls send futures without sleeping on them.
struct NoopWaker;

impl Wake for NoopWaker {
    fn wake(self: Arc<Self>) {}
}

impl<W: DeviceWorker, T: RingTransport<W::Packed>> Driver<'_, W, T> {
    fn run(&mut self) -> Result<(), WorklistError> {
        let ended = self.steps()?;
        if ended {
            self.transport.shutdown();
        }
        self.worker.finish()
    }

    fn check_deadline(&self) -> Result<(), WorklistError> {
        if let Some(deadline) = self.deadline {
            if Instant::now() > deadline {
                return Err(WorklistError::TimedOut {
                    limit: self.options.time_limit.unwrap_or_default(),
                    outstanding: (self.term.active() + self.term.deferred()) as i64,
                });
            }
        }
        Ok(())
    }

    /// The loop; returns whether this driver's update ended the run.
    fn steps(&mut self) -> Result<bool, WorklistError> {
        self.worker.set_threshold(self.term.current().threshold)?;
        if let Some(c) = self.worker.initial_sweep()? {
            self.traffic.count_sent(c.sent)?;
            if self.finish_round(c) {
                return Ok(true);
            }
        }
        let mut packets = Vec::new();
        loop {
            if self.term.is_done() {
                return Ok(false);
            }
            self.check_deadline()?;
            // (0) Soft priority: a new epoch's threshold, and this device's token for it.
            if self.term.epoch() != self.seen_epoch && self.reexamine()? {
                return Ok(true);
            }
            // (1) Receive: wait a little only when there is nothing else to do.
            let blocked = self.blocked();
            let idle = self.worker.local_len() == 0 && self.worker.outgoing_len() == 0;
            if idle || blocked {
                let wait = if idle && self.term.enabled() {
                    self.options.idle_wait.min(self.priority_idle_wait)
                } else if idle {
                    self.options.idle_wait
                } else {
                    self.options.idle_wait.min(BLOCKED_WAIT)
                };
                match self.transport.receive(self.id, wait) {
                    Ok(Some(p)) => packets.push(p),
                    Ok(None) => {}
                    Err(Error::Disconnected(_)) if self.term.is_done() => return Ok(false),
                    Err(e) => return Err(e.into()),
                }
            }
            loop {
                match self.transport.try_receive(self.id) {
                    Ok(Some(p)) => packets.push(p),
                    Ok(None) => break,
                    Err(Error::Disconnected(_)) if self.term.is_done() => return Ok(false),
                    Err(e) => return Err(e.into()),
                }
            }
            packets.retain(|p| !p.segment().is_empty());
            if !packets.is_empty() {
                let received: u64 = packets.iter().map(|p| p.segment().len() as u64).sum();
                if self.term.is_done() {
                    self.term.note_late(received);
                    return Ok(false);
                }
                let c = self.worker.split_receive(std::mem::take(&mut packets))?;
                self.stats.items_received += c.received;
                self.stats.items_passed += c.passed;
                self.stats.items_dropped += c.received.saturating_sub(c.kept + c.passed);
                self.stats.items_sent += c.passed;
                self.stats.items_deferred += c.deferred;
                self.traffic.check_passed(c.passed)?;
                // One update, before any passed item leaves this device.
                let step = StepCounts {
                    produced: c.kept + c.passed,
                    consumed: c.received,
                    deferred_added: c.deferred,
                    deferred_taken: 0,
                    min_deferred_prio: c.deferred_min_prio,
                };
                if self.term.report(step) == StepOutcome::Ended {
                    return Ok(true);
                }
            }
            // (2) One expand round over the local worklist.
            let local = self.worker.local_len();
            if local > 0 && !self.blocked() {
                if self.term.is_done() {
                    self.term.note_late(local as u64);
                    return Ok(false);
                }
                let c = self.worker.expand_round(self.options.max_batch)?;
                self.traffic.count_sent(c.sent)?;
                if self.finish_round(c) {
                    return Ok(true);
                }
            }
            // (3) Send remote and passed items to the ring successor in one segment.
            if self.worker.outgoing_len() > 0 && !self.blocked() {
                if let Some((segment, ready)) = self.worker.take_outgoing()? {
                    let future = self.transport.send(self.id, segment, ready)?;
                    self.stats.segments_sent += 1;
                    if self.worker.reuses_outgoing() {
                        self.in_flight.push_back(future);
                    }
                }
            }
            self.reclaim_sent()?;
        }
    }

    /// Whether every outgoing buffer is in flight (then the driver only receives).
    fn blocked(&self) -> bool {
        self.worker.reuses_outgoing() && !self.worker.outgoing_available()
    }

    /// Hands back to the worker, in send order, the buffers of every send whose copies are
    /// enqueued (never blocks).
    fn reclaim_sent(&mut self) -> Result<(), WorklistError> {
        let waker = Waker::from(Arc::new(NoopWaker));
        let mut cx = TaskContext::from_waker(&waker);
        while let Some(front) = self.in_flight.front_mut() {
            match Pin::new(front).poll(&mut cx) {
                Poll::Ready(done) => {
                    self.in_flight.pop_front();
                    self.worker.reclaim(done?)?;
                }
                Poll::Pending => break,
            }
        }
        Ok(())
    }

    /// Statistics and the one termination update of an expand round; whether it ended the run.
    fn finish_round(&mut self, c: RoundCounts) -> bool {
        self.stats.rounds += 1;
        self.stats.items_processed += c.processed;
        self.stats.items_produced += c.produced;
        self.stats.items_sent += c.sent;
        self.stats.remote_updates += c.sent;
        self.stats.items_deferred += c.deferred;
        if let Some(arcs) = c.cut_arcs {
            *self.stats.cut_arcs_traversed.get_or_insert(0) += arcs;
        }
        let step = StepCounts {
            produced: c.kept + c.sent,
            consumed: c.consumed,
            deferred_added: c.deferred,
            deferred_taken: 0,
            min_deferred_prio: c.deferred_min_prio,
        };
        self.term.report(step) == StepOutcome::Ended
    }

    /// The epoch advanced: take its threshold, re-examine the low list under it, and consume
    /// this device's token in the same update; whether that update ended the run.
    fn reexamine(&mut self) -> Result<bool, WorklistError> {
        let now = self.term.current();
        self.worker.set_threshold(now.threshold)?;
        let r = self.worker.reexamine()?;
        // One token per advance; a driver holds its token until here, so no second advance
        // can have happened since the last one it saw (the difference is 1).
        let tokens = now.epoch - self.seen_epoch;
        self.seen_epoch = now.epoch;
        self.stats.epochs += 1;
        self.stats.items_stale_dropped += r.dropped();
        let step = StepCounts {
            produced: r.moved,
            consumed: tokens,
            deferred_added: r.still_low,
            deferred_taken: r.taken,
            min_deferred_prio: r.still_low_min_prio,
        };
        Ok(self.term.report(step) == StepOutcome::Ended)
    }
}
