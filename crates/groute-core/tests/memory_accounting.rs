//! Per-device memory accounting and the device memory limit (host backend): every path that
//! allocates device memory counts, freeing gives the bytes back, cached blocks count until
//! trimmed, the limit refuses with a typed error naming the device, the request, the bytes in
//! use and the limit, and a backend out-of-memory comes back in the same shape.

mod common;

use std::time::{Duration, Instant};

use common::{D0, D1, HOST, TIMEOUT, data, new_link, read, source};
use groute_core::{BackendChoice, Context, DeviceId, Endpoint, Error, Event, LinkConfig};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

fn host(devices: usize, limit: Option<u64>) -> Context {
    let builder = Context::builder()
        .devices(devices)
        .backend(BackendChoice::Host);
    match limit {
        Some(bytes) => builder.device_memory_limit(bytes),
        None => builder,
    }
    .build()
    .unwrap()
}

fn current(ctx: &Context, device: usize) -> u64 {
    ctx.devices()[device].memory_usage().current_bytes
}

/// Waits (bounded) until `device` holds `bytes`: link buffers return to the pool from the
/// link's threads once their last event has completed.
fn wait_for_current(ctx: &Context, device: usize, bytes: u64) {
    let deadline = Instant::now() + TIMEOUT;
    while current(ctx, device) != bytes && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(current(ctx, device), bytes, "device {device}");
}

#[test]
fn every_public_allocation_path_is_counted_and_freeing_returns_it() {
    let ctx = host(2, None);
    let (d0, d1) = (&ctx.devices()[0], &ctx.devices()[1]);
    let devices: Vec<DeviceId> = ctx.memory_usage().iter().map(|u| u.device).collect();
    assert_eq!(devices, [DeviceId(0), DeviceId(1)]);
    assert_eq!((current(&ctx, 0), current(&ctx, 1)), (0, 0));

    // Cached blocks are allocated (and counted) at their size class.
    let block = |bytes| d0.memory_pool().block_bytes(bytes) as u64;
    assert_eq!((block(4000), block(100), block(4096)), (4096, 512, 4096));
    let alloc = d0.alloc::<u32>(1000).unwrap();
    assert_eq!(current(&ctx, 0), 4096, "Device::alloc");
    let uploaded = d0.upload(&[7u64; 500]).unwrap();
    assert_eq!(current(&ctx, 0), 8192, "Device::upload");
    let from_pool = d0.memory_pool().alloc::<u8>(100).unwrap();
    assert_eq!(current(&ctx, 0), 8704, "MemoryPool::alloc");
    assert_eq!(d0.memory_pool().usage(), Some(d0.memory_usage()));
    // Above the pool's largest cached block (64 MiB): allocated and freed directly.
    let large = d1.alloc::<u8>((64 << 20) + 1).unwrap();
    assert_eq!(current(&ctx, 1), (64 << 20) + 1, "large Device::alloc");
    assert_eq!(current(&ctx, 0), 8704, "other devices are not charged");

    // A link's receive buffers live on its destination device.
    let link = new_link(&ctx, HOST, D0, LinkConfig::new(1024, 3));
    assert_eq!(current(&ctx, 0), 8704 + 3 * 4096, "link receive buffers");
    assert_eq!(current(&ctx, 1), (64 << 20) + 1);

    // Freed large blocks go back to the backend at once.
    drop(large);
    assert_eq!(current(&ctx, 1), 0);
    assert_eq!(d1.memory_usage().peak_bytes, (64 << 20) + 1);
    assert_eq!(ctx.memory_usage()[1], d1.memory_usage());

    // Freed pooled blocks stay cached: they still occupy the device, so they count...
    drop((alloc, uploaded, from_pool));
    assert_eq!(current(&ctx, 0), 8704 + 3 * 4096);
    assert_eq!(d0.memory_pool().cached_bytes(), 8704);
    // ...and reusing one does not count it twice.
    let again = d0.alloc::<u32>(1000).unwrap();
    assert_eq!(
        again.len(),
        1000,
        "a buffer is as long as asked, whatever its block"
    );
    assert_eq!(current(&ctx, 0), 8704 + 3 * 4096);
    // A request of another size in the same class reuses a cached block too.
    let near = d0.alloc::<u8>(3900).unwrap();
    assert_eq!(near.len(), 3900);
    assert_eq!(current(&ctx, 0), 8704 + 3 * 4096);
    drop((again, near));
    // Trimming gives them back.
    d0.memory_pool().trim();
    assert_eq!(current(&ctx, 0), 3 * 4096);

    link.shutdown();
    drop(link);
    // The link's buffers return to the pool (cached, still counted), then trim frees them.
    let deadline = Instant::now() + TIMEOUT;
    while d0.memory_pool().cached_bytes() != 3 * 4096 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    d0.memory_pool().trim();
    wait_for_current(&ctx, 0, 0);
    assert_eq!(d0.memory_usage().peak_bytes, 8704 + 3 * 4096);
}

#[test]
fn an_allocation_past_the_limit_fails_with_a_typed_error_naming_device_request_use_and_limit() {
    let ctx = host(2, Some(MIB));
    assert_eq!(ctx.device_memory_limit(), Some(MIB));
    let d1 = &ctx.devices()[1];
    let held = d1.alloc::<u8>(768 << 10).unwrap();

    let err = d1.alloc::<u8>(512 << 10).unwrap_err();
    match err {
        Error::DeviceMemoryLimit {
            device,
            requested,
            in_use,
            limit,
        } => assert_eq!(
            (device, requested, in_use, limit),
            (1, 512 * KIB, 768 * KIB, MIB)
        ),
        ref other => panic!("expected DeviceMemoryLimit, got {other:?}"),
    }
    let message = err.to_string();
    for part in [
        "device 1",
        "512 KiB",
        "768 KiB",
        "1 MiB",
        "--device-memory-limit",
        "more devices",
    ] {
        assert!(message.contains(part), "{part:?} missing from: {message}");
    }
    assert!(err.is_out_of_memory());

    // Nothing was allocated by the refused request; uploads are refused the same way.
    assert_eq!(d1.memory_usage().current_bytes, 768 * KIB);
    assert!(matches!(
        d1.upload(&vec![0u32; 100_000]),
        Err(Error::DeviceMemoryLimit {
            device: 1,
            requested: 425_984, // the size class of 400,000 bytes
            ..
        })
    ));
    // Exactly up to the limit is allowed, and the other device has its own limit.
    let rest = d1.alloc::<u8>(256 << 10).unwrap();
    assert_eq!(d1.memory_usage().current_bytes, MIB);
    let whole = ctx.devices()[0].alloc::<u8>(MIB as usize).unwrap();
    assert_eq!(d1.memory_usage().peak_bytes, MIB);
    assert_eq!(ctx.devices()[0].memory_usage().limit_bytes, Some(MIB));
    drop((held, rest, whole));
}

#[test]
fn fits_under_limit_says_whether_an_allocation_would_pass() {
    let ctx = host(1, Some(MIB));
    let d = &ctx.devices()[0];
    assert!(d.fits_under_limit(MIB as usize));
    assert!(!d.fits_under_limit(MIB as usize + 1));
    let held = d.alloc::<u8>(768 << 10).unwrap();
    assert!(d.fits_under_limit(256 << 10));
    // Size classes: 250,000 bytes take 262,144 (exactly the rest), 270,000 take 294,912.
    assert!(d.fits_under_limit(250_000));
    assert!(!d.fits_under_limit(270_000));
    assert!(d.alloc::<u8>(270_000).is_err());
    drop(held);
    assert!(host(1, None).devices()[0].fits_under_limit(usize::MAX));
}

#[test]
fn cached_blocks_are_freed_before_the_limit_refuses() {
    let ctx = host(1, Some(MIB));
    let d = &ctx.devices()[0];
    drop(d.alloc::<u8>(512 << 10).unwrap());
    assert_eq!(d.memory_pool().cached_bytes(), 512 << 10);
    assert_eq!(d.memory_usage().current_bytes, 512 * KIB);

    // 512 KiB cached + 768 KiB would pass 1 MiB: the cache goes first, then it fits.
    let buffer = d.alloc::<u8>(768 << 10).unwrap();
    assert_eq!(d.memory_pool().cached_bytes(), 0);
    assert_eq!(d.memory_usage().current_bytes, 768 * KIB);
    drop(buffer);
}

#[test]
fn a_run_under_a_limit_that_suffices_succeeds_and_stays_under_it() {
    let limit = 256 * KIB;
    let ctx = host(2, Some(limit));
    let input = data(20_000, 5);
    // Host -> device 0, then device 0 -> device 1, through links of 4 KiB packets.
    let mut on_d0 = vec![u32::MAX; input.len()];
    let mut on_d1 = vec![u32::MAX; input.len()];
    for (src, dst, from, into) in [
        (Endpoint::Host, 0, &input, &mut on_d0),
        (Endpoint::Device(DeviceId(0)), 1, &input, &mut on_d1),
    ] {
        let dst = Endpoint::Device(DeviceId(dst));
        let link = new_link(&ctx, src, dst, LinkConfig::new(1024, 2));
        let (seg, ready) = source(&ctx, src, from);
        let sent = link.send(seg, ready).unwrap();
        link.shutdown();
        while let Some(p) = link.receive_timeout(TIMEOUT).unwrap() {
            let offset = p.segment().offset();
            let values = read(&ctx, &p);
            into[offset..offset + values.len()].copy_from_slice(&values);
            p.release(Event::ready());
        }
        sent.wait().unwrap();
    }
    assert_eq!(on_d0, input);
    assert_eq!(on_d1, input);
    for usage in ctx.memory_usage() {
        assert!(usage.peak_bytes >= 2 * 4096, "{usage:?}");
        assert!(usage.peak_bytes <= limit, "{usage:?}");
    }
}

#[test]
fn peak_tracks_the_maximum_and_reset_peak_starts_over() {
    let ctx = host(1, None);
    let d = &ctx.devices()[0];
    // Sizes that are their own size class, so the counts are the requests.
    let a = d.alloc::<u8>(96 << 10).unwrap();
    let b = d.alloc::<u8>(192 << 10).unwrap();
    drop(b);
    d.memory_pool().trim();
    let c = d.alloc::<u8>(48 << 10).unwrap();
    let usage = d.memory_usage();
    assert_eq!(
        (usage.current_bytes, usage.peak_bytes),
        (144 * KIB, 288 * KIB)
    );
    assert_eq!(usage.limit_bytes, None);

    ctx.reset_peak();
    assert_eq!(d.memory_usage().peak_bytes, 144 * KIB);
    drop(c);
    d.memory_pool().trim();
    assert_eq!(
        d.memory_usage().peak_bytes,
        144 * KIB,
        "freeing leaves the peak"
    );
    let e = d.alloc::<u8>(10 << 10).unwrap();
    assert_eq!(d.memory_usage().peak_bytes, 144 * KIB);
    drop((a, e));
}

#[test]
fn concurrent_allocations_never_pass_the_limit() {
    let limit = MIB;
    let ctx = host(1, Some(limit));
    let start = std::sync::Arc::new(std::sync::Barrier::new(8));
    let threads: Vec<_> = (0..8usize)
        .map(|t| {
            let ctx = ctx.clone();
            let start = std::sync::Arc::clone(&start);
            std::thread::spawn(move || {
                let d = &ctx.devices()[0];
                start.wait();
                let (mut granted, mut refused) = (0, 0);
                let mut held = Vec::new();
                for i in 0..200usize {
                    // Sizes differ per thread and step (13 sizes from 20 kB to 260 kB, in 12
                    // size classes); five consecutive ones (four held and the next) pass 1 MiB,
                    // so every thread meets a refusal even when the threads run one by one.
                    match d.alloc::<u8>(((t * 7 + i) % 13 + 1) * 20_000) {
                        Ok(b) => {
                            granted += 1;
                            held.push(b);
                        }
                        Err(Error::DeviceMemoryLimit {
                            in_use, limit: l, ..
                        }) => {
                            assert_eq!(l, limit);
                            assert!(in_use <= limit);
                            refused += 1;
                        }
                        Err(other) => panic!("{other}"),
                    }
                    assert!(d.memory_usage().current_bytes <= limit);
                    if held.len() > 4 {
                        held.remove(0);
                    }
                }
                (granted, refused)
            })
        })
        .collect();
    let mut granted = 0;
    for t in threads {
        let (g, refused) = t.join().unwrap();
        granted += g;
        // A thread never refused for its neighbours' blocks holds the four before a 260 kB
        // request; 180 + 200 + 220 + 240 + 260 kB pass 1 MiB. (A thread may be granted
        // nothing while the others hold the memory, so grants are counted over all.)
        assert!(refused > 0, "a thread was never refused");
    }
    assert!(granted > 0);
    let usage = ctx.devices()[0].memory_usage();
    assert!(usage.peak_bytes <= limit, "{usage:?}");
    ctx.devices()[0].memory_pool().trim();
    assert_eq!(ctx.devices()[0].memory_usage().current_bytes, 0);
}

#[test]
fn a_backend_out_of_memory_is_a_device_out_of_memory_error_in_the_same_shape() {
    let ctx = host(2, None);
    let d = &ctx.devices()[1];
    let held = d.alloc::<u8>(4096).unwrap();
    // More than the host allocator can ever provide.
    let requested = usize::MAX / 2;
    let err = d.alloc::<u8>(requested).unwrap_err();
    match &err {
        Error::DeviceOutOfMemory {
            device,
            requested: r,
            in_use,
            limit,
            source,
        } => {
            assert_eq!(
                (*device, *r, *in_use, *limit),
                (1, requested as u64, 4096, None)
            );
            assert!(matches!(**source, Error::OutOfMemory { .. }), "{source:?}");
        }
        other => panic!("expected DeviceOutOfMemory, got {other:?}"),
    }
    let message = err.to_string();
    for part in [
        "device 1",
        "out of memory",
        "4 KiB",
        &requested.to_string(),
        "more devices",
    ] {
        assert!(message.contains(part), "{part:?} missing from: {message}");
    }
    assert!(
        std::error::Error::source(&err).is_some(),
        "the backend error is kept"
    );
    assert_eq!(
        d.memory_usage().current_bytes,
        4096,
        "the failed request is not counted"
    );
    drop(held);
}

#[test]
fn a_zero_limit_is_refused_when_building() {
    let err = Context::builder()
        .backend(BackendChoice::Host)
        .device_memory_limit(0)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidSetting {
                setting: "device memory limit",
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(host(1, None).device_memory_limit(), None);
}

#[test]
fn a_limit_written_as_a_flag_value_caps_every_device() {
    let limit: groute_core::ByteSize = "1.5M".parse().unwrap();
    let ctx = Context::builder()
        .devices(3)
        .backend(BackendChoice::Host)
        .device_memory_limit(limit.bytes())
        .build()
        .unwrap();
    for device in ctx.devices() {
        assert_eq!(device.memory_usage().limit_bytes, Some(3 << 19));
        let fits = device.alloc::<u8>(3 << 19).unwrap();
        let err = device.alloc::<u8>(1).unwrap_err();
        assert!(err.to_string().contains("1536 KiB"), "{err}");
        drop(fits);
    }
}

#[test]
fn graph_structure_counts_apart_while_it_lives_and_its_peak_stays() {
    let ctx = host(1, None);
    let d = &ctx.devices()[0];
    let graph = |ctx: &Context| {
        let u = ctx.devices()[0].memory_usage();
        (u.graph_bytes, u.peak_graph_bytes)
    };
    let other = d.alloc::<u32>(100).unwrap();
    assert_eq!(
        graph(&ctx),
        (0, 0),
        "plain allocations are not graph structure"
    );
    let offsets = d.upload_graph(&[0u64, 2, 5]).unwrap();
    assert_eq!(
        d.download(&offsets).unwrap(),
        [0, 2, 5],
        "the upload's data"
    );
    let targets = d.alloc_graph::<u32>(5).unwrap();
    assert_eq!(graph(&ctx), (44, 44));
    // Graph bytes are the buffers' lengths; the blocks holding them are at least 512 B.
    assert_eq!(
        current(&ctx, 0),
        3 * 512,
        "graph bytes are also in current_bytes"
    );
    drop(offsets);
    assert_eq!(
        graph(&ctx),
        (20, 44),
        "dropping gives the bytes back; the peak stays"
    );
    ctx.devices()[0].reset_peak();
    assert_eq!(
        graph(&ctx),
        (20, 20),
        "reset_peak restarts the graph peak too"
    );
    drop((targets, other));
    assert_eq!(graph(&ctx).0, 0);

    // A link's receive buffers count as graph structure when the link says they hold it.
    let ctx = host(2, None);
    let config = LinkConfig::new(256, 2).holding_graph();
    let link = new_link(&ctx, D0, D1, config);
    assert_eq!(ctx.devices()[1].memory_usage().graph_bytes, 2 * 256 * 4);
    assert_eq!(ctx.devices()[0].memory_usage().graph_bytes, 0);
    drop(link);
}
