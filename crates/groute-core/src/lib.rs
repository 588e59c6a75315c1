//! # groute-core: the Groute dataflow runtime
//!
//! Programs build a dataflow graph of **endpoints**, **links** and **routers**, then compute
//! asynchronously: no global barriers, every device computes and communicates on its own
//! (after Ben-Nun et al., *Groute: Asynchronous Multi-GPU Programming Model with
//! Applications to Large-scale Graph Processing*, ACM TOPC 7(3), 2020).
//!
//! | construct | what it is |
//! |---|---|
//! | [`Context`] | the runtime: its devices (virtual devices may share a physical one), per-device streams, event pools, memory pools, the [`Topology`] |
//! | [`Endpoint`] | anything that can communicate: the host, a device, a router |
//! | [`Segment<T>`] | a typed slice of a buffer on one endpoint, with its length and metadata |
//! | [`PendingSegment<T>`] | a segment still being received: the data plus the event that makes it valid |
//! | [`Event`], [`EventPool`], [`EventFuture`] | recorded markers, their pool, and a future for an event recorded later |
//! | [`DeviceTimer`] | an algorithm's time on the devices: timing events on every device's stream, max over devices (`None` on the host backend) |
//! | [`Stream`], [`Buffer<T>`], [`MemoryPool`] | ordered device work queues and typed device or pinned host memory |
//! | [`MemoryUsage`], [`ByteSize`] | device memory counted per device (current, peak, optional limit from [`ContextBuilder::device_memory_limit`]) and sizes such as `512M` parsed with [`parse_byte_size`] |
//! | [`Device::upload`], [`Device::download`], [`Device::download_into`], [`copy_in_parallel`] | copies between the caller's host memory and a device through two recycled pinned chunks of up to [`STAGING_CHUNK_BYTES`], pipelined, the host side on rayon's threads |
//! | [`Link<T>`] | src -> dst, packetized (`packet_size` elements) and multi-buffered (`num_buffers` receive buffers in flight); send returns an event future, receive a [`PendingSegment`]; `shutdown` is socket-like |
//! | [`Router<T>`] | N inputs -> M outputs; a [`RoutingPolicy`] picks the candidate outputs of each message, the [`router::Multiplexer`] assigns them (availability, priority, broadcast) over per-output queues, with no router-wide lock |
//! | [`RoutingPolicy`] | user callback; built-ins: [`PointToPoint`], [`Scatter`], [`Gather`], [`Broadcast`], [`Ring`], [`OneWayReduction`], [`TreeReduction`] |
//! | [`backend`] | the seam: what a backend provides (memory, streams, events, copies), with the host and CUDA backends |
//! | [`choice_names!`], [`ParseChoiceError`] | the names of a flag's choices (`--driver auto\|fused\|host`): printed, parsed back, and the error listing them |
//!
//! Two backends sit under one control plane: the **host backend** (executor threads standing
//! in for devices, always available, with seeded jitter to shake out races) and the **CUDA
//! backend** (cudarc, loaded dynamically, so this crate builds on machines without CUDA).

pub mod backend;
mod byte_size;
mod choice;
mod context;
pub mod cuda; // CUDA kernels and launches (added by the CUDA backend engineer)
mod endpoint;
pub mod error;
mod event;
pub mod link;
mod memory;
pub mod router;
mod segment;
mod stream;
pub mod sync;
pub mod testing;
mod timer;
mod topology;
mod transfer;

pub use backend::host::{DEFAULT_STALL_TIMEOUT, Jitter};
#[doc(hidden)]
pub use backend::host::{Fault, FaultPlan};
pub use backend::{BackendKind, MemoryLocation, StreamPriority};
pub use byte_size::{ByteSize, parse_byte_size};
pub use choice::ParseChoiceError;
pub use context::{
    BackendChoice, Context, ContextBuilder, Device, DeviceId, MAX_DEVICES, outgrows_l2,
};
pub use endpoint::{Endpoint, RouterId};
pub use error::{Error, Result};
pub use event::{Event, EventCompletion, EventFuture, EventPool, EventPromise, event_promise};
pub use link::{
    CopyIssuer, CopyMethod, Link, LinkConfig, LinkReceiver, LinkSender, ReceiveTimeout, SendError,
};
pub use memory::{Buffer, MemoryPool, MemoryUsage};
pub use router::{
    Assignment, Broadcast, Gather, MessageInfo, OneWayReduction, PointToPoint, Ring, Route, Router,
    RoutingPolicy, Scatter, TreeReduction,
};
pub use segment::{PendingSegment, Segment};
pub use stream::Stream;
pub use timer::DeviceTimer;
pub use topology::{DeviceSummary, PeerLink, Topology};
pub use transfer::{STAGING_CHUNK_BYTES, copy_in_parallel};
