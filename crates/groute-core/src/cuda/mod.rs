//! CUDA kernels: NVRTC compilation (cached per process and on disk), loaded modules, typed
//! launches, occupancy and cooperative launch. The kernel sources themselves live in the
//! `groute-kernels` crate (`kernels/`), organised by owner.
//!
//! | item | what |
//! |---|---|
//! | [`KernelSource`], [`KernelHeader`] | one embedded `.cu` file and one device header of `groute-kernels` (every header of `kernels/include/` is given to every compilation) |
//! | [`compile_ptx`] | NVRTC for `compute_XY` of the device, `--std=c++17`, cached by source, options, arch, NVRTC version |
//! | [`CudaModule::load`] | compile (once per process) + load (once per device) for a stream's device |
//! | [`CudaFunction`] | one kernel: [`CudaFunction::launch`], [`CudaFunction::launch_cooperative`], occupancy |
//! | [`KernelArg`], [`DevicePtr`], [`LaunchConfig`] | the typed launch path |
//! | [`peer_copy`], [`load_peer_copy`] | the SM-driven copy of `kernels/runtime/peer_copy.cu` (links' [`crate::CopyMethod::Kernel`]) |
//! | [`PeerGroup`], [`GpuSharing`], [`PeerArgs`], [`peer_group_probe`] | device-driven multi-device runs: the cross-device all-reduce and barrier of `kernels/include/peer_group.cuh` |
//!
//! Launch wrappers (here for the runtime's kernels, in the algorithm crates for theirs) follow
//! [`peer_copy`]: validate the sizes, take device pointers with [`DevicePtr::from_slice`],
//! launch with one `SAFETY` comment naming the kernel's signature, then
//! [`crate::backend::cuda::CudaStream::keep_alive`] the memory.

mod compile;
mod launch;
pub(crate) mod module;
mod peer_copy;
mod peer_group;

pub use compile::{
    NVRTC_OPTIONS_ENV, Ptx, arch_for, cache_dir, compile_options, compile_ptx, compile_uncached,
    nvrtc_version, toolkit_include_dir,
};
pub use groute_kernels::{KernelHeader, KernelSource};
pub use launch::{DevicePtr, KernelArg, KernelArgs, LaunchConfig};
pub use module::{CudaFunction, CudaModule};
pub(crate) use peer_copy::peer_copy_and_record;
pub use peer_copy::{PEER_COPY_BLOCK, kernel_copy_applies, load_peer_copy, peer_copy};
pub use peer_group::{
    GpuShare, GpuSharing, PEER_ABORTED, PEER_CANCELLED, PEER_MAILBOX_WORDS, PEER_MAX_DEVICES,
    PEER_MAX_VALUES, PEER_OK, PEER_POSTBOX_WORDS, PEER_START_WINDOW, PEER_TIMED_OUT, PeerArgs,
    PeerExchange, PeerGroup, PeerProbe, PeerRun, member_grid, member_share, peer_group_probe,
    peer_start_gate_probe,
};

pub use crate::backend::cuda::{CudaBackend, CudaEvent, CudaMemory, CudaOptions, CudaStream};
