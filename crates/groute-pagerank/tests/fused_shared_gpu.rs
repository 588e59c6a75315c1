//! The device-driven loop (`Driver::Fused`) with its members sharing one GPU: virtual devices,
//! each member launched on its share of the GPU's resident blocks
//! (`groute_core::cuda::member_share`). This runs the members' exchanges (halo adds, inbox
//! appends, cross-device all-reduces) on a machine with a single GPU. On 2 and 3 members, runs
//! equal the reference within the crate docs' bounds, with contributions crossing between
//! them: on symmetric, directed and hub graphs, dangling vertices and self-loops, every sweep
//! divisor, one fence per round and the capped-register builds (`fused_driver`'s cases, which
//! run there on one device or on distinct GPUs). `Driver::Auto` runs device-driven on shared
//! GPUs too where the partition cuts few arcs (the sweeps where it cuts many), and more
//! members than a group holds are refused by name.
//!
//! Needs `GROUTE_TEST_CUDA=1`. Each test holds the GPU alone (members sharing a GPU start
//! together only beside no other test's kernel), in a binary of its own so that no test
//! without the lock runs kernels beside it.

mod common;

use common::{check_result, from_pairs, generated, options, with_hubs, with_in_hubs};
use groute_core::cuda::{PEER_MAX_DEVICES, member_share};
use groute_core::testing::{GpuHold, cuda_test, first, full_or_reduced};
use groute_graph::{Graph, NoProgress, PartitionMethod, partition_graph};
use groute_pagerank::{
    Driver, PageRankOptions, SPARSE_SWEEP_DIVISOR, SweepMode, pagerank, pagerank_reference,
};

fn fused(epsilon: f32, sweep_divisor: u32) -> PageRankOptions {
    let mut o = PageRankOptions {
        driver: Driver::Fused,
        ..options(epsilon)
    };
    o.tuning.sweep = SweepMode::Pull;
    o.tuning.sweep_divisor = Some(sweep_divisor);
    o
}

/// The grid of a device-driven member with the GPU to itself, under `o`'s kernel build
/// (`None`: CUDA not tested).
fn whole_gpu_grid(o: &PageRankOptions) -> Option<u32> {
    let ctx = cuda_test(1, Some(1), GpuHold::Alone)?;
    let g = generated("road:side=40,p=0.6,seed=5");
    let parted = partition_graph(g, 1, PartitionMethod::Block, &NoProgress).unwrap();
    let got = pagerank(&ctx, &parted, o).unwrap();
    Some(
        got.stats.devices[0]
            .fused_grid
            .expect("a device-driven run's grid"),
    )
}

/// Runs `o` (the fused driver) on `g` with 2 and 3 members on one GPU, block and METIS
/// partitions, and checks each run against the reference, each member's grid against its
/// share, and that contributions crossed; with `auto`, also that Auto runs device-driven there.
fn check_shared(g: &Graph, o: &PageRankOptions, auto: bool) {
    let Some(whole) = whole_gpu_grid(o) else {
        return;
    };
    let exact = pagerank_reference(&g.csr, f64::from(o.alpha));
    for devices in [2, 3] {
        let Some(ctx) = cuda_test(devices, Some(1), GpuHold::Alone) else {
            return;
        };
        for method in first([PartitionMethod::Block, PartitionMethod::Metis], 1) {
            let parted = partition_graph(g.clone(), devices, method, &NoProgress).unwrap();
            let what = format!(
                "{} on {devices} members of one GPU ({method}, eps {}, divisor {:?}, fence per \
                 round {}, {} blocks per SM)",
                g.name,
                o.epsilon,
                o.tuning.sweep_divisor,
                o.tuning.fused_fence_per_round,
                o.tuning.fused_blocks_per_sm
            );
            let got = pagerank(&ctx, &parted, o).unwrap_or_else(|e| panic!("{what}: {e}"));
            // check_result checks the device-driven run's profiles too.
            check_result(&exact, o, devices, &got, &what);
            let s = &got.stats;
            let mirrored: u64 = s.devices.iter().map(|p| p.mirror_values_sent).sum();
            assert!(mirrored > 0, "{what}: no share crossed");
            for (d, p) in s.devices.iter().enumerate() {
                assert_eq!(
                    p.fused_grid,
                    Some(member_share(whole, devices)),
                    "{what}: member {d}'s grid (the whole GPU: {whole})"
                );
            }
            if auto {
                let auto = PageRankOptions {
                    driver: Driver::Auto,
                    ..o.clone()
                };
                let got = pagerank(&ctx, &parted, &auto).unwrap();
                let expected = common::auto_on_several_devices(&parted);
                assert_eq!(got.stats.driver, expected, "{what}, auto");
                check_result(&exact, &auto, devices, &got, &format!("{what}, auto"));
            }
        }
    }
}

#[test]
fn members_sharing_one_gpu_run_on_their_share_of_it() {
    if let Some(ctx) = cuda_test(PEER_MAX_DEVICES + 1, Some(1), GpuHold::Alone) {
        let g = generated("road:side=40,p=0.6,seed=5");
        let parted =
            partition_graph(g, ctx.num_devices(), PartitionMethod::Block, &NoProgress).unwrap();
        let err = pagerank(&ctx, &parted, &fused(0.01, SPARSE_SWEEP_DIVISOR))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("at most {PEER_MAX_DEVICES}")) && err.contains("host-driven"),
            "{} members: {err}",
            PEER_MAX_DEVICES + 1
        );
    }
    let graphs = [
        (
            full_or_reduced("road:side=120,p=0.6,seed=5", "road:side=40,p=0.6,seed=5"),
            0.001,
        ),
        ("kron:scale=10,ef=8,sym,seed=3", 0.01),
        (
            full_or_reduced("random:n=3000,m=15000,seed=4", "random:n=600,m=1800,seed=7"),
            0.001,
        ),
    ];
    for (spec, epsilon) in graphs {
        check_shared(
            &generated(spec),
            &fused(epsilon, SPARSE_SWEEP_DIVISOR),
            true,
        );
    }
}

#[test]
fn shared_members_sweep_with_every_divisor() {
    for g in [
        generated("road:side=40,p=0.6,seed=5"),
        generated("random:n=600,m=1800,seed=7"),
    ] {
        for divisor in [0, u32::MAX] {
            check_shared(&g, &fused(0.01, divisor), false);
        }
    }
}

#[test]
fn shared_members_with_hubs_dangling_vertices_and_self_loops() {
    check_shared(&with_hubs(), &fused(0.01, 0), false);
    check_shared(&with_in_hubs(), &fused(0.01, SPARSE_SWEEP_DIVISOR), false);
    // 0 -> 1 -> 2 -> 0 cycle, 3 dangling, 4 a pure source with a self-loop, 5 isolated.
    let pairs = [(0, 1), (1, 2), (2, 0), (1, 3), (4, 4), (4, 0), (4, 3)];
    let g = from_pairs(6, &pairs, "dangling+loops");
    check_shared(&g, &fused(1e-4, SPARSE_SWEEP_DIVISOR), false);
}

#[test]
fn shared_members_with_one_fence_per_round_and_capped_registers() {
    let g = generated("random:n=3000,m=15000,seed=4");
    let mut fenced = fused(0.01, SPARSE_SWEEP_DIVISOR);
    fenced.tuning.fused_fence_per_round = true;
    check_shared(&g, &fenced, false);
    for blocks in [0, 6] {
        let mut capped = fused(0.01, SPARSE_SWEEP_DIVISOR);
        capped.tuning.fused_blocks_per_sm = blocks;
        check_shared(&with_hubs(), &capped, false);
    }
}
