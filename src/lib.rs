#![doc = include_str!("../README.md")]
//!
//! ## Crates behind the facade
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | [`core`] | `groute-core` | context, endpoints, segments, links, routers, policies, events, pools, topology, the host and CUDA backends |
//! | [`graph`] | `groute-graph` | CSR, readers and writers, generators, METIS partitioning, input order |
//! | [`worklist`] | `groute-worklist` | the distributed worklist: the `WorklistAlgorithm` trait and its executors, SplitOps, ring, local worklists, termination |
//! | [`dist`] | `groute-dist` | the distributed worklist across processes: ranks on one ring (MPI with the `mpi` feature), termination waves, results gathered to rank 0 |
//! | [`bfs`](mod@bfs), [`sssp`](mod@sssp), [`pagerank`](mod@pagerank), [`cc`](mod@cc) | one crate each | reference, host kernels, CUDA launch wrappers, solver |
//! | [`api`] | this crate | the high-level API, re-exported here: [`Graph`], [`bfs()`], [`sssp()`], [`pagerank()`], [`cc()`], [`Runner`], typed results |
//! | [`pbf`] | this crate | predicate-based filtering through a scatter and a gather router (the paper's Figures 5-6) |
//! | [`prelude`] | this crate | everything an application needs: `use groute::prelude::*` |

pub use groute_bfs as bfs;
pub use groute_cc as cc;
pub use groute_core as core;
pub use groute_dist as dist;
pub use groute_graph as graph;
pub use groute_pagerank as pagerank;
pub use groute_sssp as sssp;
pub use groute_worklist as worklist;
pub mod api;
pub mod pbf;

#[doc(hidden)]
pub use api::Tuning;
pub use api::{
    AlgorithmRun, ArcWeight, Backend, BfsRun, CcRun, DeviceMemory, Error, Execution, FileIds,
    Graph, IntoArc, PageRankParams, PageRankRun, ParseChoiceError, Partition, Result, RunFuture,
    RunStats, Runner, SsspRun, UNREACHED, WeightProblem, bfs, bfs_async, cc, cc_async, pagerank,
    pagerank_async, sssp, sssp_async,
};

/// Everything an application needs: `use groute::prelude::*`.
///
/// `Error` and `Result` here are the runtime's ([`groute_core::Error`]), for programs that
/// build their own dataflow; the high-level API's error is [`crate::Error`], here as
/// `GrouteError`.
pub mod prelude {
    pub use crate::api::{
        Backend, BfsRun, CcRun, Error as GrouteError, Execution, Graph, PageRankParams,
        PageRankRun, Partition, RunStats, Runner, SsspRun, UNREACHED,
    };
    pub use groute_core::router::{DispatchError, Multiplexer, OutputQueue, Take};
    pub use groute_core::{
        Assignment, BackendChoice, BackendKind, Broadcast, Buffer, Context, ContextBuilder,
        CopyIssuer, CopyMethod, Device, DeviceId, DeviceTimer, Endpoint, Error, Event, EventFuture,
        Gather, Jitter, Link, LinkConfig, LinkReceiver, LinkSender, MessageInfo, OneWayReduction,
        PendingSegment, PointToPoint, ReceiveTimeout, Result, Ring, Route, Router, RoutingPolicy,
        Scatter, Segment, SendError, Stream, StreamPriority, TreeReduction,
    };
}
