//! Copies staged through pinned host memory, between two devices with no peer access either
//! way: device -> host, then host -> device, chunk by chunk.
//!
//! # Pipelining
//!
//! The copy goes in [`STAGED_CHUNK_BYTES`] chunks whose two legs run on two streams (the
//! issuing stream and another device's transfer stream, whichever reaches each end), one event
//! per chunk ordering its host-to-device leg after its device-to-host leg, so that the
//! device-to-host leg of one chunk overlaps the host-to-device leg of the one before.
//!
//! # The staging ring
//!
//! Each stream owns one pinned staging buffer of at most [`STAGING_RING_BYTES`], used as a
//! ring of chunk slots: a copy larger than the ring reuses slots, and a chunk's
//! device-to-host leg into a slot waits (one event per half ring) for the host-to-device leg
//! that last read the slot. Successive staged copies on one stream reuse the ring with no host
//! wait: each staged copy is ordered after all earlier work on its stream and before all later
//! work on it, so the next one cannot touch the ring before the previous one is done with it.
//! The ring is taken from the backend's staging pool once (and again only when a larger copy
//! needs a larger one, up to the cap), never per copy: taken per copy, a link whose host runs
//! ahead of the GPU would take a fresh pinned buffer for every packet in flight, and pinning
//! host memory costs milliseconds.

use std::collections::VecDeque;
use std::sync::Arc;

use super::event::EventHandle;
use super::staging::StagingBuffer;
use super::stream::CudaStream;
use super::sys;
use crate::backend::{EventKind, PhysicalDevice, RawMemory};
use crate::error::Result;

/// Staged copies go in chunks of this many bytes, so that the two legs of consecutive chunks
/// overlap (one leg alone halves the bandwidth).
pub(super) const STAGED_CHUNK_BYTES: usize = 1 << 20;

/// The largest staging ring a stream keeps (8 chunks: half a ring of slack between the legs).
pub(super) const STAGING_RING_BYTES: usize = 8 * STAGED_CHUNK_BYTES;

/// The staging bytes a copy of `bytes` uses: whole chunks, at most the ring cap.
fn ring_bytes_for(bytes: usize) -> usize {
    bytes
        .div_ceil(STAGED_CHUNK_BYTES)
        .saturating_mul(STAGED_CHUNK_BYTES)
        .min(STAGING_RING_BYTES)
}

/// A stream (of device `.1`) one leg of a staged copy runs on.
type Leg = (sys::CUstream, PhysicalDevice);

impl CudaStream {
    /// This stream's staging ring in `ring`, grown (from the pool) to fit a copy of `bytes`
    /// if needed.
    fn staging_ring(
        &self,
        ring: &mut Option<Arc<StagingBuffer>>,
        bytes: usize,
    ) -> Result<Arc<StagingBuffer>> {
        let want = ring_bytes_for(bytes).max(1);
        if let Some(r) = ring.as_ref() {
            if r.len_bytes() >= want {
                return Ok(Arc::clone(r));
            }
        }
        let grown = self.shared.staging.take(self.device_inner(), want)?;
        *ring = Some(Arc::clone(&grown));
        Ok(grown)
    }

    /// A copy from device `s` (at `src`) to device `t` (at `dst`), neither reaching the other,
    /// through this stream's staging ring (module docs); the ring is pushed onto `keep`. Each
    /// leg runs on this stream when its device is reachable from here, otherwise on that
    /// device's transfer stream; the copy is ordered after this stream's work so far and
    /// before its later work.
    pub(super) fn staged_copy(
        &self,
        dst: u64,
        (src, s): (u64, PhysicalDevice),
        t: PhysicalDevice,
        bytes: usize,
        keep: &mut Vec<Arc<dyn RawMemory>>,
    ) -> Result<()> {
        // Held until every chunk is enqueued: two threads staging on one stream at once
        // must not interleave their chunks in the same slots.
        let mut owned = self.staging.lock();
        let ring = self.staging_ring(&mut owned, bytes)?;
        let stage = ring.memory().address();
        // An even number of slots (or one), so that half a ring is a whole number of them.
        let slots = match ring.len_bytes() / STAGED_CHUNK_BYTES {
            0 | 1 => 1,
            n => n - n % 2,
        };
        keep.push(ring);
        let here: Leg = (self.raw(), self.device_inner().index);
        let leg = |d: PhysicalDevice| -> Result<Leg> {
            if self.reaches(here.1, d) {
                Ok(here)
            } else {
                Ok((self.shared.devices[d].transfer_stream()?, d))
            }
        };
        let (down, up) = (leg(s)?, leg(t)?);
        if down.0 != here.0 {
            self.order_after(here, down)?;
        }
        let half = (slots / 2).max(1);
        // Events recorded on `up` after the last chunk of each half ring, oldest first.
        let mut halves_read: VecDeque<Arc<EventHandle>> = VecDeque::new();
        let chunks = bytes.div_ceil(STAGED_CHUNK_BYTES);
        for i in 0..chunks {
            let offset = i * STAGED_CHUNK_BYTES;
            let n = STAGED_CHUNK_BYTES.min(bytes - offset);
            let slot = ((i % slots) * STAGED_CHUNK_BYTES) as u64;
            if i >= slots && i % half == 0 && down.0 != up.0 {
                if let Some(read) = halves_read.pop_front() {
                    self.wait_on(down, &read)?;
                }
            }
            let o = offset as u64;
            self.direct_copy(down.0, down.1, (stage + slot, None), (src + o, Some(s)), n)?;
            if down.0 != up.0 {
                self.order_after(down, up)?;
            }
            self.direct_copy(up.0, up.1, (dst + o, Some(t)), (stage + slot, None), n)?;
            // The chunk that next writes this half ring's first slot waits for this event.
            let next_writer = i + 1 + slots - half;
            if (i + 1) % half == 0 && next_writer < chunks && down.0 != up.0 {
                halves_read.push_back(self.record_on(up)?);
            }
        }
        if up.0 != here.0 {
            self.order_after(up, here)?;
        }
        Ok(())
    }

    /// An event recorded on `leg` now.
    fn record_on(&self, (stream, device): Leg) -> Result<Arc<EventHandle>> {
        let event = EventHandle::new(&self.shared.devices[device], EventKind::Sync)?;
        // SAFETY: `stream` is a live stream of `device`, like `event`.
        unsafe { event.record_on(stream)? };
        Ok(event)
    }

    /// Makes later work on `leg` wait for `event`.
    fn wait_on(&self, (stream, device): Leg, event: &EventHandle) -> Result<()> {
        self.shared.devices[device].bind()?;
        // SAFETY: both live; a stream may wait on an event of another context.
        unsafe { sys::stream_wait_event(stream, event.raw) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_holds_whole_chunks_up_to_the_cap() {
        assert_eq!(ring_bytes_for(1), STAGED_CHUNK_BYTES);
        assert_eq!(ring_bytes_for(STAGED_CHUNK_BYTES), STAGED_CHUNK_BYTES);
        assert_eq!(
            ring_bytes_for(STAGED_CHUNK_BYTES + 1),
            2 * STAGED_CHUNK_BYTES
        );
        assert_eq!(ring_bytes_for(256 << 20), STAGING_RING_BYTES);
        assert_eq!(ring_bytes_for(usize::MAX), STAGING_RING_BYTES);
    }
}
