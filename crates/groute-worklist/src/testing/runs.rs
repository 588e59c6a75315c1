//! Runs of a traversal under test as the bodies make them: its settings for the host and the
//! fused suites, a run over a block partition, checked against the reference or failing
//! with the name of a setting, and the sources and graphs of a sweep.

use std::time::Duration;

use groute_core::Context;
use groute_core::testing::scaled;
use groute_graph::Graph;
use groute_graph::testing::in_blocks;

use super::{ErrorOf, TraversalRun, TraversalUnderTest};
use crate::WorklistOptions;
use crate::traversal::FusedMode;

/// `T`'s settings for the host suites: a generous time limit, packets of 64 items and
/// batches of 256 (many packets and rounds on small graphs).
pub fn host_options<T: TraversalUnderTest>() -> T::Options {
    let mut options = T::base_options();
    let worklist = T::worklist(&mut options);
    worklist.time_limit = Some(scaled(Duration::from_secs(60)));
    worklist.packet_size = 64;
    worklist.max_batch = 256;
    options
}

/// `T`'s settings in fused `mode`, with a generous time limit.
pub fn fused_options<T: TraversalUnderTest>(mode: FusedMode) -> T::Options {
    tuned::<T>(mode, |_| {})
}

/// [`fused_options`] in `mode` with its worklist settings then changed by `tune`.
pub fn tuned<T: TraversalUnderTest>(
    mode: FusedMode,
    tune: impl FnOnce(&mut WorklistOptions),
) -> T::Options {
    let mut options = T::base_options();
    let worklist = T::worklist(&mut options);
    worklist.time_limit = Some(scaled(Duration::from_secs(60)));
    worklist.fused = mode;
    tune(worklist);
    options
}

/// `T` from `source` on `context`, over `graph` cut into a block per device.
pub fn run_in_blocks<T: TraversalUnderTest>(
    context: &Context,
    graph: &Graph,
    source: u32,
    options: &T::Options,
) -> Result<TraversalRun, ErrorOf<T>> {
    T::traverse(
        context,
        &in_blocks(graph, context.num_devices())?,
        source,
        options,
    )
}

/// [`run_in_blocks`], asserted to succeed with the reference's values; `label` names the run
/// in a failure.
pub fn run_matching_the_reference<T: TraversalUnderTest>(
    context: &Context,
    graph: &Graph,
    source: u32,
    options: &T::Options,
    label: &str,
) -> TraversalRun {
    let run = run_in_blocks::<T>(context, graph, source, options)
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(run.values, T::reference(&graph.csr, source), "{label}");
    run
}

/// Asserts that `T` from vertex 0 of `graph` on `context` with `options` fails naming
/// `setting` (a flag such as `--wl-capacity`).
pub fn assert_fails_naming<T: TraversalUnderTest>(
    context: &Context,
    graph: &Graph,
    options: &T::Options,
    setting: &str,
) {
    match run_in_blocks::<T>(context, graph, 0, options) {
        Err(e) => assert!(e.to_string().contains(setting), "{setting}: {e}"),
        Ok(_) => panic!("{}: ran, expected an error naming {setting}", graph.name),
    }
}

/// Source `which` of a sweep over `graph`'s sources: vertex 0, the middle vertex, the last.
pub fn sweep_source(graph: &Graph, which: usize) -> u32 {
    let n = graph.num_vertices() as u32;
    [0, n / 2, n - 1][which]
}

/// `T`'s graphs of every shape ([`TraversalUnderTest::graphs`]) with at least one vertex per
/// device of `devices`.
pub fn graphs_for<T: TraversalUnderTest>(devices: usize) -> Vec<Graph> {
    T::graphs()
        .into_iter()
        .filter(|g| g.num_vertices() >= devices)
        .collect()
}
