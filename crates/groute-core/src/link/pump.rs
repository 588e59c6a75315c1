//! The pump thread of one link output, and the output's construction.
//!
//! Most packets are pumped inline by the threads that send and release (see
//! [`super::output`]). The pump thread, one named thread per output, is the fallback: it
//! sleeps on the output's doorbell, rung by a thread that added work but could not pump it
//! (the lock was busy, or it runs inside a CUDA host callback), by the last input closing and
//! by the last receiver going away; it then runs a step under the lock. It alone stops the
//! output, at end of stream (every input closed, queue drained: receivers then see `None`)
//! or when the last receiver is dropped, and then exits.
//!
//! Buffers are allocated once, when the output is created, and only ever handed back and
//! forth (never reallocated on the hot path).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use bytemuck::Pod;
use crossbeam::channel::Receiver;

use super::config::{CopyIssuer, LinkConfig};
use super::copy_method::load_copy_kernel;
use super::copy_streams::CopyStreams;
use super::job::SendJob;
use super::output::Blocked;
pub(crate) use super::output::Output;
use super::queue::OutputQueue;
use super::receiver::LinkReceiver;
use crate::context::{Context, DeviceId};
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::sync::Mailbox;

/// Allocates the receive buffers of an output to `dst`, starts its pump thread (named
/// `name`) and returns the receiving end and the output (for senders that pump inline).
pub(crate) fn spawn_output<T: Pod>(
    ctx: &Context,
    dst: Endpoint,
    config: LinkConfig,
    queue: OutputQueue<SendJob<T>>,
    name: String,
) -> Result<(LinkReceiver<T>, Arc<Output<T>>)> {
    config.validate::<T>()?;
    load_copy_kernel(ctx, config.copy_method)?;
    let (buffers, streams) = match dst {
        Endpoint::Host => {
            let buffers = (0..config.num_buffers)
                .map(|_| ctx.alloc_host::<T>(config.packet_size))
                .collect::<Result<Vec<_>>>()?;
            (
                buffers,
                CopyStreams::per_source(config.copy_streams, DeviceId(0)),
            )
        }
        Endpoint::Device(d) => {
            let device = ctx.device(d)?;
            let buffers = (0..config.num_buffers)
                .map(|_| {
                    if config.holds_graph {
                        device.alloc_graph::<T>(config.packet_size)
                    } else {
                        device.alloc::<T>(config.packet_size)
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            let streams = match config.copy_issuer {
                CopyIssuer::Destination => {
                    CopyStreams::on_destination(ctx, d, config.copy_streams)?
                }
                CopyIssuer::Source => CopyStreams::per_source(config.copy_streams, d),
            };
            (buffers, streams)
        }
        Endpoint::Router(_) => {
            return Err(Error::invalid(
                "link destination",
                dst,
                "a link delivers to the host or a device; connect routers through their inputs",
            ));
        }
    };
    let delivered = Arc::new(Mailbox::new());
    let abandoned = Arc::new(AtomicBool::new(false));
    let waker = queue.waker();
    let doorbell = queue.wake_channel().clone();
    let output = Output::new(
        ctx,
        dst,
        config.packet_size,
        config.copy_method,
        buffers,
        streams,
        queue,
        Arc::clone(&delivered),
        Arc::clone(&abandoned),
    );
    let pumped = Arc::clone(&output);
    let pump = std::thread::Builder::new()
        .name(name.clone())
        .spawn(move || run(pumped, doorbell))
        .map_err(|source| Error::Spawn { name, source })?;
    let receiver = LinkReceiver::new(delivered, abandoned, waker, dst, pump);
    Ok((receiver, output))
}

/// The pump thread's loop (module docs).
fn run<T: Pod>(output: Arc<Output<T>>, doorbell: Receiver<()>) {
    loop {
        // Drain the rings before taking the lock: a ring that arrives later means work
        // added after this step looked, and wakes the next wait.
        while doorbell.try_recv().is_ok() {}
        let blocked = {
            let mut st = output.lock();
            output.pump(&mut st)
        };
        if blocked == Blocked::Stop {
            break;
        }
        if doorbell.recv().is_err() {
            break;
        }
    }
    output.stop();
}
