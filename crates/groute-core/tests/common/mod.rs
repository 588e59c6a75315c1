//! Helpers shared by the link and router test suites (generic over the backend).
#![allow(dead_code)]

use std::time::Duration;

use groute_core::{
    Context, DeviceId, Endpoint, Event, Link, LinkConfig, LinkReceiver, PendingSegment, Router,
    Segment,
};

/// Long enough for any jittered run, short enough that a deadlock fails instead of hanging.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The host endpoint.
pub const HOST: Endpoint = Endpoint::Host;
/// Device 0's endpoint.
pub const D0: Endpoint = Endpoint::Device(DeviceId(0));
/// Device 1's endpoint.
pub const D1: Endpoint = Endpoint::Device(DeviceId(1));

/// A link of `u32` from `src` to `dst` with `config` (panics where it cannot be built).
pub fn new_link(ctx: &Context, src: Endpoint, dst: Endpoint, config: LinkConfig) -> Link<u32> {
    Link::<u32>::new(ctx, src, dst, config).unwrap()
}

/// A segment holding `data` on `endpoint`, and the event after which it is valid.
pub fn source(ctx: &Context, endpoint: Endpoint, data: &[u32]) -> (Segment<u32>, Event) {
    match endpoint {
        Endpoint::Host => {
            let buf = ctx.host_buffer_from(data).unwrap();
            (Segment::new(buf, endpoint), Event::ready())
        }
        Endpoint::Device(d) => {
            let dev = ctx.device(d).unwrap();
            let buf = dev.upload(data).unwrap();
            let ready = dev.stream().record().unwrap();
            (Segment::new(buf, endpoint), ready)
        }
        Endpoint::Router(_) => panic!("segments never live on a router"),
    }
}

/// The data of a received packet (on any backend: device memory is downloaded).
pub fn read(ctx: &Context, packet: &PendingSegment<u32>) -> Vec<u32> {
    match packet.segment().endpoint() {
        Endpoint::Device(d) => {
            let dev = ctx.device(d).unwrap();
            dev.stream().wait(packet.ready()).unwrap();
            dev.download(packet.segment().data()).unwrap()
        }
        _ => packet.to_vec().unwrap().expect("host-addressable packet"),
    }
}

/// One received packet, read out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Got {
    pub offset: usize,
    pub total: usize,
    pub metadata: u64,
    pub data: Vec<u32>,
}

/// Receives until end of stream, reading and releasing every packet; panics on a timeout.
pub fn drain(ctx: &Context, rx: &LinkReceiver<u32>) -> Vec<Got> {
    let mut out = Vec::new();
    loop {
        match rx.receive_timeout(TIMEOUT) {
            Ok(Some(p)) => {
                let data = read(ctx, &p);
                let s = p.segment();
                out.push(Got {
                    offset: s.offset(),
                    total: s.total(),
                    metadata: s.metadata(),
                    data,
                });
                p.release(Event::ready());
            }
            Ok(None) => return out,
            Err(e) => panic!("receive timed out: {e}"),
        }
    }
}

/// Reassembles received packets into messages by metadata (in order of first arrival).
pub fn reassemble(got: &[Got]) -> Vec<(u64, Vec<u32>)> {
    let mut msgs: Vec<(u64, Vec<u32>, usize)> = Vec::new();
    for g in got {
        let i = match msgs.iter().position(|m| m.0 == g.metadata) {
            Some(i) => i,
            None => {
                msgs.push((g.metadata, vec![u32::MAX; g.total], 0));
                msgs.len() - 1
            }
        };
        msgs[i].1[g.offset..g.offset + g.data.len()].copy_from_slice(&g.data);
        msgs[i].2 += g.data.len();
    }
    msgs.into_iter()
        .map(|(m, data, n)| {
            assert_eq!(
                n,
                data.len(),
                "message {m}: every element received exactly once"
            );
            (m, data)
        })
        .collect()
}

/// `messages` as [`reassemble`] gives them back: each with its index as metadata.
pub fn numbered(messages: Vec<Vec<u32>>) -> Vec<(u64, Vec<u32>)> {
    messages
        .into_iter()
        .enumerate()
        .map(|(m, data)| (m as u64, data))
        .collect()
}

/// Sends `inputs[d]` from device `d` into `router`'s input `d` (metadata `d`), then shuts that
/// input down.
pub fn send_once_from_each_device(ctx: &Context, router: &Router<u32>, inputs: &[Vec<u32>]) {
    for (d, input) in inputs.iter().enumerate() {
        let (seg, ready) = source(ctx, Endpoint::Device(DeviceId(d)), input);
        let s = router.sender(d).unwrap();
        let _sent = s.send(seg.with_metadata(d as u64), ready).unwrap();
        s.shutdown();
    }
}

/// The endpoint pairs a link suite runs over: host -> device, device -> device, device -> host.
pub fn pairs(ctx: &Context) -> Vec<(Endpoint, Endpoint)> {
    let d = |i: usize| Endpoint::Device(groute_core::DeviceId(i % ctx.num_devices()));
    let mut v = vec![(Endpoint::Host, d(0)), (d(1), Endpoint::Host)];
    if ctx.num_devices() > 1 {
        v.push((d(0), d(1)));
    }
    v
}

/// Pseudo-random data.
pub fn data(len: usize, seed: u32) -> Vec<u32> {
    (0..len as u32)
        .map(|i| i.wrapping_mul(2_654_435_761).wrapping_add(seed))
        .collect()
}
