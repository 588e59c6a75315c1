//! Every pump thread exits once its link or router is shut down or dropped.
//!
//! One test in its own binary, so that the process-wide thread count is not disturbed by
//! other tests.

mod common;

use std::time::{Duration, Instant};

use common::{D0, HOST, data, drain, new_link, source};
use groute_core::{Context, DeviceId, Endpoint, Event, Link, LinkConfig, Router, Scatter};

fn pump_threads() -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(|t| t.ok())
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .filter(|name| name.starts_with("groute-pump"))
        .count()
}

/// Waits (a thread names itself once it runs) until exactly `n` pump threads exist.
fn wait_for_pumps(n: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while pump_threads() != n {
        assert!(
            Instant::now() < deadline,
            "{} pump threads running, expected {n}",
            pump_threads()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn wait_for_no_pumps() {
    wait_for_pumps(0);
}

#[test]
fn pump_threads_exit_on_shutdown_and_on_drop() {
    if !std::path::Path::new("/proc/self/task").exists() {
        eprintln!("SKIPPED: no /proc/self/task to count threads on this platform");
        return;
    }
    let ctx = Context::host(3).unwrap();
    // 1. Shut down, drained, then dropped.
    let link = new_link(&ctx, HOST, D0, LinkConfig::new(4, 2));
    let (seg, ready) = source(&ctx, Endpoint::Host, &data(50, 1));
    let _sent = link.send(seg, ready).unwrap();
    wait_for_pumps(1);
    link.shutdown();
    drain(&ctx, &link.receiver());
    drop(link);
    wait_for_no_pumps();

    // 2. Dropped with data queued and packets undelivered (all buffers full).
    let link = Link::<u32>::new(
        &ctx,
        Endpoint::Device(DeviceId(1)),
        Endpoint::Device(DeviceId(2)),
        LinkConfig::new(2, 2),
    )
    .unwrap();
    for _ in 0..5 {
        let (seg, ready) = source(&ctx, Endpoint::Device(DeviceId(1)), &data(100, 2));
        let _sent = link.send(seg, ready).unwrap();
    }
    let held = link.receive_blocking();
    drop(link);
    drop(held);
    wait_for_no_pumps();

    // 3. A router dropped without shutdown, one receiver holding a packet until after.
    let outputs: Vec<Endpoint> = (0..3).map(|d| Endpoint::Device(DeviceId(d))).collect();
    let router = Router::<u32>::new(
        &ctx,
        Scatter::new(),
        &[Endpoint::Host],
        &outputs,
        LinkConfig::new(4, 2),
    )
    .unwrap();
    wait_for_pumps(3);
    let sender = router.sender(0).unwrap();
    for _ in 0..6 {
        let (seg, ready) = source(&ctx, Endpoint::Host, &data(16, 3));
        let _sent = sender.send(seg, ready).unwrap();
    }
    let rx = router.receiver(1).unwrap();
    drop(router);
    drop(sender);
    while let Some(p) = rx.receive_timeout(Duration::from_secs(10)).unwrap() {
        p.release(Event::ready());
    }
    drop(rx);
    wait_for_no_pumps();
}
