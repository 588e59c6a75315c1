//! [`CcSolver`]: the graph staged once, any number of runs.

use groute_core::Context;
use groute_graph::Graph;

use crate::{
    CcError, CcInput, CcOptions, CcResult, CcStorage, DeviceRows, StagedEdges, connected_components,
};

/// Connected components with the graph staged once, as [`CcOptions::storage`] says: each
/// device's rows uploaded to it ([`DeviceRows`]) or the edge list copied into pinned host
/// memory ([`StagedEdges`]). Each [`CcSolver::run`] links, merges and returns the
/// labels (see the crate docs for what [`crate::CcStats::elapsed`] times); routers and parent
/// arrays are set up per run, outside the clock.
pub struct CcSolver {
    context: Context,
    edges: Edges,
    options: CcOptions,
}

/// What a [`CcSolver`] holds.
#[derive(Debug)]
enum Edges {
    Rows(DeviceRows),
    Staged(StagedEdges),
}

impl std::fmt::Debug for CcSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CcSolver")
            .field("edges", &self.edges)
            .field("options", &self.options)
            .finish()
    }
}

impl CcSolver {
    /// Stages the edges of `graph` for the devices of `context`, as `options.storage` says.
    pub fn new(context: &Context, graph: &Graph, options: &CcOptions) -> Result<Self, CcError> {
        let csr = &graph.csr;
        let edges = match options.storage.resolve(csr.num_vertices(), csr.num_edges()) {
            CcStorage::HostStream => Edges::Staged(StagedEdges::new(context, graph)?),
            _ => Edges::Rows(DeviceRows::new(context, graph)?),
        };
        Ok(CcSolver {
            context: context.clone(),
            edges,
            options: options.clone(),
        })
    }

    /// Where the edges are kept ([`CcStorage::Auto`] resolved).
    pub fn storage(&self) -> CcStorage {
        match &self.edges {
            Edges::Rows(_) => CcStorage::DeviceRows,
            Edges::Staged(_) => CcStorage::HostStream,
        }
    }

    /// The staged edge list (`None` where the devices hold the rows).
    pub fn staged(&self) -> Option<&StagedEdges> {
        match &self.edges {
            Edges::Staged(s) => Some(s),
            Edges::Rows(_) => None,
        }
    }

    /// The devices' rows (`None` where the edges stream from host memory).
    pub fn device_rows(&self) -> Option<&DeviceRows> {
        match &self.edges {
            Edges::Rows(r) => Some(r),
            Edges::Staged(_) => None,
        }
    }

    /// One run on every device of the context.
    pub fn run(&mut self) -> Result<CcResult, CcError> {
        let input = match &self.edges {
            Edges::Rows(r) => CcInput::Rows(r),
            Edges::Staged(s) => CcInput::Streamed(s),
        };
        connected_components(&self.context, input, &self.options)
    }
}
