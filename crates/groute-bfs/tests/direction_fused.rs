//! The device-driven direction-optimizing BFS (`--do-driver fused`: one persistent kernel per
//! device) equals the reference and takes exactly the host's steps (its switch rule runs on
//! the devices: every level, switch and counter equals the host backend's under the same
//! rule), on one device and on several: distinct GPUs with peer access, or members sharing a
//! GPU where there are fewer GPUs than devices (`PeerGroup::check_sharing`); where neither
//! holds, `fused` is refused naming the fix; `auto` runs fused only on distinct GPUs and falls
//! back to the host-driven levels elsewhere. Traced runs do the same, and their per-phase
//! trace accounts for every step. CUDA runs under
//! `GROUTE_TEST_CUDA=1`, each test holding the GPUs alone (members sharing a GPU start only
//! beside no other test's kernel; a time limit measures only its own kernels).

use std::time::Duration;

use groute_bfs::{
    BfsOptions, BfsResult, BfsSolver, Direction, DirectionTrace, MultiDriver, StepKind, SwitchRule,
    UNREACHED, bfs, bfs_reference,
};
use groute_core::Context;
use groute_core::cuda::{GpuSharing, PeerGroup};
use groute_core::testing::{
    GpuHold, GpuTest, combinations, cuda_test, first, full_or_reduced, reduced,
};
use groute_graph::testing::from_random_pairs;
use groute_graph::{EdgeList, Graph, NoProgress, PartitionMethod, partition_graph};
use proptest::prelude::*;

/// The default rule, always pull, always push, and a rule that switches often.
const RULES: [SwitchRule; 4] = [
    SwitchRule {
        alpha: groute_bfs::PULL_ALPHA,
        beta: groute_bfs::PUSH_BETA,
        gamma: groute_bfs::PULL_GAMMA,
    },
    SwitchRule {
        alpha: u64::MAX,
        beta: u64::MAX,
        gamma: 0,
    },
    SwitchRule {
        alpha: 0,
        beta: 1,
        gamma: 0,
    },
    SwitchRule {
        alpha: 2,
        beta: 2,
        gamma: 0,
    },
];

/// A CUDA context of `devices` devices held alone (module docs); `None` when CUDA is not
/// tested.
fn cuda_alone(devices: usize) -> Option<GpuTest> {
    cuda_test(devices, None, GpuHold::Alone)
}

/// Whether `--do-driver fused` runs on `ctx`: distinct GPUs with peer access, or members
/// sharing GPUs.
fn fused_runs(ctx: &Context) -> bool {
    PeerGroup::check_sharing(ctx, GpuSharing::Split).is_ok()
}

/// The CUDA contexts of each of `device_counts` devices on which the fused driver runs, held
/// alone in turn (none when CUDA is not tested).
fn fused_contexts(device_counts: &[usize]) -> impl Iterator<Item = (usize, GpuTest)> + '_ {
    device_counts
        .iter()
        .map_while(|&devices| cuda_alone(devices).map(|ctx| (devices, ctx)))
        .filter(|(_, ctx)| fused_runs(ctx))
}

fn options(rule: SwitchRule, driver: MultiDriver) -> BfsOptions {
    let mut o = BfsOptions::default();
    o.worklist.time_limit = Some(groute_core::testing::scaled(Duration::from_secs(60)));
    o.direction = Direction::PullPush;
    o.tuning.switch_rule = rule;
    o.multi_driver = driver;
    o
}

fn from_pairs(n: usize, pairs: &[(u32, u32)], name: &str, symmetric: bool) -> Graph {
    Graph::from_edges(n, &EdgeList::from_pairs(pairs), name, symmetric).unwrap()
}

/// BFS from `source` on every device of `ctx` (block partition).
fn run(ctx: &Context, graph: &Graph, source: u32, o: &BfsOptions) -> Result<BfsResult, String> {
    let devices = ctx.num_devices();
    let parted =
        partition_graph(graph.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
    bfs(ctx, &parted, source, o).map_err(|e| e.to_string())
}

/// Each fused run untraced and traced (`BfsTuning::trace`, a run-time choice of every kernel
/// build, `bfs_direction_fused_one` and `_several` and their `_bits` twins).
const TRACES: [bool; 2] = [false, true];

/// The trace of `got` accounts for every step of the run on every one of `devices` devices:
/// a row per step (the source's count first), the kinds and levels the run took, the finds
/// summing to the vertices reached (alike on every device, split among them by owner), and
/// the phases every step runs.
fn check_trace(trace: &DirectionTrace, got: &BfsResult, devices: usize, what: &str) {
    assert_eq!(trace.devices.len(), devices, "{what}");
    let reached = got.levels.iter().filter(|&&l| l != UNREACHED).count() as u64;
    let rows = got.stats.rounds as usize + 1;
    for (d, t) in trace.devices.iter().enumerate() {
        assert_eq!(t.steps.len(), rows.min(64), "{what}: device {d}");
        assert_eq!(t.steps_dropped as usize, rows - t.steps.len(), "{what}");
        assert!(
            t.end_ns >= t.start_ns,
            "{what}: device {d} ends before it starts"
        );
        assert_eq!(t.steps[0].kind, StepKind::Source, "{what}");
        for (i, s) in t.steps.iter().enumerate().skip(1) {
            assert_ne!(s.kind, StepKind::Source, "{what}: step {i}");
            assert_eq!(s.level as usize, i - 1, "{what}: step {i}");
            assert!(
                s.phases.step.is_some(),
                "{what}: step {i} has no step phase"
            );
            assert_eq!(s.phases.exchange.is_some(), devices > 1, "{what}: step {i}");
        }
        assert!(t.steps.iter().all(|s| s.phases.decide.is_some()), "{what}");
        let pulls = t.steps.iter().filter(|s| s.kind == StepKind::Pull).count();
        if rows <= 64 {
            assert_eq!(pulls as u64, got.stats.pull_levels, "{what}: device {d}");
            let found: u64 = t.steps.iter().map(|s| s.found).sum();
            assert_eq!(found, reached, "{what}: device {d}");
        }
    }
    for i in 0..rows.min(64) {
        let found = trace.devices[0].steps[i].found;
        assert!(
            trace.devices.iter().all(|t| t.steps[i].found == found),
            "{what}"
        );
        let here: u64 = trace.devices.iter().map(|t| t.steps[i].found_here).sum();
        assert_eq!(
            here, found,
            "{what}: step {i}'s finds split among the devices"
        );
    }
}

/// The fused run of `graph` from `source` under `rule` on `ctx`, traced or not as each of
/// `traces` says, its pulls reading levels and frontier bitmaps, equals the host backend's
/// one-device run (levels, and every counter: the rule decided alike on the devices); its
/// trace (when asked) accounts for every step.
fn check_against_host(
    ctx: &Context,
    graph: &Graph,
    source: u32,
    rule: SwitchRule,
    traces: &[bool],
) {
    let host = run(
        &Context::host(1).unwrap(),
        graph,
        source,
        &options(rule, MultiDriver::PerDevice),
    )
    .unwrap();
    assert_eq!(
        host.levels,
        bfs_reference(&graph.csr, source),
        "{}",
        graph.name
    );
    for &traced in traces {
        for bitmaps in [false, true] {
            check_fused(ctx, (graph, source, rule), (traced, bitmaps), &host);
        }
    }
}

/// The fused run of `graph` from `source` under `rule`, traced when `traced`, its pulls
/// reading frontier bitmaps where `bitmaps`, equals `host`.
fn check_fused(
    ctx: &Context,
    (graph, source, rule): (&Graph, u32, SwitchRule),
    (traced, bitmaps): (bool, bool),
    host: &BfsResult,
) {
    let what = format!(
        "{} from {source} on {} devices ({rule:?}, traced: {traced}, bitmaps: {bitmaps})",
        graph.name,
        ctx.num_devices()
    );
    let mut fused = options(rule, MultiDriver::Fused);
    fused.tuning.trace = traced;
    fused.tuning.pull_bitmap = Some(bitmaps);
    let got = run(ctx, graph, source, &fused).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.stats.do_driver, Some(MultiDriver::Fused), "{what}");
    assert!(got.stats.fused && got.stats.direction_optimized, "{what}");
    assert_eq!(got.levels, host.levels, "{what}");
    assert_eq!(got.stats.rounds, host.stats.rounds, "{what}");
    assert_eq!(got.stats.pull_levels, host.stats.pull_levels, "{what}");
    assert_eq!(got.stats.work_items, host.stats.work_items, "{what}");
    assert_eq!(got.stats.arcs_examined, host.stats.arcs_examined, "{what}");
    assert!(got.stats.device_time.is_some(), "{what}");
    match &got.stats.do_trace {
        Some(trace) => {
            assert!(traced, "{what}: traced without asking");
            check_trace(trace, &got, ctx.num_devices(), &what);
        }
        None => assert!(!traced, "{what}: no trace"),
    }
}

/// The graphs of the CUDA checks: kron-like (symmetric and directed), random directed, and
/// special shapes; with their sources.
fn graphs() -> Vec<(Graph, Vec<u32>)> {
    let disconnected = [(0, 1), (1, 2), (5, 6), (6, 7), (8, 8)];
    let star: Vec<(u32, u32)> = (1..300).map(|i| (0, i)).collect();
    let path: Vec<(u32, u32)> = (0..199).map(|i| (i, i + 1)).collect();
    let mut out = Vec::new();
    for spec in [
        full_or_reduced(
            "kron:scale=15,ef=16,sym,seed=11",
            "kron:scale=12,ef=16,sym,seed=11",
        ),
        "kron:scale=12,ef=24,sym=0,seed=12",
        "random:n=3000,m=20000,sym=0,seed=7",
    ] {
        let g = Graph::generated(spec).unwrap();
        let sources = vec![0, (g.num_vertices() / 3) as u32];
        out.push((g, sources));
    }
    for symmetric in [true, false] {
        out.push((from_pairs(1, &[], "single vertex", symmetric), vec![0]));
        out.push((
            from_pairs(10, &disconnected, "disconnected", symmetric),
            vec![0, 5, 8, 9],
        ));
        out.push((from_pairs(300, &star, "star", symmetric), vec![0, 7]));
        out.push((from_pairs(200, &path, "path", symmetric), vec![0, 150]));
    }
    out
}

/// On the host backend `fused` is refused with the fix, and `auto` drives from the host.
#[test]
fn fused_is_refused_where_unsupported_and_auto_falls_back() {
    let g = Graph::generated("kron:scale=8,ef=16,sym,seed=2").unwrap();
    for devices in [1, 2] {
        let ctx = Context::host(devices).unwrap();
        assert!(!PeerGroup::supported(&ctx));
        let e = run(&ctx, &g, 0, &options(RULES[0], MultiDriver::Fused)).unwrap_err();
        assert!(e.contains("--do-driver per-device"), "{e}");
        let mut traced = options(RULES[0], MultiDriver::Auto);
        traced.tuning.trace = true;
        let auto = run(&ctx, &g, 0, &traced).unwrap();
        assert!(
            auto.stats.do_trace.is_none(),
            "host-driven runs have no trace"
        );
        assert_eq!(auto.stats.do_driver, Some(MultiDriver::PerDevice));
        assert!(!auto.stats.fused);
        assert_eq!(auto.levels, bfs_reference(&g.csr, 0));
    }
}

/// CUDA, one and two devices: the fused driver where it can run, on distinct GPUs or as
/// members sharing one (levels and counters equal the host's under every rule, traced and
/// not), else the refusal; auto picks fused wherever it runs (members sharing a GPU
/// included).
#[test]
fn cuda_fused_counts_like_the_host() {
    for devices in [1, 2] {
        let Some(ctx) = cuda_alone(devices) else {
            return;
        };
        let auto = run(
            &ctx,
            &graphs()[0].0,
            0,
            &options(RULES[0], MultiDriver::Auto),
        )
        .unwrap();
        let expected = if PeerGroup::auto_device_driven(&ctx) {
            MultiDriver::Fused
        } else {
            MultiDriver::PerDevice
        };
        assert_eq!(auto.stats.do_driver, Some(expected));
        assert_eq!(auto.levels, bfs_reference(&graphs()[0].0.csr, 0));
        if !fused_runs(&ctx) {
            // No peer access between two GPUs: refused, naming the fix.
            let (g, _) = &graphs()[0];
            let e = run(&ctx, g, 0, &options(RULES[0], MultiDriver::Fused)).unwrap_err();
            assert!(e.contains("--do-driver per-device"), "{e}");
            continue;
        }
        // Every graph from every source, each on every rule, traced and not; on reduced inputs
        // each graph from its first source, each rule and each of traced and not at least once.
        let runs: Vec<(Graph, u32)> = graphs()
            .into_iter()
            .filter(|(g, _)| g.num_vertices() >= devices)
            .flat_map(|(g, sources)| first(sources, 1).into_iter().map(move |s| (g.clone(), s)))
            .collect();
        if reduced() {
            for [gi, ri, ti] in combinations([runs.len(), RULES.len(), TRACES.len()]) {
                let (g, s) = &runs[gi];
                check_against_host(&ctx, g, *s, RULES[ri], &TRACES[ti..=ti]);
            }
        } else {
            for (g, s) in &runs {
                for rule in RULES {
                    check_against_host(&ctx, g, *s, rule, &TRACES);
                }
            }
        }
    }
}

/// CUDA, two and three members (distinct GPUs, or members sharing one): the source's push,
/// which every member expands itself from the rows of the member that owns the source, gives
/// each head one level and appends it once, whatever duplicate arcs and self-loops the source
/// has and whichever member owns it; levels and counters equal the host's under every rule.
#[test]
fn cuda_source_push_sets_each_head_once() {
    for (_, ctx) in fused_contexts(&[2, 3]) {
        let n = 90u32;
        for source in [0, n - 7] {
            // Every third vertex twice, the source itself twice, and a path behind.
            let mut pairs: Vec<(u32, u32)> =
                (0..n).step_by(3).flat_map(|t| [(source, t); 2]).collect();
            pairs.extend([(source, source); 2]);
            pairs.extend((0..n - 1).map(|v| (v, v + 1)));
            for symmetric in [true, false] {
                let g = from_pairs(n as usize, &pairs, "hub source with duplicates", symmetric);
                for rule in RULES {
                    check_against_host(&ctx, &g, source, rule, &TRACES);
                }
            }
        }
    }
}

/// CUDA: a fused solver kept across runs resets between them (traced and not), and a run past
/// its time limit fails with the time-out and leaves the solver usable.
#[test]
fn cuda_fused_solver_survives_a_time_out() {
    for (devices, ctx) in fused_contexts(&[1, 2]) {
        let g = Graph::generated("kron:scale=14,ef=16,sym,seed=4").unwrap();
        let parted =
            partition_graph(g.clone(), devices, PartitionMethod::Block, &NoProgress).unwrap();
        let mut o = options(RULES[0], MultiDriver::Fused);
        o.worklist.time_limit = Some(Duration::ZERO);
        let mut late = BfsSolver::new(&ctx, &parted, &o).unwrap();
        // The kernel may finish before the host looks: then it succeeds, else it times out.
        match late.run(0) {
            Ok(r) => assert_eq!(r.levels, bfs_reference(&g.csr, 0)),
            Err(e) => assert!(e.to_string().contains("time"), "{e}"),
        }
        o.worklist.time_limit = Some(groute_core::testing::scaled(Duration::from_secs(60)));
        let mut solver = BfsSolver::new(&ctx, &parted, &o).unwrap();
        for source in [0u32, 100, 0, 511] {
            let got = solver.run(source).unwrap();
            assert_eq!(got.levels, bfs_reference(&g.csr, source), "from {source}");
        }
        o.tuning.trace = true;
        let mut traced = BfsSolver::new(&ctx, &parted, &o).unwrap();
        for source in [0u32, 100, 0, 511] {
            let got = traced.run(source).unwrap();
            assert_eq!(got.levels, bfs_reference(&g.csr, source), "from {source}");
            let trace = got.stats.do_trace.as_ref().expect("traced");
            check_trace(trace, &got, devices, &format!("run from {source}, {:?}", o));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: full_or_reduced(24, 6),
        ..ProptestConfig::default()
    })]
    /// CUDA: random graphs under random rules: the device's port of the switch rule decides
    /// every level as the host's `SwitchRule` does.
    #[test]
    fn cuda_fused_rule_agrees_with_the_host(
        n in 1usize..400,
        raw in proptest::collection::vec((0u32..400, 0u32..400), 0..3000),
        symmetric in any::<bool>(),
        src in 0u32..400,
        alpha in 0u64..40,
        beta in 0u64..40,
        gamma in 0u64..4,
        two in any::<bool>(),
        traced in any::<bool>(),
    ) {
        let devices = if two { 2 } else { 1 };
        if let Some(ctx) = cuda_alone(devices.min(n)) {
            if fused_runs(&ctx) {
                let g = from_random_pairs(n as u32, &raw, symmetric);
                let rule = SwitchRule { alpha, beta, gamma };
                check_against_host(&ctx, &g, src % n as u32, rule, &[traced]);
            }
        }
    }
}
