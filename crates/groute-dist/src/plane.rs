//! How items cross from one rank to the next: inside the ring's messages (host backend), or
//! as a length in the message and the items over a [`DevicePlane`] (CUDA across processes:
//! NCCL), or, for one rank whose ring closes on itself, by handing the staged buffer over.

use std::collections::VecDeque;

use bytemuck::Pod;
use groute_core::backend::RawSlice;
use groute_core::{Buffer, Context, DeviceId, Event, PendingSegment};

use crate::error::{DistError, Result};
use crate::ring::{Outbound, arrived, on_device_zero};

/// Moves device memory between the last device of a rank and the first device of the next,
/// stream-ordered. Every rank makes its sends in the order of its messages and its receives
/// in the order of the messages it takes, so the n-th receive of a rank matches the n-th
/// send of its predecessor.
pub(crate) trait DevicePlane: Send {
    /// Enqueues sending `items` (device memory of this rank's last device, valid once
    /// `ready` completes) to the next rank; the plane keeps the memory alive until it is sent.
    fn send(&mut self, items: &RawSlice, ready: &Event) -> Result<()>;
    /// Enqueues receiving the previous rank's next send into `into` (device memory of device
    /// 0, of the send's length); the event completes once the bytes have landed.
    fn receive(&mut self, into: &RawSlice) -> Result<Event>;
    /// Receives the previous rank's next send of `bytes` bytes and drops it (a failed run
    /// still matches every send).
    fn discard(&mut self, bytes: usize) -> Result<()>;
    /// Sends enqueued that have not completed (a failure of the plane is an error).
    fn unfinished_sends(&mut self) -> Result<usize>;
}

/// How this rank's items reach the next rank (the progress loop's side of [`Outbound`]).
pub(crate) enum Carrier<P> {
    /// Inside the messages (host backend).
    Messages,
    /// A message carries the item count; the plane carries the items.
    #[cfg_attr(not(feature = "nccl"), allow(dead_code))]
    Plane(Box<dyn DevicePlane>),
    /// One rank on CUDA: the ring's last device copies its items onto device 0, and the
    /// copies wait here, in order, for their messages.
    Loopback(VecDeque<(Buffer<P>, Event)>),
}

/// Bytes of the message that announces a device send: its item count.
const HEADER_BYTES: usize = std::mem::size_of::<u64>();

impl<P: Pod + Send + Sync> Carrier<P> {
    /// Readies the carrier for a run over `devices` devices per rank: where the ring's last
    /// device copies its items for the next rank (`None`: they leave as host data); the
    /// loopback forgets what a failed run left.
    pub(crate) fn start_run(&mut self, devices: usize) -> Option<DeviceId> {
        match self {
            Carrier::Messages => None,
            Carrier::Plane(_) => Some(DeviceId(devices - 1)),
            Carrier::Loopback(staged) => {
                staged.clear();
                Some(DeviceId(0))
            }
        }
    }

    /// The message for `outbound` (sending its items over the plane, or keeping them for the
    /// loopback), and how many items it carries.
    pub(crate) fn send(&mut self, outbound: Outbound<P>) -> Result<(Vec<u8>, u64)> {
        match (self, outbound) {
            (Carrier::Messages, Outbound::Host(items)) => Ok((
                bytemuck::cast_slice::<P, u8>(&items).to_vec(),
                items.len() as u64,
            )),
            (Carrier::Plane(plane), Outbound::Device { items, ready }) => {
                // The receiver posts no receive for an empty message (NCCL would match it).
                if !items.is_empty() {
                    plane.send(&items.raw(), &ready)?;
                }
                Ok(header(items.len()))
            }
            (Carrier::Loopback(queue), Outbound::Device { items, ready }) => {
                let message = header(items.len());
                queue.push_back((items, ready));
                Ok(message)
            }
            _ => Err(DistError::Comm(
                "items of one backend on the ring edge of another (host data and device data \
                 mixed on one rank)"
                    .into(),
            )),
        }
    }

    /// How many items `message` (from the previous rank) carries or announces. The progress
    /// loop counts them before taking them ([`Carrier::receive`], [`Carrier::drop_items`]),
    /// so a failure there leaves the counts of the termination waves and the drain right.
    pub(crate) fn announced(&self, message: &[u8]) -> Result<u64> {
        match self {
            Carrier::Messages => {
                let item = std::mem::size_of::<P>();
                if message.len() % item != 0 {
                    return Err(DistError::Comm(format!(
                        "a message of {} bytes is not a whole number of {item}-byte items",
                        message.len()
                    )));
                }
                Ok((message.len() / item) as u64)
            }
            Carrier::Plane(_) | Carrier::Loopback(_) => Ok(items_announced(message)? as u64),
        }
    }

    /// The `announced` items of `message` (its [`Carrier::announced`] count), as a pending
    /// segment of `context`'s device 0 (`None` for no items). On the plane, a receive that
    /// cannot be made still takes the items (into scratch memory) where it can, so the
    /// sender's send completes.
    pub(crate) fn receive(
        &mut self,
        context: &Context,
        message: &[u8],
        announced: u64,
    ) -> Result<Option<PendingSegment<P>>> {
        let n = usize::try_from(announced)
            .map_err(|_| DistError::Comm(format!("a message announces {announced} items")))?;
        if n == 0 {
            self.drop_items(message)?;
            return Ok(None);
        }
        match self {
            Carrier::Messages => {
                let items: Vec<P> = bytemuck::pod_collect_to_vec(message);
                Ok(Some(arrived(context, &items)?))
            }
            Carrier::Plane(plane) => {
                let landed = context.devices()[0]
                    .alloc::<P>(n)
                    .map_err(DistError::from)
                    .and_then(|buffer| {
                        let event = plane.receive(&buffer.raw())?;
                        Ok(on_device_zero(buffer, event))
                    });
                if landed.is_err() {
                    // Best effort: the error below fails the run either way.
                    let _ = plane.discard(n * std::mem::size_of::<P>());
                }
                landed.map(Some)
            }
            Carrier::Loopback(queue) => {
                let (items, ready) = queue.pop_front().ok_or_else(|| {
                    DistError::Comm("a loopback message without its staged items".into())
                })?;
                if items.len() != n {
                    return Err(DistError::Comm(format!(
                        "a loopback message announces {n} items, its staged copy holds {}",
                        items.len()
                    )));
                }
                Ok(Some(on_device_zero(items, ready)))
            }
        }
    }

    /// Takes `message`'s items without delivering them (a failed run).
    pub(crate) fn drop_items(&mut self, message: &[u8]) -> Result<()> {
        match self {
            Carrier::Messages => Ok(()),
            Carrier::Plane(plane) => {
                let n = items_announced(message)?;
                if n > 0 {
                    plane.discard(n * std::mem::size_of::<P>())?;
                }
                Ok(())
            }
            Carrier::Loopback(queue) => {
                queue.pop_front();
                Ok(())
            }
        }
    }

    /// Sends enqueued on the device plane that have not completed.
    pub(crate) fn unfinished_sends(&mut self) -> Result<usize> {
        match self {
            Carrier::Plane(plane) => plane.unfinished_sends(),
            Carrier::Messages | Carrier::Loopback(_) => Ok(0),
        }
    }
}

/// The message announcing `len` items on the device plane.
fn header(len: usize) -> (Vec<u8>, u64) {
    ((len as u64).to_le_bytes().to_vec(), len as u64)
}

/// The item count a device-plane message announces.
fn items_announced(message: &[u8]) -> Result<usize> {
    let bytes: [u8; HEADER_BYTES] = message.try_into().map_err(|_| {
        DistError::Comm(format!(
            "a device-plane message of {} bytes (expected {HEADER_BYTES}: an item count)",
            message.len()
        ))
    })?;
    usize::try_from(u64::from_le_bytes(bytes))
        .map_err(|_| DistError::Comm("a device-plane message announces over 2^64 bytes".into()))
}

#[cfg(test)]
mod tests;
