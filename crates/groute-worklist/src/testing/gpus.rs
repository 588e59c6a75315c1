//! The CUDA contexts of the shared bodies, each held on the process's GPU lock as its test
//! needs (`groute_core::testing::cuda_test`), `None` where CUDA is not tested, and whether a
//! context's devices can run device-driven.

use groute_core::Context;
use groute_core::cuda::{GpuSharing, PeerGroup};
use groute_core::testing::{GpuHold, GpuTest, cuda_test};

/// A CUDA context of `devices` devices, sharing the GPUs with the process's other tests.
pub fn cuda_shared(devices: usize) -> Option<GpuTest> {
    cuda_test(devices, None, GpuHold::Shared)
}

/// A CUDA context of `devices` devices, with no other test of the process on the GPUs
/// meanwhile: tests that ask a running kernel to stop, and device-driven runs, whose members
/// sharing a GPU start together only where it is free enough for all of them.
pub fn cuda_alone(devices: usize) -> Option<GpuTest> {
    cuda_test(devices, None, GpuHold::Alone)
}

/// Whether `context`'s devices can run device-driven (`FusedDriver::Device`): on distinct
/// GPUs with peer access, or as members sharing a GPU (virtual devices), each on its share.
pub fn members_can_run(context: &Context) -> bool {
    PeerGroup::check_sharing(context, GpuSharing::Split).is_ok()
}

/// The groups of members the device-driven bodies run on, in turn: 1, 2 and 3 devices, each
/// the test's alone ([`cuda_alone`]), with whether its members can run ([`members_can_run`]);
/// none where CUDA is not tested.
pub fn member_groups() -> impl Iterator<Item = (GpuTest, bool)> {
    [1, 2, 3].into_iter().map_while(|devices| {
        let context = cuda_alone(devices)?;
        let can_run = members_can_run(&context);
        Some((context, can_run))
    })
}
