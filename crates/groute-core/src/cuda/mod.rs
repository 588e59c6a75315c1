//! CUDA kernels: embedded sources, NVRTC compilation (cached per process and on disk), loaded
//! modules, typed launches, occupancy and cooperative launch.
//!
//! | item | what |
//! |---|---|
//! | [`KernelSource`], [`KERNELS`], [`HEADERS`] | `kernels/*.cu` and `kernels/include/*.cuh`, embedded with `include_str!` |
//! | [`compile_ptx`] | NVRTC for `compute_XY` of the device, `--std=c++17`, cached by source, options, arch, NVRTC version |
//! | [`CudaModule::load`] | compile (once per process) + load (once per device) for a stream's device |
//! | [`CudaFunction`] | one kernel: [`CudaFunction::launch`], [`CudaFunction::launch_cooperative`], occupancy |
//! | [`KernelArg`], [`DevicePtr`], [`LaunchConfig`] | the typed launch path |
//! | [`pbf_filter`] | the typed wrapper of `kernels/pbf.cu` |
//! | [`peer_copy`], [`load_peer_copy`] | the SM-driven copy of `kernels/peer_copy.cu` (links' [`crate::CopyMethod::Kernel`]) |
//! | [`PeerGroup`], [`GpuSharing`], [`PeerArgs`], [`peer_group_probe`] | device-driven multi-device runs: the cross-device all-reduce and barrier of `kernels/include/peer_group.cuh` |
//!
//! Launch wrappers for an algorithm follow [`pbf_filter`]: validate the sizes, take device
//! pointers with [`DevicePtr::from_slice`], launch with one `SAFETY` comment naming the kernel's
//! signature, then [`crate::backend::cuda::CudaStream::keep_alive`] the memory.

mod compile;
mod launch;
pub(crate) mod module;
mod pbf;
mod peer_copy;
mod peer_group;
mod source;

pub use compile::{
    NVRTC_OPTIONS_ENV, Ptx, arch_for, cache_dir, compile_options, compile_ptx, compile_uncached,
    nvrtc_version, toolkit_include_dir,
};
pub use launch::{DevicePtr, KernelArg, KernelArgs, LaunchConfig};
pub use module::{CudaFunction, CudaModule};
pub use pbf::{ModuloPredicate, PBF_BLOCK, pbf_filter};
pub(crate) use peer_copy::peer_copy_and_record;
pub use peer_copy::{PEER_COPY_BLOCK, kernel_copy_applies, load_peer_copy, peer_copy};
pub use peer_group::{
    GpuShare, GpuSharing, PEER_ABORTED, PEER_CANCELLED, PEER_DEFAULT_TIMEOUT, PEER_MAILBOX_WORDS,
    PEER_MAX_DEVICES, PEER_MAX_VALUES, PEER_OK, PEER_POSTBOX_WORDS, PEER_START_WINDOW,
    PEER_TIMED_OUT, PeerArgs, PeerExchange, PeerGroup, PeerProbe, PeerRun, member_grid,
    member_share, peer_group_probe, peer_start_gate_probe,
};
pub use source::{
    BFS, BFS_DIRECTION, BFS_DIRECTION_FUSED, CC, FUSED_BARRIER, HEADERS, KERNELS, KernelHeader,
    KernelSource, PAGERANK, PAGERANK_FUSED, PBF, PEER_COPY, PEER_GROUP, SSSP,
};

pub use crate::backend::cuda::{CudaBackend, CudaEvent, CudaMemory, CudaOptions, CudaStream};
