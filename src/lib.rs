#![doc = include_str!("../README.md")]
//!
//! ## Crates behind the facade
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | [`core`] | `groute-core` | context, endpoints, segments, links, routers, policies, events, pools, topology, the host and CUDA backends |
//! | [`graph`] | `groute-graph` | CSR, readers and writers, generators, METIS partitioning, input order |
//! | [`worklist`] | `groute-worklist` | the distributed worklist: SplitOps, ring, local worklists, termination, the generic min traversal |
//! | [`bfs`], [`pagerank`], [`cc`] | one crate each | reference, host kernels, CUDA launch wrappers, solver |
//! | [`pbf`] | this crate | predicate-based filtering through a scatter and a gather router (the paper's Figures 5-6) |
//! | [`prelude`] | this crate | everything an application needs: `use groute::prelude::*` |

pub use groute_bfs as bfs;
pub use groute_cc as cc;
pub use groute_core as core;
pub use groute_graph as graph;
pub use groute_pagerank as pagerank;
pub use groute_sssp as sssp;
pub use groute_worklist as worklist;
pub mod pbf;

/// Everything an application needs: `use groute::prelude::*`.
pub mod prelude {
    pub use groute_core::router::{DispatchError, Multiplexer, OutputQueue, Take};
    pub use groute_core::{
        Assignment, BackendChoice, BackendKind, Broadcast, Buffer, Context, ContextBuilder,
        CopyIssuer, CopyMethod, Device, DeviceId, DeviceTimer, Endpoint, Error, Event, EventFuture,
        Gather, Jitter, Link, LinkConfig, LinkReceiver, LinkSender, MessageInfo, OneWayReduction,
        PendingSegment, PointToPoint, ReceiveTimeout, Result, Ring, Route, Router, RoutingPolicy,
        Scatter, Segment, SendError, Stream, StreamPriority, TreeReduction,
    };
}
