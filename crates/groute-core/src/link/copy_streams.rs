//! The streams a link output enqueues its copies on.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use crate::backend::StreamPriority;
use crate::context::{Context, DeviceId};
use crate::endpoint::Endpoint;
use crate::error::Result;
use crate::stream::Stream;

/// Names one copy stream of an output: the source device for per-source streams, `None` for
/// the destination's single stream (and for copies out of host memory).
pub(crate) type StreamKey = Option<DeviceId>;

/// Where copies to a destination are enqueued.
pub(crate) enum CopyStreams {
    /// Destination is a device: one high-priority stream on it.
    OnDestination(Stream),
    /// Destination is the host: one high-priority stream per source device, made on first
    /// use (a copy out of device memory is issued by the device holding it).
    PerSource(HashMap<StreamKey, Stream>),
}

impl CopyStreams {
    /// The key of the stream that copies out of `source`.
    pub(crate) fn key(&self, source: Endpoint) -> StreamKey {
        match (self, source) {
            (CopyStreams::PerSource(_), Endpoint::Device(d)) => Some(d),
            _ => None,
        }
    }

    /// The stream that copies out of `source` (created on first use for per-source streams).
    pub(crate) fn get(&mut self, ctx: &Context, source: Endpoint) -> Result<&Stream> {
        let key = self.key(source);
        match self {
            CopyStreams::OnDestination(s) => Ok(s),
            CopyStreams::PerSource(map) => match map.entry(key) {
                Entry::Occupied(e) => Ok(e.into_mut()),
                Entry::Vacant(e) => {
                    let issuer = ctx.device(key.unwrap_or(DeviceId(0)))?;
                    Ok(e.insert(issuer.new_stream(StreamPriority::High)?))
                }
            },
        }
    }
}
