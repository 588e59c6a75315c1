//! The host local worklist: MPSC under many threads, prepend, overflow.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use groute_core::Error;
use groute_worklist::local_worklist;

#[test]
fn many_producers_one_consumer_lose_nothing_and_duplicate_nothing() {
    const PRODUCERS: u32 = 8;
    const PER: u32 = 20_000;
    let (producer, mut consumer) = local_worklist::<u32>(1024, "wl_capacity").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..PRODUCERS)
        .map(|t| {
            let p = producer.clone();
            std::thread::spawn(move || {
                let mut i = 0;
                while i < PER {
                    let k = ((i % 7) + 1).min(PER - i);
                    let items: Vec<u32> = (i..i + k).map(|x| t * PER + x).collect();
                    match p.push_slice(&items) {
                        Ok(()) => i += k,
                        Err(Error::CapacityExceeded { .. }) => std::thread::yield_now(),
                        Err(e) => panic!("{e}"),
                    }
                }
            })
        })
        .collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut prepended = 0u32;
    while seen.len() < (PRODUCERS * PER) as usize + prepended as usize {
        out.clear();
        consumer.pop_into(100, &mut out);
        for &x in &out {
            assert!(seen.insert(x), "item {x} popped twice");
        }
        // The consumer's own output goes in front (ids above the producers' range).
        if prepended < 1000
            && !out.is_empty()
            && consumer.prepend_slice(&[u32::MAX - prepended]).is_ok()
        {
            prepended += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    assert!(consumer.is_empty());
    assert_eq!(seen.len() as u32, PRODUCERS * PER + prepended);
}

#[test]
fn prepended_items_come_out_first_and_in_order() {
    let (producer, mut consumer) = local_worklist::<u32>(9, "wl_capacity").unwrap();
    producer.push_slice(&[10, 11]).unwrap();
    consumer.prepend_slice(&[1, 2, 3]).unwrap();
    let mut out = Vec::new();
    consumer.pop_into(2, &mut out);
    assert_eq!(out, [1, 2]);
    producer.push_slice(&[12, 13, 14, 15, 16]).unwrap();
    consumer.prepend_slice(&[0]).unwrap();
    out.clear();
    consumer.pop_into(100, &mut out);
    assert_eq!(out, [0, 3, 10, 11, 12, 13, 14, 15, 16]);
}

#[test]
fn overflow_is_an_error_naming_the_setting_and_loses_nothing() {
    let (producer, mut consumer) = local_worklist::<u32>(4, "wl_capacity (--wl-capacity)").unwrap();
    producer.push_slice(&[1, 2, 3]).unwrap();
    let err = producer.push_slice(&[4, 5]).unwrap_err();
    assert!(err.to_string().contains("--wl-capacity"), "{err}");
    let err = consumer.prepend_slice(&[0, 0]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::CapacityExceeded {
                capacity: 4,
                needed: 5,
                ..
            }
        ),
        "{err}"
    );
    let mut out = Vec::new();
    consumer.pop_into(10, &mut out);
    assert_eq!(out, [1, 2, 3]);
}

#[test]
fn zero_capacity_is_a_setting_error() {
    assert!(matches!(
        local_worklist::<u32>(0, "wl_capacity").unwrap_err(),
        Error::InvalidSetting { .. }
    ));
}
