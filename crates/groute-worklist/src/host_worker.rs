//! The host backend's [`DeviceWorker`]: a [`DeviceProgram`]'s host kernels on the device's
//! executor streams, the host MPSC local worklist, a low-priority `Vec` (soft priority), and
//! an outgoing `Vec` uploaded into a fresh device buffer per send.

use std::sync::Arc;

use groute_core::sync::oneshot;
use groute_core::{Device, Endpoint, Error, PendingSegment, Segment, Stream};
use rayon::prelude::*;

use crate::driver::{DeviceWorker, Outgoing, ReceiveCounts, Reexamined, RoundCounts};
use crate::engine::{DeviceProgram, LocalOf, PackedOf};
use crate::error::WorklistError;
use crate::local::{WorklistConsumer, WorklistProducer, local_worklist};
use crate::priority_counter::defers;
use crate::split::SplitOps;

/// A [`DeviceProgram`] on one host-backend device.
pub(crate) struct HostWorker<'a, P: DeviceProgram> {
    device: &'a Device,
    program: Arc<P>,
    producer: WorklistProducer<LocalOf<P>>,
    consumer: WorklistConsumer<LocalOf<P>>,
    outgoing: Vec<PackedOf<P>>,
    batch: Vec<LocalOf<P>>,
    /// Deferred items with their priority when deferred (soft priority).
    low: Vec<(LocalOf<P>, u32)>,
    /// Kept items whose priority is not below this are deferred ([`defers`]).
    threshold: u32,
    send_cap: usize,
    /// The option that sets `send_cap`, named when a send would overflow it.
    send_setting: &'static str,
    initial: u64,
    sweep_done: bool,
}

impl<'a, P: DeviceProgram> HostWorker<'a, P> {
    /// A worker for `program` on `device`, its local worklist holding `seed`.
    pub(crate) fn new(
        device: &'a Device,
        program: Arc<P>,
        seed: &[LocalOf<P>],
        wl_capacity: Option<usize>,
        send_capacity: Option<usize>,
    ) -> Result<Self, WorklistError> {
        let cap = wl_capacity
            .unwrap_or_else(|| program.capacity_hint())
            .max(1);
        let (producer, consumer) =
            local_worklist::<LocalOf<P>>(cap, "wl_capacity (--wl-capacity)")?;
        producer.push_slice(seed)?;
        // One token per initial sweep (see `DeviceProgram::initial_sweep_len`).
        let initial = seed.len() as u64 + u64::from(program.initial_sweep_len() > 0);
        Ok(HostWorker {
            device,
            program,
            producer,
            consumer,
            outgoing: Vec::new(),
            batch: Vec::new(),
            low: Vec::new(),
            threshold: u32::MAX,
            send_cap: send_capacity.unwrap_or(cap).max(1),
            send_setting: match send_capacity {
                Some(_) => "send_capacity (--send-capacity)",
                None => {
                    "wl_capacity (--wl-capacity, which also bounds each ring send unless \
                     --send-capacity is given)"
                }
            },
            initial,
            sweep_done: false,
        })
    }

    /// Own output first (worked on next), deferred output to the low list, remote output
    /// queued; the round's counts.
    fn absorb(
        &mut self,
        split: SplitOut<LocalOf<P>, PackedOf<P>>,
        counts: RoundCounts,
    ) -> Result<RoundCounts, WorklistError> {
        let counts = RoundCounts {
            kept: split.keep.len() as u64,
            sent: split.send.len() as u64,
            deferred: split.low.len() as u64,
            deferred_min_prio: split.low_min_prio(),
            ..counts
        };
        self.consumer.prepend_slice(&split.keep)?;
        self.low.extend(split.low);
        self.outgoing.extend(split.send);
        check_send(self.outgoing.len(), self.send_cap, self.send_setting)?;
        Ok(counts)
    }
}

impl<P: DeviceProgram> DeviceWorker for HostWorker<'_, P> {
    type Packed = PackedOf<P>;

    fn initial_items(&self) -> u64 {
        self.initial
    }

    fn initial_sweep(&mut self) -> Result<Option<RoundCounts>, WorklistError> {
        let sweep_len = self.program.initial_sweep_len();
        if sweep_len == 0 || self.sweep_done {
            return Ok(None);
        }
        self.sweep_done = true;
        let program = Arc::clone(&self.program);
        let threshold = self.threshold;
        let (produced, split) = host_kernel(self.device.stream(), move || {
            let produced = program.expand_initial_sweep();
            let n = produced.len() as u64;
            let ops = program.split_ops();
            let packed: Vec<_> = produced.into_iter().map(|l| ops.pack(l)).collect();
            (n, split_batch(&ops, packed, false, threshold))
        })?;
        // The sweep consumes its token (one item) and processed `sweep_len` items.
        let counts = RoundCounts {
            consumed: 1,
            processed: sweep_len,
            produced,
            cut_arcs: self.program.take_cut_arcs(),
            ..RoundCounts::default()
        };
        Ok(Some(self.absorb(split, counts)?))
    }

    fn split_receive(
        &mut self,
        packets: Vec<PendingSegment<Self::Packed>>,
    ) -> Result<ReceiveCounts, WorklistError> {
        let mut counts = ReceiveCounts::default();
        for pending in packets {
            let received = pending.segment().len() as u64;
            // The driver waits for the packet on the host rather than with `stream.wait`
            // (same ordering; keeps the host executor's wait path out of the hot loop).
            pending.wait()?;
            let data = pending.segment().data().clone();
            let ops = self.program.split_ops();
            let producer = self.producer.clone();
            let stream = self.device.high_priority_stream();
            let threshold = self.threshold;
            let (kept, low, passed) = host_kernel(stream, move || -> groute_core::Result<_> {
                // SAFETY: the packet's ready event has completed (waited above), and the
                // link does not reuse the buffer before the pending segment is released,
                // which happens only after this kernel has completed.
                let items = unsafe { data.as_host_slice() }.ok_or(Error::Unsupported {
                    operation: "host split kernels on device memory",
                    backend: "cuda",
                })?;
                let split = split_batch(&ops, items.to_vec(), true, threshold);
                producer.push_slice(&split.keep)?;
                Ok((split.keep.len() as u64, split.low, split.send))
            })??;
            drop(pending);
            counts.received += received;
            counts.kept += kept;
            counts.passed += passed.len() as u64;
            if !low.is_empty() {
                let min = low.iter().map(|&(_, p)| p).min().unwrap_or(0);
                counts.deferred_min_prio = if counts.deferred == 0 {
                    min
                } else {
                    counts.deferred_min_prio.min(min)
                };
                counts.deferred += low.len() as u64;
                self.low.extend(low);
            }
            self.outgoing.extend(passed);
            check_send(self.outgoing.len(), self.send_cap, self.send_setting)?;
        }
        Ok(counts)
    }

    fn local_len(&self) -> usize {
        self.consumer.len()
    }

    fn expand_round(&mut self, max_batch: usize) -> Result<RoundCounts, WorklistError> {
        self.batch.clear();
        self.consumer.pop_into(max_batch, &mut self.batch);
        let consumed = self.batch.len() as u64;
        if consumed == 0 {
            return Ok(RoundCounts::default());
        }
        let program = Arc::clone(&self.program);
        let items = std::mem::take(&mut self.batch);
        let threshold = self.threshold;
        let (items, produced, split) = host_kernel(self.device.stream(), move || {
            let produced = program.expand(&items);
            let n = produced.len() as u64;
            let ops = program.split_ops();
            let packed: Vec<_> = produced.into_iter().map(|l| ops.pack(l)).collect();
            (items, n, split_batch(&ops, packed, false, threshold))
        })?;
        self.batch = items;
        let counts = RoundCounts {
            consumed,
            processed: consumed,
            produced,
            cut_arcs: self.program.take_cut_arcs(),
            ..RoundCounts::default()
        };
        self.absorb(split, counts)
    }

    fn set_threshold(&mut self, threshold: u32) -> Result<(), WorklistError> {
        self.threshold = threshold;
        Ok(())
    }

    fn reexamine(&mut self) -> Result<Reexamined, WorklistError> {
        if self.low.is_empty() {
            return Ok(Reexamined::default());
        }
        let taken = std::mem::take(&mut self.low);
        let ops = self.program.split_ops();
        let threshold = self.threshold;
        let n = taken.len() as u64;
        let (moved, still_low) = host_kernel(self.device.stream(), move || {
            let mut moved = Vec::new();
            let mut still_low = Vec::new();
            for (item, deferred_prio) in taken {
                let prio = ops.get_prio(&item);
                if ops.superseded(&item, deferred_prio) {
                    continue;
                }
                if defers(prio, threshold) {
                    still_low.push((item, prio));
                } else {
                    moved.push(item);
                }
            }
            (moved, still_low)
        })?;
        self.consumer.prepend_slice(&moved)?;
        let r = Reexamined {
            taken: n,
            moved: moved.len() as u64,
            still_low: still_low.len() as u64,
            still_low_min_prio: still_low.iter().map(|&(_, p)| p).min().unwrap_or(0),
        };
        self.low = still_low;
        Ok(r)
    }

    fn outgoing_len(&self) -> usize {
        self.outgoing.len()
    }

    fn take_outgoing(&mut self) -> Result<Option<Outgoing<Self::Packed>>, WorklistError> {
        if self.outgoing.is_empty() {
            return Ok(None);
        }
        let buf = self.device.upload(&self.outgoing)?;
        let ready = self.device.stream().record()?;
        // The router's pump makes its copy stream wait for `ready`; on the host backend that
        // cross-executor wait was seen not to hold (the copy read the buffer before the
        // upload, losing items; reported to groute-core), so wait here on the host too.
        ready.wait()?;
        self.outgoing.clear();
        Ok(Some((
            Segment::new(buf, Endpoint::Device(self.device.id())),
            ready,
        )))
    }
}

/// Runs `kernel` on `stream` (host backend) and waits for its result.
///
/// The wait is on an event recorded after the kernel, so it is bounded by the context's
/// stall timeout ([`Error::DeviceStalled`]) and fails at once when the device failed
/// ([`Error::DeviceFailed`]).
pub(crate) fn host_kernel<R: Send + 'static>(
    stream: &Stream,
    kernel: impl FnOnce() -> R + Send + 'static,
) -> groute_core::Result<R> {
    let (tx, rx) = oneshot();
    stream.launch_host(move || tx.send(kernel()))?;
    stream.record()?.wait()?;
    match rx.try_recv() {
        Ok(Some(result)) => Ok(result),
        _ => Err(Error::DeviceFailed {
            device: stream.device().0,
            reason: "a host kernel returned no result (it panicked)".into(),
        }),
    }
}

/// The result of a split over a batch: items kept (unpacked) below the threshold, kept
/// items deferred (with their priority), items to send.
pub(crate) struct SplitOut<L, K> {
    pub(crate) keep: Vec<L>,
    pub(crate) low: Vec<(L, u32)>,
    pub(crate) send: Vec<K>,
}

impl<L, K> SplitOut<L, K> {
    fn empty() -> Self {
        SplitOut {
            keep: Vec::new(),
            low: Vec::new(),
            send: Vec::new(),
        }
    }

    fn append(mut self, other: Self) -> Self {
        self.keep.extend(other.keep);
        self.low.extend(other.low);
        self.send.extend(other.send);
        self
    }

    /// The smallest priority deferred (0 when none).
    fn low_min_prio(&self) -> u32 {
        self.low.iter().map(|&(_, p)| p).min().unwrap_or(0)
    }
}

/// Splits `items` with `on_receive` (or `on_send`), and the kept ones by priority against
/// `threshold` (`get_prio` is not called when it is `u32::MAX`: soft priority off).
pub(crate) fn split_batch<O: SplitOps>(
    ops: &O,
    items: Vec<O::Packed>,
    receive: bool,
    threshold: u32,
) -> SplitOut<O::Local, O::Packed> {
    items
        .into_par_iter()
        .fold(SplitOut::empty, |mut out, p| {
            let flags = if receive {
                ops.on_receive(&p)
            } else {
                ops.on_send(&p)
            };
            if flags.passes() {
                out.send.push(p);
            }
            if flags.keeps() {
                let item = ops.unpack(p);
                let prio = if threshold == u32::MAX {
                    0
                } else {
                    ops.get_prio(&item)
                };
                if defers(prio, threshold) {
                    out.low.push((item, prio));
                } else {
                    out.keep.push(item);
                }
            }
            out
        })
        .reduce(SplitOut::empty, SplitOut::append)
}

fn check_send(len: usize, cap: usize, setting: &'static str) -> Result<(), Error> {
    if len > cap {
        return Err(Error::CapacityExceeded {
            what: "ring send buffer".into(),
            capacity: cap as u64,
            needed: len as u64,
            setting,
        });
    }
    Ok(())
}
