//! PageRank agrees with the power-iteration reference within the bound derived from epsilon
//! (crate docs: `|r - r*|_1 <= |res|_1 / (1 - alpha) <= n epsilon / (1 - alpha)`, and
//! `r <= r*`), on shipped and generated graphs, 1, 2, 3, 4 and 8 devices, block and METIS
//! partitions, plain and jittered host contexts.

mod common;

use common::{check, check_options, from_pairs, generated, options, sweep_divisors, with_hubs};
use groute_core::testing::{combinations, device_counts, pick, test_contexts};
use groute_graph::testing::small_of_each_family;
use groute_graph::{NoProgress, PartitionMethod, load_graph, partition_graph};
use groute_pagerank::{Driver, PageRankError, PageRankOptions, pagerank, pagerank_reference};

#[test]
fn generated_graphs_are_within_the_bound_on_1_to_8_devices() {
    for g in &small_of_each_family() {
        for devices in device_counts(&[1, 2, 3, 4, 8]) {
            check(g, devices, 0.01, &[devices as u64]);
        }
    }
}

#[test]
fn hubs_are_within_the_bound_with_sweeps_and_worklist_rounds() {
    // CUDA: hubs are pushed grid-wide in tiles (pagerank_push_hubs), from the first sweep, the
    // later sweeps (divisor u32::MAX: every round) and worklist rounds (divisor 0: none).
    let g = with_hubs();
    let tiles = |v: usize| (g.csr.offsets()[v + 1] - g.csr.offsets()[v]).div_ceil(2048);
    assert!(tiles(0) >= 2 && tiles(1) >= 2, "two hubs of two tiles");
    let divisors = sweep_divisors(&[0, groute_pagerank::SPARSE_SWEEP_DIVISOR, u32::MAX]);
    let counts = [1, 2];
    // Every combination; on reduced inputs each divisor once, on 1 and on 2 devices.
    for [vi, di] in combinations([divisors.len(), counts.len()]) {
        let mut o = options(0.01);
        o.tuning.sweep_divisor = Some(divisors[vi]);
        let devices = counts[di];
        check_options(&g, devices, &o, &[devices as u64]);
    }
}

#[test]
fn sweep_rounds_stay_within_the_bound_on_road_and_kron() {
    // CUDA: every round after the first a sweep (u32::MAX), or none (0).
    let graphs = [
        generated("kron:scale=9,ef=8,sym,seed=3"),
        generated("road:side=24,p=0.6,seed=5"),
    ];
    for g in &graphs {
        for divisor in sweep_divisors(&[0, u32::MAX]) {
            let mut o = options(0.01);
            o.tuning.sweep_divisor = Some(divisor);
            for devices in device_counts(&[1, 2, 4]) {
                check_options(g, devices, &o, &[]);
            }
        }
    }
}

#[test]
fn degree_ordered_runs_stay_within_the_bound_and_return_the_input_order() {
    // The ranks come back in the input order: check_options compares them index by index
    // with the reference of the graph as given.
    let graphs = [
        generated("kron:scale=9,ef=8,sym,seed=3"),
        generated("road:side=24,p=0.6,seed=5"),
    ];
    let mut o = options(0.01);
    o.tuning.degree_order = Some(true);
    for g in &graphs {
        for devices in device_counts(&[1, 2, 3]) {
            check_options(g, devices, &o, &[]);
        }
    }
}

#[test]
fn tight_and_loose_epsilons_stay_within_their_bounds() {
    let g = generated("kron:scale=8,ef=8,sym,seed=11");
    for eps in [1e-4, 0.05, 0.5] {
        check(&g, 3, eps, &[]);
    }
}

#[test]
fn dangling_vertices_and_self_loops() {
    // A directed graph: 0 -> 1 -> 2 -> 0 cycle, a chain into dangling 5 and 6, self-loops on
    // 3 and 4 (3 -> 3 only: all its mass cycles back), an isolated vertex 7, duplicates.
    let pairs = [
        (0, 1),
        (1, 2),
        (2, 0),
        (2, 3),
        (3, 3),
        (4, 4),
        (4, 5),
        (0, 5),
        (5, 5),
        (1, 6),
        (1, 6),
        (6, 4),
    ];
    let g = from_pairs(8, &pairs, "dangling+loops");
    // 5 -> 5 makes 5 a sink with a self-loop; 7 is isolated (rank exactly 1 - alpha).
    for devices in device_counts(&[1, 2, 3, 4, 8]) {
        check(&g, devices, 0.001, &[devices as u64 + 40]);
    }
    // Random directed graph: many dangling vertices, self-loops kept.
    let mut pairs = Vec::new();
    let mut x = 12345u64;
    for _ in 0..1500 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let u = ((x >> 33) % 500) as u32;
        let v = ((x >> 13) % 500) as u32;
        if u % 5 != 0 {
            pairs.push((u, v)); // vertices 0, 5, 10, ... have no out-arcs
        }
    }
    let g = from_pairs(500, &pairs, "random-directed");
    for devices in device_counts(&[1, 2, 4]) {
        check(&g, devices, 0.01, &[7]);
    }
}

#[test]
fn shipped_datasets_are_within_the_bound() {
    let root = groute_graph::shipped_datasets_dir().expect("the repository's datasets/ folder");
    let names = [
        "4elt.graph",
        "test.mgraph",
        "tiny-weighted.gr",
        "tiny-weighted.mtx",
    ];
    for name in pick(names, &[1, 2]) {
        let path = root.join(name);
        if !path.exists() {
            panic!("shipped dataset {} is missing", path.display());
        }
        let g = load_graph(&path, None).unwrap();
        for devices in device_counts(&[1, 2, 4]) {
            check(&g, devices, 0.01, &[]);
        }
    }
}

#[test]
fn ranks_come_back_in_input_order_with_metis() {
    let g = generated("road:side=20,p=0.6,seed=9");
    let exact = pagerank_reference(&g.csr, 0.85);
    let parted = partition_graph(g, 4, PartitionMethod::Metis, &NoProgress).unwrap();
    let ctx = groute_core::Context::host(4).unwrap();
    let got = pagerank(&ctx, &parted, &options(1e-5)).unwrap();
    for (v, (a, b)) in got.ranks.iter().zip(&exact.ranks).enumerate() {
        assert!((f64::from(*a) - b).abs() < 1e-2, "vertex {v}: {a} vs {b}");
    }
    let top = got.top(3);
    assert_eq!(top.len(), 3);
    assert!(top[0].1 >= top[1].1 && top[1].1 >= top[2].1);
}

#[test]
fn bad_parameters_and_mismatched_partitions_are_errors() {
    let g = generated("random:n=50,m=100,seed=1");
    let parted = partition_graph(g, 2, PartitionMethod::Block, &NoProgress).unwrap();
    let ctx = groute_core::Context::host(2).unwrap();
    for (alpha, eps) in [(1.0, 0.01), (0.0, 0.01), (0.85, 0.0), (0.85, f32::NAN)] {
        let o = PageRankOptions {
            alpha,
            epsilon: eps,
            ..options(0.01)
        };
        assert!(matches!(
            pagerank(&ctx, &parted, &o),
            Err(PageRankError::InvalidParameter { .. })
        ));
    }
    let ctx3 = groute_core::Context::host(3).unwrap();
    assert!(matches!(
        pagerank(&ctx3, &parted, &options(0.01)),
        Err(PageRankError::PartitionMismatch {
            parts: 2,
            devices: 3
        })
    ));
}

/// Runs kron scale 9 on 2 devices with `configure`d options and expects an error naming one
/// of `flags`.
fn fails_naming(flags: &[&str], configure: impl Fn(&mut PageRankOptions)) {
    let g = generated("kron:scale=9,ef=8,sym,seed=3");
    let parted = partition_graph(g, 2, PartitionMethod::Block, &NoProgress).unwrap();
    let mut o = options(0.0001);
    configure(&mut o);
    for tc in test_contexts(2, &[]) {
        let e = pagerank(&tc.context, &parted, &o).unwrap_err().to_string();
        assert!(flags.iter().any(|f| e.contains(f)), "{}: {e}", tc.label);
    }
}

#[test]
fn a_worklist_too_small_is_an_error_naming_the_setting() {
    // The drivers that run a worklist (the sweeps have none), in worklist rounds after the
    // first sweep: the device-driven loop's chained sweeps list nothing, and a run that
    // chains its sweeps almost to the end may never need more than a few slots.
    for driver in [Driver::Host, Driver::Fused] {
        fails_naming(&["wl-capacity", "send-capacity"], |o| {
            o.driver = driver;
            o.tuning.sweep_divisor = Some(0);
            o.worklist.wl_capacity = Some(4)
        });
    }
}

#[test]
fn a_send_buffer_too_small_is_an_error_naming_the_setting() {
    // Every round packs its remote items without reading their count first: a fixed send
    // capacity too small for them must fail the run naming the setting, never drop items.
    // The send buffer is the host-driven ring's (the device-driven loop has none).
    fails_naming(&["send-capacity"], |o| {
        o.driver = Driver::Host;
        o.worklist.send_capacity = Some(8)
    });
}

#[test]
fn lazy_receives_stay_within_the_bound_on_1_to_4_devices() {
    // CUDA: receives read nothing back and rounds report them (host backends ignore it).
    let mut o = options(0.001);
    o.tuning.lazy_receive = true;
    for spec in ["road:side=24,p=0.6,seed=5", "kron:scale=9,ef=8,sym,seed=3"] {
        let g = generated(spec);
        for devices in device_counts(&[1, 2, 3, 4]) {
            check_options(&g, devices, &o, &[7]);
        }
    }
}
