//! Seeded jitter: random delays and random stream interleaving on the host backend.

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Jitter settings for the host backend.
///
/// With jitter on, every executor picks the next stream to serve at random among those that
/// can make progress, and delays copies and kernels by a random time up to `max_delay`, so
/// the completion order of work on different streams and devices changes from run to run.
/// This shakes out control-plane races that a well-behaved schedule would hide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jitter {
    /// Seed of the per-device random generators (device `d` uses `seed + d`).
    pub seed: u64,
    /// Upper bound of one delay.
    pub max_delay: Duration,
    /// Probability, in percent, that an operation is delayed at all.
    pub delay_percent: u8,
}

impl Jitter {
    /// Jitter with the given seed, delays up to 200 us on 30% of operations.
    pub fn seeded(seed: u64) -> Self {
        Jitter {
            seed,
            max_delay: Duration::from_micros(200),
            delay_percent: 30,
        }
    }
}

/// The per-executor random state.
#[derive(Debug)]
pub(crate) struct JitterState {
    config: Jitter,
    rng: ChaCha8Rng,
}

impl JitterState {
    pub(crate) fn new(config: Jitter, device: usize) -> Self {
        JitterState {
            config,
            rng: ChaCha8Rng::seed_from_u64(config.seed.wrapping_add(device as u64)),
        }
    }

    /// Picks one of `n` (> 0) candidates.
    pub(crate) fn pick(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    /// A delay to apply before the next operation, if any.
    pub(crate) fn delay(&mut self) -> Option<Duration> {
        if self.rng.random_range(0..100u8) < self.config.delay_percent {
            let max = self.config.max_delay.as_nanos().max(1) as u64;
            Some(Duration::from_nanos(self.rng.random_range(0..max)))
        } else {
            None
        }
    }
}
