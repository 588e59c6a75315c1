//! Predicate-based filtering (PBF), the paper's Figures 5 and 6: the host splits a large
//! array into chunks and scatters them to the devices through a first-available router;
//! each device keeps the elements that satisfy a predicate and sends them back through a
//! gather router; the host assembles the output in chunk order.
//!
//! Shared by the `pbf` example and the soak test, so the pipeline exists once.
//!
//! ```
//! use groute::pbf::{self, PbfConfig, Predicate};
//! use groute::prelude::*;
//!
//! # fn main() -> groute::prelude::Result<()> {
//! let ctx = Context::host(2)?;
//! let input = pbf::generate_input(10_000, 7)?;
//! let config = PbfConfig { chunk: 1_000, ..PbfConfig::default() };
//! let outcome = pbf::run(&ctx, &input, &config)?;
//! assert_eq!(outcome.output, pbf::sequential_filter(&input, config.predicate));
//! assert_eq!(outcome.per_device.iter().map(|d| d.elements).sum::<usize>(), 10_000);
//! # Ok(())
//! # }
//! ```

use std::time::{Duration, Instant};

use groute_core::{
    Buffer, Context, DeviceId, Endpoint, Error, Event, Gather, LinkConfig, LinkReceiver,
    LinkSender, PendingSegment, Result, Router, Scatter, Segment, Stream,
};

pub mod cuda;

/// The filter predicate: keep `x` when `x % modulus == residue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Predicate {
    /// At least 1.
    pub modulus: u32,
    /// Less than `modulus`.
    pub residue: u32,
}

impl Default for Predicate {
    /// Keeps one element in three.
    fn default() -> Self {
        Predicate {
            modulus: 3,
            residue: 1,
        }
    }
}

impl Predicate {
    /// Whether `x` is kept.
    pub fn keep(&self, x: u32) -> bool {
        x % self.modulus == self.residue
    }

    /// Checks `modulus >= 1` and `residue < modulus`.
    pub fn validate(&self) -> Result<()> {
        if self.modulus == 0 {
            return Err(Error::invalid("--modulus", 0, "the modulus is at least 1"));
        }
        if self.residue >= self.modulus {
            return Err(Error::invalid(
                "--residue",
                self.residue,
                format!("the residue must be below the modulus {}", self.modulus),
            ));
        }
        Ok(())
    }
}

/// Pipeline settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PbfConfig {
    /// Elements per chunk the host scatters (the unit of load balancing). At least 1.
    pub chunk: usize,
    /// Receive buffers per device on the scatter router (chunks a device may hold at once).
    pub scatter_buffers: usize,
    /// Packet size (elements) of the gather router's link to the host.
    pub gather_packet: usize,
    /// Receive buffers on the host for the gather router.
    pub gather_buffers: usize,
    /// What to keep.
    pub predicate: Predicate,
}

impl Default for PbfConfig {
    fn default() -> Self {
        PbfConfig {
            chunk: 1 << 16,
            scatter_buffers: 2,
            gather_packet: 1 << 16,
            gather_buffers: 4,
            predicate: Predicate::default(),
        }
    }
}

impl PbfConfig {
    /// Checks every setting.
    pub fn validate(&self) -> Result<()> {
        if self.chunk == 0 {
            return Err(Error::invalid(
                "--chunk",
                0,
                "a chunk holds at least one element",
            ));
        }
        if self.chunk > u32::MAX as usize {
            return Err(Error::invalid(
                "--chunk",
                self.chunk,
                "a chunk holds at most 2^32 - 1 elements",
            ));
        }
        LinkConfig::new(self.chunk, self.scatter_buffers).validate::<u32>()?;
        LinkConfig::new(self.gather_packet, self.gather_buffers).validate::<u32>()?;
        self.predicate.validate()
    }
}

/// What one device did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceLoad {
    /// The device.
    pub device: usize,
    /// Chunks it filtered.
    pub chunks: usize,
    /// Elements it processed.
    pub elements: usize,
    /// Elements it kept.
    pub kept: usize,
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct PbfOutcome {
    /// The kept elements, in chunk order (within a chunk: input order on the host backend;
    /// unspecified on CUDA, whose kernel appends with atomics).
    pub output: Vec<u32>,
    /// Per-device load (shows the first-available balancing).
    pub per_device: Vec<DeviceLoad>,
    /// Wall time of the pipeline (scatter, filter, gather), without context creation.
    pub elapsed: Duration,
}

/// `size` pseudo-random `u32`s from `seed` (splitmix64; the same on every machine), or
/// [`Error::OutOfMemory`] when the host cannot hold them (ask for a smaller `--size`).
pub fn generate_input(size: usize, seed: u64) -> Result<Vec<u32>> {
    let mut input = Vec::new();
    input
        .try_reserve_exact(size)
        .map_err(|_| Error::OutOfMemory {
            bytes: size.saturating_mul(std::mem::size_of::<u32>()),
            location: format!("the host for a PBF input of {size} elements (lower --size)"),
            source: None,
        })?;
    let mut stream = groute_graph::SplitMix64::new(seed);
    input.extend((0..size).map(|_| stream.next_u64() as u32));
    Ok(input)
}

/// The reference: a sequential filter.
pub fn sequential_filter(input: &[u32], predicate: Predicate) -> Vec<u32> {
    input
        .iter()
        .copied()
        .filter(|&x| predicate.keep(x))
        .collect()
}

/// Whether `output` equals the sequential filter of `input`, allowing any order inside a
/// chunk (the CUDA kernel's appends are unordered).
pub fn matches_reference(input: &[u32], output: &[u32], config: &PbfConfig) -> bool {
    let mut at = 0;
    for chunk in input.chunks(config.chunk.max(1)) {
        let mut want = sequential_filter(chunk, config.predicate);
        let Some(got) = output.get(at..at + want.len()) else {
            return false;
        };
        let mut got = got.to_vec();
        at += want.len();
        want.sort_unstable();
        got.sort_unstable();
        if got != want {
            return false;
        }
    }
    at == output.len()
}

/// Filters one received chunk on `stream` into `out` (compacted) and `count` (one element).
///
/// The one place where the backends differ: host kernels are Rust closures; the CUDA arm
/// launches `pbf_filter_mod` of `kernels/pbf/pbf.cu` through [`cuda::pbf_filter`].
fn filter_chunk(
    stream: &Stream,
    packet: &PendingSegment<u32>,
    out: &Buffer<u32>,
    count: &Buffer<u32>,
    predicate: Predicate,
) -> Result<()> {
    stream.wait(packet.ready())?;
    if stream.is_host() {
        let (input, out, count) = (packet.segment().data().clone(), out.clone(), count.clone());
        stream.launch_host(move || {
            // SAFETY: the stream waited for the packet's copy; the link reuses the receive
            // buffer only after the event recorded after this kernel, and `out` is a fresh
            // buffer no other work touches until that event.
            let (Some(src), Some(dst)) = (unsafe { input.as_host_slice() }, unsafe {
                out.as_host_slice_mut()
            }) else {
                return;
            };
            // In order, so that the host backend reproduces the sequential filter exactly.
            let mut kept = 0usize;
            for &x in src {
                if predicate.keep(x) {
                    dst[kept] = x;
                    kept += 1;
                }
            }
            if let Some(c) = count.host_atomic_u32().and_then(|c| c.first()) {
                c.store(kept as u32, std::sync::atomic::Ordering::Release);
            }
        })
    } else {
        // CUDA: warp-aggregated append (kernels/pbf/pbf.cu); the wrapper zeroes `count` in
        // stream order and keeps the three buffers alive until the kernel completes.
        cuda::pbf_filter(
            stream.raw().as_ref(),
            &packet.segment().data().raw(),
            &out.raw(),
            &count.raw(),
            predicate,
        )
    }
}

/// One device's loop: receive chunks, filter, send the kept elements back.
fn device_worker(
    ctx: &Context,
    device: usize,
    chunks: LinkReceiver<u32>,
    results: LinkSender<u32>,
    predicate: Predicate,
) -> Result<DeviceLoad> {
    let dev = ctx.device(DeviceId(device))?;
    let stream = dev.stream();
    let mut load = DeviceLoad {
        device,
        ..DeviceLoad::default()
    };
    let outcome = (|| -> Result<()> {
        while let Some(packet) = chunks.receive_blocking() {
            let n = packet.segment().len();
            let chunk_id = packet.segment().metadata();
            let out = dev.alloc::<u32>(n)?;
            let count = dev.alloc::<u32>(1)?;
            filter_chunk(stream, &packet, &out, &count, predicate)?;
            let done = stream.record()?;
            packet.release(done.clone());
            let kept = dev.download(&count)?.first().copied().unwrap_or(0) as usize;
            load.chunks += 1;
            load.elements += n;
            load.kept += kept;
            if kept > 0 {
                let seg = Segment::new(out.slice(0..kept)?, Endpoint::Device(DeviceId(device)))
                    .with_metadata(chunk_id);
                // The gather link's pump copies after `done`; the send's own future is not
                // needed: the host's receipt of every packet implies the copies are done.
                let _copied = results.send(seg, done)?;
            }
        }
        Ok(())
    })();
    results.shutdown();
    outcome.map(|()| load)
}

/// Runs PBF over every device of `ctx`.
pub fn run(ctx: &Context, input: &[u32], config: &PbfConfig) -> Result<PbfOutcome> {
    config.validate()?;
    let n_dev = ctx.num_devices();
    let devices: Vec<Endpoint> = (0..n_dev).map(|d| Endpoint::Device(DeviceId(d))).collect();
    let scatter = Router::<u32>::new(
        ctx,
        Scatter::new(),
        &[Endpoint::Host],
        &devices,
        LinkConfig::new(config.chunk, config.scatter_buffers),
    )?;
    let gather = Router::<u32>::new(
        ctx,
        Gather,
        &devices,
        &[Endpoint::Host],
        LinkConfig::new(config.gather_packet, config.gather_buffers),
    )?;
    let host_input = ctx.host_buffer_from(input)?;
    let num_chunks = input.len().div_ceil(config.chunk);
    let (scatter_in, scatter_out) = scatter.into_parts();
    let (gather_in, gather_out) = gather.into_parts();
    let start = Instant::now();

    let (loads, parts) = std::thread::scope(|scope| -> Result<_> {
        let workers: Vec<_> = scatter_out
            .into_iter()
            .zip(gather_in)
            .enumerate()
            .map(|(d, (chunks, results))| {
                let predicate = config.predicate;
                std::thread::Builder::new()
                    .name(format!("pbf-device-{d}"))
                    .spawn_scoped(scope, move || {
                        device_worker(ctx, d, chunks, results, predicate)
                    })
                    .map_err(|source| Error::Spawn {
                        name: format!("pbf-device-{d}"),
                        source,
                    })
            })
            .collect::<Result<_>>()?;

        // Scatter: one message per chunk; sends never block (the routers queue them).
        let sent = (|| -> Result<()> {
            for (c, begin) in (0..input.len()).step_by(config.chunk).enumerate() {
                let end = (begin + config.chunk).min(input.len());
                let seg = Segment::new(host_input.slice(begin..end)?, Endpoint::Host)
                    .with_metadata(c as u64);
                let _copied = scatter_in[0].send(seg, Event::ready())?;
            }
            Ok(())
        })();
        scatter_in[0].shutdown();
        drop(scatter_in);

        // Gather: reassemble each chunk's kept elements from its packets.
        let mut parts: Vec<Vec<u32>> = vec![Vec::new(); num_chunks];
        let gathered = (|| -> Result<()> {
            while let Some(packet) = gather_out[0].receive_blocking() {
                let seg = packet.segment();
                let (chunk, offset, total) = (seg.metadata() as usize, seg.offset(), seg.total());
                let data = packet.to_vec()?.ok_or(Error::Unsupported {
                    operation: "reading gathered packets on the host",
                    backend: "this",
                })?;
                let part = parts.get_mut(chunk).ok_or_else(|| {
                    Error::invalid(
                        "chunk id",
                        chunk,
                        "a gathered packet names an unknown chunk",
                    )
                })?;
                if part.is_empty() {
                    part.resize(total, 0);
                }
                part.get_mut(offset..offset + data.len())
                    .ok_or(Error::OutOfBounds {
                        start: offset,
                        end: offset + data.len(),
                        len: total,
                    })?
                    .copy_from_slice(&data);
                packet.release(Event::ready());
            }
            Ok(())
        })();
        drop(gather_out);
        let mut loads = Vec::with_capacity(n_dev);
        for w in workers {
            loads.push(
                w.join()
                    .map_err(|_| Error::ThreadPanicked("a PBF device worker".into()))??,
            );
        }
        sent?;
        gathered?;
        Ok((loads, parts))
    })?;
    let elapsed = start.elapsed();
    Ok(PbfOutcome {
        output: parts.concat(),
        per_device: loads,
        elapsed,
    })
}
