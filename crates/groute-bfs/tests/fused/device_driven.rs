//! Device-driven fused runs on several devices (one persistent kernel per device, items
//! stored into the next device's inbox, termination counted on the devices): equal to the
//! reference on distinct GPUs and on members sharing one, with the cluster mode, with inbox
//! rings that wrap, chosen by Auto where the GPUs allow it, and refused clearly beyond a
//! member's share or a group's size.

use groute_bfs::{UNREACHED, bfs_reference};
use groute_core::cuda::{PEER_MAX_DEVICES, PeerGroup};
use groute_core::testing::{combinations, first, full_or_reduced};
use groute_worklist::traversal::{FusedDriver, FusedMode};

use crate::common::{cuda, cuda_alone_on, cuda_one_gpu, from_pairs, generated, graphs_for, run};
use crate::{members_can_run, options, wide_tree};

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
    for devices in [1, 2, 3] {
        let Some(ctx) = cuda_alone_on(devices) else {
            return;
        };
        if !members_can_run(&ctx) {
            let mut o = options(FusedMode::On);
            o.worklist.fused_driver = FusedDriver::Device;
            let g = generated("road:side=16,p=0.6,seed=2");
            let err = run(&ctx, &g, 0, &o).unwrap_err().to_string();
            assert!(err.contains("--fused-driver"), "{devices}: {err}");
            continue;
        }
        let graphs = graphs_for(devices);
        let settings = [
            (None, true, None, true),
            (None, true, None, false),
            (Some(0), true, None, true),
            (None, false, Some(2), true),
            (None, true, Some(2), true),
            (Some(u32::MAX), true, None, true),
            (Some(u32::MAX), true, None, false),
        ];
        for [gi, si, ki] in combinations([graphs.len(), 3, settings.len()]) {
            let g = &graphs[gi];
            let n = g.num_vertices() as u32;
            let s = [0, n / 2, n - 1][si];
            let (solo, shared, prio, cluster) = settings[ki];
            let expected = bfs_reference(&g.csr, s);
            let mut o = options(FusedMode::On);
            o.worklist.fused_driver = FusedDriver::Device;
            o.worklist.fused_tuning.solo_max = solo;
            o.worklist.fused_tuning.solo_shared = shared;
            o.worklist.fused_tuning.cluster = Some(cluster);
            o.worklist.prio_delta = prio;
            let label = format!(
                "{} from {s} on {devices} devices, solo {solo:?}, shared {shared}, \
                 prio {prio:?}, cluster {cluster}",
                g.name
            );
            let r = run(&ctx, g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(r.levels, expected, "{label}");
            assert!(r.stats.fused, "{label}");
            assert!(r.stats.worklist.device_driven, "{label}: not device-driven");
            assert!(r.stats.work_items >= r.reached() as u64, "{label}");
            let w = &r.stats.worklist;
            assert_eq!(
                w.items_processed(),
                w.items_produced() + 1,
                "{label}: every listed item expanded once, the seed too"
            );
            assert_eq!(
                w.items_sent(),
                w.items_received(),
                "{label}: every published item received"
            );
        }
    }
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
/// it runs.
#[test]
fn the_cluster_mode_runs_in_device_driven_members() {
    for devices in [1, 2, 3] {
        let Some(ctx) = cuda_alone_on(devices) else {
            return;
        };
        if !members_can_run(&ctx) {
            continue;
        }
        let clusters = ctx.devices()[0].properties().compute_capability >= (9, 0);
        let chain: Vec<(u32, u32)> = (0..2999).flat_map(|i| [(i, i + 1), (i + 1, i)]).collect();
        let graphs = [
            generated("road:side=120,p=0.6,seed=41"),
            generated("road:side=64,p=1,seed=42"),
            generated("random:n=5000,m=12000,seed=43"),
            from_pairs(3000, &chain, "symmetric path"),
            wide_tree(30),
        ];
        let settings = [
            (None, None, 1024),
            (None, Some(2), 1024),
            (Some(1), None, 1024),
            (Some(300), None, 512),
            (Some(u32::MAX), Some(2), 1024),
            (Some(u32::MAX), None, 512),
        ];
        for [gi, si, ki] in combinations([graphs.len(), 3, settings.len()]) {
            let g = &graphs[gi];
            let n = g.num_vertices() as u32;
            let s = [0, n / 2, n - 1][si];
            let (solo, prio, block) = settings[ki];
            let expected = bfs_reference(&g.csr, s);
            let mut o = options(FusedMode::On);
            o.worklist.fused_driver = FusedDriver::Device;
            o.worklist.fused_tuning.block = Some(block);
            o.worklist.fused_tuning.solo_max = solo;
            o.worklist.fused_tuning.cluster = Some(true);
            o.worklist.prio_delta = prio;
            let label = format!(
                "{} from {s} on {devices} devices, block {block}, solo {solo:?}, prio \
                 {prio:?}",
                g.name
            );
            let r = run(&ctx, g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(r.levels, expected, "{label}");
            let w = &r.stats.worklist;
            assert!(w.device_driven, "{label}: not device-driven");
            assert_eq!(w.items_processed(), w.items_produced() + 1, "{label}");
            assert_eq!(w.items_sent(), w.items_received(), "{label}");
            let cluster_rounds: u64 = w.devices.iter().map(|d| d.solo_cluster_rounds).sum();
            if !clusters {
                assert_eq!(cluster_rounds, 0, "{label}");
            } else if (g.name.starts_with("road") || (g.name == "wide tree" && s == 0))
                && solo != Some(1)
            {
                // The wide tree's level of 900 items runs on the cluster (unless the
                // bound is under it) and appends about 27,000 / devices: spills.
                assert!(cluster_rounds > 0, "{label}: ran on one block");
            }
        }
    }
}

/// On one device the driver picks the kernel: `Device` runs the members' kernel in a group of
/// one (reported as device-driven), `Auto` and `Host` the one-device kernel.
#[test]
fn one_device_runs_the_members_kernel_only_when_asked() {
    let Some(ctx) = cuda(1) else {
        return;
    };
    let g = generated("road:side=40,p=0.6,seed=5");
    let expected = bfs_reference(&g.csr, 0);
    for (mode, driver, device_driven) in [
        (FusedMode::On, FusedDriver::Auto, false),
        (FusedMode::On, FusedDriver::Host, false),
        (FusedMode::On, FusedDriver::Device, true),
    ] {
        let mut o = options(mode);
        o.worklist.fused_driver = driver;
        let label = format!("{mode:?} under {driver:?}");
        let r = run(&ctx, &g, 0, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.levels, expected, "{label}");
        assert!(r.stats.fused, "{label}");
        assert_eq!(r.stats.worklist.device_driven, device_driven, "{label}");
    }
}

/// A device-driven run whose inbox rings are far smaller than what crosses the partition over
/// the run: the rings wrap many times (each receiver frees what it read, each sender writes
/// only freed positions), and the result still equals the reference. The GPUs are this
/// test's alone: a member held back by another test's kernel on its GPU cannot read its
/// inbox, so a small ring fills and the run fails naming `--send-capacity` (as it should).
#[test]
fn small_inbox_rings_wrap_around_in_a_device_driven_run() {
    let Some(ctx) = cuda_alone_on(2) else {
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
        let expected = bfs_reference(&g.csr, s);
        let mut o = options(FusedMode::On);
        o.worklist.fused_driver = FusedDriver::Device;
        o.worklist.send_capacity = Some(ring);
        let r = run(&ctx, &g, s, &o).unwrap_or_else(|e| panic!("from {s}: {e}"));
        assert_eq!(r.levels, expected, "from {s}");
        most_sent = most_sent.max(r.stats.worklist.items_sent());
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
        let mut o = options(FusedMode::On);
        o.worklist.fused_driver = FusedDriver::Device;
        let err = run(&ctx, &g, 0, &o).unwrap_err().to_string();
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
        let s = g.num_vertices() as u32 / 2;
        let expected = bfs_reference(&g.csr, s);
        let mut o = options(FusedMode::On);
        o.worklist.fused_driver = FusedDriver::Device;
        let label = format!("{devices} members on one GPU");
        let r = run(&ctx, &g, s, &o).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(r.levels, expected, "{label}");
        let w = &r.stats.worklist;
        assert!(w.device_driven, "{label}: not device-driven");
        assert!(w.items_received() > 0, "{label}: nothing crossed");
        assert_eq!(w.items_sent(), w.items_received(), "{label}");
        let auto = run(&ctx, &g, s, &options(FusedMode::On)).unwrap();
        assert_eq!(auto.levels, expected, "{label}, auto");
        assert!(auto.stats.worklist.device_driven, "{label}, auto");
        // More blocks than any GPU holds resident on one multiprocessor.
        let multiprocessors = ctx.devices()[0].properties().multiprocessors;
        o.worklist.fused_tuning.grid = Some(64 * multiprocessors);
        let err = run(&ctx, &g, s, &o).unwrap_err().to_string();
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
    let Some(ctx) = cuda(2) else {
        return;
    };
    let g = generated("road:side=40,p=0.6,seed=5");
    let n = g.num_vertices();
    // A source whose component spans both devices' halves (block partition), so the run
    // must exchange items.
    let (source, expected) = [0, n / 2, n / 2 - 1, n / 3, n - 1]
        .into_iter()
        .map(|s| (s as u32, bfs_reference(&g.csr, s as u32)))
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
