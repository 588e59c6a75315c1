//! Routers over real links, on every backend: scatter, gather, broadcast, ring, reductions,
//! and the paper's wiring rules.

mod common;

use std::collections::BTreeMap;

use common::{
    TIMEOUT, data, drain, numbered, read, reassemble, send_once_from_each_device, source,
};
use groute_core::testing::test_contexts;
use groute_core::{
    Broadcast, DeviceId, Endpoint, Error, Event, Gather, LinkConfig, Ring, Router, Scatter,
    TreeReduction,
};

const SEEDS: &[u64] = &[21, 33];

fn devices(n: usize) -> Vec<Endpoint> {
    (0..n).map(|d| Endpoint::Device(DeviceId(d))).collect()
}

#[test]
fn scatter_from_the_host_delivers_every_chunk_to_exactly_one_device() {
    for tc in test_contexts(4, SEEDS) {
        let ctx = &tc.context;
        let router = Router::<u32>::new(
            ctx,
            Scatter::new(),
            &[Endpoint::Host],
            &devices(4),
            LinkConfig::new(8, 2),
        )
        .unwrap();
        let input = data(1000, 1);
        let (seg, _) = source(ctx, Endpoint::Host, &input);
        let sender = router.sender(0).unwrap();
        for (c, start) in (0..1000).step_by(50).enumerate() {
            let chunk = seg.sub(start, start + 50).unwrap().with_metadata(c as u64);
            let _sent = sender.send(chunk, Event::ready()).unwrap();
        }
        sender.shutdown();
        let receivers: Vec<_> = (0..4).map(|j| router.receiver(j).unwrap()).collect();
        drop(router);
        let handles: Vec<_> = receivers
            .into_iter()
            .map(|rx| {
                let ctx = ctx.clone();
                std::thread::spawn(move || drain(&ctx, &rx))
            })
            .collect();
        let mut chunks: BTreeMap<u64, Vec<(usize, Vec<u32>)>> = BTreeMap::new();
        let mut per_device = Vec::new();
        for h in handles {
            let got = h.join().unwrap();
            per_device.push(got.len());
            for g in got {
                chunks
                    .entry(g.metadata)
                    .or_default()
                    .push((g.offset, g.data));
            }
        }
        let mut out = Vec::new();
        for (_, mut parts) in chunks {
            parts.sort();
            out.extend(parts.into_iter().flat_map(|(_, d)| d));
        }
        assert_eq!(
            out, input,
            "{}: per-device packets {per_device:?}",
            tc.label
        );
    }
}

#[test]
fn gather_collects_from_every_device_to_the_host() {
    for tc in test_contexts(3, SEEDS) {
        let ctx = &tc.context;
        let router = Router::<u32>::new(
            ctx,
            Gather,
            &devices(3),
            &[Endpoint::Host],
            LinkConfig::new(5, 3),
        )
        .unwrap();
        let inputs: Vec<Vec<u32>> = (0..3).map(|d| data(17 + d, d as u32)).collect();
        send_once_from_each_device(ctx, &router, &inputs);
        let mut got = reassemble(&drain(ctx, &router.receiver(0).unwrap()));
        got.sort();
        let want = numbered(inputs);
        assert_eq!(got, want, "{}", tc.label);
    }
}

#[test]
fn broadcast_copies_to_every_output_and_the_send_event_joins_them() {
    for tc in test_contexts(3, SEEDS) {
        let ctx = &tc.context;
        let router = Router::<u32>::new(
            ctx,
            Broadcast,
            &[Endpoint::Host],
            &devices(3),
            LinkConfig::new(4, 4),
        )
        .unwrap();
        let input = data(30, 5);
        let (seg, ready) = source(ctx, Endpoint::Host, &input);
        let sent = router.sender(0).unwrap().send(seg, ready).unwrap();
        router.shutdown();
        let handles: Vec<_> = (0..3)
            .map(|j| {
                let (ctx, rx) = (ctx.clone(), router.receiver(j).unwrap());
                std::thread::spawn(move || reassemble(&drain(&ctx, &rx)))
            })
            .collect();
        sent.wait().unwrap();
        for h in handles {
            assert_eq!(h.join().unwrap(), vec![(0, input.clone())], "{}", tc.label);
        }
    }
}

#[test]
fn a_ring_passes_each_devices_data_to_the_next() {
    for tc in test_contexts(4, SEEDS) {
        let ctx = &tc.context;
        let n = 4;
        let router =
            Router::<u32>::new(ctx, Ring, &devices(n), &devices(n), LinkConfig::new(3, 2)).unwrap();
        let inputs: Vec<Vec<u32>> = (0..n).map(|d| data(10, d as u32)).collect();
        send_once_from_each_device(ctx, &router, &inputs);
        for d in 0..n {
            let got = reassemble(&drain(ctx, &router.receiver(d).unwrap()));
            let from = (d + n - 1) % n;
            assert_eq!(
                got,
                vec![(from as u64, data(10, from as u32))],
                "{}",
                tc.label
            );
        }
    }
}

#[test]
fn a_tree_reduction_sums_every_devices_value_at_the_host() {
    for tc in test_contexts(6, SEEDS) {
        let ctx = &tc.context;
        let n = 6;
        let mut outputs = devices(n - 1);
        outputs.push(Endpoint::Host);
        let router = Router::<u32>::new(
            ctx,
            TreeReduction,
            &devices(n),
            &outputs,
            LinkConfig::new(4, 2),
        )
        .unwrap();
        let (senders, receivers) = router.into_parts();
        // Each device: wait for its children's vectors, add its own, send to its parent.
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let ctx = ctx.clone();
                let sender = senders[i].clone();
                let rx = (i < n - 1).then(|| receivers[i].clone());
                std::thread::spawn(move || {
                    let mut acc = vec![i as u32 + 1; 4];
                    let mut expected = TreeReduction::children(i, n).len();
                    while expected > 0 {
                        let rx = rx.as_ref().unwrap();
                        let p = rx.receive_timeout(TIMEOUT).unwrap().unwrap();
                        for (a, v) in acc.iter_mut().zip(read(&ctx, &p)) {
                            *a += v;
                        }
                        p.release(Event::ready());
                        expected -= 1;
                    }
                    let (seg, ready) = source(&ctx, Endpoint::Device(DeviceId(i)), &acc);
                    sender.send(seg, ready).unwrap().wait().unwrap();
                    sender.shutdown();
                })
            })
            .collect();
        drop(senders);
        let at_host = drain(ctx, &receivers[n - 1]);
        for h in handles {
            h.join().unwrap();
        }
        let total = (1..=n as u32).sum::<u32>();
        assert_eq!(at_host.len(), 1);
        assert_eq!(at_host[0].data, vec![total; 4], "{}", tc.label);
    }
}

#[test]
fn duplicate_endpoints_and_self_loops_are_errors() {
    let ctx = groute_core::Context::host(2).unwrap();
    let d = devices(2);
    let dup_in = Router::<u32>::new(
        &ctx,
        Gather,
        &[d[0], d[0]],
        &[Endpoint::Host],
        LinkConfig::default(),
    );
    assert!(
        matches!(dup_in, Err(Error::DuplicateLink { src, dst: Endpoint::Router(_) }) if src == d[0])
    );
    let dup_out = Router::<u32>::new(
        &ctx,
        Scatter::new(),
        &[Endpoint::Host],
        &[d[1], d[1]],
        LinkConfig::default(),
    );
    assert!(
        matches!(dup_out, Err(Error::DuplicateLink { src: Endpoint::Router(_), dst }) if dst == d[1])
    );
    let none = Router::<u32>::new(
        &ctx,
        Scatter::new(),
        &[Endpoint::Host],
        &[],
        LinkConfig::default(),
    );
    assert!(matches!(none, Err(Error::InvalidSetting { .. })));
    let bad = Router::<u32>::new(
        &ctx,
        Scatter::new(),
        &[Endpoint::Host],
        &[Endpoint::Device(DeviceId(9))],
        LinkConfig::default(),
    );
    assert!(matches!(bad, Err(Error::NoSuchDevice { device: 9, .. })));
    // A router cannot feed itself.
    let r = Router::<u32>::new(
        &ctx,
        Scatter::new(),
        &[Endpoint::Host],
        &d,
        LinkConfig::new(4, 1),
    )
    .unwrap();
    let me = r.endpoint();
    let selfish = Router::<u32>::new(
        &ctx,
        Gather,
        &[me],
        &[Endpoint::Host],
        LinkConfig::default(),
    );
    assert!(matches!(selfish, Err(Error::InvalidSetting { .. })));
}

#[test]
fn a_policy_routing_out_of_range_refuses_the_send() {
    let ctx = groute_core::Context::host(2).unwrap();
    let to_nowhere = |_: usize, _: &groute_core::MessageInfo, _: usize| groute_core::Route::to(5);
    let router = Router::<u32>::new(
        &ctx,
        to_nowhere,
        &[Endpoint::Host],
        &devices(2),
        LinkConfig::new(4, 1),
    )
    .unwrap();
    let (seg, ready) = source(&ctx, Endpoint::Host, &[1, 2, 3]);
    let err = router.sender(0).unwrap().send(seg, ready).unwrap_err();
    assert!(matches!(err.error(), Error::InvalidSetting { .. }), "{err}");
    assert_eq!(err.segment().len(), 3);
}
