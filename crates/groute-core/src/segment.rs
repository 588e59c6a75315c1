//! Segments: typed slices in flight between endpoints.

use std::fmt;

use bytemuck::Pod;

use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::memory::Buffer;

/// A typed slice of a buffer on one endpoint, with metadata.
///
/// When a link splits a large segment into packets, each packet is a segment whose
/// [`Segment::offset`] says where it starts in the original message and whose
/// [`Segment::total`] is the original length, so receivers can reassemble or locate data.
#[derive(Clone)]
pub struct Segment<T> {
    data: Buffer<T>,
    endpoint: Endpoint,
    offset: usize,
    total: usize,
    metadata: u64,
}

impl<T> fmt::Debug for Segment<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Segment")
            .field("endpoint", &self.endpoint)
            .field("len", &self.data.len())
            .field("offset", &self.offset)
            .field("total", &self.total)
            .field("metadata", &self.metadata)
            .finish()
    }
}

impl<T: Pod> Segment<T> {
    /// A whole message: `data` on `endpoint`.
    pub fn new(data: Buffer<T>, endpoint: Endpoint) -> Self {
        let total = data.len();
        Segment {
            data,
            endpoint,
            offset: 0,
            total,
            metadata: 0,
        }
    }

    /// A packet of a larger message: `data` holds elements `offset..offset + data.len()` of a
    /// message of `total` elements. [`Error::OutOfBounds`] if that range ends past `total`.
    pub fn packet(
        data: Buffer<T>,
        endpoint: Endpoint,
        offset: usize,
        total: usize,
    ) -> Result<Self> {
        match offset.checked_add(data.len()) {
            Some(end) if end <= total => Ok(Segment {
                data,
                endpoint,
                offset,
                total,
                metadata: 0,
            }),
            end => Err(Error::OutOfBounds {
                start: offset,
                end: end.unwrap_or(usize::MAX),
                len: total,
            }),
        }
    }

    /// Sets the user metadata (carried along unchanged by links and routers).
    pub fn with_metadata(mut self, metadata: u64) -> Self {
        self.metadata = metadata;
        self
    }

    /// The data.
    pub fn data(&self) -> &Buffer<T> {
        &self.data
    }

    /// Consumes the segment, giving back its buffer view.
    pub fn into_data(self) -> Buffer<T> {
        self.data
    }

    /// Where the data lives.
    pub fn endpoint(&self) -> Endpoint {
        self.endpoint
    }

    /// Number of elements in this segment.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the segment is empty.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Offset of this segment in its message.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Length of the whole message this segment belongs to.
    pub fn total(&self) -> usize {
        self.total
    }

    /// User metadata.
    pub fn metadata(&self) -> u64 {
        self.metadata
    }

    /// A sub-segment (`range` relative to this segment), keeping message offsets right.
    pub fn sub(&self, start: usize, end: usize) -> Result<Self> {
        Ok(Segment {
            data: self.data.slice(start..end)?,
            endpoint: self.endpoint,
            offset: self.offset + start,
            total: self.total,
            metadata: self.metadata,
        })
    }
}

type ReleaseHook = Box<dyn FnOnce(Event) + Send>;

/// A segment still being received: the data plus the event after which it is valid.
///
/// Consumers enqueue work after [`PendingSegment::ready`] (or block on
/// [`PendingSegment::wait`]) and then give the receive buffer back with
/// [`PendingSegment::release`], passing the event after which their own reads are done.
/// Dropping a pending segment releases its buffer at once (as if released with
/// [`Event::ready`]), so only drop it when no enqueued work still reads it.
pub struct PendingSegment<T> {
    segment: Segment<T>,
    ready: Event,
    release: Option<ReleaseHook>,
}

impl<T> fmt::Debug for PendingSegment<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingSegment")
            .field("segment", &self.segment)
            .field("ready", &self.ready)
            .finish()
    }
}

impl<T: Pod> PendingSegment<T> {
    /// A pending segment whose buffer is given back through `release`.
    pub fn new(
        segment: Segment<T>,
        ready: Event,
        release: impl FnOnce(Event) + Send + 'static,
    ) -> Self {
        PendingSegment {
            segment,
            ready,
            release: Some(Box::new(release)),
        }
    }

    /// A pending segment with no buffer to give back.
    pub fn unowned(segment: Segment<T>, ready: Event) -> Self {
        PendingSegment {
            segment,
            ready,
            release: None,
        }
    }

    /// The segment (valid once [`PendingSegment::ready`] completes).
    pub fn segment(&self) -> &Segment<T> {
        &self.segment
    }

    /// The event after which the data is valid.
    pub fn ready(&self) -> &Event {
        &self.ready
    }

    /// Blocks until the data is valid.
    pub fn wait(&self) -> Result<()> {
        self.ready.wait()
    }

    /// Copies the data out to a `Vec` (host-addressable memory only: host endpoints and the
    /// host backend), after waiting for it to be valid.
    pub fn to_vec(&self) -> Result<Option<Vec<T>>> {
        self.wait()?;
        // SAFETY: the ready event has completed, and the link does not reuse the buffer
        // before `release`, which needs `self` by value.
        Ok(unsafe { self.segment.data().host_to_vec() })
    }

    /// Gives the buffer back; the link reuses it only after `done` completes.
    pub fn release(mut self, done: Event) {
        if let Some(hook) = self.release.take() {
            hook(done);
        }
    }
}

impl<T> Drop for PendingSegment<T> {
    fn drop(&mut self) {
        if let Some(hook) = self.release.take() {
            hook(Event::ready());
        }
    }
}
