//! Links that spread their packets over several copy streams
//! ([`LinkConfig::with_copy_streams`]): data, order and end-of-stream as with one stream, the
//! send's event covering the copies on every stream, buffers reused on another stream only
//! after their previous copy, abandonment without hangs, and bad settings refused.

mod common;

use std::time::Duration;

use common::{TIMEOUT, data, drain, new_link, numbered, pairs, read, reassemble, source};
use groute_core::testing::test_contexts;
use groute_core::{CopyIssuer, Endpoint, Error, Event, Link, LinkConfig};

const SEEDS: &[u64] = &[4, 23];

/// Packet size, receive buffers, copy streams, issuer: buffer counts below, equal to and not
/// a multiple of the stream count, so that buffers get reused on other streams; copies
/// pulled by the destination and pushed by the source.
const CONFIGS: &[(usize, usize, usize, CopyIssuer)] = &[
    (4, 2, 2, CopyIssuer::Destination),
    (7, 3, 2, CopyIssuer::Destination),
    (5, 4, 3, CopyIssuer::Destination),
    (3, 1, 4, CopyIssuer::Destination),
    (6, 8, 4, CopyIssuer::Destination),
    (5, 4, 3, CopyIssuer::Source),
    (3, 1, 2, CopyIssuer::Source),
];

/// Every endpoint pair, with copies pulled and with copies pushed.
fn pairs_both_ways(ctx: &groute_core::Context) -> Vec<(Endpoint, Endpoint, CopyIssuer)> {
    pairs(ctx)
        .into_iter()
        .flat_map(|(s, d)| [(s, d, CopyIssuer::Destination), (s, d, CopyIssuer::Source)])
        .collect()
}

fn config((packet, buffers, streams, issuer): (usize, usize, usize, CopyIssuer)) -> LinkConfig {
    LinkConfig::new(packet, buffers)
        .with_copy_streams(streams)
        .with_copy_issuer(issuer)
}

#[test]
fn packets_arrive_in_send_order_with_all_data_then_end_of_stream() {
    for tc in test_contexts(2, SEEDS) {
        let ctx = &tc.context;
        for (src, dst) in pairs(ctx) {
            for &c in CONFIGS {
                let link = new_link(ctx, src, dst, config(c));
                let inputs: Vec<Vec<u32>> =
                    (0..6).map(|m| data(1 + (m * 13) % 50, m as u32)).collect();
                let mut sent = Vec::new();
                for (m, input) in inputs.iter().enumerate() {
                    let (seg, ready) = source(ctx, src, input);
                    sent.push(link.send(seg.with_metadata(m as u64), ready).unwrap());
                }
                link.shutdown();
                let got = drain(ctx, &link.receiver());
                for s in sent {
                    s.wait().unwrap();
                }
                // One sender: delivery order is send order, packet by packet.
                let order: Vec<(u64, usize)> = got.iter().map(|g| (g.metadata, g.offset)).collect();
                let mut want_order = Vec::new();
                for (m, input) in inputs.iter().enumerate() {
                    for offset in (0..input.len()).step_by(c.0) {
                        want_order.push((m as u64, offset));
                    }
                }
                assert_eq!(order, want_order, "{} {src}->{dst} {c:?}", tc.label);
                let want = numbered(inputs);
                assert_eq!(reassemble(&got), want, "{} {src}->{dst} {c:?}", tc.label);
                assert!(link.receive_timeout(TIMEOUT).unwrap().is_none());
            }
        }
    }
}

#[test]
fn the_send_event_covers_the_copies_on_every_stream() {
    for tc in test_contexts(2, SEEDS) {
        let ctx = &tc.context;
        for (src, dst, issuer) in pairs_both_ways(ctx) {
            // 12 packets in 12 buffers over 4 streams: every packet is held until the send's
            // event has completed, and then every one of them must be complete too.
            let link = new_link(ctx, src, dst, config((5, 12, 4, issuer)));
            let input = data(60, 3);
            let (seg, ready) = source(ctx, src, &input);
            let sent = link.send(seg, ready).unwrap();
            let held: Vec<_> = (0..12)
                .map(|_| link.receive_timeout(TIMEOUT).unwrap().unwrap())
                .collect();
            sent.wait().unwrap();
            for p in &held {
                assert!(
                    p.ready().is_complete().unwrap(),
                    "{} {src}->{dst} {issuer:?}: packet at {} not done after the send's event",
                    tc.label,
                    p.segment().offset()
                );
            }
            let mut got = vec![u32::MAX; input.len()];
            for p in held {
                let offset = p.segment().offset();
                let values = read(ctx, &p);
                got[offset..offset + values.len()].copy_from_slice(&values);
                p.release(Event::ready());
            }
            assert_eq!(got, input, "{} {src}->{dst}", tc.label);
        }
    }
}

#[test]
fn a_buffer_reused_on_another_stream_waits_for_the_copy_before() {
    // One buffer and three streams: every packet lands in the same buffer from a different
    // stream than the one before. Every other packet is dropped unread the moment it
    // arrives, its copy possibly still running: the next copy (on another stream) must not
    // overtake it, or the packet read next would show the dropped packet's data.
    for tc in test_contexts(2, SEEDS) {
        let ctx = &tc.context;
        for (src, dst, issuer) in pairs_both_ways(ctx) {
            let link = new_link(ctx, src, dst, config((4, 1, 3, issuer)));
            let input = data(96, 11);
            let (seg, ready) = source(ctx, src, &input);
            let _sent = link.send(seg, ready).unwrap();
            link.shutdown();
            let mut read_packets = 0;
            let mut index = 0;
            while let Some(p) = link.receive_timeout(TIMEOUT).unwrap() {
                if index % 2 == 1 {
                    let offset = p.segment().offset();
                    assert_eq!(
                        read(ctx, &p),
                        input[offset..offset + 4],
                        "{} {src}->{dst} {issuer:?}: packet at {offset}",
                        tc.label
                    );
                    read_packets += 1;
                }
                drop(p);
                index += 1;
            }
            assert_eq!((index, read_packets), (24, 12), "{}", tc.label);
        }
    }
}

#[test]
fn dropping_the_receivers_mid_message_fails_or_finishes_every_send_without_hanging() {
    for tc in test_contexts(2, SEEDS) {
        let ctx = &tc.context;
        for (src, dst) in pairs(ctx) {
            let link = new_link(ctx, src, dst, config((4, 2, 3, CopyIssuer::Destination)));
            let sender = link.sender();
            let mut futures = Vec::new();
            for m in 0..4 {
                let (seg, ready) = source(ctx, src, &data(40, m));
                futures.push(sender.send(seg, ready).unwrap());
            }
            // Take two packets, then drop every receiver handle while they are held.
            let held: Vec<_> = (0..2)
                .map(|_| link.receive_timeout(TIMEOUT).unwrap().unwrap())
                .collect();
            drop(link);
            drop(held);
            let (done_tx, done_rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let outcomes: Vec<bool> = futures.into_iter().map(|f| f.get().is_ok()).collect();
                let _ = done_tx.send(outcomes);
            });
            let outcomes = done_rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("{} {src}->{dst}: a send future hung", tc.label));
            assert!(
                outcomes.iter().any(|ok| !ok),
                "{} {src}->{dst}: 160 elements cannot all fit in 2 buffers of an abandoned link",
                tc.label
            );
            sender.shutdown();
        }
    }
}

#[test]
fn several_senders_spread_over_streams_keep_per_sender_order() {
    const SENDERS: u64 = 3;
    const MESSAGES: u64 = 8;
    for tc in test_contexts(2, SEEDS) {
        let ctx = &tc.context;
        for (src, dst) in pairs(ctx) {
            let link = new_link(ctx, src, dst, config((5, 3, 2, CopyIssuer::Destination)));
            let expected =
                |t: u64, m: u64| data(1 + ((t * 11 + m * 3) % 23) as usize, (t * 50 + m) as u32);
            let senders: Vec<_> = (0..SENDERS)
                .map(|t| {
                    let (tx, ctx) = (link.sender(), ctx.clone());
                    std::thread::spawn(move || {
                        let futures: Vec<_> = (0..MESSAGES)
                            .map(|m| {
                                let (seg, ready) = source(&ctx, src, &expected(t, m));
                                tx.send(seg.with_metadata(t * 100 + m), ready).unwrap()
                            })
                            .collect();
                        futures.into_iter().for_each(|f| f.wait().unwrap());
                    })
                })
                .collect();
            let rx = link.receiver();
            let ctx_rx = ctx.clone();
            let receiver = std::thread::spawn(move || drain(&ctx_rx, &rx));
            for s in senders {
                s.join().unwrap();
            }
            link.shutdown();
            let messages = reassemble(&receiver.join().unwrap());
            for t in 0..SENDERS {
                let mine: Vec<(u64, Vec<u32>)> = messages
                    .iter()
                    .filter(|(m, _)| m / 100 == t)
                    .cloned()
                    .collect();
                let want: Vec<(u64, Vec<u32>)> = (0..MESSAGES)
                    .map(|m| (t * 100 + m, expected(t, m)))
                    .collect();
                assert_eq!(mine, want, "{} {src}->{dst}: sender {t}", tc.label);
            }
        }
    }
}

#[test]
fn copy_streams_out_of_range_are_refused_naming_the_setting() {
    let ctx = groute_core::Context::host(1).unwrap();
    let (h, d) = (Endpoint::Host, Endpoint::Device(groute_core::DeviceId(0)));
    for streams in [0, LinkConfig::MAX_COPY_STREAMS + 1] {
        let bad = LinkConfig::new(4, 2).with_copy_streams(streams);
        match Link::<u32>::new(&ctx, h, d, bad) {
            Err(Error::InvalidSetting { setting, .. }) => assert_eq!(setting, "copy_streams"),
            other => panic!("copy_streams = {streams}: expected InvalidSetting, got {other:?}"),
        }
    }
    let most = LinkConfig::new(4, 2).with_copy_streams(LinkConfig::MAX_COPY_STREAMS);
    assert!(Link::<u32>::new(&ctx, h, d, most).is_ok());
}
