//! [`DeviceTimer`] on every backend: `None` on the host backend; on CUDA
//! (`GROUTE_TEST_CUDA=1`) the time of the work between start and end, bounded by the host
//! clock around it, and a marked end excluding what follows it.

use std::time::{Duration, Instant};

use groute_core::testing::test_contexts;
use groute_core::{BackendKind, Buffer, Context, DeviceId, DeviceTimer};

/// Words per fill: 64 MiB, enough for a measurable kernel on any GPU.
const WORDS: usize = 16 << 20;

/// Enqueues `fills` fills of `buffers[d]` on every device's stream.
fn enqueue_fills(ctx: &Context, buffers: &[Buffer<u32>], fills: u32) {
    for (device, buffer) in ctx.devices().iter().zip(buffers) {
        for i in 0..fills {
            device.stream().fill(buffer, i).expect("fill");
        }
    }
}

fn buffers(ctx: &Context) -> Vec<Buffer<u32>> {
    let words = if ctx.backend_kind() == BackendKind::Host {
        1024
    } else {
        WORDS
    };
    ctx.devices()
        .iter()
        .map(|d| d.alloc::<u32>(words).expect("alloc"))
        .collect()
}

#[test]
fn device_time_is_none_on_host_and_bounded_by_the_host_clock_on_cuda() {
    for tc in test_contexts(2, &[3]) {
        let ctx = &tc.context;
        let bufs = buffers(ctx);
        let host_clock = Instant::now();
        let timer = DeviceTimer::start(ctx).expect("start");
        enqueue_fills(ctx, &bufs, 20);
        let time = timer.stop().expect("stop");
        let wall = host_clock.elapsed();
        if ctx.backend_kind() == BackendKind::Host {
            assert_eq!(time, None, "{}", tc.label);
        } else {
            let t = time.expect("a GPU backend records device events");
            assert!(t > Duration::ZERO, "{}: {t:?}", tc.label);
            assert!(t <= wall, "{}: device {t:?} > host {wall:?}", tc.label);
        }
    }
}

#[test]
fn a_marked_end_excludes_the_work_after_it() {
    for tc in test_contexts(2, &[]) {
        let ctx = &tc.context;
        let bufs = buffers(ctx);
        // Marked at once on both devices, then the fills: the fills are not timed.
        let marked = DeviceTimer::start(ctx).expect("start");
        for d in 0..ctx.num_devices() {
            marked.mark_end(DeviceId(d)).expect("mark");
        }
        enqueue_fills(ctx, &bufs, 20);
        let marked = marked.stop().expect("stop");
        // The same fills timed.
        let unmarked = DeviceTimer::start(ctx).expect("start");
        enqueue_fills(ctx, &bufs, 20);
        let unmarked = unmarked.stop().expect("stop");
        if ctx.backend_kind() == BackendKind::Host {
            assert_eq!((marked, unmarked), (None, None), "{}", tc.label);
        } else {
            let (m, u) = (
                marked.expect("device events"),
                unmarked.expect("device events"),
            );
            assert!(m < u, "{}: marked {m:?} >= unmarked {u:?}", tc.label);
        }
        assert!(
            DeviceTimer::start(ctx)
                .expect("start")
                .mark_end(DeviceId(ctx.num_devices()))
                .is_err(),
            "{}: a device outside the context is an error",
            tc.label
        );
    }
}
