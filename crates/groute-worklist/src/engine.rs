//! The distributed worklist engine: one driver thread per device over the ring.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use groute_core::sync::oneshot;
use groute_core::{Context, Device, Endpoint, Error, Segment, Stream};
use rayon::prelude::*;

use crate::error::WorklistError;
use crate::local::{WorklistConsumer, WorklistProducer, local_worklist};
use crate::ring::{MailboxRing, RingTransport};
use crate::split::SplitOps;
use crate::termination::TerminationCounter;

/// The local item type of a program.
pub type LocalOf<P> = <<P as DeviceProgram>::Ops as SplitOps>::Local;
/// The packed item type of a program.
pub type PackedOf<P> = <<P as DeviceProgram>::Ops as SplitOps>::Packed;

/// What an algorithm runs on one device: its split operations and its expand kernel.
///
/// One instance per device; it owns that device's buffers (graph, value array).
pub trait DeviceProgram: Send + Sync + 'static {
    /// The split operations of this device.
    type Ops: SplitOps + Clone + 'static;

    /// This device's split operations.
    fn split_ops(&self) -> Self::Ops;

    /// One expand round over `items` (host backend: called inside a host kernel, may use
    /// rayon): returns every item produced, mine or not; the engine splits them.
    fn expand(&self, items: &[LocalOf<Self>]) -> Vec<LocalOf<Self>>;

    /// The local worklist capacity to use when the options leave it to the program.
    fn capacity_hint(&self) -> usize;
}

/// Settings of a distributed worklist run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorklistOptions {
    /// Items each local worklist holds (`--wl-capacity`); `None`: the program's hint.
    pub wl_capacity: Option<usize>,
    /// Items one device may send around the ring per round (`--send-capacity`); `None`: the
    /// worklist capacity.
    pub send_capacity: Option<usize>,
    /// Items per ring packet (`--packet-size`); larger segments are split.
    pub packet_size: usize,
    /// Items popped from the local worklist per round (`--max-batch`).
    pub max_batch: usize,
    /// How long an idle driver waits for a packet before re-checking termination.
    pub idle_wait: Duration,
    /// Abort the run with [`WorklistError::TimedOut`] after this long (`None`: never).
    pub time_limit: Option<Duration>,
}

impl Default for WorklistOptions {
    fn default() -> Self {
        WorklistOptions {
            wl_capacity: None,
            send_capacity: None,
            packet_size: 1 << 16,
            max_batch: 1 << 20,
            idle_wait: Duration::from_millis(2),
            time_limit: None,
        }
    }
}

/// Counters of one device's driver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceStats {
    /// Expand rounds run.
    pub rounds: u64,
    /// Items popped from the local worklist and expanded.
    pub items_processed: u64,
    /// Items the expand rounds produced (before the split).
    pub items_produced: u64,
    /// Items put on the ring (remote items produced here plus items passed on).
    pub items_sent: u64,
    /// Segments (messages) sent; the transport may split each into packets.
    pub segments_sent: u64,
    /// Items received from the ring predecessor.
    pub items_received: u64,
    /// Received items passed on to the successor.
    pub items_passed: u64,
    /// Received items dropped by `on_receive`.
    pub items_dropped: u64,
}

/// Counters of a whole run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorklistStats {
    /// Per device.
    pub devices: Vec<DeviceStats>,
    /// Wall time of the run (drivers started to last driver done).
    pub elapsed: Duration,
    /// Items some driver saw after the run was declared over: always 0 unless the
    /// termination protocol is broken (tests assert it).
    pub late_items: u64,
}

impl WorklistStats {
    /// Largest number of rounds on any device.
    pub fn rounds(&self) -> u64 {
        self.devices.iter().map(|d| d.rounds).max().unwrap_or(0)
    }

    /// Items processed on all devices.
    pub fn items_processed(&self) -> u64 {
        self.devices.iter().map(|d| d.items_processed).sum()
    }

    /// Items put on the ring by all devices.
    pub fn items_sent(&self) -> u64 {
        self.devices.iter().map(|d| d.items_sent).sum()
    }
}

/// Runs a distributed worklist: `programs[d]` on device `d`, `seeds[d]` its initial items,
/// until the termination count reaches zero.
pub fn run<P: DeviceProgram>(
    context: &Context,
    programs: &[Arc<P>],
    seeds: Vec<Vec<LocalOf<P>>>,
    options: &WorklistOptions,
) -> Result<WorklistStats, WorklistError> {
    let n = context.num_devices();
    if programs.len() != n || seeds.len() != n {
        return Err(Error::invalid(
            "programs per device",
            programs.len(),
            format!("give one program and one seed list per device ({n} devices)"),
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
    if context.devices().iter().any(|d| !d.stream().is_host()) {
        return Err(Error::Unsupported {
            operation: "the distributed worklist driver (CUDA path not wired yet)",
            backend: "cuda",
        }
        .into());
    }
    let transport = MailboxRing::<PackedOf<P>>::new(context, options.packet_size)?;
    let term = TerminationCounter::new();
    let mut lists = Vec::with_capacity(n);
    let mut total_seeds = 0u64;
    for (program, seed) in programs.iter().zip(&seeds) {
        let cap = options
            .wl_capacity
            .unwrap_or_else(|| program.capacity_hint())
            .max(1);
        let (producer, consumer) =
            local_worklist::<LocalOf<P>>(cap, "wl_capacity (--wl-capacity)")?;
        producer.push_slice(seed)?;
        total_seeds += seed.len() as u64;
        lists.push((producer, consumer));
    }
    let start = Instant::now();
    if total_seeds == 0 {
        return Ok(WorklistStats {
            devices: vec![DeviceStats::default(); n],
            elapsed: start.elapsed(),
            late_items: 0,
        });
    }
    term.report(total_seeds, 0);
    let deadline = options.time_limit.map(|t| start + t);

    let results: Vec<Result<DeviceStats, WorklistError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = lists
            .into_iter()
            .enumerate()
            .map(|(d, (producer, consumer))| {
                let program = Arc::clone(&programs[d]);
                let transport = Arc::clone(&transport);
                let term = &term;
                let device = &context.devices()[d];
                scope.spawn(move || {
                    let mut driver = Driver {
                        device,
                        program,
                        producer,
                        consumer,
                        transport: transport.as_ref(),
                        term,
                        options,
                        deadline,
                        stats: DeviceStats::default(),
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
        let root = errors
            .iter()
            .position(|e| {
                !matches!(
                    e,
                    WorklistError::Runtime(Error::Disconnected(_) | Error::SendAfterShutdown(_))
                )
            })
            .unwrap_or(0);
        return Err(errors.swap_remove(root));
    }
    Ok(WorklistStats {
        devices,
        elapsed,
        late_items: term.late_items(),
    })
}

/// Runs `kernel` on `stream` (host backend) and waits for its result.
fn host_kernel<R: Send + 'static>(
    stream: &Stream,
    kernel: impl FnOnce() -> R + Send + 'static,
) -> groute_core::Result<R> {
    let (tx, rx) = oneshot();
    stream.launch_host(move || tx.send(kernel()))?;
    rx.recv_blocking().ok_or_else(|| {
        Error::ThreadPanicked(format!(
            "a host kernel on device {} panicked",
            stream.device()
        ))
    })
}

struct Driver<'a, P: DeviceProgram> {
    device: &'a Device,
    program: Arc<P>,
    producer: WorklistProducer<LocalOf<P>>,
    consumer: WorklistConsumer<LocalOf<P>>,
    transport: &'a dyn RingTransport<PackedOf<P>>,
    term: &'a TerminationCounter,
    options: &'a WorklistOptions,
    deadline: Option<Instant>,
    stats: DeviceStats,
}

/// The result of a split over a batch: items kept (unpacked), items to send, copies made.
struct SplitOut<L, K> {
    keep: Vec<L>,
    send: Vec<K>,
}

fn split_batch<O: SplitOps>(
    ops: &O,
    items: Vec<O::Packed>,
    receive: bool,
) -> SplitOut<O::Local, O::Packed> {
    let (keep, send) = items
        .into_par_iter()
        .fold(
            || (Vec::new(), Vec::new()),
            |(mut keep, mut send), p| {
                let flags = if receive {
                    ops.on_receive(&p)
                } else {
                    ops.on_send(&p)
                };
                if flags.keeps() {
                    keep.push(ops.unpack(p));
                }
                if flags.passes() {
                    send.push(p);
                }
                (keep, send)
            },
        )
        .reduce(
            || (Vec::new(), Vec::new()),
            |(mut k1, mut s1), (k2, s2)| {
                k1.extend(k2);
                s1.extend(s2);
                (k1, s1)
            },
        );
    SplitOut { keep, send }
}

impl<P: DeviceProgram> Driver<'_, P> {
    fn id(&self) -> groute_core::DeviceId {
        self.device.id()
    }

    fn run(&mut self) -> Result<(), WorklistError> {
        let mut outgoing: Vec<PackedOf<P>> = Vec::new();
        let mut batch: Vec<LocalOf<P>> = Vec::new();
        let send_cap = self
            .options
            .send_capacity
            .unwrap_or_else(|| self.consumer.capacity())
            .max(1);
        loop {
            if self.term.is_done() {
                return Ok(());
            }
            if let Some(deadline) = self.deadline {
                if Instant::now() > deadline {
                    return Err(WorklistError::TimedOut {
                        limit: self.options.time_limit.unwrap_or_default(),
                        outstanding: self.term.outstanding(),
                    });
                }
            }
            // (1) Receive: wait a little only when there is nothing else to do.
            let idle = self.consumer.is_empty() && outgoing.is_empty();
            let mut first = if idle {
                match self.transport.receive(self.id(), self.options.idle_wait) {
                    Ok(p) => p,
                    Err(Error::Disconnected(_)) if self.term.is_done() => return Ok(()),
                    Err(e) => return Err(e.into()),
                }
            } else {
                None
            };
            loop {
                let pending = match first.take() {
                    Some(p) => p,
                    None => match self.transport.try_receive(self.id()) {
                        Ok(Some(p)) => p,
                        Ok(None) => break,
                        Err(Error::Disconnected(_)) if self.term.is_done() => return Ok(()),
                        Err(e) => return Err(e.into()),
                    },
                };
                self.split_receive(pending, &mut outgoing, send_cap)?;
            }
            // (2) One expand round over the local worklist.
            batch.clear();
            self.consumer.pop_into(self.options.max_batch, &mut batch);
            if !batch.is_empty() {
                if self.term.is_done() {
                    self.term.note_late(batch.len() as u64);
                    return Ok(());
                }
                let consumed = batch.len() as u64;
                let program = Arc::clone(&self.program);
                let items = std::mem::take(&mut batch);
                let (items, produced, split) = host_kernel(self.device.stream(), move || {
                    let produced = program.expand(&items);
                    let n = produced.len() as u64;
                    let ops = program.split_ops();
                    let packed: Vec<_> = produced.into_iter().map(|l| ops.pack(l)).collect();
                    (items, n, split_batch(&ops, packed, false))
                })?;
                batch = items;
                self.stats.rounds += 1;
                self.stats.items_processed += consumed;
                self.stats.items_produced += produced;
                let copies = (split.keep.len() + split.send.len()) as u64;
                // Own output first, so it is worked on next; visible to this thread only.
                self.consumer.prepend_slice(&split.keep)?;
                self.stats.items_sent += split.send.len() as u64;
                outgoing.extend(split.send);
                check_send(outgoing.len(), send_cap)?;
                // (4) One atomic update, before any produced item leaves this device.
                if self.term.report(copies, consumed) {
                    debug_assert!(outgoing.is_empty());
                    self.transport.shutdown();
                    return Ok(());
                }
            }
            // (3) Send remote and passed items to the ring successor in one segment.
            if !outgoing.is_empty() {
                let buf = self.device.upload(&outgoing)?;
                let ready = self.device.stream().record()?;
                let seg = Segment::new(buf, Endpoint::Device(self.id()));
                self.transport.send(self.id(), seg, &ready)?;
                self.stats.segments_sent += 1;
                outgoing.clear();
            }
        }
    }

    /// SplitReceive on the high-priority stream: kept items go to the local worklist, passed
    /// ones to `outgoing`, dropped ones are retired.
    fn split_receive(
        &mut self,
        pending: groute_core::PendingSegment<PackedOf<P>>,
        outgoing: &mut Vec<PackedOf<P>>,
        send_cap: usize,
    ) -> Result<(), WorklistError> {
        let received = pending.segment().len() as u64;
        if received == 0 {
            return Ok(());
        }
        if self.term.is_done() {
            self.term.note_late(received);
            return Ok(());
        }
        let stream = self.device.high_priority_stream();
        // The driver waits for the packet on the host rather than with `stream.wait`: on the
        // host backend a stream wait on an event recorded by another device's executor was
        // seen to never wake (reported to groute-core); this keeps the same ordering.
        pending.wait()?;
        let data = pending.segment().data().clone();
        let ops = self.program.split_ops();
        let producer = self.producer.clone();
        let (kept, passed) = host_kernel(stream, move || -> groute_core::Result<_> {
            // SAFETY: the kernel runs after the segment's ready event (stream wait above), and
            // the transport does not reuse the buffer before the pending segment is released,
            // which happens only after this kernel has completed.
            let items = unsafe { data.as_host_slice() }.ok_or(Error::Unsupported {
                operation: "host split kernels on device memory",
                backend: "cuda",
            })?;
            let split = split_batch(&ops, items.to_vec(), true);
            producer.push_slice(&split.keep)?;
            Ok((split.keep.len() as u64, split.send))
        })??;
        drop(pending);
        let passed_n = passed.len() as u64;
        self.stats.items_received += received;
        self.stats.items_passed += passed_n;
        self.stats.items_dropped += received.saturating_sub(kept + passed_n);
        self.stats.items_sent += passed_n;
        outgoing.extend(passed);
        check_send(outgoing.len(), send_cap)?;
        if self.term.report(kept + passed_n, received) {
            debug_assert!(outgoing.is_empty());
            self.transport.shutdown();
        }
        Ok(())
    }
}

fn check_send(len: usize, cap: usize) -> Result<(), Error> {
    if len > cap {
        return Err(Error::CapacityExceeded {
            what: "ring send buffer".into(),
            capacity: cap as u64,
            needed: len as u64,
            setting: "send_capacity (--send-capacity)",
        });
    }
    Ok(())
}
