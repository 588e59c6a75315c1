//! Injected faults on the host backend: a device that stops, a device that panics, a link
//! whose copies stall. Every wait on the faulty device ends with an error naming it within
//! a bounded time, and the context shuts down without hanging.

use std::time::{Duration, Instant};

use groute_core::{
    BackendChoice, Context, Device, DeviceId, Endpoint, Error, FaultPlan, Link, LinkConfig,
    Segment, StreamPriority,
};

/// The stall timeout the tests set.
const STALL: Duration = Duration::from_secs(1);
/// What a test may take, context teardown included.
const BOUND: Duration = Duration::from_secs(15);

fn context(devices: usize, faults: FaultPlan) -> Context {
    Context::builder()
        .devices(devices)
        .backend(BackendChoice::Host)
        .stall_timeout(Some(STALL))
        .faults(faults)
        .build()
        .unwrap()
}

/// Runs `body` on a fresh context and checks that it and the teardown end within [`BOUND`].
fn bounded(devices: usize, faults: FaultPlan, body: impl FnOnce(&Context)) {
    let start = Instant::now();
    let ctx = context(devices, faults);
    body(&ctx);
    drop(ctx);
    let took = start.elapsed();
    assert!(took < BOUND, "the faulty run took {took:?}");
}

/// Devices 0 and 1 of `ctx`.
fn devices_0_and_1(ctx: &Context) -> (&Device, &Device) {
    (
        ctx.device(DeviceId(0)).unwrap(),
        ctx.device(DeviceId(1)).unwrap(),
    )
}

/// Waits for everything enqueued on device `device`'s stream.
fn synchronize(ctx: &Context, device: usize) -> Result<(), Error> {
    ctx.device(DeviceId(device)).unwrap().stream().synchronize()
}

fn launch_noops(ctx: &Context, device: usize, n: usize) {
    let stream = ctx.device(DeviceId(device)).unwrap().stream();
    for _ in 0..n {
        stream.launch_host(|| {}).unwrap();
    }
}

#[test]
fn a_stopped_device_fails_the_wait_with_a_stall_naming_it() {
    bounded(2, FaultPlan::new().stop_device(1, 3), |ctx| {
        launch_noops(ctx, 1, 10);
        let start = Instant::now();
        let err = synchronize(ctx, 1).unwrap_err();
        assert!(
            matches!(err, Error::DeviceStalled { device: 1, timeout } if timeout == STALL),
            "{err}"
        );
        let took = start.elapsed();
        assert!(took >= STALL && took < STALL * 5, "detected after {took:?}");
        // The other device still works.
        launch_noops(ctx, 0, 10);
        synchronize(ctx, 0).unwrap();
    });
}

#[test]
fn a_long_kernel_is_not_a_stall() {
    bounded(1, FaultPlan::new(), |ctx| {
        let stream = ctx.device(DeviceId(0)).unwrap().stream();
        stream
            .launch_host(|| std::thread::sleep(STALL * 3))
            .unwrap();
        stream.synchronize().unwrap();
    });
}

#[test]
fn a_stream_waiting_on_a_long_kernel_of_another_device_is_not_a_stall() {
    bounded(2, FaultPlan::new(), |ctx| {
        let (d0, d1) = devices_0_and_1(ctx);
        d0.stream()
            .launch_host(|| std::thread::sleep(STALL * 3))
            .unwrap();
        let ev = d0.stream().record().unwrap();
        d1.stream().wait(&ev).unwrap();
        d1.stream().launch_host(|| {}).unwrap();
        d1.stream().synchronize().unwrap();
    });
}

#[test]
fn a_device_that_panics_fails_every_later_wait_naming_it() {
    bounded(2, FaultPlan::new().panic_device(1, 2), |ctx| {
        let d1 = ctx.device(DeviceId(1)).unwrap();
        launch_noops(ctx, 1, 5);
        let err = d1.stream().synchronize().unwrap_err();
        assert!(
            matches!(err, Error::DeviceFailed { device: 1, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("device 1 failed"), "{err}");
        // Work enqueued later is discarded; its waits fail at once.
        launch_noops(ctx, 1, 1);
        let start = Instant::now();
        let err = d1.stream().record().unwrap().wait().unwrap_err();
        assert!(
            matches!(err, Error::DeviceFailed { device: 1, .. }),
            "{err}"
        );
        assert!(
            start.elapsed() < STALL,
            "the wait on a failed device blocked"
        );
    });
}

#[test]
fn a_device_waiting_on_a_failed_device_fails_naming_the_failed_one() {
    bounded(2, FaultPlan::new().panic_device(1, 0), |ctx| {
        let (d0, d1) = devices_0_and_1(ctx);
        d1.stream().launch_host(|| {}).unwrap();
        let ev = d1.stream().record().unwrap();
        d0.stream().wait(&ev).unwrap();
        d0.stream().launch_host(|| {}).unwrap();
        let err = d0.stream().synchronize().unwrap_err();
        assert!(
            matches!(err, Error::DeviceFailed { device: 1, .. }),
            "{err}"
        );
    });
}

#[test]
fn a_kernel_that_panics_fails_its_device_with_the_message() {
    bounded(2, FaultPlan::new(), |ctx| {
        let d0 = ctx.device(DeviceId(0)).unwrap();
        d0.stream().launch_host(|| panic!("kernel bug 42")).unwrap();
        let err = d0.stream().synchronize().unwrap_err();
        match &err {
            Error::DeviceFailed { device: 0, reason } => {
                assert!(reason.contains("kernel bug 42"), "{err}")
            }
            _ => panic!("expected DeviceFailed on device 0, got {err}"),
        }
        // Device 1 is unaffected.
        launch_noops(ctx, 1, 3);
        synchronize(ctx, 1).unwrap();
    });
}

#[test]
fn a_stalled_copy_fails_the_wait_for_it_with_a_stall() {
    bounded(2, FaultPlan::new().stall_copies(0, 1), |ctx| {
        let (d0, d1) = devices_0_and_1(ctx);
        let src = d0.upload(&[1u32, 2, 3]).unwrap();
        let dst = d1.alloc::<u32>(3).unwrap();
        let copy = d1.new_stream(StreamPriority::Normal).unwrap();
        let err = copy
            .copy_and_record(&dst, &src)
            .unwrap()
            .wait()
            .unwrap_err();
        assert!(
            matches!(err, Error::DeviceStalled { device: 1, .. }),
            "{err}"
        );
        // The other direction and the device's other streams still work.
        let back = d0.alloc::<u32>(3).unwrap();
        d0.stream()
            .copy_and_record(&back, &dst)
            .unwrap()
            .wait()
            .unwrap();
        d1.stream().synchronize().unwrap();
    });
}

#[test]
fn a_link_whose_copies_stall_fails_the_receive_with_a_stall() {
    bounded(2, FaultPlan::new().stall_copies(0, 1), |ctx| {
        let (src, dst) = (Endpoint::Device(DeviceId(0)), Endpoint::Device(DeviceId(1)));
        let link = Link::<u32>::new(ctx, src, dst, LinkConfig::new(4, 2)).unwrap();
        let d0 = ctx.device(DeviceId(0)).unwrap();
        let buf = d0.upload(&[7u32; 10]).unwrap();
        let ready = d0.stream().record().unwrap();
        let sent = link.send(Segment::new(buf, src), ready).unwrap();
        let packet = link
            .receiver()
            .receive_timeout(BOUND)
            .expect("the link delivers the packet's descriptor")
            .expect("a packet");
        let err = packet.wait().unwrap_err();
        assert!(err.faulty_device().is_some(), "{err}");
        assert!(matches!(err, Error::DeviceStalled { .. }), "{err}");
        drop(packet);
        link.shutdown();
        drop(sent);
    });
}

#[test]
fn no_faults_and_no_timeout_still_run() {
    let ctx = Context::builder()
        .devices(2)
        .backend(BackendChoice::Host)
        .stall_timeout(None)
        .build()
        .unwrap();
    launch_noops(&ctx, 0, 5);
    synchronize(&ctx, 0).unwrap();
    let zero = Context::builder()
        .backend(BackendChoice::Host)
        .stall_timeout(Some(Duration::ZERO))
        .build();
    assert!(matches!(zero, Err(Error::InvalidSetting { .. })));
}
