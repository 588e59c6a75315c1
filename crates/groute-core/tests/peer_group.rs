//! The cross-device all-reduce and barrier of device-driven runs (`cuda::PeerGroup`,
//! `kernels/include/peer_group.cuh`): who may use it, and on the GPU machine
//! (GROUTE_TEST_CUDA=1) the probe kernel's sums and peer stores on every device count the
//! machine allows.

use std::time::Duration;

use groute_core::cuda::{
    CudaModule, GpuSharing, PeerExchange, PeerGroup, member_grid, member_share, peer_group_probe,
    peer_start_gate_probe,
};
use groute_core::testing::{cuda_context, cuda_context_on, cuda_required};
use groute_core::{Context, Error};

#[test]
fn the_host_backend_is_refused_with_the_fix_named() {
    let ctx = Context::host(2).expect("host backend");
    let err = PeerGroup::new(&ctx).expect_err("host contexts have no peer group");
    assert!(matches!(err, Error::PeerGroupUnsupported { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("CUDA backend"), "{text}");
    assert!(text.contains("host-driven"), "{text}");
    assert!(!PeerGroup::supported(&ctx));
    let split = PeerGroup::check_sharing(&ctx, GpuSharing::Split).unwrap_err();
    assert!(split.to_string().contains("CUDA backend"), "{split}");
}

/// Virtual devices on one GPU pass only the check of members that split it, and count the
/// members on each GPU (GROUTE_TEST_CUDA=1).
#[test]
fn virtual_devices_on_one_gpu_may_only_split_it() {
    for devices in [2usize, 3] {
        let Some(ctx) = cuda_context_on(devices, Some(1)) else {
            return;
        };
        let err = PeerGroup::check(&ctx).unwrap_err().to_string();
        assert!(err.contains("distinct physical GPUs"), "{devices}: {err}");
        PeerGroup::check_sharing(&ctx, GpuSharing::Split)
            .unwrap_or_else(|e| panic!("{devices} members splitting one GPU: {e}"));
        let group = PeerGroup::new_sharing(&ctx, GpuSharing::Split).unwrap();
        for d in 0..devices {
            assert_eq!(group.members_on_gpu(d), devices, "{devices}: member {d}");
        }
        assert_eq!(
            group.members_on_gpu(devices),
            0,
            "{devices}: no such member"
        );
    }
}

/// A member's cooperative grid is its share of the kernel's resident blocks; a share that
/// holds none is an error naming the setting, the fallback and, on a shared GPU, fewer devices
/// (GROUTE_TEST_CUDA=1).
#[test]
fn a_member_grid_is_its_share_or_an_error_naming_the_fallback() {
    let Some(ctx) = cuda_context(1) else {
        return;
    };
    let stream = ctx.devices()[0].stream().raw();
    let function = CudaModule::load(stream.as_ref(), &groute_kernels::runtime::PEER_GROUP)
        .and_then(|m| m.function("peer_group_probe"))
        .unwrap();
    let block = 256;
    let resident = function.max_resident_grid(block, 0).unwrap();
    assert!(resident > 0, "the probe kernel fits");
    for members in [1, 2, 3] {
        let grid = member_grid(&function, "probe grid", block, members, "--driver host")
            .unwrap_or_else(|e| panic!("{members} members: {e}"));
        assert_eq!(grid, member_share(resident, members), "{members} members");
    }
    // More members than blocks leave each share empty.
    let crowd = resident as usize + 1;
    let err = member_grid(&function, "probe grid", block, crowd, "--driver host")
        .unwrap_err()
        .to_string();
    for part in [
        "probe grid",
        "peer_group_probe",
        "--driver host",
        "fewer devices",
        &format!("1/{crowd}"),
    ] {
        assert!(err.contains(part), "missing {part:?}: {err}");
    }
    assert!(!err.contains("  "), "a run of spaces in the message: {err}");
}

#[test]
fn failures_name_the_device_and_the_cause() {
    let timed_out = PeerGroup::failure(1, groute_core::cuda::PEER_TIMED_OUT).to_string();
    assert!(
        timed_out.contains("device 1") && timed_out.contains("timeout"),
        "{timed_out}"
    );
    let aborted = PeerGroup::failure(0, groute_core::cuda::PEER_ABORTED).to_string();
    assert!(
        aborted.contains("device 0") && aborted.contains("stopped"),
        "{aborted}"
    );
}

#[test]
fn every_member_sees_every_sum_and_every_peer_store() {
    for devices in [1usize, 2, 4, 8] {
        let Some(ctx) = cuda_context(devices) else {
            return;
        };
        let shared_gpu = ctx.devices().iter().enumerate().any(|(i, a)| {
            ctx.devices()[i + 1..]
                .iter()
                .any(|b| a.physical() == b.physical())
        });
        let mut group = match PeerGroup::new(&ctx) {
            Ok(group) => group,
            Err(e) => {
                // Only a context whose devices share a GPU (or lack peer access) is refused.
                assert!(matches!(e, Error::PeerGroupUnsupported { .. }), "{e:?}");
                assert!(
                    shared_gpu || e.to_string().contains("peer access"),
                    "{devices} devices refused without a reason: {e}"
                );
                eprintln!("{devices} devices: {e}");
                continue;
            }
        };
        assert!(!shared_gpu, "a group was built over devices sharing a GPU");
        group.set_timeout(groute_core::testing::scaled(Duration::from_secs(20)));
        for method in [PeerExchange::Mailbox, PeerExchange::Posted] {
            for (words, exchanges) in [(1u32, 2_000u32), (4_096, 200)] {
                let probe = peer_group_probe(&group, words, exchanges, method).expect("probe runs");
                assert_eq!(probe.exchanges, exchanges, "{devices} devices, {method:?}");
                assert_eq!(
                    probe.mismatches, 0,
                    "{devices} devices, {words} words, {method:?}"
                );
                eprintln!(
                    "{devices} devices, {words} words per peer, {method:?}: {:.2} us per exchange",
                    probe.exchange_us
                );
            }
        }
    }
}

/// CUDA, several GPUs: a member launched alone cancels the start within the start window
/// instead of waiting for peers that never start, and the group runs normally afterwards.
#[test]
fn a_member_started_alone_cancels_the_start_and_the_group_still_runs() {
    for devices in [2usize, 4] {
        let Some(ctx) = cuda_context(devices) else {
            return;
        };
        let Ok(group) = PeerGroup::new(&ctx) else {
            continue; // refused: covered by every_member_sees_every_sum_and_every_peer_store
        };
        let started = std::time::Instant::now();
        assert!(
            peer_start_gate_probe(&group).expect("the lone member completes"),
            "{devices} devices: a lone member's start was not cancelled"
        );
        eprintln!(
            "{devices} devices: a lone member left after {:?}",
            started.elapsed()
        );
        let probe =
            peer_group_probe(&group, 1, 100, PeerExchange::Mailbox).expect("probe runs after");
        assert_eq!((probe.exchanges, probe.mismatches), (100, 0));
    }
}

/// A group waits for its members as long as its context's stall timeout (forever without one),
/// and every context of the process shares one CUDA backend, so that kernels load once per
/// process (GROUTE_TEST_CUDA=1).
#[test]
fn a_group_waits_the_contexts_stall_timeout_and_contexts_share_the_backend() {
    if !cuda_required() {
        return;
    }
    let build = |timeout| {
        Context::builder()
            .devices(2)
            .backend(groute_core::BackendChoice::Cuda)
            .physical_devices(1)
            .stall_timeout(timeout)
            .build()
            .expect("a CUDA context")
    };
    let (five, forever) = (build(Some(Duration::from_secs(5))), build(None));
    assert_eq!(five.stall_timeout(), Some(Duration::from_secs(5)));
    let group = PeerGroup::new_sharing(&five, GpuSharing::Split).unwrap();
    assert_eq!(group.timeout(), Duration::from_secs(5));
    let group = PeerGroup::new_sharing(&forever, GpuSharing::Split).unwrap();
    assert_eq!(group.timeout(), Duration::MAX);
    assert!(std::sync::Arc::ptr_eq(five.backend(), forever.backend()));
}
