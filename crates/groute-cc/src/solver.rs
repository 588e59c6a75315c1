//! [`CcSolver`]: the graph staged once, any number of runs.

use groute_core::Context;
use groute_graph::Graph;

use crate::{CcError, CcOptions, CcResult, StagedEdges, connected_components};

/// Connected components with the graph staged once: [`CcSolver::new`] copies the edge list
/// into pinned host memory ([`StagedEdges`]); each [`CcSolver::run`] streams it to the
/// devices, hooks, merges and returns the labels (see the crate docs for what
/// [`crate::CcStats::elapsed`] times).
///
/// In the dataflow of this algorithm the edges travel from the host on every run (the
/// scatter router hands chunks to whichever device is free), so what is kept across runs is
/// the staged edge list; routers and parent arrays are set up per run, outside the clock.
pub struct CcSolver {
    context: Context,
    staged: StagedEdges,
    options: CcOptions,
}

impl std::fmt::Debug for CcSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CcSolver")
            .field("staged", &self.staged)
            .field("options", &self.options)
            .finish()
    }
}

impl CcSolver {
    /// Stages the edges of `graph` in pinned host memory of `context`.
    pub fn new(context: &Context, graph: &Graph, options: &CcOptions) -> Result<Self, CcError> {
        Ok(CcSolver {
            context: context.clone(),
            staged: StagedEdges::new(context, graph)?,
            options: options.clone(),
        })
    }

    /// The staged edge list.
    pub fn staged(&self) -> &StagedEdges {
        &self.staged
    }

    /// One run on every device of the context.
    pub fn run(&mut self) -> Result<CcResult, CcError> {
        connected_components(&self.context, &self.staged, &self.options)
    }
}
