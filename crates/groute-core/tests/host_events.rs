//! Events across streams and devices on the host backend (and CUDA with GROUTE_TEST_CUDA=1).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use groute_core::testing::test_contexts;
use groute_core::{DeviceId, Event, StreamPriority};

/// Whether `event` completes (its completion callback runs) within `limit`.
fn completes_within(event: &Event, limit: Duration) -> bool {
    let (tx, rx) = std::sync::mpsc::channel();
    event
        .on_complete(move || {
            let _ = tx.send(());
        })
        .unwrap();
    rx.recv_timeout(limit).is_ok()
}

#[test]
fn a_stream_waits_for_an_event_recorded_on_another_device() {
    for tc in test_contexts(2, &[1, 2, 3]) {
        let ctx = &tc.context;
        let d0 = ctx.device(DeviceId(0)).unwrap();
        let d1 = ctx.device(DeviceId(1)).unwrap();
        let copy0 = d0.new_stream(StreamPriority::High).unwrap();
        let high1 = d1.high_priority_stream();
        for round in 0..50u32 {
            let flag = Arc::new(AtomicU32::new(0));
            let f = Arc::clone(&flag);
            copy0
                .host_fn(move || {
                    std::thread::sleep(Duration::from_micros(200));
                    f.store(round + 1, Ordering::SeqCst);
                })
                .unwrap();
            let ev = copy0.record().unwrap();
            high1.wait(&ev).unwrap();
            let seen = Arc::new(AtomicU32::new(0));
            let (f, s) = (Arc::clone(&flag), Arc::clone(&seen));
            high1
                .host_fn(move || s.store(f.load(Ordering::SeqCst), Ordering::SeqCst))
                .unwrap();
            let done = high1.record().unwrap();
            // Must complete (a hang here is the bug) and must see the other device's write.
            assert!(
                completes_within(&done, Duration::from_secs(10)),
                "{}: cross-device wait hung in round {round}",
                tc.label
            );
            assert_eq!(seen.load(Ordering::SeqCst), round + 1, "{}", tc.label);
        }
    }
}

#[test]
fn waits_on_events_recorded_later_by_reused_pool_events_do_not_hang() {
    for tc in test_contexts(3, &[4, 5]) {
        let ctx = &tc.context;
        let streams: Vec<_> = ctx
            .devices()
            .iter()
            .map(|d| d.new_stream(StreamPriority::Normal).unwrap())
            .collect();
        // A chain of events around the ring of devices, many times, with pool reuse.
        let counter = Arc::new(AtomicU32::new(0));
        let mut prev = None;
        for i in 0..300usize {
            let s = &streams[i % streams.len()];
            if let Some(ev) = prev.take() {
                s.wait(&ev).unwrap();
            }
            let c = Arc::clone(&counter);
            let expect = i as u32;
            s.host_fn(move || {
                // Each step runs after the previous one on another device.
                let _ = c.compare_exchange(expect, expect + 1, Ordering::SeqCst, Ordering::SeqCst);
            })
            .unwrap();
            prev = Some(s.record().unwrap());
        }
        let last = prev.unwrap();
        assert!(
            completes_within(&last, Duration::from_secs(20)),
            "{}: event chain hung",
            tc.label
        );
        assert_eq!(
            counter.load(Ordering::SeqCst),
            300,
            "{}: steps ran out of order",
            tc.label
        );
    }
}

#[test]
fn a_blocked_stream_is_woken_even_when_another_stream_ran_first() {
    // An executor that marks a blocked wait as registered during a scan that then returns
    // another stream's runnable work never registers the wake-up; this guards against it.
    for tc in test_contexts(2, &[9]) {
        let ctx = &tc.context;
        let d0 = ctx.device(DeviceId(0)).unwrap();
        let d1 = ctx.device(DeviceId(1)).unwrap();
        let a = d1.new_stream(StreamPriority::High).unwrap();
        let b = d1.new_stream(StreamPriority::Normal).unwrap();
        for _ in 0..5 {
            d0.stream()
                .host_fn(|| std::thread::sleep(Duration::from_millis(20)))
                .unwrap();
            let ev = d0.stream().record().unwrap();
            a.wait(&ev).unwrap();
            a.host_fn(|| {}).unwrap();
            b.host_fn(|| std::thread::sleep(Duration::from_millis(1)))
                .unwrap();
            let done = a.record().unwrap();
            assert!(
                completes_within(&done, Duration::from_secs(10)),
                "{}: blocked stream never woke",
                tc.label
            );
        }
    }
}
