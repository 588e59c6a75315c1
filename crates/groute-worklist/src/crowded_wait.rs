//! [`crowded_wait`]: how long a thread that polls for work waits between polls when the
//! pollers crowd the cores.

use std::time::Duration;

/// `base`, times how many times over `pollers` exceed `per_core` per core of `cores` (at
/// least once: rounded up, from the whole pollers per core). Where pollers outnumber the
/// cores several times, each poll takes a core from a thread with work; polling less often
/// keeps their polls together at about `per_core` per core and `base`. Up to `per_core` per
/// core the wait stays `base`: longer would only delay the pollers that wait for items.
pub(crate) fn crowded_wait(
    base: Duration,
    pollers: usize,
    cores: usize,
    per_core: usize,
) -> Duration {
    let factor = (pollers / cores.max(1)).div_ceil(per_core.max(1)).max(1);
    base.saturating_mul(u32::try_from(factor).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_grows_only_where_pollers_crowd_the_cores() {
        let us = |pollers, cores, per_core| {
            crowded_wait(Duration::from_micros(50), pollers, cores, per_core).as_micros()
        };
        assert_eq!(us(1, 2, 4), 50);
        assert_eq!(us(8, 2, 4), 50);
        assert_eq!(us(10, 2, 4), 100);
        assert_eq!(us(256, 2, 4), 1600);
        assert_eq!(us(256, 64, 4), 50);
        assert_eq!(us(3, 0, 4), 50);
        // The drivers' rule: half the drivers per core (32 on 2 cores: 8 times).
        assert_eq!(us(32, 2, 2), 400);
        assert_eq!(us(4, 2, 2), 50);
    }
}
