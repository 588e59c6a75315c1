//! groute: asynchronous multi-GPU dataflow (facade; being written).
pub use groute_bfs as bfs;
pub use groute_core as core;
pub use groute_graph as graph;
pub use groute_pagerank as pagerank;
pub use groute_worklist as worklist;
