//! Direction-optimizing BFS (`--direction`) equals the sequential reference on generated,
//! shipped and special graphs, symmetric and directed, under rules that always push, always
//! pull and switch; its counters are exact where they can be predicted; `Auto` picks it only
//! where documented; on 1, 2, 3, 4, 8, 9 and 12 devices under block and METIS partitions
//! (past 8 devices the levels' exchange goes through device 0). Host backend (plain and
//! jittered) always, CUDA under `GROUTE_TEST_CUDA=1`. With
//! `GROUTE_TEST_REDUCED=1` (`groute_core::testing::reduced`) each check runs one source on up
//! to 3 devices, each device setup under one rule in turn (every rule runs), the special
//! shapes each symmetric or directed in turn, and the CUDA checks run smaller graphs, under
//! every driver and batch.

use std::time::Duration;

use groute_bfs::{
    BfsOptions, BfsResult, Direction, MultiDriver, PULL_ALPHA, PULL_GAMMA, PUSH_BETA, SwitchRule,
    UNREACHED, bfs, bfs_reference,
};
use groute_core::cuda::{GpuSharing, PeerGroup};
use groute_core::testing::{
    combinations, device_counts, first, full_or_reduced, pick, test_contexts,
};
use groute_core::{BackendKind, Context};
use groute_graph::testing::{from_random_pairs, generated, in_blocks, partition_at_cuts};
use groute_graph::{EdgeList, Graph, NoProgress, PartitionMethod, load_graph, partition_graph};
use proptest::prelude::*;

/// Pull from the first level on and never push again.
const ALWAYS_PULL: SwitchRule = SwitchRule {
    alpha: u64::MAX,
    beta: u64::MAX,
    gamma: 0,
};
/// Never pull (the frontier's out-arcs never exceed every unvisited in-arc).
const ALWAYS_PUSH: SwitchRule = SwitchRule {
    alpha: 0,
    beta: 1,
    gamma: 0,
};
/// Pulls early and returns to push soon: many switches on small graphs.
const EAGER: SwitchRule = SwitchRule {
    alpha: 2,
    beta: 2,
    gamma: 0,
};
const RULES: [SwitchRule; 4] = [
    SwitchRule {
        alpha: PULL_ALPHA,
        beta: PUSH_BETA,
        gamma: PULL_GAMMA,
    },
    ALWAYS_PULL,
    ALWAYS_PUSH,
    EAGER,
];

fn options(direction: Direction, rule: SwitchRule) -> BfsOptions {
    let mut o = BfsOptions::default();
    o.worklist.time_limit = Some(groute_core::testing::scaled(Duration::from_secs(60)));
    o.direction = direction;
    o.tuning.switch_rule = rule;
    o
}

/// Direction-optimizing under `rule`, driven by a host thread per device.
fn per_device(rule: SwitchRule) -> BfsOptions {
    BfsOptions {
        multi_driver: MultiDriver::PerDevice,
        ..options(Direction::PullPush, rule)
    }
}

fn from_pairs(n: usize, pairs: &[(u32, u32)], name: &str, symmetric: bool) -> Graph {
    Graph::from_edges(n, &EdgeList::from_pairs(pairs), name, symmetric).unwrap()
}

fn run(ctx: &Context, graph: &Graph, source: u32, o: &BfsOptions) -> BfsResult {
    run_parted(ctx, graph, PartitionMethod::Block, source, o)
}

/// BFS on every device of `ctx`, the graph partitioned by `method` into one part per device.
fn run_parted(
    ctx: &Context,
    graph: &Graph,
    method: PartitionMethod,
    source: u32,
    o: &BfsOptions,
) -> BfsResult {
    let devices = ctx.num_devices();
    let parted = partition_graph(graph.clone(), devices, method, &NoProgress).unwrap();
    bfs(ctx, &parted, source, o).unwrap_or_else(|e| {
        panic!(
            "{} from {source} on {devices} devices ({method:?}): {e}",
            graph.name
        )
    })
}

/// Device counts and partitions of the multi-device checks: (devices, partition, jitter
/// seeds). Past 8 devices the levels' exchange goes through device 0.
const MULTI: [(usize, PartitionMethod, &[u64]); 8] = [
    (2, PartitionMethod::Block, &[3]),
    (2, PartitionMethod::Metis, &[]),
    (3, PartitionMethod::Metis, &[]),
    (4, PartitionMethod::Block, &[5]),
    (4, PartitionMethod::Metis, &[]),
    (8, PartitionMethod::Block, &[]),
    (9, PartitionMethod::Block, &[]),
    (12, PartitionMethod::Metis, &[9]),
];

/// Past this many devices the levels' exchange goes through device 0 (the crate's
/// `MAX_DIRECT_DEVICES`); [`check`] runs such setups under one rule each, in turn, as on
/// reduced inputs: their many host threads make every level slower.
const DIRECT_DEVICES: usize = 8;

/// Direction-optimizing BFS from `sources` under every rule, driven from the host, equals the
/// reference, on one device and on every device count and partition of [`MULTI`].
fn check(graph: &Graph, sources: &[u32]) {
    let mut setups = vec![(1, PartitionMethod::Block, &[][..])];
    setups.extend(MULTI);
    // A partition has at most one part per vertex.
    let counts = device_counts(&setups.iter().map(|&(d, ..)| d).collect::<Vec<_>>());
    setups.retain(|&(devices, ..)| devices <= graph.num_vertices() && counts.contains(&devices));
    for (k, (devices, method, seeds)) in setups.into_iter().enumerate() {
        // On reduced inputs, and through device 0, each setup runs one rule, in turn.
        let one_rule = [k % RULES.len()];
        let rules = if devices > DIRECT_DEVICES {
            one_rule.iter().map(|&i| RULES[i]).collect()
        } else {
            pick(RULES, &one_rule)
        };
        for tc in test_contexts(devices, seeds) {
            for s in first(sources.iter().copied(), 1) {
                let expected = bfs_reference(&graph.csr, s);
                for &rule in &rules {
                    let o = per_device(rule);
                    let got = run_parted(&tc.context, graph, method, s, &o);
                    assert_eq!(
                        got.levels, expected,
                        "{} from {s} ({}, {devices} devices, {method:?}, {rule:?})",
                        graph.name, tc.label
                    );
                    assert!(got.stats.direction_optimized);
                }
            }
        }
    }
}

#[test]
fn generated_graphs_match_the_reference() {
    for spec in [
        "kron:scale=10,ef=16,sym,seed=3",
        "kron:scale=9,ef=8,sym=0,seed=5",
        "road:side=20,p=0.6,seed=5",
        "random:n=600,m=3000,sym=0,seed=7",
    ] {
        let g = generated(spec);
        check(&g, &[0, (g.num_vertices() / 2) as u32, 17]);
    }
}

/// A special shape: its vertex count, arcs, name and the sources to check.
type Shape<'a> = (usize, &'a [(u32, u32)], &'a str, &'a [u32]);

#[test]
fn special_shapes_match_the_reference() {
    let disconnected = [(0, 1), (1, 2), (5, 6), (6, 7), (8, 8)];
    // A ring of 6 with a self-loop on vertices 0..=4 and an arc from 5 back to 4.
    let loops: Vec<(u32, u32)> = (0..6u32)
        .flat_map(|i| [(i, i.min(4)), (i, (i + 1) % 6)])
        .collect();
    let chain: Vec<(u32, u32)> = (0..199).map(|i| (i, i + 1)).collect();
    let star: Vec<(u32, u32)> = (1..300).map(|i| (0, i)).collect();
    let shapes: [Shape<'_>; 6] = [
        (1, &[], "single vertex", &[0]),
        (1, &[(0, 0)], "single self-loop", &[0]),
        (10, &disconnected, "disconnected", &[0, 5, 8, 9]),
        (6, &loops, "self-loops", &[0, 3, 5]),
        (200, &chain, "path", &[0, 150, 199]),
        (300, &star, "star", &[0, 7]),
    ];
    // Every shape symmetric and directed; on reduced inputs each shape once, in turn.
    for [si, symmetric] in combinations([shapes.len(), 2]) {
        let (n, pairs, name, sources) = shapes[si];
        check(&from_pairs(n, pairs, name, symmetric == 0), sources);
    }
}

#[test]
fn shipped_graphs_match_the_reference() {
    let dir = groute_graph::shipped_datasets_dir().expect("the repository's datasets/ folder");
    let mut tested = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let Ok(g) = load_graph(entry.unwrap().path(), None) else {
            continue;
        };
        if g.num_vertices() == 0 {
            continue;
        }
        tested += 1;
        check(&g, &[0, (g.num_vertices() - 1) as u32]);
    }
    assert!(
        tested >= 3,
        "expected the shipped graphs in {}",
        dir.display()
    );
}

/// Arcs of the vertices `levels` reached.
fn arcs_of_reached(graph: &Graph, levels: &[u32]) -> u64 {
    (0..graph.num_vertices() as u32)
        .filter(|&v| levels[v as usize] != UNREACHED)
        .map(|v| graph.csr.neighbors(v).len() as u64)
        .sum()
}

#[test]
fn counters_are_exact() {
    let g = generated("kron:scale=10,ef=16,sym,seed=8");
    for tc in [1, 2, 3].into_iter().flat_map(|d| test_contexts(d, &[])) {
        // Push only: every reached vertex is expanded once, reading all its arcs.
        let push = run(
            &tc.context,
            &g,
            0,
            &options(Direction::PullPush, ALWAYS_PUSH),
        );
        let reached = push.reached() as u64;
        assert_eq!(push.stats.pull_levels, 0, "{}", tc.label);
        assert_eq!(push.stats.work_items, reached, "{}", tc.label);
        assert_eq!(
            push.stats.rounds,
            u64::from(push.depth()) + 1,
            "{}",
            tc.label
        );
        assert_eq!(
            push.stats.arcs_examined,
            Some(arcs_of_reached(&g, &push.levels)),
            "{}",
            tc.label
        );
        // Pull only: each level scans the vertices still unvisited, each finding its level
        // after at least one arc.
        let pull = run(
            &tc.context,
            &g,
            0,
            &options(Direction::PullPush, ALWAYS_PULL),
        );
        assert_eq!(pull.stats.pull_levels, pull.stats.rounds, "{}", tc.label);
        let n = g.num_vertices() as u64;
        let unvisited_per_level: u64 = (0..pull.stats.rounds)
            .map(|l| {
                n - pull
                    .levels
                    .iter()
                    .filter(|&&x| x != UNREACHED && u64::from(x) <= l)
                    .count() as u64
            })
            .sum();
        assert_eq!(pull.stats.work_items, unvisited_per_level, "{}", tc.label);
        let examined = pull.stats.arcs_examined.unwrap();
        assert!(examined >= reached - 1, "{}: {examined}", tc.label);
        // The default rule on a power-law graph pulls some levels and reads fewer arcs.
        let auto = run(
            &tc.context,
            &g,
            0,
            &options(Direction::Auto, SwitchRule::default()),
        );
        assert!(auto.stats.direction_optimized, "{}", tc.label);
        assert!(auto.stats.pull_levels > 0, "{}", tc.label);
        assert!(auto.stats.arcs_examined.unwrap() < push.stats.arcs_examined.unwrap());
        assert_eq!(auto.levels, push.levels);
    }
}

#[test]
fn auto_optimizes_only_dense_symmetric_graphs() {
    let dense = generated("kron:scale=9,ef=16,sym,seed=2");
    let directed = generated("kron:scale=9,ef=16,sym=0,seed=2");
    let sparse = generated("road:side=16,p=0.6,seed=2");
    let auto = options(Direction::Auto, SwitchRule::default());
    let ctx = Context::host(1).unwrap();
    assert!(run(&ctx, &dense, 0, &auto).stats.direction_optimized);
    assert!(!run(&ctx, &directed, 0, &auto).stats.direction_optimized);
    assert!(!run(&ctx, &sparse, 0, &auto).stats.direction_optimized);
    let push = options(Direction::Push, SwitchRule::default());
    let r = run(&ctx, &dense, 0, &push);
    assert!(!r.stats.direction_optimized);
    assert_eq!(r.stats.arcs_examined, None);
    // Several devices: the same rule (dense symmetric graphs only).
    let two = Context::host(2).unwrap();
    let r = run(&two, &dense, 0, &auto);
    assert!(r.stats.direction_optimized);
    assert_eq!(r.levels, bfs_reference(&dense.csr, 0));
    assert!(!run(&two, &directed, 0, &auto).stats.direction_optimized);
    assert!(!run(&two, &sparse, 0, &auto).stats.direction_optimized);
    let r = run(&two, &dense, 0, &push);
    assert!(!r.stats.direction_optimized);
    assert_eq!(r.levels, bfs_reference(&dense.csr, 0));
}

/// Several devices take the same steps as one: every level, switch and counter is equal
/// (the counters are sums over the devices of exact per-device counts).
#[test]
fn several_devices_count_like_one() {
    let g = generated("kron:scale=10,ef=12,sym,seed=21");
    let one = Context::host(1).unwrap();
    for rule in RULES {
        let mut o = options(Direction::PullPush, rule);
        let single = run(&one, &g, 3, &o);
        o.multi_driver = MultiDriver::PerDevice;
        for (devices, method, seeds) in MULTI {
            for tc in test_contexts(devices, seeds) {
                // CUDA pulls read levels, or frontier bitmaps and pull lists: alike.
                let cuda = tc.context.backend_kind() == BackendKind::Cuda;
                let bitmaps: &[Option<bool>] = if cuda {
                    &[Some(false), Some(true)]
                } else {
                    &[None]
                };
                for &pull_bitmap in bitmaps {
                    o.tuning.pull_bitmap = pull_bitmap;
                    let got = run_parted(&tc.context, &g, method, 3, &o);
                    let what = format!(
                        "{devices} devices, {method:?}, {}, {rule:?}, bitmaps {pull_bitmap:?}",
                        tc.label
                    );
                    assert_eq!(got.levels, single.levels, "{what}");
                    assert_eq!(got.stats.rounds, single.stats.rounds, "{what}");
                    assert_eq!(got.stats.pull_levels, single.stats.pull_levels, "{what}");
                    assert_eq!(got.stats.work_items, single.stats.work_items, "{what}");
                    // A pull step reads each unvisited vertex's in-arcs up to the first at the
                    // level: the same arcs on any device count under the same numbering (a
                    // block partition keeps it; METIS renumbers, which reorders
                    // in-neighbours).
                    if method == PartitionMethod::Block || rule == ALWAYS_PUSH {
                        let (got, one) = (got.stats.arcs_examined, single.stats.arcs_examined);
                        assert_eq!(got, one, "{what}");
                    }
                }
            }
        }
    }
}

/// A solver kept across runs resets between them, on several devices too.
#[test]
fn several_devices_reuse_the_solver() {
    let g = generated("kron:scale=9,ef=16,sym,seed=4");
    let ctx = Context::host(3).unwrap();
    let parted = partition_graph(g.clone(), 3, PartitionMethod::Metis, &NoProgress).unwrap();
    let o = options(Direction::PullPush, SwitchRule::default());
    let mut solver = groute_bfs::BfsSolver::new(&ctx, &parted, &o).unwrap();
    for source in [0u32, 100, 0, 511] {
        let got = solver.run(source).unwrap();
        assert_eq!(got.levels, bfs_reference(&g.csr, source), "from {source}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn random_small_graphs_match_the_reference(
        n in 1usize..60,
        raw in proptest::collection::vec((0u32..60, 0u32..60), 0..240),
        symmetric in any::<bool>(),
        src in 0u32..60,
        alpha in 0u64..40,
        beta in 0u64..40,
        gamma in 0u64..4,
        devices in 1usize..=4,
        metis in any::<bool>(),
        seed in 0u64..1000,
    ) {
        let g = from_random_pairs(n as u32, &raw, symmetric);
        let s = src % n as u32;
        let o = per_device(SwitchRule { alpha, beta, gamma });
        let method = if metis { PartitionMethod::Metis } else { PartitionMethod::Block };
        for tc in test_contexts(devices.min(n), &[seed]) {
            let got = run_parted(&tc.context, &g, method, s, &o);
            prop_assert_eq!(&got.levels, &bfs_reference(&g.csr, s), "{}", tc.label);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    /// Devices owning ranges cut at random, some empty, some starting inside a bitmap word:
    /// the bitmap words a pull step writes for its range (one even where it owns nothing)
    /// carry exactly its finds.
    #[test]
    fn random_cuts_match_the_reference(
        n in 1usize..200,
        raw in proptest::collection::vec((0u32..200, 0u32..200), 0..800),
        symmetric in any::<bool>(),
        src in 0u32..200,
        rule in 0usize..RULES.len(),
        devices in 2usize..=4,
        cuts in proptest::collection::vec(any::<u32>(), 3),
        seed in 0u64..1000,
    ) {
        let g = from_random_pairs(n as u32, &raw, symmetric);
        let s = src % n as u32;
        let o = per_device(RULES[rule]);
        let mut parted = in_blocks(&g, 1).unwrap();
        parted.partition = partition_at_cuts(n, devices, &cuts);
        for tc in test_contexts(devices, &[seed]) {
            let got = bfs(&tc.context, &parted, s, &o)
                .unwrap_or_else(|e| panic!("{:?} from {s}: {e}", parted.partition));
            prop_assert_eq!(
                &got.levels,
                &bfs_reference(&g.csr, s),
                "{} {:?}",
                tc.label,
                parted.partition
            );
        }
    }
}

/// Larger graphs on CUDA (`GROUTE_TEST_CUDA=1`): direction-optimizing under every rule, and
/// the worklist BFS one launch per round, whose rounds of every size take each hub threshold
/// of `HubPolicy` (small grids spread lists of >= 32 or >= 256 arcs over the whole grid).
#[test]
fn cuda_larger_graphs_match_the_reference() {
    let Some(ctx) = groute_core::testing::cuda_context(1) else {
        return;
    };
    let specs = full_or_reduced(
        [
            "kron:scale=16,ef=16,sym,seed=11",
            "kron:scale=15,ef=24,sym=0,seed=12",
            "road:side=256,p=0.6,seed=13",
        ],
        [
            "kron:scale=11,ef=16,sym,seed=11",
            "kron:scale=10,ef=24,sym=0,seed=12",
            "road:side=48,p=0.6,seed=13",
        ],
    );
    for spec in specs {
        let g = generated(spec);
        for s in first([0, (g.num_vertices() / 3) as u32], 1) {
            let expected = bfs_reference(&g.csr, s);
            for rule in RULES {
                let got = run(&ctx, &g, s, &options(Direction::PullPush, rule));
                assert_eq!(got.levels, expected, "{spec} from {s} ({rule:?})");
            }
            let mut push = options(Direction::Push, SwitchRule::default());
            push.worklist.fused = groute_worklist::traversal::FusedMode::Off;
            for max_batch in [usize::MAX, 100, 5000] {
                push.worklist.max_batch = max_batch;
                let got = run(&ctx, &g, s, &push);
                assert_eq!(
                    got.levels, expected,
                    "{spec} from {s} (push, batch {max_batch})"
                );
            }
        }
    }
}

/// Several CUDA devices (`GROUTE_TEST_CUDA=1`; virtual devices share a GPU when there are
/// fewer): larger graphs under every rule and both partitions equal the reference, driven
/// from the host and, where the devices can run it (distinct GPUs with peer access, or
/// members sharing GPUs), by the devices.
#[test]
fn cuda_several_devices_match_the_reference() {
    let graphs = full_or_reduced(
        [
            ("kron:scale=16,ef=16,sym,seed=11", PartitionMethod::Block),
            ("kron:scale=14,ef=16,sym,seed=14", PartitionMethod::Metis),
            ("kron:scale=15,ef=24,sym=0,seed=12", PartitionMethod::Block),
            ("road:side=128,p=0.6,seed=13", PartitionMethod::Metis),
        ],
        [
            ("kron:scale=11,ef=16,sym,seed=11", PartitionMethod::Block),
            ("kron:scale=10,ef=16,sym,seed=14", PartitionMethod::Metis),
            ("kron:scale=10,ef=24,sym=0,seed=12", PartitionMethod::Block),
            ("road:side=48,p=0.6,seed=13", PartitionMethod::Metis),
        ],
    );
    // 9: host-driven, the levels' exchange goes through device 0 (a device-driven run takes
    // at most 8 devices: `PeerGroup::check_sharing` refuses it).
    for devices in device_counts(&[2, 3, 4, 9]) {
        let Some(ctx) = groute_core::testing::cuda_context(devices) else {
            return;
        };
        let device_driven = PeerGroup::check_sharing(&ctx, GpuSharing::Split).is_ok();
        for (spec, method) in graphs {
            let g = generated(spec);
            for s in first([0, (g.num_vertices() / 3) as u32], 1) {
                let expected = bfs_reference(&g.csr, s);
                for rule in RULES {
                    let fused = device_driven.then_some(MultiDriver::Fused);
                    let drivers = std::iter::once(MultiDriver::PerDevice).chain(fused);
                    for (driver, bitmaps) in drivers.flat_map(|d| [(d, false), (d, true)]) {
                        let mut o = options(Direction::PullPush, rule);
                        o.multi_driver = driver;
                        o.tuning.pull_bitmap = Some(bitmaps);
                        let got = run_parted(&ctx, &g, method, s, &o);
                        assert_eq!(
                            got.levels, expected,
                            "{spec} from {s} on {devices} devices ({method:?}, {driver}, \
                             {rule:?}, bitmaps {bitmaps})"
                        );
                        assert!(got.stats.device_time.is_some());
                    }
                }
            }
        }
    }
}
