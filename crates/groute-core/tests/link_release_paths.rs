//! Every path by which a link's copies get enqueued: by the sender's thread, by the thread
//! that releases a buffer, and by the pump thread when neither may (a release inside a stream
//! callback, where CUDA forbids driver calls) or when they contend for the output.

mod common;

use std::sync::Arc;

use common::{TIMEOUT, data, new_link, pairs, read, reassemble, source};
use groute_core::testing::test_contexts;
use groute_core::{DeviceId, Endpoint, Event, LinkConfig, PendingSegment};

const SEEDS: &[u64] = &[3, 11];

/// A stream on the device where packets to `dst` live (device 0 for the host).
fn stream_near(ctx: &groute_core::Context, dst: Endpoint) -> groute_core::Stream {
    let d = match dst {
        Endpoint::Device(d) => d,
        _ => DeviceId(0),
    };
    ctx.device(d).unwrap().stream().clone()
}

#[test]
fn packets_released_inside_stream_callbacks_keep_flowing() {
    for tc in test_contexts(2, SEEDS) {
        let ctx = &tc.context;
        for (src, dst) in pairs(ctx) {
            let link = new_link(ctx, src, dst, LinkConfig::new(4, 2));
            let input = data(64, 21);
            let (seg, ready) = source(ctx, src, &input);
            let sent = link.send(seg.with_metadata(9), ready).unwrap();
            link.shutdown();
            let callbacks = stream_near(ctx, dst);
            let mut got = vec![u32::MAX; input.len()];
            while let Some(p) = link.receive_timeout(TIMEOUT).unwrap() {
                let offset = p.segment().offset();
                let values = read(ctx, &p);
                got[offset..offset + values.len()].copy_from_slice(&values);
                // Released from inside a stream callback: on CUDA the link may not enqueue
                // there, so its pump thread must take over.
                callbacks
                    .host_fn(move || p.release(Event::ready()))
                    .unwrap();
            }
            sent.wait().unwrap();
            assert_eq!(got, input, "{}: {src} -> {dst}", tc.label);
        }
    }
}

#[test]
fn sends_from_many_threads_and_releases_from_another_all_arrive_in_per_thread_order() {
    const THREADS: u64 = 4;
    const MESSAGES: u64 = 12;
    for tc in test_contexts(2, SEEDS) {
        let ctx = &tc.context;
        // With two copy streams, three buffers come back to alternating streams.
        for (src, dst, copy_streams) in pairs(ctx)
            .into_iter()
            .flat_map(|(s, d)| [(s, d, 1), (s, d, 2)])
        {
            let config = LinkConfig::new(8, 3).with_copy_streams(copy_streams);
            let link = new_link(ctx, src, dst, config);
            // Packets go from the receiving thread to a releasing thread.
            let (to_release, released) = std::sync::mpsc::channel::<PendingSegment<u32>>();
            let releaser = std::thread::spawn(move || {
                for p in released {
                    p.release(Event::ready());
                }
            });
            let ctx_rx = ctx.clone();
            let rx = link.receiver();
            let receiver = std::thread::spawn(move || {
                let mut got = Vec::new();
                while let Some(p) = rx.receive_timeout(TIMEOUT).unwrap() {
                    let s = p.segment();
                    got.push(common::Got {
                        offset: s.offset(),
                        total: s.total(),
                        metadata: s.metadata(),
                        data: read(&ctx_rx, &p),
                    });
                    to_release.send(p).unwrap();
                }
                got
            });
            let expected =
                |t: u64, m: u64| data(1 + ((t * 7 + m * 5) % 40) as usize, (t * 100 + m) as u32);
            let link = Arc::new(link);
            let senders: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (link, ctx) = (Arc::clone(&link), ctx.clone());
                    std::thread::spawn(move || {
                        let mut futures = Vec::new();
                        for m in 0..MESSAGES {
                            let (seg, ready) = source(&ctx, src, &expected(t, m));
                            let seg = seg.with_metadata(t * 100 + m);
                            futures.push(link.send(seg, ready).unwrap());
                        }
                        for f in futures {
                            f.wait().unwrap();
                        }
                    })
                })
                .collect();
            for s in senders {
                s.join().unwrap();
            }
            link.shutdown();
            let got = receiver.join().unwrap();
            releaser.join().unwrap();
            let messages = reassemble(&got);
            assert_eq!(messages.len() as u64, THREADS * MESSAGES, "{}", tc.label);
            for t in 0..THREADS {
                let order: Vec<u64> = messages
                    .iter()
                    .filter(|(m, _)| m / 100 == t)
                    .map(|(m, _)| m % 100)
                    .collect();
                assert_eq!(
                    order,
                    (0..MESSAGES).collect::<Vec<_>>(),
                    "{}: thread {t}",
                    tc.label
                );
            }
            for (m, values) in &messages {
                assert_eq!(
                    values,
                    &expected(m / 100, m % 100),
                    "{}: message {m}",
                    tc.label
                );
            }
        }
    }
}
