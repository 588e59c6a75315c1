//! The streams a link output enqueues its copies on.
//!
//! An output has `lanes` copy streams per issuing device ([`crate::LinkConfig::copy_streams`])
//! and hands them out round-robin, one packet each: consecutive packets' copies are then
//! independent in stream order, so the copy engines overlap one packet's per-copy setup with
//! the transfer of the one before (and several engines can serve one link). Each packet has an
//! event of its own, so nothing downstream depends on which lane carried it; only a receive
//! buffer reused on another lane waits for its previous copy (see `FreeSlot` in `output.rs`).

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use crate::backend::StreamPriority;
use crate::context::{Context, DeviceId};
use crate::endpoint::Endpoint;
use crate::error::Result;
use crate::stream::Stream;

/// Names one copy stream of an output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StreamKey {
    /// The source device for per-source streams, `None` for the destination's streams (and
    /// for copies out of host memory).
    issuer: Option<DeviceId>,
    /// Which of the issuer's round-robin streams.
    lane: usize,
}

/// Where copies to a destination are enqueued.
enum Placement {
    /// Destination is a device: its streams, under the issuer `None`.
    OnDestination,
    /// Streams per source device, made on first use (a copy out of device memory is issued
    /// by the device holding it); copies out of host memory are issued by the fallback
    /// device.
    PerSource { fallback: DeviceId },
}

/// The copy streams of one output, handed out round-robin (module docs).
pub(crate) struct CopyStreams {
    placement: Placement,
    lanes: usize,
    /// The next lane of each issuer's streams (each issuer round-robins over its own lanes,
    /// so that consecutive packets of one source alternate even when several sources send).
    next_lane: HashMap<Option<DeviceId>, usize>,
    streams: HashMap<Option<DeviceId>, Vec<Stream>>,
}

impl CopyStreams {
    /// `lanes` high-priority streams on device `dst`, made now.
    pub(crate) fn on_destination(ctx: &Context, dst: DeviceId, lanes: usize) -> Result<Self> {
        let device = ctx.device(dst)?;
        let streams = (0..lanes)
            .map(|_| device.new_stream(StreamPriority::High))
            .collect::<Result<Vec<_>>>()?;
        Ok(CopyStreams {
            placement: Placement::OnDestination,
            lanes,
            next_lane: HashMap::new(),
            streams: HashMap::from([(None, streams)]),
        })
    }

    /// `lanes` high-priority streams per source device (for a destination on the host, or
    /// copies pushed by their source), each set made when its source first sends; copies out
    /// of host memory go on streams of `fallback`.
    pub(crate) fn per_source(lanes: usize, fallback: DeviceId) -> Self {
        CopyStreams {
            placement: Placement::PerSource { fallback },
            lanes,
            next_lane: HashMap::new(),
            streams: HashMap::new(),
        }
    }

    /// The stream for the next packet out of `source` and its key (the lanes' streams are
    /// created on first use for per-source streams).
    pub(crate) fn next(&mut self, ctx: &Context, source: Endpoint) -> Result<(StreamKey, &Stream)> {
        let (issuer, fallback) = match (&self.placement, source) {
            (Placement::PerSource { .. }, Endpoint::Device(d)) => (Some(d), d),
            (Placement::PerSource { fallback }, _) => (None, *fallback),
            (Placement::OnDestination, _) => (None, DeviceId(0)),
        };
        let lanes = self.lanes;
        let streams = match self.streams.entry(issuer) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let device = ctx.device(fallback)?;
                let made = (0..lanes)
                    .map(|_| device.new_stream(StreamPriority::High))
                    .collect::<Result<Vec<_>>>()?;
                e.insert(made)
            }
        };
        let next = self.next_lane.entry(issuer).or_insert(0);
        let lane = *next % streams.len().max(1);
        *next = (lane + 1) % lanes.max(1);
        let key = StreamKey { issuer, lane };
        match streams.get(lane) {
            Some(stream) => Ok((key, stream)),
            None => Err(crate::error::Error::invalid(
                "copy_streams",
                lanes,
                "a link needs at least one copy stream",
            )),
        }
    }
}
