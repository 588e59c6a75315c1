//! Test bodies written once for every traversal from one source (BFS, SSSP), so that each
//! algorithm and executor is tested by the same code.
//!
//! A crate describes its traversal once ([`TraversalUnderTest`]: its settings, how it runs
//! over a partitioned graph, its sequential reference, its graphs of every shape) and its
//! test binaries call the bodies here from `#[test]` functions of their own names, with the
//! inputs that are the algorithm's own (weighted graphs for SSSP, a fan chain for BFS). Tests
//! of one algorithm alone (SSSP's weights and bands, BFS's directions) stay in its crate.
//!
//! | module | its bodies |
//! |---|---|
//! | [`host`] | the reference on 1 to 8 devices, block and METIS partitions, jittered host contexts (and CUDA), on generated, special, shipped and random graphs and with soft priority; statistics and errors |
//! | [`fused_host`] | the fused mode on the host backend (persistent members) |
//! | [`fused_one_device`] | the fused persistent kernel on one CUDA device: every graph shape, block size, barrier variant and grid, the single-block mode (shared frontier, cluster) and soft priority |
//! | [`fused_bounded`] | bounded fused rounds on several CUDA devices |
//! | [`fused_device_driven`] | device-driven fused runs on one to three CUDA devices |
//!
//! The CUDA bodies run under `GROUTE_TEST_CUDA=1` and return at once elsewhere; each holds
//! the process's GPU lock as its test needs ([`cuda_shared`], [`cuda_alone`]). Every body
//! keeps `groute_core::testing`'s reduced inputs (`GROUTE_TEST_REDUCED=1`): at most three
//! devices, fewer sources, and sweeps in which each value of each option runs once; the
//! crates pass the smaller graphs.
//!
//! Test support, not a library interface: every body panics on a failed check or a failed
//! setup (a context, a partition, a run), naming the graph, source and settings, because a
//! panic is how a test fails. Nothing outside tests calls it.

pub mod fused_bounded;
pub mod fused_device_driven;
pub mod fused_host;
pub mod fused_one_device;
mod gpus;
pub mod host;
mod runs;
mod shipped;
mod under_test;

pub use gpus::{cuda_alone, cuda_shared, member_groups, members_can_run};
pub use runs::{
    assert_fails_naming, fused_options, graphs_for, host_options, run_in_blocks,
    run_matching_the_reference, sweep_source, tuned,
};
pub use shipped::{SMALL_SHIPPED_GRAPH, TINY_SHIPPED_GRAPH, shipped_graphs};
pub use under_test::{ErrorOf, TraversalRun, TraversalUnderTest};

/// What [`traversal_under_test!`](crate::traversal_under_test) names in the code it writes.
#[doc(hidden)]
pub mod macro_support {
    pub use groute_core::Context;
    pub use groute_graph::{Csr, Graph, PartitionedGraph};
}
