//! The runs' tuning ([`Tuning`]): every knob of the algorithms' GPU forms that changes how a
//! run computes, never what it computes, in one value that benchmarks and experiments set on
//! a [`Runner`](crate::Runner) with [`Runner::tuning`](crate::Runner::tuning). Applications
//! leave it alone: `Auto` picks by graph and device count, and the run's statistics say what
//! it picked.

use groute_bfs::BfsTuning;
use groute_pagerank::PageRankTuning;
use groute_worklist::traversal::FusedTuning;

/// Every tuning knob of a [`Runner`](crate::Runner)'s runs, each algorithm's own beside the
/// shared fused kernel's (the examples' hidden flags, listed by `--help-tuning`). The default
/// is what `Auto` picks; no setting changes a result (PageRank stays within its error bound).
///
/// ```
/// use groute::pagerank::{PageRankTuning, l1_distance};
/// use groute::{Backend, Graph, Runner, Tuning};
///
/// let graph = Graph::generate("kron:scale=9,ef=8,sym")?;
/// let worklist_rounds_only = Tuning {
///     pagerank: PageRankTuning { sweep_divisor: Some(0), ..PageRankTuning::default() },
///     ..Tuning::default()
/// };
/// let runner = Runner::new().backend(Backend::Host);
/// let tuned = runner.clone().tuning(worklist_rounds_only).pagerank(&graph)?;
/// let plain = runner.pagerank(&graph)?;
/// // The same ranks, each run within its own error bound of the exact ones.
/// let apart = l1_distance(&tuned.ranks, &plain.ranks);
/// assert!(apart <= tuned.error_bound() + plain.error_bound());
/// # Ok::<(), groute::Error>(())
/// ```
#[doc(hidden)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tuning {
    /// The fused persistent kernel of the worklist traversals: BFS and SSSP on the worklist,
    /// and CC's label propagation.
    pub fused: FusedTuning,
    /// The direction-optimizing BFS.
    pub bfs: BfsTuning,
    /// PageRank's rounds and its CUDA forms (checked when a run starts: an unsupported
    /// `fused_blocks_per_sm` is [`Error::PageRank`](crate::Error::PageRank)).
    pub pagerank: PageRankTuning,
}
