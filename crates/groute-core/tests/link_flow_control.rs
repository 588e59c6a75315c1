//! Flow control and shutdown: never more than `num_buffers` packets out, buffers reused only
//! after the consumer's event, end-of-stream strictly after all data.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{
    D0, D1, HOST, TIMEOUT, data, drain, new_link, numbered, pairs, read, reassemble, source,
};
use groute_core::testing::test_contexts;
use groute_core::{DeviceId, Endpoint, Error, Event, LinkConfig};

const SEEDS: &[u64] = &[5, 17];

#[test]
fn never_more_than_num_buffers_packets_are_out() {
    for tc in test_contexts(2, SEEDS) {
        for (src, dst) in pairs(&tc.context) {
            let ctx = &tc.context;
            let link = new_link(ctx, src, dst, LinkConfig::new(2, 3));
            let input = data(40, 7);
            let (seg, ready) = source(ctx, src, &input);
            let _sent = link.send(seg, ready).unwrap();
            link.shutdown();
            // Hold every packet: exactly 3 arrive, then nothing until one is released.
            let mut held: Vec<_> = (0..3)
                .map(|_| link.receive_timeout(TIMEOUT).unwrap().unwrap())
                .collect();
            assert!(
                link.receive_timeout(Duration::from_millis(150)).is_err(),
                "{}: a 4th packet arrived with every buffer held",
                tc.label
            );
            let mut got = Vec::new();
            let first = held.remove(0);
            got.push((first.segment().offset(), read(ctx, &first)));
            first.release(Event::ready());
            let fourth = link.receive_timeout(TIMEOUT).unwrap().unwrap();
            assert_eq!(fourth.segment().offset(), 6);
            held.push(fourth);
            for p in held {
                got.push((p.segment().offset(), read(ctx, &p)));
                p.release(Event::ready());
            }
            for g in drain(ctx, &link.receiver()) {
                got.push((g.offset, g.data));
            }
            got.sort();
            let flat: Vec<u32> = got.into_iter().flat_map(|(_, d)| d).collect();
            assert_eq!(flat, input, "{}", tc.label);
        }
    }
}

#[test]
fn a_greedy_consumer_never_holds_more_than_num_buffers() {
    for tc in test_contexts(2, SEEDS) {
        let ctx = &tc.context;
        let link = new_link(ctx, D0, D1, LinkConfig::new(3, 4));
        let input = data(600, 8);
        for m in 0..4 {
            let part = &input[m * 150..(m + 1) * 150];
            let (seg, ready) = source(ctx, Endpoint::Device(DeviceId(0)), part);
            let _sent = link.send(seg.with_metadata(m as u64), ready).unwrap();
        }
        link.shutdown();
        let mut held = std::collections::VecDeque::new();
        let mut max_held = 0;
        let mut received = 0;
        let mut step = 0u32;
        loop {
            match link.receive_timeout(Duration::from_millis(20)) {
                Ok(Some(p)) => {
                    received += p.segment().len();
                    held.push_back(p);
                    max_held = max_held.max(held.len());
                    assert!(held.len() <= 4, "{}: {} packets out", tc.label, held.len());
                }
                Ok(None) => break,
                Err(_) => {}
            }
            // Release at an irregular pace, oldest first.
            step = step.wrapping_mul(1_103_515_245).wrapping_add(12345);
            if held.len() == 4 || step % 3 == 0 {
                if let Some(p) = held.pop_front() {
                    p.release(Event::ready());
                }
            }
        }
        assert_eq!(received, 600);
        assert_eq!(
            max_held, 4,
            "{}: the consumer should have filled every buffer",
            tc.label
        );
    }
}

#[test]
fn a_released_buffer_is_reused_only_after_the_consumers_event() {
    for tc in test_contexts(2, SEEDS) {
        let ctx = &tc.context;
        let consumer = ctx.device(DeviceId(1)).unwrap();
        if !consumer.stream().is_host() {
            eprintln!(
                "SKIPPED on {}: this test reads packets in host kernels",
                tc.label
            );
            continue;
        }
        for copy_streams in [1, 3] {
            // One buffer: every packet overwrites the previous one unless the link waits (with
            // 3 copy streams, each packet's copy runs on another stream than the one before).
            let link = new_link(
                ctx,
                D0,
                D1,
                LinkConfig::new(4, 1).with_copy_streams(copy_streams),
            );
            let input = data(24, 9);
            let (seg, ready) = source(ctx, Endpoint::Device(DeviceId(0)), &input);
            let _sent = link.send(seg, ready).unwrap();
            link.shutdown();
            let mismatches = Arc::new(AtomicUsize::new(0));
            let checked = Arc::new(AtomicUsize::new(0));
            while let Some(p) = link.receive_timeout(TIMEOUT).unwrap() {
                let stream = consumer.stream();
                stream.wait(p.ready()).unwrap();
                let buf = p.segment().data().clone();
                let offset = p.segment().offset();
                let want = input[offset..offset + buf.len()].to_vec();
                let (mis, chk) = (Arc::clone(&mismatches), Arc::clone(&checked));
                stream
                    .launch_host(move || {
                        // A slow consumer: if the link reused the buffer now, we would see the
                        // next packet's data.
                        std::thread::sleep(Duration::from_millis(15));
                        // SAFETY: the stream waited for the packet's copy, and the link does not
                        // write the buffer before the event recorded after this kernel.
                        let got = unsafe { buf.host_to_vec() }.unwrap();
                        if got != want {
                            mis.fetch_add(1, Ordering::Relaxed);
                        }
                        chk.fetch_add(1, Ordering::Relaxed);
                    })
                    .unwrap();
                let done = stream.record().unwrap();
                p.release(done);
            }
            consumer.stream().synchronize().unwrap();
            assert_eq!(checked.load(Ordering::Relaxed), 6);
            let label = &tc.label;
            assert_eq!(
                mismatches.load(Ordering::Relaxed),
                0,
                "{label}, {copy_streams} streams"
            );
        }
    }
}

#[test]
fn shutdown_comes_after_all_data_and_later_sends_are_refused() {
    for tc in test_contexts(2, SEEDS) {
        for (src, dst) in pairs(&tc.context) {
            let ctx = &tc.context;
            let link = new_link(ctx, src, dst, LinkConfig::new(4, 2));
            let inputs: Vec<Vec<u32>> = (0..5).map(|m| data(9, m)).collect();
            for (m, input) in inputs.iter().enumerate() {
                let (seg, ready) = source(ctx, src, input);
                let _sent = link.send(seg.with_metadata(m as u64), ready).unwrap();
            }
            link.shutdown();
            link.shutdown(); // idempotent
            let (seg, ready) = source(ctx, src, &[1, 2]);
            let refused = link.send(seg.with_metadata(99), ready).unwrap_err();
            assert!(matches!(refused.error(), Error::SendAfterShutdown(_)));
            assert_eq!(refused.segment().metadata(), 99, "the segment comes back");
            let got = drain(ctx, &link.receiver());
            let want = numbered(inputs);
            assert_eq!(reassemble(&got), want, "{}", tc.label);
            // End of stream is sticky.
            assert!(link.receive_timeout(TIMEOUT).unwrap().is_none());
            assert!(link.receiver().is_finished());
        }
    }
}

#[test]
fn shutdown_wakes_a_blocked_receiver() {
    for tc in test_contexts(2, SEEDS) {
        let link = new_link(&tc.context, HOST, D0, LinkConfig::new(4, 2));
        let rx = link.receiver();
        let waiter = std::thread::spawn(move || rx.receive_timeout(TIMEOUT).map(|p| p.is_none()));
        std::thread::sleep(Duration::from_millis(30));
        link.shutdown();
        assert_eq!(waiter.join().unwrap(), Ok(true), "{}", tc.label);
    }
}

#[test]
fn dropping_the_sender_side_shuts_the_link_down() {
    let ctx = groute_core::Context::host(1).unwrap();
    let link = new_link(&ctx, HOST, D0, LinkConfig::new(4, 2));
    let rx = link.receiver();
    let (seg, ready) = source(&ctx, Endpoint::Host, &[4, 5, 6]);
    let _sent = link.send(seg, ready).unwrap();
    drop(link);
    let got = drain(&ctx, &rx);
    assert_eq!(reassemble(&got), vec![(0, vec![4, 5, 6])]);
}

#[test]
fn sends_to_a_link_whose_receivers_are_gone_fail_instead_of_hanging() {
    let ctx = groute_core::Context::host(1).unwrap();
    let link = new_link(&ctx, HOST, D0, LinkConfig::new(2, 1));
    let sender = link.sender();
    drop(link); // the only receiver handle
    let mut outcomes = Vec::new();
    for _ in 0..20 {
        let (seg, ready) = source(&ctx, Endpoint::Host, &[1, 2, 3, 4, 5]);
        match sender.send(seg, ready) {
            // Queued before the pump noticed: the future resolves (to an error, or to the
            // event of copies made into buffers nobody reads), never hangs.
            Ok(fut) => outcomes.push(fut.get().is_ok()),
            Err(e) => {
                assert!(matches!(e.error(), Error::Disconnected(_)), "{e}");
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    sender.shutdown();
}
