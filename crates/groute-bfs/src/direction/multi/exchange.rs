//! [`DeviceLinks`]: one device's end of the all-gather after each level. Every device sends
//! the bitmap of the vertices it discovered at the level to every other device over a direct
//! [`Link`] (one per ordered pair), and applies the bitmaps it receives to its own level array.
//!
//! Direct links rather than a ring: a level's exchange is on the critical path of every
//! level, and a ring all-gather takes N - 1 dependent hops where direct links take one (the
//! bitmaps are small: n / 8 bytes). N (N - 1) links cost their receive buffers (two bitmaps
//! each) and a pump thread each, acceptable for the device counts of one host (up to 8).
//!
//! Data path of one message: the sender's stream computes the bitmap and records an event;
//! the link's copy waits for that event and copies into a receive buffer on the destination
//! ([`LinkConfig`]: one packet holds a whole bitmap); the destination's stream waits for the
//! packet's ready event, applies it, and records the event after which the link may reuse the
//! buffer. The host blocks nowhere but on a packet's arrival (its copy enqueued, not done).
//! A message carries its first word's index as metadata (a pull step's discoveries are all
//! owned, so it sends only the owner's words).

use std::ops::Range;
use std::time::Duration;

use groute_core::{
    Context, DeviceId, Endpoint, Error, EventFuture, Link, LinkConfig, PendingSegment, Segment,
};

use super::part::Part;

/// How long a device waits for a peer's bitmap before failing the run (a failing peer shuts
/// its links, which ends the wait at once; this only bounds a hang).
const RECEIVE_TIMEOUT: Duration = Duration::from_secs(120);

/// One device's links: to every other device and from every other device.
pub(super) struct DeviceLinks {
    outgoing: Vec<Link<u32>>,
    incoming: Vec<Link<u32>>,
    /// The copies of the last bitmap sent, still reading it.
    in_flight: Vec<EventFuture>,
}

impl DeviceLinks {
    /// Links between every pair of the `context`'s devices, sized for bitmaps of `words`
    /// words; entry `d` is device `d`'s.
    pub(super) fn all(context: &Context, words: usize) -> Result<Vec<Self>, Error> {
        let n = context.num_devices();
        let endpoint = |d: usize| Endpoint::Device(DeviceId(d));
        let mut devices: Vec<DeviceLinks> = (0..n)
            .map(|_| DeviceLinks {
                outgoing: Vec::new(),
                incoming: Vec::new(),
                in_flight: Vec::new(),
            })
            .collect();
        for from in 0..n {
            for to in (0..n).filter(|&to| to != from) {
                let config = LinkConfig::new(words.max(1), 2);
                let link = Link::new(context, endpoint(from), endpoint(to), config)?;
                devices[from].outgoing.push(link.clone());
                devices[to].incoming.push(link);
            }
        }
        Ok(devices)
    }

    /// Makes `part`'s stream wait until the copies of its previous bitmap are done (call
    /// before it writes the bitmap again).
    pub(super) fn before_marking(&mut self, part: &dyn Part) -> Result<(), Error> {
        for future in self.in_flight.drain(..) {
            part.stream().wait_future(future)?;
        }
        Ok(())
    }

    /// Sends `part`'s bitmap words `words` (marked on its stream) to every other device.
    pub(super) fn send(&mut self, part: &dyn Part, words: Range<u32>) -> Result<(), Error> {
        let ready = part.stream().record()?;
        let data = part
            .bitmap()
            .slice(words.start as usize..words.end as usize)?;
        for link in &self.outgoing {
            let segment = Segment::new(data.clone(), link.src()).with_metadata(words.start.into());
            let sent = link
                .send(segment, ready.clone())
                .map_err(|e| e.into_parts().0)?;
            self.in_flight.push(sent);
        }
        Ok(())
    }

    /// Applies the next message from every other device to `part` with level `mark`.
    pub(super) fn receive(&self, part: &dyn Part, mark: u32) -> Result<(), Error> {
        for link in &self.incoming {
            receive_message(link, part, mark)?;
        }
        Ok(())
    }

    /// Whether the process has other devices (else there is nothing to exchange within it).
    pub(super) fn has_peers(&self) -> bool {
        !self.outgoing.is_empty()
    }

    /// Applies the next message from device 0 to `part` (of device 1 or later) with level
    /// `mark`: in a run spanning processes, device 0's forward of the other processes'
    /// discoveries.
    pub(super) fn receive_from_first(&self, part: &dyn Part, mark: u32) -> Result<(), Error> {
        // Device `d > 0`'s incoming links are from the devices `0..n` but `d`, in order.
        match self.incoming.first() {
            Some(link) => receive_message(link, part, mark),
            None => Ok(()),
        }
    }

    /// A handle that shuts the outgoing links (after an error on this device).
    pub(super) fn closer(&self) -> LinkCloser {
        LinkCloser(self.outgoing.clone())
    }
}

/// Shuts a device's outgoing links: peers waiting for its bitmap fail at once. The links
/// cannot be used again.
pub(super) struct LinkCloser(Vec<Link<u32>>);

impl LinkCloser {
    /// Shuts the links.
    pub(super) fn shutdown(&self) {
        for link in &self.0 {
            link.shutdown();
        }
    }
}

/// Applies every packet of the next message on `link` to `part`.
fn receive_message(link: &Link<u32>, part: &dyn Part, mark: u32) -> Result<(), Error> {
    loop {
        let packet = match link.receive_timeout(RECEIVE_TIMEOUT) {
            Ok(Some(p)) => p,
            Ok(None) => return Err(Error::Disconnected(format!("{link:?} (its sender failed)"))),
            Err(_) => {
                return Err(Error::Disconnected(format!(
                    "{link:?}: no bitmap within {RECEIVE_TIMEOUT:?}"
                )));
            }
        };
        let last = apply_packet(&packet, part, mark)?;
        let done = part.stream().record()?;
        packet.release(done);
        if last {
            return Ok(());
        }
    }
}

/// Enqueues `packet`'s application on `part`; whether it ends its message.
fn apply_packet(packet: &PendingSegment<u32>, part: &dyn Part, mark: u32) -> Result<bool, Error> {
    let segment = packet.segment();
    let first_word = segment.metadata() as usize + segment.offset();
    let word_offset = u32::try_from(first_word)
        .map_err(|_| Error::invalid("bitmap packet offset", first_word, "below 2^32 words"))?;
    part.stream().wait(packet.ready())?;
    part.apply(segment.data(), word_offset, mark)?;
    Ok(segment.offset() + segment.len() >= segment.total())
}
