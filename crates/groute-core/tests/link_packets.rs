//! Packetization: how sends of every size are split into packets and delivered.

mod common;

use common::{
    D0, D1, Got, HOST, TIMEOUT, data, drain, new_link, numbered, pairs, reassemble, source,
};
use groute_core::testing::test_contexts;
use groute_core::{Context, DeviceId, Endpoint, Error, Event, Link, LinkConfig, Segment};

const SEEDS: &[u64] = &[3, 11];

#[test]
fn empty_send_delivers_nothing_and_resolves_at_once() {
    for tc in test_contexts(2, SEEDS) {
        for (src, dst) in pairs(&tc.context) {
            let link = new_link(&tc.context, src, dst, LinkConfig::new(4, 2));
            let (seg, ready) = source(&tc.context, src, &[]);
            link.send(seg, ready).unwrap().wait().unwrap();
            link.shutdown();
            assert!(
                drain(&tc.context, &link.receiver()).is_empty(),
                "{}",
                tc.label
            );
        }
    }
}

/// Sends `input` from `src` over `link` as one message (metadata `metadata`), shuts the link
/// down and returns every packet received; the send has completed by then.
fn send_and_drain(
    ctx: &Context,
    link: &Link<u32>,
    src: Endpoint,
    input: &[u32],
    metadata: u64,
) -> Vec<Got> {
    let (seg, ready) = source(ctx, src, input);
    let sent = link.send(seg.with_metadata(metadata), ready).unwrap();
    link.shutdown();
    let got = drain(ctx, &link.receiver());
    sent.wait().unwrap();
    got
}

#[test]
fn one_element_is_one_packet() {
    for tc in test_contexts(2, SEEDS) {
        for (src, dst) in pairs(&tc.context) {
            let link = new_link(&tc.context, src, dst, LinkConfig::new(4, 2));
            let got = send_and_drain(&tc.context, &link, src, &[77], 5);
            let want = vec![Got {
                offset: 0,
                total: 1,
                metadata: 5,
                data: vec![77],
            }];
            assert_eq!(got, want, "{} {src}->{dst}", tc.label);
        }
    }
}

#[test]
fn length_not_a_multiple_of_the_packet_ends_with_a_short_packet() {
    for tc in test_contexts(2, SEEDS) {
        for (src, dst) in pairs(&tc.context) {
            let link = new_link(&tc.context, src, dst, LinkConfig::new(4, 2));
            let input = data(10, 1);
            let got = send_and_drain(&tc.context, &link, src, &input, 9);
            let shape: Vec<(usize, usize, usize, u64)> = got
                .iter()
                .map(|g| (g.offset, g.data.len(), g.total, g.metadata))
                .collect();
            assert_eq!(shape, vec![(0, 4, 10, 9), (4, 4, 10, 9), (8, 2, 10, 9)]);
            assert_eq!(reassemble(&got), vec![(9, input)], "{}", tc.label);
        }
    }
}

#[test]
fn message_much_larger_than_all_buffers_pipelines_through_them() {
    for tc in test_contexts(2, SEEDS) {
        for (src, dst) in pairs(&tc.context) {
            // 3 buffers of 7 elements carry 10_000 elements: ~1429 packets, each buffer
            // reused hundreds of times.
            let link = new_link(&tc.context, src, dst, LinkConfig::new(7, 3));
            let input = data(10_000, 2);
            let got = send_and_drain(&tc.context, &link, src, &input, 0);
            assert_eq!(got.len(), 10_000usize.div_ceil(7));
            assert!(
                got.windows(2).all(|w| w[0].offset + 7 == w[1].offset),
                "packets in order"
            );
            assert_eq!(reassemble(&got), vec![(0, input)], "{}", tc.label);
        }
    }
}

#[test]
fn messages_arrive_in_send_order_with_their_metadata() {
    for tc in test_contexts(2, SEEDS) {
        for (src, dst) in pairs(&tc.context) {
            let link = new_link(&tc.context, src, dst, LinkConfig::new(5, 2));
            let inputs: Vec<Vec<u32>> = (0..6).map(|m| data(3 + 4 * m, m as u32)).collect();
            let mut futures = Vec::new();
            for (m, input) in inputs.iter().enumerate() {
                let (seg, ready) = source(&tc.context, src, input);
                futures.push(link.send(seg.with_metadata(m as u64), ready).unwrap());
            }
            link.shutdown();
            let got = drain(&tc.context, &link.receiver());
            for f in futures {
                f.wait().unwrap();
            }
            let want = numbered(inputs);
            assert_eq!(reassemble(&got), want, "{}", tc.label);
        }
    }
}

#[test]
fn a_sub_segment_keeps_its_offsets_in_the_original_message() {
    for tc in test_contexts(2, SEEDS) {
        let ctx = &tc.context;
        let link = new_link(ctx, HOST, D0, LinkConfig::new(4, 2));
        let input = data(20, 4);
        let (seg, ready) = source(ctx, Endpoint::Host, &input);
        let _sent = link.send(seg.sub(6, 15).unwrap(), ready).unwrap();
        link.shutdown();
        let got = drain(ctx, &link.receiver());
        let offsets: Vec<usize> = got.iter().map(|g| g.offset).collect();
        assert_eq!(offsets, vec![6, 10, 14]);
        assert!(got.iter().all(|g| g.total == 20));
        let flat: Vec<u32> = got.iter().flat_map(|g| g.data.clone()).collect();
        assert_eq!(flat, input[6..15].to_vec());
    }
}

#[test]
fn the_source_may_be_reused_once_the_send_event_completes() {
    for tc in test_contexts(1, SEEDS) {
        let ctx = &tc.context;
        let link = new_link(ctx, HOST, D0, LinkConfig::new(3, 8));
        let input = data(12, 5);
        let (seg, ready) = source(ctx, Endpoint::Host, &input);
        let buffer = seg.data().clone();
        link.send(seg, ready).unwrap().wait().unwrap();
        // SAFETY: the send's event has completed, so no copy reads the buffer any more.
        unsafe { buffer.as_host_slice_mut() }.unwrap().fill(0);
        link.shutdown();
        let got = drain(ctx, &link.receiver());
        assert_eq!(reassemble(&got), vec![(0, input)], "{}", tc.label);
    }
}

#[test]
fn a_segment_from_the_wrong_endpoint_is_refused_and_given_back() {
    let ctx = groute_core::Context::host(2).unwrap();
    let link = new_link(&ctx, D0, HOST, LinkConfig::new(4, 2));
    let (seg, ready) = source(&ctx, Endpoint::Host, &[1, 2, 3]);
    let err = link.send(seg.with_metadata(8), ready).unwrap_err();
    assert!(matches!(err.error(), Error::InvalidSetting { .. }), "{err}");
    assert_eq!(err.segment().metadata(), 8);
    assert_eq!(err.segment().len(), 3);
}

#[test]
fn self_loops_and_bad_settings_are_errors() {
    let ctx = groute_core::Context::host(1).unwrap();
    let d0 = Endpoint::Device(DeviceId(0));
    assert!(matches!(
        Link::<u32>::new(&ctx, d0, d0, LinkConfig::default()),
        Err(Error::SelfLoop(e)) if e == d0
    ));
    assert!(matches!(
        Link::<u32>::new(&ctx, Endpoint::Host, Endpoint::Host, LinkConfig::default()),
        Err(Error::SelfLoop(Endpoint::Host))
    ));
    for bad in [
        LinkConfig::new(0, 2),
        LinkConfig::new(4, 0),
        LinkConfig::new(usize::MAX, 2),
    ] {
        assert!(matches!(
            Link::<u32>::new(&ctx, Endpoint::Host, d0, bad),
            Err(Error::InvalidSetting { .. })
        ));
    }
    assert!(matches!(
        Link::<u32>::new(
            &ctx,
            Endpoint::Host,
            Endpoint::Device(DeviceId(3)),
            LinkConfig::default()
        ),
        Err(Error::NoSuchDevice {
            device: 3,
            count: 1
        })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_is_awaitable() {
    for tc in test_contexts(2, SEEDS) {
        let ctx = &tc.context;
        let link = new_link(ctx, D0, D1, LinkConfig::new(4, 2));
        let input = data(30, 6);
        let (seg, ready) = source(ctx, Endpoint::Device(DeviceId(0)), &input);
        let sent = link.send(seg, ready).unwrap();
        let receiving = {
            let link = link.clone();
            let ctx = ctx.clone();
            tokio::spawn(async move {
                let mut out = Vec::new();
                while let Some(p) = link.receive().await {
                    out.extend(common::read(&ctx, &p));
                    p.release(Event::ready());
                }
                out
            })
        };
        let event = sent.await.unwrap();
        event.completion().await.unwrap();
        link.shutdown();
        let out = tokio::time::timeout(TIMEOUT, receiving)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(out, input, "{}", tc.label);
    }
}

#[test]
fn a_send_from_a_segment_built_by_hand_keeps_its_total() {
    // A packet-shaped segment (offset/total set by an upstream link) is forwarded as is.
    let ctx = groute_core::Context::host(1).unwrap();
    let link = new_link(&ctx, HOST, D0, LinkConfig::new(2, 2));
    let buf = ctx.host_buffer_from(&[1u32, 2, 3]).unwrap();
    let _sent = link
        .send(
            Segment::packet(buf, Endpoint::Host, 100, 1000).unwrap(),
            Event::ready(),
        )
        .unwrap();
    link.shutdown();
    let got = drain(&ctx, &link.receiver());
    let shape: Vec<(usize, usize)> = got.iter().map(|g| (g.offset, g.total)).collect();
    assert_eq!(shape, vec![(100, 1000), (102, 1000)]);
}
