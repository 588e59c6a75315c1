//! The CUDA backend against the seam contract, on real GPUs.
//!
//! With `GROUTE_TEST_CUDA=1` the CUDA backend is mandatory: these tests FAIL when no GPU (or no
//! driver) is found. Without it they print why they skip.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use groute_core::backend::cuda::{CudaBackend, CudaOptions};
use groute_core::backend::{Backend, EventKind, MemoryLocation, RawSlice, StreamPriority};
use groute_core::testing::cuda_raw::{
    backend, backend_with, pattern, pinned, read_host, whole, write_host,
};
use groute_core::testing::cuda_required;

#[test]
fn backend_creation_never_panics() {
    // Runs everywhere: on a machine without CUDA this must be an error value, not a panic.
    match CudaBackend::new() {
        Ok(b) => {
            eprintln!("CUDA backend: {} device(s)", b.physical_devices());
            for d in 0..b.physical_devices() {
                eprintln!("  {d}: {:?}", b.properties(d).expect("properties"));
            }
        }
        Err(e) => {
            assert!(
                matches!(e, groute_core::Error::CudaUnavailable { .. }),
                "expected CudaUnavailable, got {e:?}"
            );
            assert!(!cuda_required(), "GROUTE_TEST_CUDA=1 but: {e}");
            eprintln!("no CUDA here (as expected on a CPU machine): {e}");
        }
    }
}

/// Host -> device -> device -> host round trip on every device, plus fills.
#[test]
fn host_device_copies_and_fills_round_trip() {
    let Some(b) = backend("host_device_copies_and_fills_round_trip") else {
        return;
    };
    let n = 1 << 20;
    for d in 0..b.physical_devices() {
        let s = b.create_stream(d, StreamPriority::Normal).unwrap();
        let src = pattern(n, d as u32);
        let h_in = pinned(&b, n);
        let h_out = pinned(&b, n);
        write_host(&h_in, &src);
        let d1 = b.allocate(MemoryLocation::Device(d), n * 4).unwrap();
        let d2 = b.allocate(MemoryLocation::Device(d), n * 4).unwrap();
        s.copy(&whole(&d1), &whole(&h_in)).unwrap();
        s.copy(&whole(&d2), &whole(&d1)).unwrap();
        s.copy(&whole(&h_out), &whole(&d2)).unwrap();
        s.synchronize().unwrap();
        assert_eq!(read_host(&h_out, n), src, "device {d}: round trip");

        // fill_u32 on device memory (a sub-range) and on pinned host memory.
        let mid = RawSlice {
            memory: d2.clone(),
            offset: 4 * 100,
            len: 4 * 1000,
        };
        s.fill_u32(&mid, 0xdead_beef).unwrap();
        s.copy(&whole(&h_out), &whole(&d2)).unwrap();
        s.fill_u32(
            &RawSlice {
                memory: h_in.clone(),
                offset: 0,
                len: 16,
            },
            7,
        )
        .unwrap();
        s.synchronize().unwrap();
        let got = read_host(&h_out, n);
        assert!(got[100..1100].iter().all(|&x| x == 0xdead_beef));
        assert_eq!(&got[..100], &src[..100]);
        assert_eq!(&got[1100..], &src[1100..]);
        assert_eq!(read_host(&h_in, 4), vec![7; 4]);

        // Mapped host memory is device-addressable.
        let mapped = b.allocate(MemoryLocation::MappedHost, 4096).unwrap();
        assert!(mapped.device_ptr().is_some() && mapped.host_ptr().is_some());
    }
}

/// Device -> device copies between every pair, with peer access (as enabled) and without
/// (host-staged), issued from streams of the source, of the destination, and of a third device.
#[test]
fn peer_and_staged_copies_between_every_pair() {
    for peer in [true, false] {
        let Some(b) = backend_with(
            "peer_and_staged_copies_between_every_pair",
            CudaOptions { peer_access: peer },
        ) else {
            return;
        };
        let g = b.physical_devices();
        if g < 2 {
            eprintln!("peer_and_staged_copies_between_every_pair: only {g} device, pairs skipped");
            return;
        }
        let n = (1 << 20) + 3;
        for a in 0..g {
            for c in 0..g {
                if a == c {
                    continue;
                }
                eprintln!(
                    "pair {a}->{c}: peer access {} (requested {peer})",
                    b.can_access_peer(a, c)
                );
                for on in [a, c] {
                    let s = b.create_stream(on, StreamPriority::High).unwrap();
                    let src = pattern(n, (a * 7 + c * 3 + on) as u32);
                    let h_in = pinned(&b, n);
                    let h_out = pinned(&b, n);
                    write_host(&h_in, &src);
                    let da = b.allocate(MemoryLocation::Device(a), n * 4).unwrap();
                    let dc = b.allocate(MemoryLocation::Device(c), n * 4).unwrap();
                    s.copy(&whole(&da), &whole(&h_in)).unwrap();
                    s.copy(&whole(&dc), &whole(&da)).unwrap();
                    s.copy(&whole(&h_out), &whole(&dc)).unwrap();
                    s.synchronize().unwrap();
                    assert_eq!(
                        read_host(&h_out, n),
                        src,
                        "{a}->{c} on stream of {on}, peer {peer}"
                    );
                }
            }
        }
    }
}

/// Dropping every handle to buffers while a copy is in flight must not free them under it.
#[test]
fn memory_stays_alive_until_enqueued_copies_complete() {
    let Some(b) = backend("memory_stays_alive_until_enqueued_copies_complete") else {
        return;
    };
    let n = 8 << 20;
    let s = b.create_stream(0, StreamPriority::Normal).unwrap();
    let src = pattern(n, 99);
    let h_in = pinned(&b, n);
    write_host(&h_in, &src);
    let h_out = pinned(&b, n);
    {
        let d = b.allocate(MemoryLocation::Device(0), n * 4).unwrap();
        s.copy(&whole(&d), &whole(&h_in)).unwrap();
        s.copy(&whole(&h_out), &whole(&d)).unwrap();
        // `d` dropped here, copies in flight.
    }
    // Churn the pool so a premature free would be reused and overwritten.
    for _ in 0..4 {
        let x = b.allocate(MemoryLocation::Device(0), n * 4).unwrap();
        let s2 = b.create_stream(0, StreamPriority::Normal).unwrap();
        s2.fill_u32(&whole(&x), 0).unwrap();
        s2.synchronize().unwrap();
    }
    s.synchronize().unwrap();
    assert_eq!(read_host(&h_out, n), src);
}

/// `copy_and_record` records the caller's event after the copy and uses that recording to
/// keep the memory alive: dropping the buffers, and recording the same event again while the
/// first copy is in flight, must neither free memory under a copy nor complete early.
#[test]
fn copy_and_record_orders_and_keeps_memory_alive() {
    let Some(b) = backend("copy_and_record_orders_and_keeps_memory_alive") else {
        return;
    };
    let n = 8 << 20;
    let s = b.create_stream(0, StreamPriority::Normal).unwrap();
    let event = b.create_event(0, EventKind::Sync).unwrap();
    let src = pattern(n, 7);
    let h_in = pinned(&b, n);
    write_host(&h_in, &src);
    let h_out = pinned(&b, n);
    {
        let d = b.allocate(MemoryLocation::Device(0), n * 4).unwrap();
        s.copy_and_record(&whole(&d), &whole(&h_in), event.as_ref())
            .unwrap();
        s.copy_and_record(&whole(&h_out), &whole(&d), event.as_ref())
            .unwrap();
        // `d` dropped here, both copies in flight.
    }
    for _ in 0..4 {
        let x = b.allocate(MemoryLocation::Device(0), n * 4).unwrap();
        let s2 = b.create_stream(0, StreamPriority::Normal).unwrap();
        s2.fill_u32(&whole(&x), 0).unwrap();
        s2.synchronize().unwrap();
    }
    // The event's latest recording follows the second copy.
    event.synchronize().unwrap();
    assert!(event.query().unwrap());
    assert_eq!(read_host(&h_out, n), src);
    s.synchronize().unwrap();
}

/// Events: record/query/synchronize, notify fires (and reports latency), waits order streams,
/// host_fn runs in order, timing events measure.
#[test]
fn events_notify_and_order_streams() {
    let Some(b) = backend("events_notify_and_order_streams") else {
        return;
    };
    let g = b.physical_devices();
    let s0 = b.create_stream(0, StreamPriority::Normal).unwrap();
    let e = b.create_event(0, EventKind::Sync).unwrap();
    // Never recorded: complete.
    assert!(e.query().unwrap());

    // host_fn runs in stream order, after the copy before it.
    let n = 1 << 16;
    let h = pinned(&b, n);
    let d = b.allocate(MemoryLocation::Device(0), n * 4).unwrap();
    s0.fill_u32(&whole(&d), 5).unwrap();
    s0.copy(&whole(&h), &whole(&d)).unwrap();
    let hp = h.host_ptr().unwrap().as_ptr() as usize;
    let (tx, rx) = mpsc::channel();
    s0.host_fn(Box::new(move || {
        // SAFETY: the copy into `h` completed (stream order) and `h` outlives the callback
        // (the test waits for it below while holding `h`).
        let first = unsafe { *(hp as *const u32) };
        let _ = tx.send(first);
    }))
    .unwrap();
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 5);

    // Cross-device ordering via wait_event, and notify.
    let dst_dev = if g > 1 { 1 } else { 0 };
    let s1 = b.create_stream(dst_dev, StreamPriority::High).unwrap();
    let d1 = b.allocate(MemoryLocation::Device(dst_dev), n * 4).unwrap();
    s0.fill_u32(&whole(&d), 11).unwrap();
    s0.record(&*e).unwrap();
    s1.wait_event(&*e).unwrap();
    s1.copy(&whole(&d1), &whole(&d)).unwrap();
    s1.copy(&whole(&h), &whole(&d1)).unwrap();
    let e1 = b.create_event(dst_dev, EventKind::Sync).unwrap();
    s1.record(&*e1).unwrap();
    let fired = Arc::new(AtomicUsize::new(0));
    let f2 = fired.clone();
    e1.notify(Box::new(move || {
        f2.fetch_add(1, Ordering::SeqCst);
    }))
    .unwrap();
    e1.synchronize().unwrap();
    let t = Instant::now();
    while fired.load(Ordering::SeqCst) == 0 && t.elapsed() < Duration::from_secs(5) {
        std::thread::yield_now();
    }
    assert_eq!(fired.load(Ordering::SeqCst), 1, "notify fired once");
    assert!(read_host(&h, n).iter().all(|&x| x == 11));

    // Notify latency: 4 KiB copy device 0 -> dst_dev, record, notify; time until the callback.
    let small0 = b.allocate(MemoryLocation::Device(0), 4096).unwrap();
    let small1 = b.allocate(MemoryLocation::Device(dst_dev), 4096).unwrap();
    let mut notify_us = Vec::new();
    let mut sync_us = Vec::new();
    for i in 0..200 {
        let t = Instant::now();
        s0.copy(&whole(&small1), &whole(&small0)).unwrap();
        s0.record(&*e).unwrap();
        let (tx, rx) = mpsc::channel();
        e.notify(Box::new(move || {
            let _ = tx.send(Instant::now());
        }))
        .unwrap();
        let done = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        if i >= 20 {
            notify_us.push((done - t).as_secs_f64() * 1e6);
        }
        let t = Instant::now();
        s0.copy(&whole(&small1), &whole(&small0)).unwrap();
        s0.synchronize().unwrap();
        if i >= 20 {
            sync_us.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    notify_us.sort_by(f64::total_cmp);
    sync_us.sort_by(f64::total_cmp);
    eprintln!(
        "4 KiB copy 0->{dst_dev}: issue+notify median {:.1} us (p90 {:.1}); issue+synchronize median {:.1} us",
        notify_us[notify_us.len() / 2],
        notify_us[notify_us.len() * 9 / 10],
        sync_us[sync_us.len() / 2]
    );

    // Re-recording while a notification is pending still notifies about the first recording.
    let big = b.allocate(MemoryLocation::Device(0), 64 << 20).unwrap();
    let s_other = b.create_stream(0, StreamPriority::Normal).unwrap();
    s0.fill_u32(&whole(&big), 1).unwrap();
    s0.record(&*e).unwrap();
    let fired = Arc::new(AtomicUsize::new(0));
    let f3 = fired.clone();
    e.notify(Box::new(move || {
        f3.fetch_add(1, Ordering::SeqCst);
    }))
    .unwrap();
    s_other.record(&*e).unwrap();
    s0.synchronize().unwrap();
    s_other.synchronize().unwrap();
    let t = Instant::now();
    while fired.load(Ordering::SeqCst) == 0 && t.elapsed() < Duration::from_secs(5) {
        std::thread::yield_now();
    }
    assert_eq!(fired.load(Ordering::SeqCst), 1);

    // Timing events.
    let t0 = b.create_event(0, EventKind::Timing).unwrap();
    let t1 = b.create_event(0, EventKind::Timing).unwrap();
    s0.record(&*t0).unwrap();
    s0.fill_u32(&whole(&big), 2).unwrap();
    s0.record(&*t1).unwrap();
    t1.synchronize().unwrap();
    let ms = t1.elapsed_ms_since(&*t0).unwrap();
    assert!(ms >= 0.0, "elapsed {ms}");
    eprintln!(
        "64 MiB fill: {ms:.3} ms ({:.0} GB/s)",
        64.0 * 1.048576e6 / (ms as f64 * 1e6)
    );
}
