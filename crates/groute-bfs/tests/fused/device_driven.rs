//! Device-driven fused runs on several devices (one persistent kernel per device, items
//! stored into the next device's inbox, termination counted on the devices): equal to the
//! reference on distinct GPUs and on members sharing one, with the cluster mode, with inbox
//! rings that wrap, chosen by Auto where the GPUs allow it, and refused clearly beyond a
//! member's share or a group's size.

use groute_bfs::{PRIO_DELTA_DEVICE_DRIVEN, UNREACHED};
use groute_core::cuda::{PEER_MAX_DEVICES, PeerGroup};
use groute_core::testing::{combinations, first, full_or_reduced};
use groute_graph::Graph;
use groute_graph::testing::{directed_path, from_pairs, generated};
use groute_worklist::testing::TraversalUnderTest;
use groute_worklist::testing::fused_device_driven as shared;
use groute_worklist::testing::{
    cuda_alone, cuda_shared, member_groups, members_can_run, run_in_blocks,
    run_matching_the_reference, sweep_source, tuned,
};
use groute_worklist::traversal::{FusedDriver, FusedMode};

use crate::common::{BfsUnderTest, cuda_one_gpu};
use crate::{options, wide_tree};

/// Device-driven fused runs (`--fused-driver device`: one persistent kernel per device, items
/// stored into the next device's inbox, termination counted on the devices): every graph
/// shape, from several sources, in and out of single-block mode, with soft priority (each
/// device's own epochs), on 2 and 3 devices (distinct GPUs with peer access, or members
/// sharing GPUs where there are fewer, each on its share) and in a group of one (the members'
/// kernel on one GPU, nothing crossing). At the end every item was expanded where it was
/// listed and every published item was received: the termination count cannot have reached 0
/// early. The GPUs are the test's alone: members sharing one start only beside no other
/// test's kernel.
#[test]
fn device_driven_fused_runs_on_several_devices_equal_the_reference() {
    shared::device_driven_fused_runs_on_several_devices::<BfsUnderTest>(
        3,
        &[
            (None, true, None, true),
            (None, true, None, false),
            (Some(0), true, None, true),
            (None, false, Some(2), true),
            (None, true, Some(2), true),
            (Some(u32::MAX), true, None, true),
            (Some(u32::MAX), true, None, false),
        ],
    );
}

/// The single-block mode on a cluster in the members of a device-driven run (the
/// `_peer_cluster` build: each member's cluster 0 runs levels back to back while its block 0's
/// last warp, in a loop of its own, receives, releases and counts for the group,
/// kernels/include/fused_solo_peer.cuh SoloPeerWarp): the reference on road grids cut by the block
/// partition (many levels cross it both ways), a sparse random graph, a path and a wide tree
/// (a level past the cluster's frontiers: spills), from several sources, with bounds from one
/// item to none, with soft priority, in blocks of 1,024 and 512 threads (block 0 expands on
/// all but the peer warp), on 2 and 3 devices and in a group of one; every listed or unlisted
/// item expanded once, every published item received, and the cluster's levels counted where
/// it runs. On reduced inputs from vertex 0 alone, over smaller graphs of each shape
/// ([`cluster_member_graphs`]).
#[test]
fn the_cluster_mode_runs_in_device_driven_members() {
    let graphs = cluster_member_graphs();
    let settings = [
        (None, None, 1024),
        (None, Some(2), 1024),
        (Some(1), None, 1024),
        (Some(300), None, 512),
        (Some(u32::MAX), Some(2), 1024),
        (Some(u32::MAX), None, 512),
    ];
    for (ctx, members_run) in member_groups() {
        if !members_run {
            continue;
        }
        let devices = ctx.num_devices();
        let clusters = ctx.devices()[0].properties().compute_capability >= (9, 0);
        let sweep = [graphs.len(), full_or_reduced(3, 1), settings.len()];
        for [gi, si, ki] in combinations(sweep) {
            let g = &graphs[gi];
            let s = sweep_source(g, si);
            let (solo, prio, block) = settings[ki];
            let o = tuned::<BfsUnderTest>(FusedMode::On, |w| {
                w.fused_driver = FusedDriver::Device;
                w.fused_tuning.block = Some(block);
                w.fused_tuning.solo_max = solo;
                w.fused_tuning.cluster = Some(true);
                w.prio_delta = prio;
            });
            let label = format!(
                "{} from {s} on {devices} devices, block {block}, solo {solo:?}, prio \
                 {prio:?}",
                g.name
            );
            let r = run_matching_the_reference::<BfsUnderTest>(&ctx, g, s, &o, &label);
            let w = &r.worklist;
            assert!(w.device_driven, "{label}: not device-driven");
            assert_eq!(w.items_processed(), w.items_produced() + 1, "{label}");
            assert_eq!(w.items_sent(), w.items_received(), "{label}");
            let cluster_rounds: u64 = w.devices.iter().map(|d| d.solo_cluster_rounds).sum();
            if !clusters {
                assert_eq!(cluster_rounds, 0, "{label}");
            } else if (g.name.starts_with("road") || (g.name == "wide tree" && s == 0))
                && solo != Some(1)
            {
                // The wide tree's level of fanout^2 items runs on the cluster (unless the
                // bound is under it) and appends fanout^3 / devices, past the cluster's
                // 4,096 frontier entries: spills.
                assert!(cluster_rounds > 0, "{label}: ran on one block");
            }
        }
    }
}

/// The graphs of [`the_cluster_mode_runs_in_device_driven_members`]: road grids cut by the
/// block partition (many levels cross it both ways), a sparse random graph, a symmetric path
/// and a wide tree. On reduced inputs smaller ones of each shape, whose runs still cross the
/// cuts and still run levels on the cluster: grids of 40 and 24 on a side, a path of 300
/// levels, and a tree whose last level, 13,824 items, spills past the cluster's frontiers on
/// each of up to 3 devices.
fn cluster_member_graphs() -> Vec<Graph> {
    let path = full_or_reduced(3000, 300);
    let chain: Vec<(u32, u32)> = (0..path - 1)
        .flat_map(|i| [(i, i + 1), (i + 1, i)])
        .collect();
    vec![
        generated(full_or_reduced(
            "road:side=120,p=0.6,seed=41",
            "road:side=40,p=0.6,seed=41",
        )),
        generated(full_or_reduced(
            "road:side=64,p=1,seed=42",
            "road:side=24,p=1,seed=42",
        )),
        generated(full_or_reduced(
            "random:n=5000,m=12000,seed=43",
            "random:n=1000,m=2400,seed=43",
        )),
        from_pairs(path as usize, &chain, "symmetric path"),
        wide_tree(full_or_reduced(30, 24)),
    ]
}

/// On one device the driver picks the kernel: `Device` runs the members' kernel in a group of
/// one (reported as device-driven), `Auto` and `Host` the one-device kernel.
#[test]
fn one_device_runs_the_members_kernel_only_when_asked() {
    let Some(ctx) = cuda_shared(1) else {
        return;
    };
    let g = generated("road:side=40,p=0.6,seed=5");
    for (mode, driver, device_driven) in [
        (FusedMode::On, FusedDriver::Auto, false),
        (FusedMode::On, FusedDriver::Host, false),
        (FusedMode::On, FusedDriver::Device, true),
    ] {
        let o = tuned::<BfsUnderTest>(mode, |w| w.fused_driver = driver);
        let label = format!("{mode:?} under {driver:?}");
        let r = run_matching_the_reference::<BfsUnderTest>(&ctx, &g, 0, &o, &label);
        assert!(r.fused, "{label}");
        assert_eq!(r.worklist.device_driven, device_driven, "{label}");
    }
}

/// A device-driven run whose inbox rings are far smaller than what crosses the partition over
/// the run: the rings wrap many times (each receiver frees what it read, each sender writes
/// only freed positions), and the result still equals the reference. The GPUs are this
/// test's alone: a member held back by another test's kernel on its GPU cannot read its
/// inbox, so a small ring fills and the run fails naming `--send-capacity` (as it should).
#[test]
fn small_inbox_rings_wrap_around_in_a_device_driven_run() {
    let Some(ctx) = cuda_alone(2) else {
        return;
    };
    if !members_can_run(&ctx) {
        return;
    }
    // Rings of 256 items (32 on the reduced grid, whose cut is a third as long): what
    // crosses at once is far less (a few items a level, read a level or two later), what
    // crosses over the run far more.
    let ring = full_or_reduced(256, 32);
    let g = generated(full_or_reduced(
        "road:side=600,p=0.6,seed=7",
        "road:side=200,p=0.6,seed=7",
    ));
    let n = g.num_vertices() as u32;
    let mut most_sent = 0;
    for s in first([0, n / 2, n - 1], 1) {
        let o = tuned::<BfsUnderTest>(FusedMode::On, |w| {
            w.fused_driver = FusedDriver::Device;
            w.send_capacity = Some(ring);
        });
        let r = run_matching_the_reference::<BfsUnderTest>(&ctx, &g, s, &o, &format!("from {s}"));
        most_sent = most_sent.max(r.worklist.items_sent());
    }
    assert!(
        most_sent > 2 * ring as u64,
        "{most_sent} items sent at most: the rings never wrapped"
    );
}

/// Members sharing one GPU (virtual devices under `--fused-driver device`) each run on their
/// share of it: the default grids run, equal to the reference with items crossing between the
/// members; Auto runs the same devices device-driven too; a grid beyond a member's share is
/// refused naming `--fused-grid` and the share, never launched (it could not start beside its
/// peers); and more members than a group holds are refused naming `--fused-driver`.
#[test]
fn members_sharing_one_gpu_run_on_their_share_of_it() {
    if let Some(ctx) = cuda_one_gpu(PEER_MAX_DEVICES + 1) {
        let g = generated("road:side=40,p=0.6,seed=8");
        let o = tuned::<BfsUnderTest>(FusedMode::On, |w| w.fused_driver = FusedDriver::Device);
        let err = run_in_blocks::<BfsUnderTest>(&ctx, &g, 0, &o)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--fused-driver") && err.contains(&format!("at most {PEER_MAX_DEVICES}")),
            "{err}"
        );
    }
    for devices in [2, 3] {
        let Some(ctx) = cuda_one_gpu(devices) else {
            return;
        };
        let g = generated(full_or_reduced(
            "road:side=200,p=0.6,seed=8",
            "road:side=80,p=0.6,seed=8",
        ));
        let s = sweep_source(&g, 1);
        let mut o = tuned::<BfsUnderTest>(FusedMode::On, |w| w.fused_driver = FusedDriver::Device);
        let label = format!("{devices} members on one GPU");
        let r = run_matching_the_reference::<BfsUnderTest>(&ctx, &g, s, &o, &label);
        let w = &r.worklist;
        assert!(w.device_driven, "{label}: not device-driven");
        assert!(w.items_received() > 0, "{label}: nothing crossed");
        assert_eq!(w.items_sent(), w.items_received(), "{label}");
        let auto_label = format!("{label}, auto");
        let auto = run_matching_the_reference::<BfsUnderTest>(
            &ctx,
            &g,
            s,
            &options(FusedMode::On),
            &auto_label,
        );
        assert!(auto.worklist.device_driven, "{auto_label}");
        // More blocks than any GPU holds resident on one multiprocessor.
        let multiprocessors = ctx.devices()[0].properties().multiprocessors;
        o.worklist.fused_tuning.grid = Some(64 * multiprocessors);
        let err = run_in_blocks::<BfsUnderTest>(&ctx, &g, s, &o)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--fused-grid") && err.contains(&format!("1/{devices}")),
            "{label}: {err}"
        );
    }
}

/// Auto picks the device-driven run on several devices with peer access, and the same run
/// repeated on one solver gives the same levels (the inboxes and counters reset per run).
#[test]
fn auto_runs_device_driven_where_the_gpus_allow_it_and_repeats() {
    let Some(ctx) = cuda_shared(2) else {
        return;
    };
    let g = generated("road:side=40,p=0.6,seed=5");
    let n = g.num_vertices();
    // A source whose component spans both devices' halves (block partition), so the run
    // must exchange items.
    let (source, expected) = [0, n / 2, n / 2 - 1, n / 3, n - 1]
        .into_iter()
        .map(|s| (s as u32, BfsUnderTest::reference(&g.csr, s as u32)))
        .find(|(_, levels)| {
            let reached = |r: std::ops::Range<usize>| levels[r].iter().any(|&l| l != UNREACHED);
            reached(0..n / 2) && reached(n / 2..n)
        })
        .expect("a source of the test grid reaches both halves");
    let devices = ctx.num_devices();
    let parted = groute_graph::partition_graph(
        g.clone(),
        devices,
        groute_graph::PartitionMethod::Block,
        &groute_graph::NoProgress,
    )
    .unwrap();
    let mut solver = groute_bfs::BfsSolver::new(&ctx, &parted, &options(FusedMode::Auto)).unwrap();
    for round in 0..full_or_reduced(3, 2) {
        let r = solver
            .run(source)
            .unwrap_or_else(|e| panic!("run {round}: {e}"));
        assert_eq!(r.levels, expected, "run {round}");
        assert!(r.stats.fused, "run {round}");
        // On distinct GPUs with peer access and on members sharing one alike.
        assert_eq!(
            r.stats.worklist.device_driven,
            PeerGroup::auto_device_driven(&ctx),
            "run {round}"
        );
        if PeerGroup::auto_device_driven(&ctx) {
            assert!(
                r.stats.worklist.items_received() > 0,
                "run {round}: the traversal crosses the partition"
            );
        }
    }
}

/// Where the worklist BFS runs device-driven on several CUDA devices and its options leave
/// the band open, it runs soft priority by bands of `PRIO_DELTA_DEVICE_DRIVEN` levels: on a
/// path three bands deep across a block partition the devices advance their thresholds. The
/// host backend's members, and an explicit band of 0, keep priority off. Levels equal the
/// reference everywhere.
#[test]
fn device_driven_runs_default_to_bands_of_levels() {
    let depth = 3 * PRIO_DELTA_DEVICE_DRIVEN + 5;
    let g = directed_path(depth + 1, "path");
    let expected = BfsUnderTest::reference(&g.csr, 0);
    let parted = groute_graph::partition_graph(
        g,
        2,
        groute_graph::PartitionMethod::Block,
        &groute_graph::NoProgress,
    )
    .unwrap();
    let check = |ctx: &groute_core::Context, cuda: bool| {
        let banded = cuda && PeerGroup::auto_device_driven(ctx);
        for (prio, band) in [
            (None, if banded { PRIO_DELTA_DEVICE_DRIVEN } else { 0 }),
            (Some(0), 0),
        ] {
            let mut opts = options(FusedMode::Auto);
            opts.worklist.prio_delta = prio;
            let r = groute_bfs::bfs(ctx, &parted, 0, &opts)
                .unwrap_or_else(|e| panic!("cuda {cuda}, prio {prio:?}: {e}"));
            let label = format!("cuda {cuda}, prio {prio:?}");
            assert_eq!(r.levels, expected, "{label}");
            assert_eq!(r.stats.prio_delta, band, "{label}");
            assert_eq!(r.stats.worklist.device_driven, cuda && banded, "{label}");
            if band > 0 {
                assert!(r.stats.epochs > 0 && r.stats.items_deferred > 0, "{label}");
            } else {
                assert_eq!((r.stats.epochs, r.stats.items_deferred), (0, 0), "{label}");
            }
        }
    };
    check(&groute_core::Context::host(2).unwrap(), false);
    if let Some(ctx) = cuda_alone(2) {
        check(&ctx, true);
    }
}
