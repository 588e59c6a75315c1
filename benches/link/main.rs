//! Link throughput against packet size, copy streams and receive buffers, against raw
//! baselines; and small-message latency.
//!
//! ```text
//! cargo bench --bench link -- --quick --noplot                # here: host backend
//! bash .gpu/run.sh bench link -- --bench --quick --noplot      # GPU machine
//! ```
//!
//! Runs on the best backend present (`GROUTE_BENCH_BACKEND=host|cuda|auto`, default auto) and
//! says which in every benchmark name. Routes: device 0 -> device 1 (`dev0_to_dev1`), on CUDA
//! also with peer access off (`dev0_to_dev1_staged`: copies staged through host memory), and
//! host -> device 0; one message per iteration (256 MiB on GPUs, 32 MiB on the host backend).
//! Per route (the sweep is in `sweep.rs`):
//!
//! - `raw_copy`: one raw copy of the whole message (`cuMemcpyPeerAsync` / `cuMemcpyAsync`),
//!   issued on the source device and synchronised by the host;
//! - `raw_packets_<size>_s<k>`: the message as a train of packet-sized raw copies,
//!   round-robin on k streams of the destination device (`_push`: of the source device),
//!   then synchronised: the best a link with that packet size could do;
//! - `link_<size>_s<k>_b<n>`: through a link with that packet size, k copy streams and n
//!   receive buffers (the consumer releases each packet with its copy event); `_push`: the
//!   copies issued by the source device ([`CopyIssuer::Source`]).
//! - On the peer route, the same with the copy kernel ([`CopyMethod::Kernel`]) instead of the
//!   copy engines: `raw_sm_copy` (one kernel copy of the whole message, on the source),
//!   `raw_sm_packets_<size>_s<k>[_push]` (a train of kernel copies; `raw_sm<b>_packets_...`
//!   with `b` blocks per copy instead of the default) and `link_..._sm` (a link with
//!   [`LinkConfig::with_copy_method`]). Their `%packets` column compares with the best DMA
//!   train, the ceiling the kernel is meant to lift; their calls/packet leave out the kernel
//!   launch and the event recorded after it (they do not go through the counted backend
//!   seam).
//!
//! At the end of the throughput run a summary table prints every variant's median GiB/s and
//! its share of the route's `raw_copy` and of the best `raw_packets` train of the same packet
//! size. Latency: one 4 KiB message from send to receive-ready on the destination, against a
//! raw copy of 4 KiB plus a synchronize (`raw_copy`); between devices also through a link
//! with the copy kernel (`link_sm`).
//!
//! Before timing, each link setting runs once through a [`CountingBackend`] over the same
//! backend and prints the backend calls per packet (`calls/packet`): the host-side work a
//! packet costs, which caps small-packet throughput and sets the latency floor.

#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`

mod raw;
mod sweep;

use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use groute::core::backend::counting::{CallCounts, CountingBackend};
use groute::core::backend::cuda::{CudaBackend, CudaOptions};
use groute::prelude::*;
use sweep::{Route, Table};

/// One message per iteration: large enough on GPUs that per-transfer overheads do not hide
/// the link's bandwidth (256 MiB at ~390 GB/s is ~0.7 ms), smaller on the host backend.
fn message_bytes(backend: BackendKind) -> usize {
    match backend {
        BackendKind::Host => 32 << 20,
        _ => 256 << 20,
    }
}

fn context() -> Context {
    let choice: BackendChoice = std::env::var("GROUTE_BENCH_BACKEND")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(BackendChoice::Auto);
    let ctx = Context::builder()
        .devices(2)
        .backend(choice)
        .build()
        .expect("a context with 2 devices");
    if let Some(note) = ctx.fallback_note() {
        eprintln!("note: {note}");
    }
    eprintln!(
        "link bench on the {} backend: {}",
        ctx.backend_kind(),
        ctx.devices()[0].properties().name
    );
    ctx
}

/// Two CUDA devices with peer access off, so that device-to-device copies are staged
/// through pinned host memory; `None` (with a note) when that cannot be made.
fn staged_context() -> Option<Context> {
    let made = CudaBackend::with_options(CudaOptions { peer_access: false })
        .and_then(|b| Context::from_backend(Arc::new(b), 2, None, None));
    match made {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            eprintln!("note: no staged (peer access off) context: {e}");
            None
        }
    }
}

/// A context over `ctx`'s backend (and two devices) that counts backend calls.
fn counting_context(ctx: &Context) -> (Context, Arc<CallCounts>) {
    let counting = CountingBackend::new(Arc::clone(ctx.backend()));
    let counts = counting.counts();
    let counted = Context::from_backend(Arc::new(counting), 2, None, None).expect("context");
    (counted, counts)
}

/// Prints the backend calls `work` makes per packet.
fn print_calls_per_packet(what: &str, counts: &CallCounts, packets: usize, work: impl FnOnce()) {
    let before = counts.snapshot();
    work();
    let calls = counts.snapshot() - before;
    eprintln!(
        "{what}: {:.2} enqueueing calls/packet ({calls}; {packets} packets)",
        calls.enqueued() as f64 / packets as f64
    );
}

/// A message of `len` elements on `src`, ready at once.
fn message(ctx: &Context, src: Endpoint, len: usize) -> Segment<u32> {
    let data: Vec<u32> = (0..len as u32).collect();
    let buf = match src {
        Endpoint::Device(d) => {
            let dev = ctx.device(d).expect("device");
            let b = dev.upload(&data).expect("upload");
            dev.stream().synchronize().expect("sync");
            b
        }
        _ => ctx.host_buffer_from(&data).expect("host buffer"),
    };
    Segment::new(buf, src)
}

/// Sends `msg` and receives every packet; returns when all copies are done.
fn transfer(link: &Link<u32>, msg: &Segment<u32>) {
    let sent = link.send(msg.clone(), Event::ready()).expect("send");
    let mut received = 0;
    while received < msg.len() {
        let p = link
            .receive_timeout(Duration::from_secs(60))
            .expect("receive in time")
            .expect("data before end of stream");
        received += p.segment().len();
        let ready = p.ready().clone();
        p.release(ready);
    }
    sent.wait().expect("copies done");
}

fn throughput(c: &mut Criterion) {
    let ctx = context();
    let backend = ctx.backend_kind();
    let d0 = Endpoint::Device(DeviceId(0));
    let d1 = Endpoint::Device(DeviceId(1));
    let message_bytes = message_bytes(backend);
    let len = message_bytes / 4;
    let mut group = c.benchmark_group(format!("link_throughput_{backend}"));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(1));
    group.warm_up_time(Duration::from_millis(200));
    group.throughput(Throughput::Bytes(message_bytes as u64));
    let staged = match backend {
        BackendKind::Cuda => staged_context(),
        _ => None,
    };
    let mut routes = vec![
        ("dev0_to_dev1", Route::Peer, &ctx, d0, d1),
        (
            "host_to_dev0",
            Route::HostToDevice,
            &ctx,
            Endpoint::Host,
            d0,
        ),
    ];
    if let Some(staged) = &staged {
        routes.push(("dev0_to_dev1_staged", Route::Staged, staged, d0, d1));
    }
    let mut table = Table::default();
    for (name, route, ctx, src, dst) in routes {
        let msg = message(ctx, src, len);
        let Endpoint::Device(dst_device) = dst else {
            continue;
        };
        let dev = ctx.device(dst_device).expect("device");
        let target = dev.alloc::<u32>(len).expect("target buffer");
        let (source_device, source_stream) = match src {
            Endpoint::Device(s) => (s, ctx.device(s).expect("device").stream().clone()),
            _ => (dst_device, dev.stream().clone()),
        };
        let whole = || raw::whole_copy(&source_stream, &target, msg.data(), CopyMethod::Dma);
        table.measure(name, "raw_copy", None, message_bytes, whole);
        group.bench_function(BenchmarkId::new(name, "raw_copy"), |b| b.iter(whole));
        if route == Route::Peer {
            let method = CopyMethod::kernel();
            let whole = || raw::whole_copy(&source_stream, &target, msg.data(), method);
            table.measure(name, "raw_sm_copy", None, message_bytes, whole);
            group.bench_function(BenchmarkId::new(name, "raw_sm_copy"), |b| b.iter(whole));
            // The copy kernel's ceiling with a grid of four blocks per multiprocessor.
            let wide = CopyMethod::Kernel { blocks: 528 };
            let whole = || raw::whole_copy(&source_stream, &target, msg.data(), wide);
            table.measure(name, "raw_sm528_copy", None, message_bytes, whole);
        }
        for raw in route.raw_variants() {
            if raw.packet_bytes > message_bytes {
                continue;
            }
            let issuer = if raw.push { source_device } else { dst_device };
            let train = raw::PacketTrain::new(
                ctx,
                issuer,
                dst_device,
                raw.streams,
                8,
                raw.packet_bytes / 4,
                raw.method,
            );
            let run = || train.run(msg.data());
            table.measure(name, &raw.id(), Some(raw.packet_bytes), message_bytes, run);
            group.bench_function(BenchmarkId::new(name, raw.id()), |b| b.iter(run));
        }
        for variant in route.link_variants() {
            if variant.packet_bytes > message_bytes {
                continue;
            }
            let issuer = if variant.push {
                CopyIssuer::Source
            } else {
                CopyIssuer::Destination
            };
            let config = LinkConfig::new(variant.packet_bytes / 4, variant.buffers)
                .with_copy_streams(variant.streams)
                .with_copy_issuer(issuer)
                .with_copy_method(variant.method);
            // Calls per packet do not depend on the message size: count over 16 packets.
            let counted_len = len.min(16 * config.packet_size);
            let packets = counted_len.div_ceil(config.packet_size);
            let (counted, counts) = counting_context(ctx);
            let link = Link::<u32>::new(&counted, src, dst, config).expect("link");
            let counted_msg = message(&counted, src, counted_len);
            let what = format!("{name} {}", variant.id());
            print_calls_per_packet(&what, &counts, packets, || transfer(&link, &counted_msg));
            let link = Link::<u32>::new(ctx, src, dst, config).expect("link");
            let run = || transfer(&link, &msg);
            table.measure(
                name,
                &variant.id(),
                Some(variant.packet_bytes),
                message_bytes,
                run,
            );
            group.bench_function(BenchmarkId::new(name, variant.id()), |b| b.iter(run));
        }
    }
    group.finish();
    table.print();
}

/// Sends one small message and waits on the host until it is ready at the destination.
fn ping(link: &Link<u32>, msg: &Segment<u32>) {
    let _sent = link.send(msg.clone(), Event::ready()).expect("send");
    let p = link
        .receive_timeout(Duration::from_secs(10))
        .expect("receive in time")
        .expect("data");
    p.wait().expect("receive-ready");
    p.release(Event::ready());
}

fn latency(c: &mut Criterion) {
    let ctx = context();
    let backend = ctx.backend_kind();
    let d0 = Endpoint::Device(DeviceId(0));
    let d1 = Endpoint::Device(DeviceId(1));
    let mut group = c.benchmark_group(format!("link_latency_{backend}"));
    group.sample_size(50);
    group.measurement_time(Duration::from_secs(1));
    for (name, src, dst) in [
        ("dev0_to_dev1_4KiB", d0, d1),
        ("host_to_dev0_4KiB", Endpoint::Host, d0),
    ] {
        let msg = message(&ctx, src, 1024);
        // The baseline: one raw copy of 4 KiB, then a synchronize.
        if let Endpoint::Device(d) = dst {
            let dev = ctx.device(d).expect("device");
            let target = dev.alloc::<u32>(1024).expect("target buffer");
            let stream = dev.new_stream(StreamPriority::High).expect("stream");
            group.bench_function(BenchmarkId::new(name, "raw_copy"), |b| {
                b.iter(|| {
                    stream.copy(&target, msg.data()).expect("copy");
                    stream.synchronize().expect("sync");
                })
            });
        }
        if dst != Endpoint::Host && src != Endpoint::Host {
            // The same through a link whose copy is the copy kernel (a launch instead of a
            // DMA copy).
            let config = LinkConfig::new(1024, 2).with_copy_method(CopyMethod::kernel());
            let link = Link::<u32>::new(&ctx, src, dst, config).expect("link");
            group.bench_function(BenchmarkId::new(name, "link_sm"), |b| {
                b.iter(|| ping(&link, &msg))
            });
        }
        let config = LinkConfig::new(1024, 2);
        let (counted, counts) = counting_context(&ctx);
        let counted_link = Link::<u32>::new(&counted, src, dst, config).expect("link");
        let counted_msg = message(&counted, src, 1024);
        print_calls_per_packet(&format!("{name} latency"), &counts, 16, || {
            (0..16).for_each(|_| ping(&counted_link, &counted_msg))
        });
        let link = Link::<u32>::new(&ctx, src, dst, config).expect("link");
        group.bench_function(BenchmarkId::new(name, "link"), |b| {
            b.iter(|| ping(&link, &msg))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = throughput, latency
}
criterion_main!(benches);
