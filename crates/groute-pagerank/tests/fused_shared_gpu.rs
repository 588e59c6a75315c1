//! The device-driven loop (`Driver::Fused`) with its members sharing one GPU: virtual devices,
//! each member launched on its share of the GPU's resident blocks
//! (`groute_core::cuda::member_share`). This runs the members' exchanges (halo adds, inbox
//! appends, cross-device all-reduces) on a machine with a single GPU. Runs equal the reference
//! within the crate docs' bounds on 2 and 3 members, with contributions crossing between them.
//! `Driver::Auto` stays host-driven on shared GPUs, and more members than a group holds are
//! refused by name.
//!
//! Needs `GROUTE_TEST_CUDA=1`. The test holds the GPU alone (members sharing a GPU start
//! together only beside no other test's kernel), in a binary of its own so that no test
//! without the lock runs kernels beside it.

mod common;

use common::{check_result, generated, options};
use groute_core::cuda::{PEER_MAX_DEVICES, member_share};
use groute_core::testing::{GpuHold, cuda_test};
use groute_graph::{NoProgress, PartitionMethod, partition_graph};
use groute_pagerank::{Driver, PageRankOptions, SweepMode, pagerank, pagerank_reference};

fn fused(epsilon: f32) -> PageRankOptions {
    PageRankOptions {
        driver: Driver::Fused,
        sweep: SweepMode::Pull,
        ..options(epsilon)
    }
}

#[test]
fn members_sharing_one_gpu_run_on_their_share_of_it() {
    if let Some(ctx) = cuda_test(PEER_MAX_DEVICES + 1, Some(1), GpuHold::Alone) {
        let g = generated("road:side=40,p=0.6,seed=5");
        let parted =
            partition_graph(g, ctx.num_devices(), PartitionMethod::Block, &NoProgress).unwrap();
        let err = pagerank(&ctx, &parted, &fused(0.01))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("at most {PEER_MAX_DEVICES}")) && err.contains("host-driven"),
            "{} members: {err}",
            PEER_MAX_DEVICES + 1
        );
    }
    // The grid of a member with the GPU to itself.
    let whole = {
        let Some(ctx) = cuda_test(1, Some(1), GpuHold::Alone) else {
            return;
        };
        let g = generated("road:side=40,p=0.6,seed=5");
        let parted = partition_graph(g, 1, PartitionMethod::Block, &NoProgress).unwrap();
        let got = pagerank(&ctx, &parted, &fused(0.01)).unwrap();
        got.stats.devices[0]
            .fused_grid
            .expect("a device-driven run's grid")
    };
    let graphs = [
        ("road:side=120,p=0.6,seed=5", 0.001),
        ("kron:scale=10,ef=8,sym,seed=3", 0.01),
        ("random:n=3000,m=15000,seed=4", 0.001),
    ];
    for devices in [2, 3] {
        let Some(ctx) = cuda_test(devices, Some(1), GpuHold::Alone) else {
            return;
        };
        for (spec, epsilon) in graphs {
            let g = generated(spec);
            let o = fused(epsilon);
            let exact = pagerank_reference(&g.csr, f64::from(o.alpha));
            for method in [PartitionMethod::Block, PartitionMethod::Metis] {
                let parted = partition_graph(g.clone(), devices, method, &NoProgress).unwrap();
                let what = format!("{spec} on {devices} members of one GPU ({method})");
                let got = pagerank(&ctx, &parted, &o).unwrap_or_else(|e| panic!("{what}: {e}"));
                // check_result checks the device-driven run's profiles too.
                check_result(&exact, &o, devices, &got, &what);
                let s = &got.stats;
                let cut: u64 = s.devices.iter().map(|p| p.cut_arcs_sent).sum();
                assert!(cut + s.items_sent > 0, "{what}: nothing crossed");
                for (d, p) in s.devices.iter().enumerate() {
                    assert_eq!(
                        p.fused_grid,
                        Some(member_share(whole, devices)),
                        "{what}: member {d}'s grid (the whole GPU: {whole})"
                    );
                }
                let auto = PageRankOptions {
                    driver: Driver::Auto,
                    ..o.clone()
                };
                let got = pagerank(&ctx, &parted, &auto).unwrap();
                assert_eq!(got.stats.driver, Driver::Host, "{what}, auto");
                check_result(&exact, &auto, devices, &got, &format!("{what}, auto"));
            }
        }
    }
}
