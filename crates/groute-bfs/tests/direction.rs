//! Direction-optimizing BFS (`--direction`) equals the sequential reference on generated,
//! shipped and special graphs, symmetric and directed, under rules that always push, always
//! pull and switch; its counters are exact where they can be predicted; `Auto` picks it only
//! where documented; several devices are refused clearly. Host backend always, CUDA under
//! `GROUTE_TEST_CUDA=1`.

use std::time::Duration;

use groute_bfs::{
    BfsOptions, BfsResult, Direction, PULL_ALPHA, PUSH_BETA, SwitchRule, UNREACHED, bfs,
    bfs_reference,
};
use groute_core::Context;
use groute_core::testing::test_contexts;
use groute_graph::{
    CsrBuilder, EdgeList, GenSpec, Graph, NoProgress, PartitionMethod, generate, load_graph,
    partition_graph,
};
use proptest::prelude::*;

/// Pull from the first level on and never push again.
const ALWAYS_PULL: SwitchRule = SwitchRule {
    alpha: u64::MAX,
    beta: u64::MAX,
};
/// Never pull (the frontier's out-arcs never exceed every unvisited in-arc).
const ALWAYS_PUSH: SwitchRule = SwitchRule { alpha: 0, beta: 1 };
/// Pulls early and returns to push soon: many switches on small graphs.
const EAGER: SwitchRule = SwitchRule { alpha: 2, beta: 2 };
const RULES: [SwitchRule; 4] = [
    SwitchRule {
        alpha: PULL_ALPHA,
        beta: PUSH_BETA,
    },
    ALWAYS_PULL,
    ALWAYS_PUSH,
    EAGER,
];

fn options(direction: Direction, rule: SwitchRule) -> BfsOptions {
    let mut o = BfsOptions::default();
    o.worklist.time_limit = Some(Duration::from_secs(60));
    o.direction = direction;
    o.switch_rule = rule;
    o
}

fn generated(spec: &str) -> Graph {
    generate(&spec.parse::<GenSpec>().unwrap(), &NoProgress).unwrap()
}

fn from_pairs(n: usize, pairs: &[(u32, u32)], name: &str, symmetric: bool) -> Graph {
    let csr = CsrBuilder::new(n)
        .symmetrize(symmetric)
        .build(&EdgeList::from_pairs(pairs))
        .unwrap();
    Graph::new(csr, name, symmetric)
}

fn run(ctx: &Context, graph: &Graph, source: u32, o: &BfsOptions) -> BfsResult {
    let parted = partition_graph(graph.clone(), 1, PartitionMethod::Block, &NoProgress).unwrap();
    bfs(ctx, &parted, source, o).unwrap_or_else(|e| panic!("{} from {source}: {e}", graph.name))
}

/// Direction-optimizing BFS from `sources` under every rule equals the reference.
fn check(graph: &Graph, sources: &[u32]) {
    for tc in test_contexts(1, &[]) {
        for &s in sources {
            let expected = bfs_reference(&graph.csr, s);
            for rule in RULES {
                let got = run(&tc.context, graph, s, &options(Direction::PullPush, rule));
                assert_eq!(
                    got.levels, expected,
                    "{} from {s} ({}, {rule:?})",
                    graph.name, tc.label
                );
                assert!(got.stats.direction_optimized);
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

#[test]
fn special_shapes_match_the_reference() {
    let disconnected = [(0, 1), (1, 2), (5, 6), (6, 7), (8, 8)];
    // A ring of 6 with a self-loop on vertices 0..=4 and an arc from 5 back to 4.
    let loops: Vec<(u32, u32)> = (0..6u32)
        .flat_map(|i| [(i, i.min(4)), (i, (i + 1) % 6)])
        .collect();
    let chain: Vec<(u32, u32)> = (0..199).map(|i| (i, i + 1)).collect();
    let star: Vec<(u32, u32)> = (1..300).map(|i| (0, i)).collect();
    for symmetric in [true, false] {
        check(&from_pairs(1, &[], "single vertex", symmetric), &[0]);
        check(
            &from_pairs(1, &[(0, 0)], "single self-loop", symmetric),
            &[0],
        );
        check(
            &from_pairs(10, &disconnected, "disconnected", symmetric),
            &[0, 5, 8, 9],
        );
        check(&from_pairs(6, &loops, "self-loops", symmetric), &[0, 3, 5]);
        check(&from_pairs(200, &chain, "path", symmetric), &[0, 150, 199]);
        check(&from_pairs(300, &star, "star", symmetric), &[0, 7]);
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
    for tc in test_contexts(1, &[]) {
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
fn auto_optimizes_only_dense_symmetric_graphs_on_one_device() {
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
    let two = Context::host(2).unwrap();
    let parted = partition_graph(dense.clone(), 2, PartitionMethod::Block, &NoProgress).unwrap();
    let r = bfs(&two, &parted, 0, &auto).unwrap();
    assert!(!r.stats.direction_optimized);
    assert_eq!(r.levels, bfs_reference(&dense.csr, 0));
}

#[test]
fn several_devices_refuse_pull_push() {
    let g = generated("kron:scale=8,ef=8,sym,seed=1");
    let ctx = Context::host(2).unwrap();
    let parted = partition_graph(g, 2, PartitionMethod::Block, &NoProgress).unwrap();
    let o = options(Direction::PullPush, SwitchRule::default());
    let e = bfs(&ctx, &parted, 0, &o).unwrap_err().to_string();
    assert!(e.contains("--direction") && e.contains("one device"), "{e}");
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
    ) {
        let pairs: Vec<(u32, u32)> =
            raw.into_iter().map(|(a, b)| (a % n as u32, b % n as u32)).collect();
        let g = from_pairs(n, &pairs, "proptest", symmetric);
        let s = src % n as u32;
        let o = options(Direction::PullPush, SwitchRule { alpha, beta });
        for tc in test_contexts(1, &[]) {
            let got = run(&tc.context, &g, s, &o);
            prop_assert_eq!(&got.levels, &bfs_reference(&g.csr, s));
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
    for spec in [
        "kron:scale=16,ef=16,sym,seed=11",
        "kron:scale=15,ef=24,sym=0,seed=12",
        "road:side=256,p=0.6,seed=13",
    ] {
        let g = generated(spec);
        for s in [0, (g.num_vertices() / 3) as u32] {
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
