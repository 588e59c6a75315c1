//! One run's dataflow ([`connected_components`]): a scatter router for edge chunks, a
//! tree-reduction router for parent arrays, and one host thread per device driving its stream.
//! [`CcSolver`](crate::CcSolver) (`solver.rs`) repeats it over edges staged once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

use bytemuck::Pod;
use groute_core::{
    Buffer, Context, Device, DeviceId, DeviceTimer, Endpoint, Event, EventFuture, LinkConfig,
    LinkReceiver, LinkSender, PendingSegment, Router, Scatter, Segment, TreeReduction,
};

use crate::component_stats;
use crate::kernels::Kernels;
use crate::{CcError, CcInput, CcOptions, CcResult, CcStats, DeviceRows, Edge, StagedEdges};

/// Settings resolved against the graph and the device count.
#[derive(Clone, Copy, Debug)]
struct Plan {
    chunk: usize,
    chunks: usize,
    buffers: usize,
    merge_packet: usize,
    merge_buffers: usize,
}

impl Plan {
    /// The plan of a run over `n` vertices on `devices`, streaming `streamed` edges (`None`:
    /// each device links its own rows, and no chunk setting applies).
    fn new(
        opts: &CcOptions,
        n: usize,
        streamed: Option<usize>,
        devices: usize,
    ) -> Result<Self, CcError> {
        let (chunk, chunks, buffers) = match streamed {
            Some(m) => Self::chunking(opts, n, m, devices)?,
            None => (0, 0, 0),
        };
        let merge_packet = match opts.merge_packet {
            Some(0) => {
                return Err(CcError::invalid(
                    "merge_packet",
                    0,
                    "at least 1 entry per packet",
                ));
            }
            Some(p) => p,
            None => n.div_ceil(4).max(1),
        };
        if opts.merge_buffers == 0 {
            return Err(CcError::invalid(
                "merge_buffers",
                0,
                "at least 1 receive buffer per output",
            ));
        }
        if opts.compress_every == 0 {
            return Err(CcError::invalid(
                "compress_every",
                0,
                "compress after every chunk (1) or every k-th chunk (k > 1)",
            ));
        }
        Ok(Plan {
            chunk,
            chunks,
            buffers,
            merge_packet,
            merge_buffers: opts.merge_buffers,
        })
    }

    /// Edges per chunk, chunks and receive buffers per device for `m` streamed edges.
    fn chunking(
        opts: &CcOptions,
        n: usize,
        m: usize,
        devices: usize,
    ) -> Result<(usize, usize, usize), CcError> {
        let chunk = match opts.chunk_edges {
            Some(0) => {
                return Err(CcError::invalid(
                    "chunk_edges",
                    0,
                    "at least 1 edge per chunk",
                ));
            }
            Some(c) => c,
            None if m >= 8 * n => n.max(1),
            None => m.div_ceil(devices).max(1),
        };
        let chunk = chunk.min(m.max(1));
        let chunks = m.div_ceil(chunk);
        let buffers = match opts.input_buffers {
            Some(0) => {
                return Err(CcError::invalid(
                    "input_buffers",
                    0,
                    "at least 1 receive buffer per device",
                ));
            }
            Some(b) => b,
            // Sparse graphs: one chunk per device, one buffer each.
            None if opts.chunk_edges.is_none() && m < 8 * n => 1,
            // Dense: 88% of a fair share prefilled (Groute's compute/latency hint 0.12); the
            // rest streams to whichever device frees a buffer first.
            None => ((chunks * 22).div_ceil(25 * devices)).max(1),
        };
        Ok((chunk, chunks, buffers))
    }
}

fn lost_endpoint() -> CcError {
    CcError::invalid("routers", "wiring", "a router lost an endpoint")
}

/// What the device threads share.
struct Control {
    abort: AtomicBool,
    barrier: Barrier,
    clock: OnceLock<Instant>,
    /// Device-event timing, started with the clock (`stats.device_time`).
    timer: OnceLock<DeviceTimer>,
    timeout: Duration,
    compress_every: usize,
    num_vertices: usize,
}

impl Control {
    /// The next packet of `rx`, or `None` at end of stream; fails when another participant
    /// failed or nothing arrives within the timeout.
    fn receive<T: Pod>(
        &self,
        rx: &LinkReceiver<T>,
        device: usize,
        what: impl Fn() -> String,
    ) -> Result<Option<PendingSegment<T>>, CcError> {
        const POLL: Duration = Duration::from_millis(20);
        let start = Instant::now();
        loop {
            if let Ok(p) = rx.receive_timeout(POLL) {
                return Ok(p);
            }
            if self.abort.load(Ordering::Acquire) {
                return Err(CcError::Aborted { device });
            }
            if start.elapsed() > self.timeout {
                return Err(CcError::Timeout {
                    what: what(),
                    waited: self.timeout,
                });
            }
        }
    }

    fn since_start(&self) -> Duration {
        self.clock.get().map(Instant::elapsed).unwrap_or_default()
    }
}

/// One device's part.
struct DeviceJob<'a> {
    index: usize,
    device: &'a Device,
    kernels: Kernels,
    parent: Buffer<u32>,
    source: JobSource<'a>,
    /// The reduction router's output to this device (devices with children only).
    merge_in: Option<LinkReceiver<u32>>,
    merge_out: LinkSender<u32>,
    children: usize,
}

/// Where a device's edges come from.
enum JobSource<'a> {
    /// The scatter router's output to this device.
    Chunks(LinkReceiver<Edge>),
    /// Its own rows.
    Rows(&'a DeviceRows),
}

#[derive(Default)]
struct DeviceOutcome {
    edges: u64,
    chunks: u64,
    merged: u64,
    /// Device 0: when its final labels were complete, since the clock started.
    labels_ready: Option<Duration>,
}

impl DeviceJob<'_> {
    fn run(self, ctl: &Control) -> Result<DeviceOutcome, CcError> {
        ctl.barrier.wait();
        ctl.barrier.wait();
        let result = self.work(ctl);
        if result.is_err() {
            ctl.abort.store(true, Ordering::Release);
        }
        // Dropping `self` (in `work`) shut the merge input down either way.
        result
    }

    fn work(self, ctl: &Control) -> Result<DeviceOutcome, CcError> {
        let d = self.index;
        let stream = self.device.stream();
        let mut out = DeviceOutcome::default();
        // Every event this device waits on or hands back stays referenced until the run's
        // last copy is done, so no pool recycles it (and records it again elsewhere) while a
        // wait on it is still queued.
        let mut held: Vec<Event> = Vec::new();
        self.kernels.init(stream, &self.parent)?;
        // 1. Hook and compress every chunk the scatter router gives this device, or link its
        // own rows.
        let edges_in = match &self.source {
            JobSource::Chunks(rx) => rx,
            JobSource::Rows(rows) => {
                rows.enqueue_link(d, &self.kernels, stream, &self.parent)?;
                return self.merge_and_send(ctl, out, held, false);
            }
        };
        let mut since_compress = 0usize;
        while let Some(packet) = ctl.receive(edges_in, d, || format!("device {d} edge chunks"))? {
            stream.wait(packet.ready())?;
            let edges = packet.segment().data();
            self.kernels.link_edges(stream, edges, &self.parent)?;
            since_compress += 1;
            if since_compress == ctl.compress_every {
                self.kernels.compress(stream, &self.parent)?;
                since_compress = 0;
            }
            out.edges += edges.len() as u64;
            out.chunks += 1;
            let consumed = stream.record()?;
            held.push(packet.ready().clone());
            held.push(consumed.clone());
            packet.release(consumed);
        }
        if since_compress > 0 {
            self.kernels.compress(stream, &self.parent)?;
        }
        self.merge_and_send(ctl, out, held, true)
    }

    /// Steps 2 and 3 of a device's run, after it linked its own edges (`streamed`: hooked the
    /// chunks and compressed its forest): merge its children's arrays, compress where it must,
    /// then send its array up the tree.
    fn merge_and_send(
        self,
        ctl: &Control,
        mut out: DeviceOutcome,
        mut held: Vec<Event>,
        streamed: bool,
    ) -> Result<DeviceOutcome, CcError> {
        let d = self.index;
        let stream = self.device.stream();
        let n = ctl.num_vertices;
        // 2. Merge the children's arrays: every entry (v, parent[v]) is an edge to hook.
        let expected = self.children * n;
        if let Some(merge_in) = &self.merge_in {
            let what = || format!("device {d} merge input");
            let mut got = 0usize;
            while got < expected {
                let Some(packet) = ctl.receive(merge_in, d, what)? else {
                    return Err(CcError::ShortMessage {
                        what: what(),
                        expected,
                        got,
                    });
                };
                let seg = packet.segment();
                if seg.offset() + seg.len() > n {
                    return Err(CcError::PacketOutOfRange {
                        what: what(),
                        offset: seg.offset(),
                        len: seg.len(),
                        num_vertices: n,
                    });
                }
                stream.wait(packet.ready())?;
                self.kernels
                    .merge(stream, seg.offset(), seg.data(), &self.parent)?;
                got += seg.len();
                let consumed = stream.record()?;
                held.push(packet.ready().clone());
                held.push(consumed.clone());
                packet.release(consumed);
            }
            out.merged = got as u64;
        }
        // Device 0's array becomes the labels, so it ends compressed. Where a device linked
        // its own rows, device 0 alone compresses, once, after its merges: the others send
        // their forests as they are, since the receiver links every entry (v, parent[v]) as
        // an edge, roots or not, and a compress there would only add to the time before device
        // 0 has every forest.
        // The streamed edges' forests were compressed before merging (their trees, deep on
        // road networks, merge faster so) and are again after it.
        let compress_now = if streamed { self.children > 0 } else { d == 0 };
        if compress_now {
            self.kernels.compress(stream, &self.parent)?;
        }
        // 3. Up the tree (device 0: to the host). This device's share of the algorithm ends
        // here: what follows is the result's copy.
        if let Some(timer) = ctl.timer.get() {
            timer.mark_end(DeviceId(d))?;
        }
        let done = stream.record()?;
        let sent = self.merge_out.send(
            Segment::new(self.parent.clone(), Endpoint::Device(DeviceId(d))),
            done.clone(),
        )?;
        self.merge_out.shutdown();
        if d == 0 {
            done.wait()?;
            out.labels_ready = Some(ctl.since_start());
        }
        sent.wait()?;
        // The array's copy is done, so is all earlier work of this device's stream.
        drop(held);
        Ok(out)
    }
}

/// Sends every chunk of `staged` into the scatter router's input; returns the send futures.
fn send_chunks(
    tx: &LinkSender<Edge>,
    staged: &StagedEdges,
    chunk: usize,
) -> Result<Vec<EventFuture>, CcError> {
    let m = staged.num_edges();
    let mut futures = Vec::with_capacity(m.div_ceil(chunk));
    let mut start = 0;
    while start < m {
        let end = (start + chunk).min(m);
        let seg = Segment::new(staged.edges().slice(start..end)?, Endpoint::Host)
            .with_metadata(futures.len() as u64);
        futures.push(tx.send(seg, Event::ready())?);
        start = end;
    }
    Ok(futures)
}

/// Connected components on every device of `ctx` (see the crate docs) of the graph whose
/// edges `input` holds: a [`StagedEdges`] (streamed from host memory) or a [`DeviceRows`]
/// (each device's own rows).
///
/// The result's labels are the smallest vertex id of each component, one per vertex.
pub fn connected_components<'a>(
    ctx: &Context,
    input: impl Into<CcInput<'a>>,
    opts: &CcOptions,
) -> Result<CcResult, CcError> {
    let input = input.into();
    if !input.belongs_to(ctx) {
        return Err(CcError::ForeignStaging);
    }
    let setup_start = Instant::now();
    let n = input.num_vertices();
    let nd = ctx.num_devices();
    if n == 0 {
        return Ok(CcResult {
            stats: CcStats {
                edges_per_device: vec![0; nd],
                chunks_per_device: vec![0; nd],
                merged_per_device: vec![0; nd],
                ..CcStats::default()
            },
            ..CcResult::default()
        });
    }
    let devices: Vec<Endpoint> = (0..nd).map(|d| Endpoint::Device(DeviceId(d))).collect();
    let (plan, streamed, mut sources) = match input {
        CcInput::Streamed(staged) => {
            let plan = Plan::new(opts, n, Some(staged.num_edges()), nd)?;
            let scatter = Router::<Edge>::new(
                ctx,
                Scatter::new(),
                &[Endpoint::Host],
                &devices,
                LinkConfig::new(plan.chunk, plan.buffers).holding_graph(),
            )?;
            let (scatter_tx, scatter_rx) = scatter.into_parts();
            let Some(chunk_tx) = scatter_tx.into_iter().next() else {
                return Err(lost_endpoint());
            };
            let sources: Vec<JobSource<'_>> =
                scatter_rx.into_iter().map(JobSource::Chunks).collect();
            (plan, Some((staged, chunk_tx)), sources)
        }
        CcInput::Rows(rows) => {
            let plan = Plan::new(opts, n, None, nd)?;
            (plan, None, (0..nd).map(|_| JobSource::Rows(rows)).collect())
        }
    };
    let mut reduce_outputs: Vec<Endpoint> = devices[..nd - 1].to_vec();
    reduce_outputs.push(Endpoint::Host);
    let reduce = Router::<u32>::new(
        ctx,
        TreeReduction,
        &devices,
        &reduce_outputs,
        LinkConfig::new(plan.merge_packet, plan.merge_buffers),
    )?;
    let (reduce_tx, mut reduce_rx) = reduce.into_parts();
    let Some(labels_rx) = reduce_rx.pop() else {
        return Err(lost_endpoint());
    };
    let mut jobs = Vec::with_capacity(nd);
    let mut merge_in = reduce_rx.into_iter();
    for (d, ((device, source), merge_out)) in ctx
        .devices()
        .iter()
        .zip(sources.drain(..))
        .zip(reduce_tx)
        .enumerate()
    {
        jobs.push(DeviceJob {
            index: d,
            device,
            kernels: Kernels::for_stream(device.stream())?,
            parent: device.alloc::<u32>(n)?,
            source,
            merge_in: if d + 1 < nd { merge_in.next() } else { None },
            merge_out,
            children: TreeReduction::children(d, nd).len(),
        });
    }
    let setup = setup_start.elapsed();

    let ctl = Control {
        abort: AtomicBool::new(false),
        barrier: Barrier::new(nd + 1),
        clock: OnceLock::new(),
        timer: OnceLock::new(),
        timeout: opts.timeout,
        compress_every: opts.compress_every,
        num_vertices: n,
    };
    let mut prefill = Duration::ZERO;
    let mut pending: Vec<EventFuture> = Vec::new();
    let mut copied: Vec<Event> = Vec::new();
    if let (true, Some((staged, chunk_tx))) = (opts.prefill, &streamed) {
        // The pumps claim chunks in send order while they have free buffers, so exactly the
        // first `devices x buffers` chunks are copied without any device consuming. The input
        // is shut down only afterwards: at end of stream a pump may claim its next chunk
        // before it has a free buffer, which would hold a prefix chunk back.
        let start = Instant::now();
        pending = send_chunks(chunk_tx, staged, plan.chunk)?;
        let first = pending.len().min(nd * plan.buffers);
        for f in pending.drain(..first) {
            let e = f.get()?;
            e.wait()?;
            copied.push(e);
        }
        chunk_tx.shutdown();
        prefill = start.elapsed();
    }

    let mut host_result: Result<(Vec<u32>, Duration), CcError> = Ok((Vec::new(), Duration::ZERO));
    let outcomes: Vec<Result<DeviceOutcome, CcError>> = std::thread::scope(|s| {
        let ctl = &ctl;
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|job| s.spawn(move || job.run(ctl)))
            .collect();
        ctl.barrier.wait();
        let _ = ctl.clock.set(Instant::now());
        let timer_started = DeviceTimer::start(ctx).map(|t| {
            let _ = ctl.timer.set(t);
        });
        ctl.barrier.wait();
        host_result = (|| {
            timer_started?;
            if let (false, Some((staged, chunk_tx))) = (opts.prefill, &streamed) {
                pending = send_chunks(chunk_tx, staged, plan.chunk)?;
                chunk_tx.shutdown();
            }
            receive_labels(ctl, &labels_rx, n)
        })();
        if host_result.is_err() {
            ctl.abort.store(true, Ordering::Release);
        }
        handles
            .into_iter()
            .enumerate()
            .map(|(d, h)| {
                h.join()
                    .unwrap_or(Err(CcError::WorkerPanicked { device: d }))
            })
            .collect()
    });
    // Every copy out of the staged edges is done before they can be dropped or reused.
    for f in pending {
        f.wait()?;
    }
    drop(copied);
    // A device's stream keeps what its kernels used (the chunk buffers) until it sees later
    // work; the devices are done, so synchronising them releases this run's buffers now
    // instead of beside the next run's.
    for device in ctx.devices() {
        device.stream().synchronize()?;
    }
    let mut stats = CcStats {
        prefill,
        setup,
        chunk_edges: plan.chunk,
        input_buffers: plan.buffers,
        chunks: plan.chunks,
        ..CcStats::default()
    };
    // A device's own failure explains more than the others' "aborted".
    let mut first_error = None;
    for o in outcomes {
        match o {
            Ok(o) => {
                stats.edges_per_device.push(o.edges);
                stats.chunks_per_device.push(o.chunks);
                stats.merged_per_device.push(o.merged);
                if let Some(t) = o.labels_ready {
                    stats.elapsed = t;
                }
            }
            Err(CcError::Aborted { .. }) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let (labels, to_host) = match (first_error, host_result) {
        (Some(e), _) => return Err(e),
        (None, Err(e)) => return Err(e),
        (None, Ok(r)) => r,
    };
    stats.elapsed_to_host = to_host;
    if let CcInput::Rows(rows) = input {
        stats.edges_per_device = rows.linked_per_device(ctx)?;
    }
    // Only after a successful run: every device has marked its end.
    stats.device_time = match ctl.timer.into_inner() {
        Some(timer) => timer.stop()?,
        None => None,
    };
    let (components, largest_component) = component_stats(&labels);
    Ok(CcResult {
        labels,
        components,
        largest_component,
        stats,
    })
}

/// Receives device 0's final array at the host.
fn receive_labels(
    ctl: &Control,
    rx: &LinkReceiver<u32>,
    n: usize,
) -> Result<(Vec<u32>, Duration), CcError> {
    let what = || "labels at the host".to_string();
    let mut labels = vec![0u32; n];
    let mut got = 0usize;
    while got < n {
        let Some(packet) = ctl.receive(rx, usize::MAX, what)? else {
            return Err(CcError::ShortMessage {
                what: what(),
                expected: n,
                got,
            });
        };
        let seg = packet.segment();
        let (offset, len) = (seg.offset(), seg.len());
        if offset + len > n {
            return Err(CcError::PacketOutOfRange {
                what: what(),
                offset,
                len,
                num_vertices: n,
            });
        }
        packet.wait()?;
        // SAFETY: the packet's ready event has completed, and its link reuses the buffer only
        // after `release`, which consumes the packet after the slice's last use.
        let data =
            unsafe { seg.data().as_host_slice() }.ok_or(groute_core::Error::Unsupported {
                operation: "reading a host-endpoint packet",
                backend: "this",
            })?;
        // In parallel: the first touch of each page of `labels` costs more than the copy,
        // and many threads pay it at once.
        groute_core::copy_in_parallel(&mut labels[offset..offset + len], data);
        got += len;
        packet.release(Event::ready());
    }
    Ok((labels, ctl.since_start()))
}
