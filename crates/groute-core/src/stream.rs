//! Typed streams.

use std::fmt;
use std::sync::Arc;

use bytemuck::Pod;

use crate::backend::host::HostStream;
use crate::backend::{RawStream, StreamPriority, downcast};
use crate::context::DeviceId;
use crate::cuda::kernel_copy_applies;
use crate::error::{Error, Result};
use crate::event::{Event, EventFuture, EventPool};
use crate::link::CopyMethod;
use crate::memory::Buffer;

/// An ordered queue of work on one device, with the device's event pool at hand.
///
/// Cloning shares the queue.
#[derive(Clone)]
pub struct Stream {
    raw: Arc<dyn RawStream>,
    device: DeviceId,
    events: EventPool,
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("device", &self.device)
            .field("priority", &self.raw.priority())
            .finish()
    }
}

impl Stream {
    pub(crate) fn new(raw: Arc<dyn RawStream>, device: DeviceId, events: EventPool) -> Self {
        Stream {
            raw,
            device,
            events,
        }
    }

    /// The backend stream (for kernel launches: downcast with `as_any`).
    pub fn raw(&self) -> &Arc<dyn RawStream> {
        &self.raw
    }

    /// The (virtual) device this stream belongs to.
    pub fn device(&self) -> DeviceId {
        self.device
    }

    /// The stream's priority.
    pub fn priority(&self) -> StreamPriority {
        self.raw.priority()
    }

    /// Records an event (from the device's pool) after all work enqueued so far.
    pub fn record(&self) -> Result<Event> {
        self.events.record(self.raw.as_ref())
    }

    /// Makes later work on this stream wait for `event` (no host blocking).
    pub fn wait(&self, event: &Event) -> Result<()> {
        for raw in event.raw_parts() {
            self.raw.wait_event(raw.as_ref())?;
        }
        Ok(())
    }

    /// Blocks the host until `future`'s event exists, then makes the stream wait for it.
    pub fn wait_future(&self, future: EventFuture) -> Result<()> {
        let event = future.get()?;
        self.wait(&event)
    }

    /// Enqueues a copy `src -> dst` of equal lengths.
    pub fn copy<T: Pod>(&self, dst: &Buffer<T>, src: &Buffer<T>) -> Result<()> {
        Error::check_same_length("Stream::copy", dst.len(), src.len())?;
        if dst.is_empty() {
            return Ok(());
        }
        self.raw.copy(&dst.raw(), &src.raw())
    }

    /// Enqueues a copy `src -> dst` of equal lengths and records an event right
    /// after it (one recording: backends reuse it to know when the copy's memory may go).
    pub fn copy_and_record<T: Pod>(&self, dst: &Buffer<T>, src: &Buffer<T>) -> Result<Event> {
        Error::check_same_length("Stream::copy_and_record", dst.len(), src.len())?;
        if dst.is_empty() {
            return self.record();
        }
        let (dst, src) = (dst.raw(), src.raw());
        self.events
            .record_with(|event| self.raw.copy_and_record(&dst, &src, event))
    }

    /// Enqueues a copy `src -> dst` of equal lengths made by `method`: a
    /// [`CopyMethod::Kernel`] copy runs the copy kernel on this stream where it applies
    /// (CUDA device memory to device memory, both addressable from this stream's device) and
    /// falls back to [`Stream::copy`] elsewhere (see [`CopyMethod`]). `src` and `dst` must
    /// not overlap.
    pub fn copy_with<T: Pod>(
        &self,
        dst: &Buffer<T>,
        src: &Buffer<T>,
        method: CopyMethod,
    ) -> Result<()> {
        match self.kernel_copy_blocks(dst, src, method, "Stream::copy_with")? {
            Some(blocks) => {
                crate::cuda::peer_copy(self.raw.as_ref(), &dst.raw(), &src.raw(), blocks)
            }
            None => self.copy(dst, src),
        }
    }

    /// [`Stream::copy_with`], then records an event right after the copy (one recording, as
    /// [`Stream::copy_and_record`]).
    pub fn copy_and_record_with<T: Pod>(
        &self,
        dst: &Buffer<T>,
        src: &Buffer<T>,
        method: CopyMethod,
    ) -> Result<Event> {
        match self.kernel_copy_blocks(dst, src, method, "Stream::copy_and_record_with")? {
            Some(blocks) => {
                let (dst, src) = (dst.raw(), src.raw());
                self.events.record_with(|event| {
                    crate::cuda::peer_copy_and_record(self.raw.as_ref(), &dst, &src, blocks, event)
                })
            }
            None => self.copy_and_record(dst, src),
        }
    }

    /// The blocks of a kernel copy `src -> dst` by `method` on this stream, or `None` when
    /// the copy engines make it (DMA asked for, or the kernel does not apply); checks the
    /// method and, for a kernel copy, the lengths (`operation` names the caller).
    fn kernel_copy_blocks<T: Pod>(
        &self,
        dst: &Buffer<T>,
        src: &Buffer<T>,
        method: CopyMethod,
        operation: &'static str,
    ) -> Result<Option<u32>> {
        method.validate()?;
        let CopyMethod::Kernel { blocks } = method else {
            return Ok(None);
        };
        if !kernel_copy_applies(self.raw.as_ref(), &dst.raw(), &src.raw()) {
            return Ok(None);
        }
        Error::check_same_length(operation, dst.len(), src.len())?;
        Ok(Some(blocks))
    }

    /// Enqueues a fill of `dst` with `value`'s bit pattern.
    ///
    /// Elements of 4 bytes take any value. Elements of 8 bytes take a value whose two 4-byte
    /// halves are equal (`0`, `u64::MAX`, `-1i64`), which is a 4-byte pattern repeated;
    /// other sizes and patterns are refused with [`Error::InvalidSetting`]: fill those with a
    /// kernel or a copy.
    pub fn fill<T: Pod>(&self, dst: &Buffer<T>, value: T) -> Result<()> {
        let bits = bytemuck::bytes_of(&value);
        let word = match bits.len() {
            4 => u32::from_ne_bytes([bits[0], bits[1], bits[2], bits[3]]),
            8 if bits[..4] == bits[4..] => u32::from_ne_bytes([bits[0], bits[1], bits[2], bits[3]]),
            8 => {
                return Err(Error::invalid(
                    "fill value",
                    format!("{bits:02x?}"),
                    "an 8-byte fill needs equal 4-byte halves (0 or all ones); fill other patterns with a kernel",
                ));
            }
            size => {
                return Err(Error::invalid(
                    "fill element size",
                    size,
                    "Stream::fill supports 4-byte elements and 8-byte elements with equal halves",
                ));
            }
        };
        if dst.is_empty() {
            return Ok(());
        }
        self.raw.fill_u32(&dst.raw(), word)
    }

    /// Enqueues a host callback in stream order (it must not block or call the backend).
    pub fn host_fn(&self, callback: impl FnOnce() + Send + 'static) -> Result<()> {
        self.raw.host_fn(Box::new(callback))
    }

    /// Enqueues a host-backend kernel (a closure run on the device's executor thread, which
    /// may parallelise itself with rayon). Fails with [`Error::Unsupported`] on other
    /// backends, whose kernels are launched through their own modules.
    pub fn launch_host(&self, kernel: impl FnOnce() + Send + 'static) -> Result<()> {
        let host: &HostStream = downcast(self.raw.as_any(), "host kernels", "cuda")?;
        host.launch(kernel);
        Ok(())
    }

    /// Whether this stream runs host kernels (host backend).
    pub fn is_host(&self) -> bool {
        self.raw.as_any().is::<HostStream>()
    }

    /// Blocks until all enqueued work has completed.
    pub fn synchronize(&self) -> Result<()> {
        self.raw.synchronize()
    }
}
