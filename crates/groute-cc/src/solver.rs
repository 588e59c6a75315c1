//! [`CcSolver`]: the graph staged once, any number of runs.

use groute_core::Context;
use groute_graph::Graph;

use crate::{
    CcError, CcInput, CcOptions, CcResult, CcStorage, DeviceRows, StagedEdges, connected_components,
};

/// Receive buffers per device of a stream that [`CcStorage::Auto`] falls back to (where
/// [`CcOptions::input_buffers`] is unset): one chunk hooked while the next arrives.
const FALLBACK_BUFFERS: usize = 2;

/// Connected components with the graph staged once, as [`CcOptions::storage`] says: each
/// device's rows uploaded to it ([`DeviceRows`]) or the edge list copied into pinned host
/// memory ([`StagedEdges`]). Each [`CcSolver::run`] links, merges and returns the
/// labels (see the crate docs for what [`crate::CcStats::elapsed`] times); routers and parent
/// arrays are set up per run, outside the clock.
///
/// With [`CcStorage::Auto`], a graph whose rows the devices' memory cannot hold streams from
/// host memory instead, through two receive buffers per device unless
/// [`CcOptions::input_buffers`] says otherwise ([`CcSolver::storage_fallback`] says why); asked
/// for [`CcStorage::DeviceRows`], the solver fails with [`CcError::RowsDoNotFit`] there.
pub struct CcSolver {
    context: Context,
    edges: Edges,
    options: CcOptions,
    fallback: Option<groute_core::Error>,
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
            .field("fallback", &self.fallback)
            .finish()
    }
}

impl CcSolver {
    /// Stages the edges of `graph` for the devices of `context`, as `options.storage` says.
    pub fn new(context: &Context, graph: &Graph, options: &CcOptions) -> Result<Self, CcError> {
        let csr = &graph.csr;
        let mut options = options.clone();
        let mut fallback = None;
        let edges = match options.storage.resolve(csr.num_vertices(), csr.num_edges()) {
            CcStorage::HostStream => Edges::Staged(StagedEdges::new(context, graph)?),
            _ => match DeviceRows::new(context, graph) {
                Ok(rows) => Edges::Rows(rows),
                // The rows' buffers are freed by now. The stream's default prefills most of
                // a dense graph's edges into the devices, as much memory as the rows took:
                // two receive buffers per device instead, unless the options name a count.
                Err(CcError::RowsDoNotFit(e)) if options.storage == CcStorage::Auto => {
                    fallback = Some(e);
                    options.input_buffers = options.input_buffers.or(Some(FALLBACK_BUFFERS));
                    Edges::Staged(StagedEdges::new(context, graph)?)
                }
                Err(e) => return Err(e),
            },
        };
        Ok(CcSolver {
            context: context.clone(),
            edges,
            options,
            fallback,
        })
    }

    /// Why [`CcStorage::Auto`] streams the edges of a graph whose rows it would have kept on
    /// the devices: the device memory error their upload failed with (the one
    /// [`CcError::RowsDoNotFit`] carries; `None` where the storage is the one
    /// [`CcStorage::resolve`] picks).
    pub fn storage_fallback(&self) -> Option<&groute_core::Error> {
        self.fallback.as_ref()
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
