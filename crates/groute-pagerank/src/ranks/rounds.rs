//! How a round of a [`PageRankRanks`] run goes across the process's devices: its take and
//! the copies of the shares a gather reads ([`PageRankRanks::take_and_stage`]), the gather
//! ([`PageRankRanks::spread_and_gather`]), and, in a process alone, which rounds push instead
//! ([`PageRankRanks::push_due`]) and how one does ([`PageRankRanks::push_and_absorb`];
//! [`super::sweeps`], "Push rounds"); after the last round, the devices' ranks staged for
//! the gather of every process's ([`PageRankRanks::stage_ranks`]).

use std::ops::Range;
use std::time::Duration;

use groute_core::Event;

use super::PageRankRanks;
use super::boundary;
use super::sweeps::{DeviceSweeps, SweepCounts};
use crate::PageRankError;

/// Host time of a [`PageRankRanks::run`]'s rounds by kind (this process's clock): each round
/// from its start, after the sum that decides it, until its counts are back on the host and
/// the next round's take is enqueued; the take it runs first, enqueued by the round before,
/// included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SweepRoundTimes {
    /// Rounds that gathered every in-arc's share (with the gather of the boundaries across
    /// processes).
    pub gather: Duration,
    /// Rounds that gathered through the bitmap of the vertices taken
    /// ([`crate::PageRankTuning::sparse_gather_divisor`]).
    pub sparse_gather: Duration,
    /// Rounds that pushed ([`crate::PageRankTuning::sweep_push_divisor`]).
    pub push: Duration,
}

impl SweepRoundTimes {
    /// Adds `time` to the kind of a round that pushed or, where not, gathered sparse or not.
    pub(super) fn add(&mut self, (push, sparse): (bool, bool), time: Duration) {
        let kind = match (push, sparse) {
            (true, _) => &mut self.push,
            (false, true) => &mut self.sparse_gather,
            (false, false) => &mut self.gather,
        };
        *kind += time;
    }

    /// The sum over the kinds.
    pub fn total(&self) -> Duration {
        self.gather + self.sparse_gather + self.push
    }
}

impl PageRankRanks {
    /// Whether the next round pushes, from this round's counts on every device: where the
    /// run may push (`push_below` above 0: a process alone) and the next round's take (the
    /// vertices this round left above epsilon) is expected to take at most `push_below`
    /// out-arcs, at this round's arcs per vertex taken (after the pass that leaves the
    /// ranges, which takes nothing, at those of the last ranged round: `ranged`). Every
    /// round but the first may push.
    pub(super) fn push_due(&self, counts: &[SweepCounts], ranged: Option<&[SweepCounts]>) -> bool {
        let took = ranged.unwrap_or(counts);
        let sum = |of: &[SweepCounts], f: fn(&SweepCounts) -> u64| of.iter().map(f).sum::<u64>();
        let round = SweepCounts {
            taken: sum(took, |c| c.taken),
            taken_arcs: sum(took, |c| c.taken_arcs),
            crossed: sum(counts, |c| c.crossed),
        };
        next_round_pushes(&round, self.push_below)
    }

    /// A push round, after a take enqueued without the share copies: every device pushes
    /// the shares of the vertices it took (`taking[d]` on device `d`, the vertices the last
    /// round left above epsilon there), then each copies every peer's slots of its vertices
    /// (after that peer's push) and absorbs them, collecting after the last. Returns the
    /// round's counts of each device (waits for them).
    pub(super) fn push_and_absorb(
        &self,
        taking: &[u64],
    ) -> Result<Vec<SweepCounts>, PageRankError> {
        let devices = self.context.devices();
        let several = devices.len() > 1;
        let mut pushed = Vec::with_capacity(devices.len());
        for ((device, sweeps), &count) in devices.iter().zip(&self.devices).zip(taking) {
            sweeps.push(device.stream(), count)?;
            if several {
                pushed.push(device.stream().record()?);
            }
        }
        for (e, (device, sweeps)) in devices.iter().zip(&self.devices).enumerate() {
            if !several {
                sweeps.absorb(device.stream(), false, true)?;
                continue;
            }
            let last = if e + 1 == devices.len() {
                e - 1
            } else {
                devices.len() - 1
            };
            for (d, peer) in self.devices.iter().enumerate().filter(|&(d, _)| d != e) {
                let stream = device.stream();
                stream.wait(&pushed[d])?;
                stream.copy(&sweeps.incoming()?, &peer.slots_of(sweeps.owned())?)?;
                sweeps.absorb(stream, true, d == last)?;
            }
        }
        self.counts()
    }

    /// Enqueues a whole-graph round's take on every device (rounds by vertex ranges take in
    /// the round: `ranks/sweep_ranges.rs`), then, where `copy_shares` (a round that
    /// gathers), every device's owned shares into every other device's share array (each
    /// copy on the receiving device's stream, after the sender's take), then, on device 0,
    /// its boundary's shares packed into `mine`.
    pub(super) fn take_and_stage(
        &self,
        floor: f32,
        copy_shares: bool,
    ) -> Result<(), PageRankError> {
        let devices = self.context.devices();
        let copy_shares = copy_shares && devices.len() > 1;
        let mut taken = Vec::with_capacity(devices.len());
        for (device, sweeps) in devices.iter().zip(&self.devices) {
            sweeps.take(device.stream(), floor)?;
            if copy_shares {
                taken.push(device.stream().record()?);
            }
        }
        if copy_shares {
            self.copy_peer_shares(&taken, |peer| {
                peer.owned().start as usize..peer.owned().end as usize
            })?;
        }
        let share = self.devices[0].share();
        boundary::pack(
            devices[0].stream(),
            &self.own_boundary,
            share,
            &self.mine_shares,
        )?;
        Ok(())
    }

    /// Enqueues, on every device's stream, the copy of each peer's entries `entries(peer)`
    /// of the share array into its own, after the peer's event in `taken` (one per device,
    /// recorded after its take). The wait stands even where the entries are empty: a
    /// device's later takes are ordered after its peers' copies of its shares through it.
    pub(super) fn copy_peer_shares(
        &self,
        taken: &[Event],
        entries: impl Fn(&DeviceSweeps) -> Range<usize>,
    ) -> Result<(), PageRankError> {
        let devices = self.context.devices();
        for (e, (device, sweeps)) in devices.iter().zip(&self.devices).enumerate() {
            for (d, peer) in self.devices.iter().enumerate().filter(|&(d, _)| d != e) {
                device.stream().wait(&taken[d])?;
                let shares = entries(peer);
                if !shares.is_empty() {
                    device.stream().copy(
                        &sweeps.share().slice(shares.clone())?,
                        &peer.share().slice(shares)?,
                    )?;
                }
            }
        }
        Ok(())
    }

    /// After a round's gather of the boundaries' shares into `all`: the other processes'
    /// into device 0's share array and from there into every other device's (the ranges
    /// outside this process's), the gathers, and the round's counts of each of this
    /// process's devices (waits for them).
    pub(super) fn spread_and_gather(
        &self,
        sparse: bool,
    ) -> Result<Vec<SweepCounts>, PageRankError> {
        let devices = self.context.devices();
        let stream = devices[0].stream();
        let share = self.devices[0].share();
        let len = self.boundary_len;
        for (r, boundary) in self.boundaries.iter().enumerate() {
            if boundary.len() > 0 {
                let theirs = self.all.slice(r * len..r * len + boundary.len())?;
                boundary::unpack(stream, boundary, &theirs, share)?;
            }
        }
        if self.devices.len() > 1 && self.owned.len() > 1 {
            let spread = stream.record()?;
            let process = &self.owned[self.rank];
            let others = [0..process.start as usize, process.end as usize..share.len()];
            for (device, sweeps) in devices.iter().zip(&self.devices).skip(1) {
                device.stream().wait(&spread)?;
                for range in others.iter().filter(|r| !r.is_empty()) {
                    device.stream().copy(
                        &sweeps.share().slice(range.clone())?,
                        &share.slice(range.clone())?,
                    )?;
                }
            }
        }
        for (device, sweeps) in devices.iter().zip(&self.devices) {
            sweeps.gather(device.stream(), sparse)?;
        }
        self.counts()
    }

    /// Enqueues, on device 0, the copy of each device's owned ranks into `mine`, at their
    /// place in the process's range.
    pub(super) fn stage_ranks(&self) -> Result<(), PageRankError> {
        let devices = self.context.devices();
        let stream = devices[0].stream();
        let first = self.owned[self.rank].start;
        for (d, (device, sweeps)) in devices.iter().zip(&self.devices).enumerate() {
            if d > 0 {
                stream.wait(&device.stream().record()?)?;
            }
            let owned = sweeps.owned();
            let at = (owned.start - first) as usize;
            stream.copy(&self.mine.slice(at..at + owned.len())?, &sweeps.ranks()?)?;
        }
        Ok(())
    }

    /// The round's counts of each of this process's devices (waits for them).
    pub(super) fn counts(&self) -> Result<Vec<SweepCounts>, PageRankError> {
        let devices = self.context.devices();
        let mut counts = Vec::with_capacity(devices.len());
        for (device, sweeps) in devices.iter().zip(&self.devices) {
            counts.push(sweeps.counts(device)?);
        }
        Ok(counts)
    }
}

/// Whether the round after one that counted `round` (over every device) pushes: it takes
/// `round.crossed` vertices, expected at `round`'s arcs per vertex taken to take at most
/// `push_below` arcs (0: never; nothing to take, or no vertex taken to go by: no).
fn next_round_pushes(round: &SweepCounts, push_below: u64) -> bool {
    if push_below == 0 || round.crossed == 0 || round.taken == 0 {
        return false;
    }
    let expected =
        u128::from(round.crossed) * u128::from(round.taken_arcs) / u128::from(round.taken);
    expected <= u128::from(push_below)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(taken: u64, taken_arcs: u64, crossed: u64) -> SweepCounts {
        SweepCounts {
            taken,
            taken_arcs,
            crossed,
        }
    }

    #[test]
    fn a_round_pushes_where_its_vertices_at_the_last_arcs_per_vertex_stay_under_the_bound() {
        // 100 vertices took 1,000 arcs: 10 per vertex; 50 to take next: 500 expected.
        assert!(next_round_pushes(&counts(100, 1_000, 50), 500));
        assert!(!next_round_pushes(&counts(100, 1_000, 50), 499));
        // Counts at their largest do not overflow.
        assert!(next_round_pushes(
            &counts(u64::MAX, u64::MAX, u64::MAX),
            u64::MAX
        ));
    }

    #[test]
    fn round_times_add_up_by_kind() {
        let mut t = SweepRoundTimes::default();
        let ms = Duration::from_millis;
        t.add((false, false), ms(3));
        t.add((false, true), ms(2));
        t.add((true, false), ms(1));
        t.add((true, true), ms(1));
        t.add((false, false), ms(4));
        assert_eq!((t.gather, t.sparse_gather, t.push), (ms(7), ms(2), ms(2)));
        assert_eq!(t.total(), ms(11));
    }

    #[test]
    fn a_round_never_pushes_with_the_bound_at_0_or_nothing_to_go_by() {
        assert!(!next_round_pushes(&counts(100, 10, 1), 0), "pushes off");
        assert!(
            !next_round_pushes(&counts(100, 10, 0), 1_000),
            "nothing to take"
        );
        assert!(
            !next_round_pushes(&counts(0, 0, 5), 1_000),
            "no vertex taken last"
        );
    }
}
