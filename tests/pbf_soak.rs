//! PBF soak: hundreds of jittered runs (seeded, reproducible) with varied device counts,
//! chunk and packet sizes, all equal to the sequential filter.

use std::time::{Duration, Instant};

use groute::pbf::{self, PbfConfig, Predicate};
use groute::prelude::*;

/// One run's parameters, derived from its index (so a failure names a reproducible case).
fn case(i: u64) -> (usize, usize, PbfConfig, u64) {
    let mix =
        |k: u64| pbf::generate_input(1, i.wrapping_mul(31).wrapping_add(k)).unwrap()[0] as usize;
    let devices = 1 + (i as usize % 8);
    let size = [0, 1, 7, 500, 1_000, 2_345, 4_000][mix(1) % 7];
    let chunk = [1, 3, 16, 64, 100, 257, 1_000][mix(2) % 7];
    let config = PbfConfig {
        chunk,
        scatter_buffers: 1 + mix(3) % 3,
        gather_packet: [1, 5, 32, 128, 1_000][mix(4) % 5],
        gather_buffers: 1 + mix(5) % 4,
        predicate: Predicate {
            modulus: 1 + (mix(6) % 5) as u32,
            residue: 0,
        },
    };
    let config = PbfConfig {
        predicate: Predicate {
            residue: (mix(7) as u32) % config.predicate.modulus,
            ..config.predicate
        },
        ..config
    };
    (devices, size, config, i)
}

fn run_case(i: u64) {
    let (devices, size, config, seed) = case(i);
    let ctx = Context::builder()
        .devices(devices)
        .backend(BackendChoice::Host)
        .jitter(Some(Jitter {
            seed,
            max_delay: Duration::from_micros(50),
            delay_percent: 30,
        }))
        .build()
        .unwrap();
    let input = pbf::generate_input(size, seed).unwrap();
    let outcome = pbf::run(&ctx, &input, &config)
        .unwrap_or_else(|e| panic!("case {i} ({devices} devices, size {size}, {config:?}): {e}"));
    assert_eq!(
        outcome.output,
        pbf::sequential_filter(&input, config.predicate),
        "case {i} ({devices} devices, size {size}, {config:?})"
    );
    let processed: usize = outcome.per_device.iter().map(|d| d.elements).sum();
    assert_eq!(
        processed, size,
        "case {i}: every element processed exactly once"
    );
}

#[test]
fn pbf_soak_240_jittered_runs_match_the_sequential_filter() {
    const RUNS: u64 = 240;
    let start = Instant::now();
    // Two runners, each with its own cases; every case is reproducible from its index.
    let runners: Vec<_> = (0..2u64)
        .map(|r| {
            std::thread::spawn(move || {
                for i in (r..RUNS).step_by(2) {
                    run_case(i);
                }
            })
        })
        .collect();
    for r in runners {
        r.join().unwrap();
    }
    eprintln!(
        "{RUNS} jittered PBF runs in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn pbf_rejects_bad_settings_with_errors() {
    let ctx = Context::host(1).unwrap();
    let input = pbf::generate_input(10, 1).unwrap();
    for bad in [
        PbfConfig {
            chunk: 0,
            ..PbfConfig::default()
        },
        PbfConfig {
            scatter_buffers: 0,
            ..PbfConfig::default()
        },
        PbfConfig {
            gather_packet: 0,
            ..PbfConfig::default()
        },
        PbfConfig {
            predicate: Predicate {
                modulus: 0,
                residue: 0,
            },
            ..PbfConfig::default()
        },
        PbfConfig {
            predicate: Predicate {
                modulus: 3,
                residue: 3,
            },
            ..PbfConfig::default()
        },
    ] {
        assert!(
            matches!(
                pbf::run(&ctx, &input, &bad),
                Err(Error::InvalidSetting { .. })
            ),
            "{bad:?}"
        );
    }
    assert!(matches!(Context::host(0), Err(Error::NoDevices)));
}

#[test]
fn pbf_balances_load_across_devices() {
    let ctx = Context::host(4).unwrap();
    let input = pbf::generate_input(40_000, 3).unwrap();
    let config = PbfConfig {
        chunk: 500,
        ..PbfConfig::default()
    };
    let outcome = pbf::run(&ctx, &input, &config).unwrap();
    assert!(pbf::matches_reference(&input, &outcome.output, &config));
    assert_eq!(outcome.per_device.len(), 4);
    let busy = outcome.per_device.iter().filter(|d| d.chunks > 0).count();
    assert!(
        busy >= 2,
        "first-available scatter should use several devices: {:?}",
        outcome.per_device
    );
}

#[test]
fn input_size_beyond_memory_is_an_error_naming_the_size_flag() {
    // More bytes than any address space: the reservation fails on every machine.
    let e = pbf::generate_input(usize::MAX / 2, 1).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e:?}");
    assert!(e.to_string().contains("--size"), "{e}");
}
