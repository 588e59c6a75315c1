//! What a link packet costs in backend calls, counted with a [`CountingBackend`] over the host
//! backend. On CUDA every counted call is at least one driver call, so these tests pin the
//! hot path's driver-call budget: one copy and one event record per packet, and no stream
//! wait that stream order already implies.

use std::sync::Arc;
use std::time::Duration;

use groute_core::backend::counting::{CallCounts, CallSnapshot, CountingBackend};
use groute_core::backend::host::HostBackend;
use groute_core::{
    Context, DeviceId, Endpoint, Event, Gather, Link, LinkConfig, LinkReceiver, LinkSender, Router,
    Segment,
};

const TIMEOUT: Duration = Duration::from_secs(30);
const PACKET: usize = 1024;

fn counting_context(devices: usize) -> (Context, Arc<CallCounts>) {
    let backend = CountingBackend::new(Arc::new(HostBackend::new(devices, None).unwrap()));
    let counts = backend.counts();
    let ctx = Context::from_backend(Arc::new(backend), devices, None, None).unwrap();
    (ctx, counts)
}

fn device_message(ctx: &Context, device: usize, len: usize) -> Segment<u32> {
    let dev = ctx.device(DeviceId(device)).unwrap();
    let data: Vec<u32> = (0..len as u32).collect();
    let buf = dev.upload(&data).unwrap();
    dev.stream().synchronize().unwrap();
    Segment::new(buf, Endpoint::Device(DeviceId(device)))
}

fn dev0_to_dev1(ctx: &Context, num_buffers: usize) -> Link<u32> {
    dev0_to_dev1_on(ctx, num_buffers, 1)
}

fn dev0_to_dev1_on(ctx: &Context, num_buffers: usize, copy_streams: usize) -> Link<u32> {
    let (d0, d1) = (Endpoint::Device(DeviceId(0)), Endpoint::Device(DeviceId(1)));
    let config = LinkConfig::new(PACKET, num_buffers).with_copy_streams(copy_streams);
    Link::new(ctx, d0, d1, config).unwrap()
}

/// Sends `msg` and receives every packet, releasing each with `release(copy event)` (the
/// throughput benchmark's pattern releases with the copy event itself).
fn stream_through(
    sender: &LinkSender<u32>,
    receiver: &LinkReceiver<u32>,
    msg: &Segment<u32>,
    release: &dyn Fn(&Event) -> Event,
) {
    let sent = sender.send(msg.clone(), Event::ready()).unwrap();
    let mut received = 0;
    while received < msg.len() {
        let p = receiver.receive_timeout(TIMEOUT).unwrap().unwrap();
        received += p.segment().len();
        let done = release(p.ready());
        p.release(done);
    }
    sent.wait().unwrap();
}

/// One small message at a time, waited for on the host and released at once (the latency
/// benchmark's pattern).
fn ping(link: &Link<u32>, msg: &Segment<u32>) {
    let _sent = link.send(msg.clone(), Event::ready()).unwrap();
    let p = link.receive_timeout(TIMEOUT).unwrap().unwrap();
    p.wait().unwrap();
    p.release(Event::ready());
}

fn counted(counts: &CallCounts, f: impl FnOnce()) -> CallSnapshot {
    let before = counts.snapshot();
    f();
    counts.snapshot() - before
}

/// The calls of `packets` packets from device 0 to device 1 over `num_buffers` buffers and
/// `copy_streams` streams, each released with its copy event; checks one copy and one record
/// per packet.
fn streamed_calls(num_buffers: usize, copy_streams: usize, packets: usize) -> CallSnapshot {
    let (ctx, counts) = counting_context(2);
    let link = dev0_to_dev1_on(&ctx, num_buffers, copy_streams);
    let msg = device_message(&ctx, 0, PACKET * packets);
    let calls = counted(&counts, || {
        stream_through(&link.sender(), &link.receiver(), &msg, &|e| e.clone())
    });
    let n = packets as u64;
    assert_eq!((calls.copies, calls.records), (n, n), "{calls}");
    calls
}

#[test]
fn a_streamed_packet_costs_one_copy_one_record_and_no_stream_wait() {
    let calls = streamed_calls(4, 1, 64);
    assert_eq!(calls.stream_waits, 0, "{calls}");
}

#[test]
fn packets_spread_over_streams_cost_no_stream_wait_when_buffers_come_back_to_their_stream() {
    // 4 buffers over 2 streams: packet p uses buffer p % 4 and stream p % 2, so a buffer is
    // always reused on the stream of its previous copy.
    let calls = streamed_calls(4, 2, 64);
    assert_eq!(calls.stream_waits, 0, "{calls}");
}

#[test]
fn a_buffer_reused_on_another_stream_costs_one_wait_for_its_last_copy() {
    // 3 buffers over 2 streams: packet p + 3 reuses packet p's buffer on the other stream.
    let calls = streamed_calls(3, 2, 30);
    assert_eq!(calls.stream_waits, 30 - 3, "{calls}");
}

#[test]
fn a_small_message_costs_one_copy_one_record_and_no_stream_wait() {
    let (ctx, counts) = counting_context(2);
    let link = dev0_to_dev1(&ctx, 2);
    let msg = device_message(&ctx, 0, PACKET);
    let rounds = 32;
    let calls = counted(&counts, || (0..rounds).for_each(|_| ping(&link, &msg)));
    let n = rounds as u64;
    assert_eq!((calls.copies, calls.records), (n, n), "{calls}");
    assert_eq!(calls.stream_waits, 0, "{calls}");
}

#[test]
fn a_consumer_event_of_its_own_is_waited_for_before_the_buffer_is_reused() {
    let (ctx, counts) = counting_context(2);
    let link = dev0_to_dev1(&ctx, 2);
    let packets = 16;
    let msg = device_message(&ctx, 0, PACKET * packets);
    let consumer = ctx
        .device(DeviceId(1))
        .unwrap()
        .new_stream(Default::default());
    let consumer = consumer.unwrap();
    let calls = counted(&counts, || {
        stream_through(&link.sender(), &link.receiver(), &msg, &|ready| {
            consumer.wait(ready).unwrap();
            consumer.record().unwrap()
        })
    });
    // The consumer's own wait per packet, and the link's wait on every consumer event
    // before its buffer is written again (every packet after the first two).
    assert_eq!(calls.stream_waits, 2 * packets as u64 - 2, "{calls}");
}

#[test]
fn copies_from_another_source_stream_wait_for_the_buffers_last_copy() {
    // Copies to the host are issued per source device: a buffer last written from device 0
    // and next from device 1 must wait for the earlier copy explicitly.
    let (ctx, counts) = counting_context(2);
    let (d0, d1) = (Endpoint::Device(DeviceId(0)), Endpoint::Device(DeviceId(1)));
    let router = Router::<u32>::new(
        &ctx,
        Gather,
        &[d0, d1],
        &[Endpoint::Host],
        LinkConfig::new(PACKET, 1),
    )
    .unwrap();
    let receiver = router.receiver(0).unwrap();
    let msgs = [
        device_message(&ctx, 0, PACKET),
        device_message(&ctx, 1, PACKET),
    ];
    let rounds = 8;
    let calls = counted(&counts, || {
        for r in 0..rounds {
            let sender = router.sender(r % 2).unwrap();
            stream_through(&sender, &receiver, &msgs[r % 2], &|_| Event::ready());
        }
    });
    assert_eq!(calls.copies, rounds as u64, "{calls}");
    // Every round after the first switches source streams.
    assert_eq!(calls.stream_waits, rounds as u64 - 1, "{calls}");
}
