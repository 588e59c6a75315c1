//! Every routing policy and assignment mode against plain in-memory receivers (no device):
//! the policies' route tables and the multiplexer's claim logic.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use groute_core::router::{
    Assignment, Broadcast, Gather, MessageInfo, Multiplexer, OneWayReduction, OutputQueue,
    PointToPoint, Ring, Route, RoutingPolicy, Scatter, Take, TreeReduction,
};

const INFO: MessageInfo = MessageInfo {
    len: 8,
    metadata: 0,
    offset: 0,
    total: 8,
};

fn table(policy: &dyn RoutingPolicy, inputs: usize, outputs: usize) -> Vec<Route> {
    (0..inputs)
        .map(|i| policy.route(i, &INFO, outputs))
        .collect()
}

/// Takes everything queued on each output (non-blocking), by output.
fn take_all<M>(outputs: &[OutputQueue<M>]) -> Vec<Vec<M>> {
    outputs
        .iter()
        .map(|q| {
            let mut v = Vec::new();
            while let Take::Message(m) = q.try_take() {
                v.push(m);
            }
            v
        })
        .collect()
}

#[test]
fn point_to_point_routes_input_i_to_output_i() {
    assert_eq!(
        table(&PointToPoint, 3, 3),
        (0..3).map(Route::to).collect::<Vec<_>>()
    );
    let (mux, outs) = Multiplexer::<usize>::new(3, 3);
    for i in 0..3 {
        mux.dispatch(&PointToPoint.route(i, &INFO, 3), 10 + i)
            .unwrap();
    }
    assert_eq!(take_all(&outs), vec![vec![10], vec![11], vec![12]]);
}

#[test]
fn scatter_offers_to_all_outputs_and_exactly_one_takes_each_message() {
    let r = Scatter::new().route(0, &INFO, 4);
    assert_eq!(r, Route::availability(vec![0, 1, 2, 3]));
    let (mux, outs) = Multiplexer::<u32>::new(1, 4);
    for m in 0..100 {
        mux.dispatch(&r, m).unwrap();
    }
    // Output 2 takes everything; the others find only stale duplicates.
    let mut taken = Vec::new();
    while let Take::Message(m) = outs[2].try_take() {
        taken.push(m);
    }
    assert_eq!(taken, (0..100).collect::<Vec<_>>());
    mux.close_input();
    for (j, q) in outs.iter().enumerate() {
        assert_eq!(
            q.try_take(),
            Take::Finished,
            "output {j} drops the stale duplicates"
        );
    }
}

#[test]
fn scatter_under_contention_delivers_every_message_exactly_once() {
    const N: u32 = 20_000;
    let (mux, outs) = Multiplexer::<u32>::new(2, 4);
    let mux = Arc::new(mux);
    let route = Scatter::new().route(0, &INFO, 4);
    let consumers: Vec<_> = outs
        .into_iter()
        .map(|q| {
            std::thread::spawn(move || {
                let mut got = Vec::new();
                let deadline = Instant::now() + Duration::from_secs(30);
                loop {
                    assert!(Instant::now() < deadline, "consumer timed out");
                    match q.take_timeout(Duration::from_millis(100)) {
                        Take::Message(m) => got.push(m),
                        Take::Finished => return got,
                        Take::Empty | Take::Woken => {}
                    }
                }
            })
        })
        .collect();
    let producers: Vec<_> = (0..2)
        .map(|p| {
            let mux = Arc::clone(&mux);
            let route = route.clone();
            std::thread::spawn(move || {
                for m in (p * N / 2)..((p + 1) * N / 2) {
                    mux.dispatch(&route, m).unwrap();
                }
                mux.close_input();
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    let per_consumer: Vec<Vec<u32>> = consumers.into_iter().map(|c| c.join().unwrap()).collect();
    let mut all: Vec<u32> = per_consumer.iter().flatten().copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..N).collect::<Vec<_>>());
}

#[test]
fn priority_gives_the_message_to_the_first_waiting_output() {
    let r = Scatter::prioritized().route(0, &INFO, 3);
    assert_eq!(r.assignment, Assignment::Priority);
    assert_eq!(r.destinations, vec![0, 1, 2]);
    let (mux, outs) = Multiplexer::<u32>::new(1, 3);
    let outs: Vec<Arc<OutputQueue<u32>>> = outs.into_iter().map(Arc::new).collect();
    // Output 2 blocks waiting for work; outputs 0 and 1 are busy (not waiting).
    let q2 = Arc::clone(&outs[2]);
    let waiter = std::thread::spawn(move || q2.take_timeout(Duration::from_secs(30)));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !outs[2].is_waiting() {
        assert!(Instant::now() < deadline, "the waiter never blocked");
        std::thread::sleep(Duration::from_millis(1));
    }
    mux.dispatch(&r, 7).unwrap();
    assert_eq!(
        waiter.join().unwrap(),
        Take::Message(7),
        "the waiting output gets it directly"
    );
    // Nobody waiting: falls back to availability (offered to all).
    mux.dispatch(&r, 8).unwrap();
    assert_eq!(outs[1].try_take(), Take::Message(8));
    assert_eq!(outs[0].try_take(), Take::Empty);
    assert_eq!(outs[2].try_take(), Take::Empty);
}

#[test]
fn priority_prefers_the_earlier_of_two_waiting_outputs() {
    let (mux, outs) = Multiplexer::<u32>::new(1, 3);
    let outs: Vec<Arc<OutputQueue<u32>>> = outs.into_iter().map(Arc::new).collect();
    let waiters: Vec<_> = [1usize, 2]
        .into_iter()
        .map(|j| {
            let q = Arc::clone(&outs[j]);
            std::thread::spawn(move || q.take_timeout(Duration::from_millis(500)))
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(outs[1].is_waiting() && outs[2].is_waiting()) {
        assert!(Instant::now() < deadline, "waiters never blocked");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(!outs[0].is_waiting());
    mux.dispatch(&Route::priority(vec![0, 2, 1]), 5).unwrap();
    let results: Vec<Take<u32>> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
    assert_eq!(
        results,
        vec![Take::Empty, Take::Message(5)],
        "route order: 0 (busy), then 2"
    );
}

#[test]
fn gather_sends_every_input_to_output_zero() {
    assert!(table(&Gather, 5, 1).iter().all(|r| *r == Route::to(0)));
    let (mux, outs) = Multiplexer::<usize>::new(5, 1);
    for i in 0..5 {
        mux.dispatch(&Gather.route(i, &INFO, 1), i).unwrap();
        mux.close_input();
    }
    assert_eq!(take_all(&outs), vec![vec![0, 1, 2, 3, 4]]);
    assert_eq!(outs[0].try_take(), Take::Finished);
}

#[test]
fn broadcast_gives_every_output_a_copy() {
    let r = Broadcast.route(0, &INFO, 3);
    assert_eq!(r, Route::broadcast(vec![0, 1, 2]));
    let (mux, outs) = Multiplexer::<String>::new(1, 3);
    mux.dispatch(&r, "x".to_string()).unwrap();
    mux.dispatch(&r, "y".to_string()).unwrap();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        take_all(&outs),
        vec![s(&["x", "y"]), s(&["x", "y"]), s(&["x", "y"])]
    );
}

#[test]
fn ring_sends_input_i_to_output_i_plus_one() {
    for n in 1..=8 {
        let t = table(&Ring, n, n);
        for (i, r) in t.iter().enumerate() {
            assert_eq!(*r, Route::to((i + 1) % n), "ring of {n}");
        }
    }
    // A token passed around a ring of 5 comes back after 5 hops.
    let (mux, outs) = Multiplexer::<u32>::new(5, 5);
    mux.dispatch(&Ring.route(0, &INFO, 5), 0).unwrap();
    let mut at = 1;
    for hop in 1..=5 {
        let Take::Message(h) = outs[at].try_take() else {
            panic!("token lost at hop {hop}");
        };
        assert_eq!(h, hop - 1);
        if hop < 5 {
            mux.dispatch(&Ring.route(at, &INFO, 5), h + 1).unwrap();
            at = (at + 1) % 5;
        }
    }
    assert_eq!(at, 0);
}

/// Runs a reduction of `n` participants' values through the multiplexer: each participant
/// sends the sum of its value and its children's messages to where the policy says; returns
/// what the sink (last output) received.
fn reduce(
    policy: &dyn RoutingPolicy,
    n: usize,
    children: impl Fn(usize) -> Vec<usize>,
) -> Vec<u64> {
    let (mux, outs) = Multiplexer::<u64>::new(n, n);
    // Leaves first: process participants from the highest index down (parents < children).
    for i in (0..n).rev() {
        let mut sum = (i as u64 + 1) * 10;
        for _ in children(i) {
            match outs[i].try_take() {
                Take::Message(v) => sum += v,
                other => panic!("participant {i} missing a child's message: {other:?}"),
            }
        }
        mux.dispatch(&policy.route(i, &INFO, n), sum).unwrap();
        mux.close_input();
    }
    let sink = &outs[n - 1];
    let mut got = Vec::new();
    if n > 1 {
        // The sink's own slot also served participant n-1's children (none: it is a leaf).
        while let Take::Message(v) = sink.try_take() {
            got.push(v);
        }
    } else if let Take::Message(v) = sink.try_take() {
        got.push(v);
    }
    got
}

#[test]
fn one_way_reduction_is_a_chain_into_the_sink() {
    let t = table(&OneWayReduction, 4, 4);
    assert_eq!(
        t,
        vec![Route::to(3), Route::to(0), Route::to(1), Route::to(2)]
    );
    for n in 1..=8 {
        let total: u64 = (1..=n as u64).map(|v| v * 10).sum();
        let got = reduce(&OneWayReduction, n, |i| {
            if i + 1 < n { vec![i + 1] } else { vec![] }
        });
        assert_eq!(got, vec![total], "chain of {n}");
    }
}

#[test]
fn tree_reduction_is_a_binomial_tree_into_the_sink() {
    let t = table(&TreeReduction, 8, 8);
    let parents: Vec<usize> = t.iter().map(|r| r.destinations[0]).collect();
    assert_eq!(parents, vec![7, 0, 0, 2, 0, 4, 4, 6]);
    assert_eq!(TreeReduction::children(0, 8), vec![1, 2, 4]);
    // Depth is at most ceil(log2 n).
    for n in 1..=16usize {
        let depth = (0..n)
            .map(|mut i| {
                let mut d = 0;
                while let Some(p) = TreeReduction::parent(i) {
                    i = p;
                    d += 1;
                }
                d
            })
            .max()
            .unwrap();
        let most_bits = (0..n).map(|i| i.count_ones() as usize).max().unwrap();
        assert_eq!(
            depth, most_bits,
            "tree of {n}: a node's depth is its number of set bits"
        );
        assert!(depth <= (n as f64).log2().ceil() as usize, "tree of {n}");
    }
    for n in 1..=8 {
        let total: u64 = (1..=n as u64).map(|v| v * 10).sum();
        let got = reduce(&TreeReduction, n, |i| TreeReduction::children(i, n));
        assert_eq!(got, vec![total], "tree of {n}");
    }
}

#[test]
fn a_closure_is_a_policy() {
    let by_metadata =
        |_: usize, m: &MessageInfo, outputs: usize| Route::to(m.metadata as usize % outputs);
    let (mux, outs) = Multiplexer::<u64>::new(1, 3);
    for md in 0..6u64 {
        let info = MessageInfo {
            metadata: md,
            ..INFO
        };
        mux.dispatch(&by_metadata.route(0, &info, 3), md).unwrap();
    }
    assert_eq!(take_all(&outs), vec![vec![0, 3], vec![1, 4], vec![2, 5]]);
}

#[test]
fn invalid_routes_give_the_message_back() {
    let (mux, _outs) = Multiplexer::<u32>::new(1, 2);
    let e = mux
        .dispatch(&Route::availability(Vec::new()), 1)
        .unwrap_err();
    assert_eq!(e.message, 1);
    let e = mux.dispatch(&Route::to(2), 2).unwrap_err();
    assert_eq!(e.message, 2);
    assert!(e.error.to_string().contains("output 2"), "{}", e.error);
}

#[test]
fn messages_to_outputs_that_are_gone_come_back() {
    let (mux, outs) = Multiplexer::<u32>::new(1, 2);
    drop(outs);
    for route in [
        Route::to(0),
        Route::availability(vec![0, 1]),
        Route::broadcast(vec![0, 1]),
    ] {
        let e = mux.dispatch(&route, 3).unwrap_err();
        assert_eq!(e.message, 3);
    }
    // One output left: availability still places the message there.
    let (mux, mut outs) = Multiplexer::<u32>::new(1, 2);
    drop(outs.remove(0));
    mux.dispatch(&Route::availability(vec![0, 1]), 4).unwrap();
    assert_eq!(outs[0].try_take(), Take::Message(4));
}

#[test]
fn queues_finish_only_after_every_input_closed_and_drained() {
    let (mux, outs) = Multiplexer::<u32>::new(2, 1);
    mux.dispatch(&Route::to(0), 1).unwrap();
    mux.close_input();
    assert_eq!(outs[0].try_take(), Take::Message(1));
    assert_eq!(outs[0].try_take(), Take::Empty, "one input still open");
    mux.dispatch(&Route::to(0), 2).unwrap();
    mux.close_input();
    assert!(!outs[0].is_finished());
    assert_eq!(outs[0].try_take(), Take::Message(2));
    assert_eq!(outs[0].try_take(), Take::Finished);
    assert!(outs[0].is_finished());
    // A blocked consumer is woken by the last close.
    let (mux, mut outs) = Multiplexer::<u32>::new(1, 1);
    let q = outs.pop().unwrap();
    let t = std::thread::spawn(move || q.take_timeout(Duration::from_secs(30)));
    std::thread::sleep(Duration::from_millis(20));
    mux.close_input();
    assert_eq!(t.join().unwrap(), Take::Finished);
}

#[test]
fn stale_duplicates_do_not_accumulate_work() {
    // Availability across 3 outputs, all consumed by output 0: the other queues are drained
    // of duplicates on inspection without yielding anything.
    let (mux, outs) = Multiplexer::<u32>::new(1, 3);
    let seen = AtomicUsize::new(0);
    for m in 0..50 {
        mux.dispatch(&Route::availability(vec![0, 1, 2]), m)
            .unwrap();
        if let Take::Message(_) = outs[0].try_take() {
            seen.fetch_add(1, Ordering::Relaxed);
        }
    }
    assert_eq!(seen.load(Ordering::Relaxed), 50);
    assert_eq!(outs[1].try_take(), Take::Empty);
    assert_eq!(outs[2].try_take(), Take::Empty);
}
