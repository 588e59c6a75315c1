//! [`BitmapExchange`]: the all-gather after each level. Every device sends the bitmap of the
//! vertices it discovered at the level to every other device over a direct [`Link`] (one per
//! ordered pair), and applies the bitmaps it receives to its own level array.
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

/// How long a device waits for a peer's bitmap before failing the run (a peer's failure
/// surfaces as its own error first; this only bounds a hang).
const RECEIVE_TIMEOUT: Duration = Duration::from_secs(120);

/// Links between every ordered pair of devices.
pub(super) struct BitmapExchange {
    /// `links[from][to]` (`None` on the diagonal).
    links: Vec<Vec<Option<Link<u32>>>>,
    /// Per device, the copies of its last bitmap still reading it.
    in_flight: Vec<Vec<EventFuture>>,
}

impl BitmapExchange {
    /// Links between every pair of the `context`'s devices, sized for bitmaps of `words`
    /// words.
    pub(super) fn new(context: &Context, words: usize) -> Result<Self, Error> {
        let n = context.num_devices();
        let endpoint = |d: usize| Endpoint::Device(DeviceId(d));
        let links = (0..n)
            .map(|from| {
                (0..n)
                    .map(|to| {
                        (from != to)
                            .then(|| {
                                let config = LinkConfig::new(words.max(1), 2);
                                Link::new(context, endpoint(from), endpoint(to), config)
                            })
                            .transpose()
                    })
                    .collect::<Result<Vec<_>, Error>>()
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(BitmapExchange {
            links,
            in_flight: (0..n).map(|_| Vec::new()).collect(),
        })
    }

    /// Makes device `d`'s stream wait until the copies of its previous bitmap are done (call
    /// before it writes the bitmap again).
    pub(super) fn before_marking(&mut self, d: usize, part: &dyn Part) -> Result<(), Error> {
        for future in self.in_flight[d].drain(..) {
            part.stream().wait_future(future)?;
        }
        Ok(())
    }

    /// Sends every device's bitmap words `words[d]` (marked on its stream) to every other
    /// device, then applies what each receives with level `mark`.
    pub(super) fn all_gather(
        &mut self,
        parts: &[Box<dyn Part>],
        words: &[Range<u32>],
        mark: u32,
    ) -> Result<(), Error> {
        for (from, part) in parts.iter().enumerate() {
            let ready = part.stream().record()?;
            let range = words[from].clone();
            let data = part
                .bitmap()
                .slice(range.start as usize..range.end as usize)?;
            for link in self.links[from].iter().flatten() {
                let segment =
                    Segment::new(data.clone(), link.src()).with_metadata(range.start.into());
                let sent = link
                    .send(segment, ready.clone())
                    .map_err(|e| e.into_parts().0)?;
                self.in_flight[from].push(sent);
            }
        }
        for (to, part) in parts.iter().enumerate() {
            for from in 0..parts.len() {
                if let Some(link) = &self.links[from][to] {
                    receive_message(link, part.as_ref(), mark)?;
                }
            }
        }
        Ok(())
    }
}

/// Applies every packet of the next message on `link` to `part`.
fn receive_message(link: &Link<u32>, part: &dyn Part, mark: u32) -> Result<(), Error> {
    loop {
        let packet = match link.receive_timeout(RECEIVE_TIMEOUT) {
            Ok(Some(p)) => p,
            Ok(None) => return Err(Error::Disconnected(format!("{link:?}"))),
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
