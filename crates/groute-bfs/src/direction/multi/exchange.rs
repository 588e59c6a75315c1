//! [`DeviceLinks`]: one device's end of the all-gather after each level. Every device's
//! discoveries of the level (a bitmap) reach every other device over [`Link`]s, and each
//! applies the bitmaps it receives to its own level array. Two shapes ([`Topology`]):
//!
//! - **Direct** (up to [`MAX_DIRECT_DEVICES`] devices): a link per ordered pair; every device
//!   sends its bitmap to every other. A level's exchange is on the critical path of every
//!   level, and this takes one hop (a ring all-gather would take N - 1 dependent ones; the
//!   bitmaps are small: n / 8 bytes).
//! - **Star** (more devices): device 0, the hub, has a link to and from every other device.
//!   Every other device sends its bitmap to the hub; the hub applies them all, marks the
//!   level's discoveries of every device into its bitmap and sends that back to each
//!   ([`DeviceLinks::forward`]). Two hops, and 2 (N - 1) links where the direct shape has
//!   N (N - 1): each link has a pump thread and two receive bitmaps, so that many virtual
//!   devices (up to 256) would take tens of thousands of threads, and every device N - 1
//!   pairs of receive bitmaps (here device 0 alone).
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

/// The most devices of one process that link every pair directly; more exchange through
/// device 0 ([`Topology::Star`]).
pub(super) const MAX_DIRECT_DEVICES: usize = 8;

/// How a process's devices exchange a level's discoveries (the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Topology {
    /// A link per ordered pair of devices.
    Direct,
    /// Links between device 0 and every other device.
    Star,
}

impl Topology {
    /// The shape for `devices` devices.
    pub(super) fn for_devices(devices: usize) -> Self {
        if devices <= MAX_DIRECT_DEVICES {
            Topology::Direct
        } else {
            Topology::Star
        }
    }
}

/// One device's links: with [`Topology::Direct`] to and from every other device; with
/// [`Topology::Star`] device 0's to and from every other device, another device's to and
/// from device 0.
pub(super) struct DeviceLinks {
    topology: Topology,
    /// Whether this is device 0.
    first: bool,
    outgoing: Vec<Link<u32>>,
    incoming: Vec<Link<u32>>,
    /// The copies of the last bitmap sent, still reading it.
    in_flight: Vec<EventFuture>,
}

impl DeviceLinks {
    /// The links of the `context`'s devices ([`Topology::for_devices`]), sized for bitmaps
    /// of `words` words; entry `d` is device `d`'s.
    pub(super) fn all(context: &Context, words: usize) -> Result<Vec<Self>, Error> {
        let n = context.num_devices();
        let topology = Topology::for_devices(n);
        let endpoint = |d: usize| Endpoint::Device(DeviceId(d));
        let mut devices: Vec<DeviceLinks> = (0..n)
            .map(|d| DeviceLinks {
                topology,
                first: d == 0,
                outgoing: Vec::new(),
                incoming: Vec::new(),
                in_flight: Vec::new(),
            })
            .collect();
        // Device `d > 0`'s first incoming link is from device 0 in either shape.
        let linked = |from: usize, to: usize| {
            from != to && (topology == Topology::Direct || from == 0 || to == 0)
        };
        for from in 0..n {
            for to in (0..n).filter(|&to| linked(from, to)) {
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

    /// Exchanges a level's discoveries within the process, up to the hub's forward: with
    /// [`Topology::Direct`] sends `part`'s bitmap words `words` (marked on its stream) to
    /// every other device and applies theirs with level `mark`; with [`Topology::Star`]
    /// device 0 applies every other device's, the others send theirs to it. Call only
    /// with peers ([`DeviceLinks::has_peers`]), then [`DeviceLinks::forward`] in a run of
    /// one process.
    pub(super) fn exchange(
        &mut self,
        part: &dyn Part,
        words: Range<u32>,
        mark: u32,
    ) -> Result<(), Error> {
        match (self.topology, self.first) {
            (Topology::Direct, _) => {
                self.send(part, words)?;
                self.receive(part, mark)
            }
            (Topology::Star, true) => self.receive(part, mark),
            (Topology::Star, false) => self.send(part, words),
        }
    }

    /// Ends a level's exchange in a run of one process after [`DeviceLinks::exchange`]:
    /// with [`Topology::Star`] device 0 sends every vertex at level `mark` (its bitmap of
    /// `total` words, marked from its levels: every device's discoveries) to the others,
    /// which apply it; nothing with [`Topology::Direct`] or without peers.
    pub(super) fn forward(&mut self, part: &dyn Part, mark: u32, total: u32) -> Result<(), Error> {
        if self.topology == Topology::Direct || !self.has_peers() {
            return Ok(());
        }
        if self.first {
            self.before_marking(part)?;
            part.mark_bitmap(mark, 0..total)?;
            self.send(part, 0..total)
        } else {
            self.receive_from_first(part, mark)
        }
    }

    /// Sends `part`'s bitmap words `words` (marked on its stream) to every device this one
    /// links to.
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

    /// Applies the next message from every device linked to this one to `part` with level
    /// `mark`.
    fn receive(&self, part: &dyn Part, mark: u32) -> Result<(), Error> {
        for link in &self.incoming {
            receive_message(link, part, mark)?;
        }
        Ok(())
    }

    /// Whether the process has other devices (else there is nothing to exchange within it).
    pub(super) fn has_peers(&self) -> bool {
        !self.outgoing.is_empty()
    }

    /// Whether this device sends the bitmap its step writes (its own discoveries) to the
    /// process's other devices: with peers, but for device 0 of a star, which marks its
    /// bitmap from its levels once every device's discoveries are in
    /// ([`DeviceLinks::forward`]).
    pub(super) fn sends_step_bitmap(&self) -> bool {
        self.has_peers() && !(self.topology == Topology::Star && self.first)
    }

    /// Applies the next message from device 0 to `part` (of device 1 or later) with level
    /// `mark`: device 0's forward, in a run spanning processes of the other processes'
    /// discoveries (and with [`Topology::Star`] of its own process's), in a run of one
    /// process with [`Topology::Star`] of every device's.
    pub(super) fn receive_from_first(&self, part: &dyn Part, mark: u32) -> Result<(), Error> {
        // Device `d > 0`'s incoming links are from the devices `0..n` but `d` (direct) or from
        // device 0 alone (star), in order.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// (outgoing, incoming) links of every device of a host context of `devices`; checks
    /// that every device's first incoming link but device 0's is from device 0
    /// ([`DeviceLinks::receive_from_first`]).
    fn link_counts(devices: usize) -> Vec<(usize, usize)> {
        let context = Context::host(devices).unwrap();
        let all = DeviceLinks::all(&context, 4).unwrap();
        for links in &all[1..] {
            assert_eq!(links.incoming[0].src(), Endpoint::Device(DeviceId(0)));
        }
        all.iter()
            .map(|l| (l.outgoing.len(), l.incoming.len()))
            .collect()
    }

    #[test]
    fn up_to_eight_devices_link_every_pair() {
        for devices in [1, 2, 5, MAX_DIRECT_DEVICES] {
            let expected = vec![(devices - 1, devices - 1); devices];
            assert_eq!(link_counts(devices), expected, "{devices} devices");
        }
    }

    #[test]
    fn more_devices_link_through_device_0() {
        for devices in [MAX_DIRECT_DEVICES + 1, 40] {
            let counts = link_counts(devices);
            assert_eq!(counts[0], (devices - 1, devices - 1), "{devices} devices");
            assert!(
                counts[1..].iter().all(|&c| c == (1, 1)),
                "{devices} devices"
            );
        }
    }
}
