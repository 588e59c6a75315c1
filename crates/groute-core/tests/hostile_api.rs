//! API misuse that must be a typed error: a packet ending past its message, a route back to
//! the sender's own endpoint, a context of no devices or of more than it holds.

mod common;

use groute_core::router::{Ring, Router};
use groute_core::{Context, DeviceId, Endpoint, Error, LinkConfig, MAX_DEVICES, Segment};

use common::source;

#[test]
fn packet_ending_past_its_message_is_an_out_of_bounds_error() {
    let ctx = Context::host(1).unwrap();
    let buf = ctx.host_buffer_from(&[1u32, 2, 3]).unwrap();
    let e = Segment::packet(buf.clone(), Endpoint::Host, 999, 1000).unwrap_err();
    assert!(
        matches!(
            e,
            Error::OutOfBounds {
                start: 999,
                end: 1002,
                len: 1000
            }
        ),
        "{e:?}"
    );
    // An offset so large that the end wraps.
    let e = Segment::packet(buf.clone(), Endpoint::Host, usize::MAX, usize::MAX).unwrap_err();
    assert!(matches!(e, Error::OutOfBounds { .. }), "{e:?}");
    // A packet that ends exactly at the message's end is fine.
    let p = Segment::packet(buf, Endpoint::Host, 997, 1000).unwrap();
    assert_eq!((p.offset(), p.total(), p.len()), (997, 1000, 3));
}

#[test]
fn router_route_back_to_the_sending_endpoint_is_refused_with_the_segment() {
    let ctx = Context::host(1).unwrap();
    let d0 = [Endpoint::Device(DeviceId(0))];
    // With one device, the ring routes device 0's input to device 0's output.
    let router = Router::<u32>::new(&ctx, Ring, &d0, &d0, LinkConfig::new(4, 2)).unwrap();
    let (seg, ready) = source(&ctx, d0[0], &[1, 2, 3]);
    let e = router.sender(0).unwrap().send(seg, ready).unwrap_err();
    assert!(
        matches!(e.error(), Error::SelfLoop(ep) if *ep == d0[0]),
        "{e:?}"
    );
    assert_eq!(e.into_segment().len(), 3, "the segment comes back");
}

/// Zero devices and more than `MAX_DEVICES` are clear errors that name the flag and the
/// bound, before any thread starts; the bound itself is a context.
#[test]
fn device_counts_outside_one_to_the_maximum_are_refused() {
    assert!(matches!(Context::host(0), Err(Error::NoDevices)));
    for devices in [MAX_DEVICES + 1, 100_000, usize::MAX] {
        let err = Context::host(devices).expect_err("more devices than a context holds");
        assert!(
            matches!(err, Error::TooManyDevices { devices: d, max } if d == devices && max == MAX_DEVICES),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains(&format!("--devices {devices}"))
                && message.contains(&format!("pass {MAX_DEVICES} or fewer")),
            "{message}"
        );
        let built = Context::builder().devices(devices).build();
        assert!(matches!(built, Err(Error::TooManyDevices { .. })));
    }
    assert_eq!(
        Context::host(MAX_DEVICES).unwrap().num_devices(),
        MAX_DEVICES
    );
}
