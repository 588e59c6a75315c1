//! PageRank on CUDA: the typed launch wrappers of `kernels/pagerank/` (public) and the two
//! executors that call them, host-driven and device-driven, over one device storage
//! (crate-internal).
//!
//! - `launch.rs`: typed launch wrappers of `kernels/pagerank/pagerank.cu`, their `#[repr(C)]` arguments and the control block's layout (re-exported here).
//! - [`pull_launch`]: launch wrappers of the pull sweep (`pagerank_pull_take`, `pagerank_pull_cut`, `pagerank_pull_gather`, `pagerank_pull_gather_tiles`).
//! - [`push_round_launch`]: launch wrappers of a push round of the synchronous sweeps (`pagerank_push_taken`, `pagerank_absorb`).
//! - [`device_driven_launch`]: launch wrapper of the device-driven loop (`pagerank_fused` in `kernels/pagerank/pagerank_fused.cu`).
//! - `boundary_launch.rs`: launch wrappers of the boundary exchange of PageRank across processes (`pagerank_pack_words`, `pagerank_unpack_words`) over checked index lists.
//! - `storage.rs`: one device's storage (`CudaPageRankStorage`), allocated once and reused by every run of either driver.
//! - `pull_storage.rs`: one device's pull-sweep storage (in-CSR rows, cut lists, hubs, share array), part of the above.
//! - `host_driven.rs`: the host-driven run's `groute_worklist::DeviceWorker` (a launch and a read-back per round, under the worklist's driver).
//! - `device_driven.rs`: the device-driven run ([`crate::Driver::Fused`]): one persistent kernel per device runs every round.
//!
//! | wrapper | kernel |
//! |---|---|
//! | [`launch_sweep`] | `pagerank_sweep`: a round over the owned range, as a range (vertices above a floor) |
//! | [`launch_expand`] | `pagerank_expand`: a round over `[first, first + count)` of the worklist |
//! | [`launch_push_hubs`] | `pagerank_push_hubs`: the hubs a sweep or expand listed, over the whole grid |
//! | [`launch_pack_remote`] | `pagerank_pack_remote`: merge before send (one item per remote vertex) |
//! | [`launch_split_receive`] | `pagerank_split_receive`: owners apply, others pass |
//! | [`pull_launch::launch_pull_take`], [`pull_launch::launch_pull_cut`], [`pull_launch::launch_pull_gather`] | the pull sweep's take, cut pass (several devices) and gather |
//! | [`push_round_launch::launch_push_taken`], [`push_round_launch::launch_absorb`] | a push round of the synchronous sweeps: the shares pushed, then absorbed by their owners |
//! | [`device_driven_launch::launch_fused`] | `pagerank_fused` (`kernels/pagerank/pagerank_fused.cu`): every round of a run in one persistent kernel per device |
//!
//! The `#[repr(C)]` argument structs mirror the kernel's (`PageRankOps`, and
//! `AppendBuffer<T>`, the bounded lists a kernel appends to, one parameter each) and
//! `kernels/include/worklist.cuh` (`groute::DeviceWorklist`), with size and offset
//! assertions. The worklist's control block is PageRank's: [`CTRL_WORDS`] words (the
//! worklist's, the append counters, [`CTRL_PUSHED`] and the hub list's 64-bit counter at
//! [`CTRL_HUB_COUNTER`], the take's 64-bit count of arcs at [`CTRL_TAKEN_ARCS`]) followed by the hub list's slots (`kernels/include/hubs.cuh`). Every wrapper validates sizes, takes device pointers with
//! [`DevicePtr::from_slice`](groute_core::cuda::DevicePtr::from_slice), launches with one `SAFETY` comment naming the signature, and
//! keeps the memory alive until the kernel completes. Nothing is synchronised: the caller
//! reads the counters and overflow words back after the kernel (an overflow is an error
//! naming the setting, never a loss).
//!
//! The distributed worklist's CUDA worker (`groute_worklist::DeviceWorker`) owns the
//! worklist and send buffers; these wrappers are what a PageRank worker calls.

pub(crate) mod boundary_launch;
pub mod device_driven_launch;
mod launch;
pub mod pull_launch;
pub mod push_round_launch;

pub(crate) mod device_driven;
pub(crate) mod host_driven;
pub(crate) mod pull_storage;
pub(crate) mod storage;

pub use launch::{
    AppendBuffers, CTRL_HUB_COUNTER, CTRL_PUSHED, CTRL_TAKEN_ARCS, CTRL_WORDS, DeviceWorklistArgs,
    DeviceWorklistBuffers, HUB_MIN_DEGREE, HUB_SLOT_WORDS, PAGERANK_BLOCK, PAGERANK_SOURCE,
    PageRankArgs, PageRankBuffers, launch_expand, launch_pack_remote, launch_push_hubs,
    launch_split_receive, launch_sweep,
};
