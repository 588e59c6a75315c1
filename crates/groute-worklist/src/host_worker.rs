//! The host backend's [`DeviceWorker`]: a [`DeviceProgram`]'s host kernels on the device's
//! executor streams, the host MPSC local worklist, and an outgoing `Vec` uploaded into a
//! fresh device buffer per send.

use std::sync::Arc;

use groute_core::sync::oneshot;
use groute_core::{Device, Endpoint, Error, PendingSegment, Segment, Stream};
use rayon::prelude::*;

use crate::driver::{DeviceWorker, Outgoing, ReceiveCounts, RoundCounts};
use crate::engine::{DeviceProgram, LocalOf, PackedOf};
use crate::error::WorklistError;
use crate::local::{WorklistConsumer, WorklistProducer, local_worklist};
use crate::split::SplitOps;

/// A [`DeviceProgram`] on one host-backend device.
pub(crate) struct HostWorker<'a, P: DeviceProgram> {
    device: &'a Device,
    program: Arc<P>,
    producer: WorklistProducer<LocalOf<P>>,
    consumer: WorklistConsumer<LocalOf<P>>,
    outgoing: Vec<PackedOf<P>>,
    batch: Vec<LocalOf<P>>,
    send_cap: usize,
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
            send_cap: send_capacity.unwrap_or(cap).max(1),
            initial,
            sweep_done: false,
        })
    }

    /// Own output first (worked on next), remote output queued.
    fn absorb(
        &mut self,
        split: SplitOut<LocalOf<P>, PackedOf<P>>,
    ) -> Result<(u64, u64), WorklistError> {
        let kept = split.keep.len() as u64;
        let sent = split.send.len() as u64;
        self.consumer.prepend_slice(&split.keep)?;
        self.outgoing.extend(split.send);
        check_send(self.outgoing.len(), self.send_cap)?;
        Ok((kept, sent))
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
        let (produced, split) = host_kernel(self.device.stream(), move || {
            let produced = program.expand_initial_sweep();
            let n = produced.len() as u64;
            let ops = program.split_ops();
            let packed: Vec<_> = produced.into_iter().map(|l| ops.pack(l)).collect();
            (n, split_batch(&ops, packed, false))
        })?;
        let (kept, sent) = self.absorb(split)?;
        // The sweep consumes its token (one item) and processed `sweep_len` items.
        Ok(Some(RoundCounts {
            consumed: 1,
            processed: sweep_len,
            produced,
            kept,
            sent,
            ..RoundCounts::default()
        }))
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
            let (kept, passed) = host_kernel(stream, move || -> groute_core::Result<_> {
                // SAFETY: the packet's ready event has completed (waited above), and the
                // link does not reuse the buffer before the pending segment is released,
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
            counts.received += received;
            counts.kept += kept;
            counts.passed += passed.len() as u64;
            self.outgoing.extend(passed);
            check_send(self.outgoing.len(), self.send_cap)?;
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
        let (items, produced, split) = host_kernel(self.device.stream(), move || {
            let produced = program.expand(&items);
            let n = produced.len() as u64;
            let ops = program.split_ops();
            let packed: Vec<_> = produced.into_iter().map(|l| ops.pack(l)).collect();
            (items, n, split_batch(&ops, packed, false))
        })?;
        self.batch = items;
        let (kept, sent) = self.absorb(split)?;
        Ok(RoundCounts {
            consumed,
            processed: consumed,
            produced,
            kept,
            sent,
            ..RoundCounts::default()
        })
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
pub(crate) fn host_kernel<R: Send + 'static>(
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

/// The result of a split over a batch: items kept (unpacked), items to send.
pub(crate) struct SplitOut<L, K> {
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
