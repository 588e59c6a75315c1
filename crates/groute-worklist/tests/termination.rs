//! The termination counter under concurrency: zero is reached exactly once, at the end.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use crossbeam::channel;
use groute_worklist::TerminationCounter;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Workers pass tokens around with random delays; a token at depth `d < 6` spawns up to 3
/// children. `truth` counts tokens that exist, updated eagerly; when the counter reports
/// zero, `truth` must be zero, and no token may be processed afterwards.
fn run_once(seed: u64, workers: usize) {
    let term = Arc::new(TerminationCounter::new());
    let truth = Arc::new(AtomicI64::new(0));
    let processed = Arc::new(AtomicU64::new(0));
    let late = Arc::new(AtomicU64::new(0));
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..workers).map(|_| channel::unbounded::<u32>()).unzip();
    truth.fetch_add(1, Ordering::SeqCst);
    term.report(1, 0);
    txs[0].send(0).unwrap();
    std::thread::scope(|s| {
        for (w, rx) in rxs.into_iter().enumerate() {
            let txs = txs.clone();
            let (term, truth, processed, late) = (&term, &truth, &processed, &late);
            s.spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(seed * 100 + w as u64);
                loop {
                    if term.is_done() {
                        return;
                    }
                    let Ok(depth) = rx.recv_timeout(Duration::from_millis(1)) else {
                        continue;
                    };
                    if term.is_done() {
                        late.fetch_add(1, Ordering::SeqCst);
                    }
                    processed.fetch_add(1, Ordering::Relaxed);
                    if rng.random_range(0..4) == 0 {
                        std::thread::sleep(Duration::from_micros(rng.random_range(0..200)));
                    }
                    let children = if depth < 6 {
                        rng.random_range(0..=3u32)
                    } else {
                        0
                    };
                    truth.fetch_add(i64::from(children), Ordering::SeqCst);
                    // Report before the children become visible; retire this token in the same update.
                    let ended = term.report(u64::from(children), 1);
                    truth.fetch_sub(1, Ordering::SeqCst);
                    for _ in 0..children {
                        let to = rng.random_range(0..txs.len());
                        txs[to].send(depth + 1).unwrap();
                    }
                    if ended {
                        assert_eq!(
                            truth.load(Ordering::SeqCst),
                            0,
                            "zero reached with tokens alive"
                        );
                        return;
                    }
                }
            });
        }
    });
    assert!(term.is_done());
    assert_eq!(term.outstanding(), 0);
    assert_eq!(late.load(Ordering::SeqCst), 0);
    assert_eq!(truth.load(Ordering::SeqCst), 0);
    assert!(processed.load(Ordering::Relaxed) >= 1);
}

#[test]
fn count_reaches_zero_only_at_the_true_end_under_jitter() {
    for seed in 0..40 {
        run_once(seed, 1 + (seed as usize % 6));
    }
}

#[test]
#[should_panic(expected = "went negative")]
fn retiring_an_unreported_item_is_caught() {
    let t = TerminationCounter::new();
    t.report(0, 1);
}

#[test]
fn zero_is_reported_once() {
    let t = TerminationCounter::new();
    assert!(!t.report(2, 0));
    assert!(!t.report(0, 1));
    assert!(t.report(0, 1));
    assert!(t.is_done());
}
