//! The traversal a shared test body runs ([`TraversalUnderTest`]) and what the body reads of
//! one of its runs ([`TraversalRun`]).

use std::time::Duration;

use groute_core::Context;
use groute_graph::{Csr, Graph, PartitionedGraph};

use crate::{TraversalError, TraversalName, WorklistOptions, WorklistStats};

/// A traversal from one source (BFS, SSSP) as the shared test bodies run it: its settings and
/// where its worklist settings sit in them, how it runs over a partitioned graph, its
/// sequential reference, and the graphs of every shape its fused suites cover. An algorithm
/// crate's tests implement it once, for a marker type of their own, with
/// [`traversal_under_test!`](crate::traversal_under_test) where the traversal has the API of
/// groute's traversals from one source.
pub trait TraversalUnderTest {
    /// The algorithm, which names the run's errors ([`TraversalError`]).
    type Algorithm: TraversalName + std::fmt::Debug;
    /// The traversal's settings (`BfsOptions`, `SsspOptions`).
    type Options: Clone;
    /// A solver of one partitioned graph, its storage allocated once, run from any source.
    type Solver;

    /// Whether a vertex's value is its level (BFS): every level is a round, so a run has more
    /// rounds than its deepest value, and a run deeper than a few levels runs some of them in
    /// single-block mode. The bodies assert these only then: SSSP's distances count no levels.
    const VALUES_ARE_LEVELS: bool;

    /// The soft-priority settings (`prio_delta`) the host checks ([`check`](super::host::check))
    /// run every graph with on a block partition, the last of them also on METIS: BFS its
    /// default (off), SSSP off and then its default band.
    const PRIORITIES: &'static [Option<u32>];

    /// The traversal's default settings as the suites run it (BFS: the worklist traversal,
    /// pushing; its direction-optimizing runs have suites of their own).
    fn base_options() -> Self::Options;

    /// The worklist settings within `options`: capacities, the fused mode and its tuning, soft
    /// priority and the time limit, which the bodies set.
    fn worklist(options: &mut Self::Options) -> &mut WorklistOptions;

    /// The one-shot traversal (`bfs`, `sssp`) from `source` over `graph` on `context`.
    fn traverse(
        context: &Context,
        graph: &PartitionedGraph,
        source: u32,
        options: &Self::Options,
    ) -> Result<TraversalRun, TraversalError<Self::Algorithm>>;

    /// A solver of `graph` on `context` (`BfsSolver::new`, `SsspSolver::new`).
    fn solver(
        context: &Context,
        graph: &PartitionedGraph,
        options: &Self::Options,
    ) -> Result<Self::Solver, TraversalError<Self::Algorithm>>;

    /// A run of `solver` from `source`.
    fn run(
        solver: &mut Self::Solver,
        source: u32,
    ) -> Result<TraversalRun, TraversalError<Self::Algorithm>>;

    /// The sequential reference's values from `source` (input order).
    fn reference(csr: &Csr, source: u32) -> Vec<u32>;

    /// Graphs of every shape the fused suites cover; on reduced inputs
    /// (`groute_core::testing::reduced`) the smallest of each.
    fn graphs() -> Vec<Graph>;
}

/// The error of a run of `T`.
pub type ErrorOf<T> = TraversalError<<T as TraversalUnderTest>::Algorithm>;

/// What the shared bodies read of a run: its values and the statistics every traversal from
/// one source reports, as its result gave them.
#[derive(Clone, Debug)]
pub struct TraversalRun {
    /// The value of each vertex in input order (`UNREACHED` where unreachable).
    pub values: Vec<u32>,
    /// Vertices reached from the source, as the result counts them.
    pub reached: usize,
    /// The largest value of a reached vertex, as the result finds it (BFS: its depth).
    pub deepest: u32,
    /// Expand rounds of the busiest device.
    pub rounds: u64,
    /// Work items processed on all devices.
    pub work_items: u64,
    /// Items sent over the ring.
    pub items_sent: u64,
    /// Items deferred to a low-priority list.
    pub items_deferred: u64,
    /// Soft-priority epochs.
    pub epochs: u64,
    /// Whether the run used the fused kernel (on the host backend: persistent members).
    pub fused: bool,
    /// The traversal's time on the devices (`None` on the host backend).
    pub device_time: Option<Duration>,
    /// The worklist's per-device counters.
    pub worklist: WorklistStats,
}

/// Implements [`TraversalUnderTest`](crate::testing::TraversalUnderTest) for a new marker
/// type `$name` over a traversal with the API of groute's traversals from one source (BFS,
/// SSSP: `crates/groute-bfs/tests/common/under_test.rs`, `crates/groute-sssp/tests/common`):
///
/// - `runs $algorithm`: the algorithm, which names the errors (`TraversalError<$algorithm>`);
/// - `options: $options = $base`: the settings, with the worklist's in their field
///   `worklist`, and the default ones the suites run ([`TraversalUnderTest::base_options`]);
/// - `solver: $solver`: its `new(context, graph, options)` and `run(source)`;
///   `one_shot: $one_shot`, the function `(context, graph, source, options)`; `reference`, the
///   sequential reference `(csr, source)`;
/// - `values: $values, deepest: $deepest`: the result's field of per-vertex values and its
///   method finding the largest value reached, beside its `reached()` and its `stats`, which
///   have the fields every traversal from one source reports ([`TraversalRun`]);
/// - `levels`, `priorities`, `graphs`: [`TraversalUnderTest::VALUES_ARE_LEVELS`],
///   [`TraversalUnderTest::PRIORITIES`] and [`TraversalUnderTest::graphs`].
///
/// [`TraversalUnderTest`]: crate::testing::TraversalUnderTest
/// [`TraversalUnderTest::base_options`]: crate::testing::TraversalUnderTest::base_options
/// [`TraversalUnderTest::VALUES_ARE_LEVELS`]: crate::testing::TraversalUnderTest::VALUES_ARE_LEVELS
/// [`TraversalUnderTest::PRIORITIES`]: crate::testing::TraversalUnderTest::PRIORITIES
/// [`TraversalUnderTest::graphs`]: crate::testing::TraversalUnderTest::graphs
/// [`TraversalRun`]: crate::testing::TraversalRun
#[macro_export]
macro_rules! traversal_under_test {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident runs $algorithm:ty {
            options: $options:ty = $base:expr,
            solver: $solver:ty, one_shot: $one_shot:path, reference: $reference:path,
            values: $values:ident, deepest: $deepest:ident,
            levels: $levels:expr, priorities: $priorities:expr, graphs: $graphs:expr $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name;

        impl $crate::testing::TraversalUnderTest for $name {
            type Algorithm = $algorithm;
            type Options = $options;
            type Solver = $solver;
            const VALUES_ARE_LEVELS: bool = $levels;
            const PRIORITIES: &'static [Option<u32>] = $priorities;

            fn base_options() -> $options {
                $base
            }

            fn worklist(options: &mut $options) -> &mut $crate::WorklistOptions {
                &mut options.worklist
            }

            fn traverse(
                context: &$crate::testing::macro_support::Context,
                graph: &$crate::testing::macro_support::PartitionedGraph,
                source: u32,
                options: &$options,
            ) -> Result<$crate::testing::TraversalRun, $crate::TraversalError<$algorithm>> {
                $one_shot(context, graph, source, options)
                    .map(|r| $crate::traversal_under_test!(@run r, $values, $deepest))
            }

            fn solver(
                context: &$crate::testing::macro_support::Context,
                graph: &$crate::testing::macro_support::PartitionedGraph,
                options: &$options,
            ) -> Result<$solver, $crate::TraversalError<$algorithm>> {
                <$solver>::new(context, graph, options)
            }

            fn run(
                solver: &mut $solver,
                source: u32,
            ) -> Result<$crate::testing::TraversalRun, $crate::TraversalError<$algorithm>> {
                solver
                    .run(source)
                    .map(|r| $crate::traversal_under_test!(@run r, $values, $deepest))
            }

            fn reference(csr: &$crate::testing::macro_support::Csr, source: u32) -> Vec<u32> {
                $reference(csr, source)
            }

            fn graphs() -> Vec<$crate::testing::macro_support::Graph> {
                $graphs
            }
        }
    };
    (@run $result:expr, $values:ident, $deepest:ident) => {{
        let result = $result;
        $crate::testing::TraversalRun {
            reached: result.reached(),
            deepest: result.$deepest(),
            values: result.$values,
            rounds: result.stats.rounds,
            work_items: result.stats.work_items,
            items_sent: result.stats.items_sent,
            items_deferred: result.stats.items_deferred,
            epochs: result.stats.epochs,
            fused: result.stats.fused,
            device_time: result.stats.device_time,
            worklist: result.stats.worklist,
        }
    }};
}
