//! groute: asynchronous multi-GPU dataflow (facade; being written).
//!
//! `use groute::prelude::*` brings in what an application needs: the context, endpoints,
//! segments, events, links, routers and the built-in routing policies.
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
        Assignment, BackendChoice, BackendKind, Broadcast, Buffer, Context, ContextBuilder, Device,
        DeviceId, Endpoint, Error, Event, EventFuture, Gather, Jitter, Link, LinkConfig,
        LinkReceiver, LinkSender, MessageInfo, OneWayReduction, PendingSegment, PointToPoint,
        ReceiveTimeout, Result, Ring, Route, Router, RoutingPolicy, Scatter, Segment, SendError,
        Stream, StreamPriority, TreeReduction,
    };
}
