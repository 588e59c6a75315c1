//! Local worklist throughput: producers x batch size.
//!
//! `P` producer threads each push `ITEMS / P` items in batches of `B` into one
//! [`local_worklist`] (the MPSC circular buffer of every device's worker) while the single
//! consumer pops batches of up to `B` until it has every item. A producer that finds the
//! buffer full (an overflow error, nothing lost) yields and retries: the bench measures the
//! sustained push/pop rate of a bounded worklist, in items per second.

#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use groute::worklist::local_worklist;

/// Items moved per iteration.
const ITEMS: usize = 1 << 20;
/// Worklist capacity: a fraction of `ITEMS`, so producers and consumer overlap.
const CAPACITY: usize = 1 << 16;
const PRODUCERS: [usize; 4] = [1, 2, 4, 8];
const BATCHES: [usize; 4] = [1, 32, 256, 4096];

/// Moves `ITEMS` items through a fresh worklist with `producers` threads and batches of
/// `batch`; returns the sum of the popped items (checked against the pushed ones).
fn push_pop(producers: usize, batch: usize) -> u64 {
    let (tx, mut rx) = local_worklist::<u32>(CAPACITY, "bench capacity").expect("worklist");
    let per = ITEMS / producers;
    std::thread::scope(|scope| {
        for p in 0..producers {
            let tx = tx.clone();
            scope.spawn(move || {
                let items: Vec<u32> = (0..per as u32).map(|i| i + (p * per) as u32).collect();
                for chunk in items.chunks(batch) {
                    while tx.push_slice(chunk).is_err() {
                        std::thread::yield_now();
                    }
                }
            });
        }
        let mut out = Vec::with_capacity(batch);
        let (mut got, mut sum) = (0usize, 0u64);
        while got < per * producers {
            out.clear();
            let n = rx.pop_into(batch, &mut out);
            if n == 0 {
                std::thread::yield_now();
                continue;
            }
            got += n;
            sum += out.iter().map(|&x| u64::from(x)).sum::<u64>();
        }
        sum
    })
}

fn throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("local_worklist_push_pop");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(2));
    for &producers in &PRODUCERS {
        let items = (ITEMS / producers * producers) as u64;
        group.throughput(Throughput::Elements(items));
        let expected = items * (items - 1) / 2;
        for &batch in &BATCHES {
            group.bench_with_input(
                BenchmarkId::new(format!("{producers}_producers"), format!("batch_{batch}")),
                &(producers, batch),
                |b, &(p, batch)| {
                    b.iter(|| {
                        let sum = push_pop(p, batch);
                        assert_eq!(sum, expected, "every pushed item is popped once");
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = throughput
}
criterion_main!(benches);
