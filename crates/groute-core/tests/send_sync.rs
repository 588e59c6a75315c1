//! The public handles can cross threads (compile-time checks, tokio style).

use groute_core::backend::counting::{CallCounts, CallSnapshot, CountingBackend};
use groute_core::router::{DispatchError, Multiplexer, OutputQueue};
use groute_core::*;

fn send<T: Send>() {}
fn sync<T: Sync>() {}
fn both<T: Send + Sync>() {}

#[test]
fn public_handles_are_send_and_sync() {
    both::<Context>();
    both::<Device>();
    both::<Stream>();
    both::<Event>();
    both::<EventPool>();
    both::<Buffer<u32>>();
    both::<Segment<u32>>();
    both::<MemoryPool>();
    both::<MemoryUsage>();
    both::<ByteSize>();
    both::<Link<u32>>();
    both::<LinkSender<u32>>();
    both::<LinkReceiver<u32>>();
    both::<Router<u32>>();
    both::<Multiplexer<u32>>();
    both::<OutputQueue<u32>>();
    both::<LinkConfig>();
    both::<groute_core::CopyMethod>();
    both::<Route>();
    both::<Error>();
    both::<PointToPoint>();
    both::<Scatter>();
    both::<Gather>();
    both::<Broadcast>();
    both::<Ring>();
    both::<OneWayReduction>();
    both::<TreeReduction>();
    both::<Box<dyn RoutingPolicy>>();
    both::<SendError<u32>>();
    both::<DispatchError<u32>>();
    both::<CountingBackend>();
    both::<CallCounts>();
    both::<CallSnapshot>();
    // Owned by one thread at a time, moved freely.
    send::<PendingSegment<u32>>();
    send::<EventFuture>();
    send::<EventPromise>();
    sync::<ReceiveTimeout>();
}
