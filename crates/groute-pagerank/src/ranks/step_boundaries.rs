//! Rounds by vertex ranges across processes (`ranks/sweep_ranges.rs`): after each step,
//! the shares the step's takes left on every process's boundary reach the other processes
//! ([`StepBoundaries::exchange`]), before their gathers of the next step.
//!
//! A process's boundary (`ranks/boundary.rs`) is split by step: the boundary vertices in its
//! devices' ranges of step `s`. After step `s`'s takes and the copies between the process's
//! devices, device 0 packs the process's part of step `s` from its share array, one
//! all-gather gives every process every part (each padded to the step's longest), and every
//! device of the process unpacks the other processes' parts into its share array (devices
//! other than 0 from a copy of the gathered words). So the order the module docs of
//! `ranks/sweep_ranges.rs` rely on holds across processes too: a share of step `s` reaches
//! every device after its gather of step `s` and before its gather of step `s + 1`.

use groute_core::{Buffer, Context, Error};
use groute_worklist::{RankCollectives, all_ready, sum_with_shape};

use super::boundary;
use super::sweeps::DeviceSweeps;
use crate::PageRankError;
use crate::cuda::boundary_launch::WordIndex;

/// The run, as errors name it.
const RUN: &str = "the PageRank across processes, rounds by vertex ranges";

/// One step's boundaries.
struct StepParts {
    /// Words every process gives to the step's all-gather: the longest part (at least 1).
    len: usize,
    /// On device 0: this process's boundary vertices of the step (where its part is packed
    /// from).
    own: WordIndex,
    /// Per device of this process, per process: that process's boundary vertices of the
    /// step (empty for this process: its shares are in place).
    theirs: Vec<Vec<WordIndex>>,
}

/// Every step's boundaries of every process, and the buffers of the exchange.
pub(super) struct StepBoundaries {
    steps: Vec<StepParts>,
    /// On device 0: this process's part of a step's all-gather (the longest step's words).
    mine: Buffer<u32>,
    /// On device 0: every process's part, in process order.
    all: Buffer<u32>,
    /// On every device: a copy of `all` to unpack from (device 0's is `all` itself).
    received: Vec<Buffer<u32>>,
    /// On every device: the longest part's words of zeros ([`StepBoundaries::zero_theirs`]).
    zeros: Vec<Buffer<u32>>,
    ranks: usize,
}

impl StepBoundaries {
    /// Splits this process's boundary `own` (its vertices with arcs to other processes',
    /// ascending) by the steps of its devices' ranges (`devices`, already uploaded with
    /// their ranges) and learns every other process's (collective), for `ranks` processes
    /// over `n` vertices.
    pub(super) fn new(
        context: &Context,
        devices: &[DeviceSweeps],
        own: &[u32],
        (rank, ranks, n): (usize, usize, usize),
        collectives: &mut dyn RankCollectives,
    ) -> Result<Self, PageRankError> {
        let steps = devices[0].sweep_ranges();
        // `own` is ascending and each device's range of a step consecutive: a slice of it
        // per device, in device order (ascending too).
        let within = |r: std::ops::Range<usize>| {
            let at = |bound: usize| own.partition_point(|&v| (v as usize) < bound);
            &own[at(r.start)..at(r.end)]
        };
        let own_by_step: Vec<Vec<u32>> = (0..steps)
            .map(|s| {
                devices
                    .iter()
                    .flat_map(|d| within(d.range_shares(s)))
                    .copied()
                    .collect()
            })
            .collect();
        // Each process's count of each step in its own words.
        let mut counts = vec![0u64; ranks * steps];
        for (s, part) in own_by_step.iter().enumerate() {
            counts[rank * steps + s] = part.len() as u64;
        }
        let shape = [("vertex ranges per device", steps as u64)];
        let (counts, same_shape) = sum_with_shape(collectives, false, &counts, &shape, RUN)?;
        // A process whose shape is the mean of the others' finds them alike: every process
        // learns of any one that differs.
        let ready = all_ready(collectives, same_shape.is_err(), RUN);
        same_shape?;
        ready?;
        let lens: Vec<usize> = (0..steps)
            .map(|s| {
                let longest = (0..ranks).map(|r| counts[r * steps + s]).max();
                longest.unwrap_or(0).max(1) as usize
            })
            .collect();
        let longest = lens.iter().copied().max().unwrap_or(1);
        let allocated = (|| -> Result<_, Error> {
            let gathered = longest
                .checked_mul(ranks)
                .ok_or_else(|| Error::invalid("processes", ranks, "fewer"))?;
            let device = &context.devices()[0];
            let (mine, all) = (
                device.alloc::<u32>(longest)?,
                device.alloc::<u32>(gathered)?,
            );
            let mut received = vec![all.clone()];
            let mut zeros = Vec::with_capacity(devices.len());
            for (d, device) in context.devices().iter().enumerate() {
                if d > 0 {
                    received.push(device.alloc::<u32>(gathered)?);
                }
                let z = device.alloc::<u32>(longest)?;
                device.stream().fill(&z, 0u32)?;
                zeros.push(z);
            }
            let own = own_by_step
                .iter()
                .map(|part| WordIndex::upload(device, part, n))
                .collect::<Result<Vec<_>, Error>>()?;
            Ok((mine, all, received, zeros, own))
        })();
        let ready = all_ready(collectives, allocated.is_err(), RUN);
        let (mine, all, received, zeros, own) = allocated?;
        ready?;
        // Every process's boundary of each step, gathered once: where the others' shares go.
        let device = &context.devices()[0];
        let mut parts = Vec::with_capacity(steps);
        for (s, own) in own.into_iter().enumerate() {
            let len = lens[s];
            let (mine, all) = (mine.slice(..len)?, all.slice(..len * ranks)?);
            let staged = (|| -> Result<(), Error> {
                if own.len() > 0 {
                    let ids = own.entries().slice(..own.len())?;
                    device.stream().copy(&mine.slice(..own.len())?, &ids)?;
                }
                Ok(())
            })();
            // Every process takes part in the gather before its own failure is told.
            let gathered = collectives.all_gather(&mine, &all, device.stream());
            let theirs = staged.map_err(PageRankError::from).and_then(|()| {
                gathered?;
                let ids = device.download(&all)?;
                let mut theirs = Vec::with_capacity(context.num_devices());
                for device in context.devices() {
                    let mut of_device = Vec::with_capacity(ranks);
                    for r in 0..ranks {
                        let count = if r == rank {
                            0
                        } else {
                            counts[r * steps + s] as usize
                        };
                        let at = r * len;
                        of_device.push(WordIndex::upload(device, &ids[at..at + count], n)?);
                    }
                    theirs.push(of_device);
                }
                Ok(theirs)
            });
            let ready = all_ready(collectives, theirs.is_err(), RUN);
            let theirs = theirs?;
            ready?;
            parts.push(StepParts { len, own, theirs });
        }
        Ok(StepBoundaries {
            steps: parts,
            mine,
            all,
            received,
            zeros,
            ranks,
        })
    }

    /// The words each process gives to the all-gathers of a round (over every step).
    pub(super) fn words(&self) -> u64 {
        self.steps.iter().map(|s| s.len as u64).sum()
    }

    /// The exchange of step `step` (collective; module docs), enqueued after the step's takes
    /// and the copies between this process's devices (`devices`, on `context`'s streams).
    /// Where `local_failed` (this process failed to enqueue its step), only the all-gather,
    /// so that the other processes' go through; the caller reports its failure.
    pub(super) fn exchange(
        &self,
        step: usize,
        (context, devices): (&Context, &[DeviceSweeps]),
        collectives: &mut dyn RankCollectives,
        local_failed: bool,
    ) -> Result<(), PageRankError> {
        let part = &self.steps[step];
        let len = part.len;
        let streams: Vec<_> = context.devices().iter().map(|d| d.stream()).collect();
        let (mine, all) = (self.mine.slice(..len)?, self.all.slice(..len * self.ranks)?);
        if local_failed {
            // The step's waits that order this gather after the other devices' copies of
            // the last one may not have been enqueued: let those copies end first (a stream
            // that failed ends at once).
            for stream in &streams[1..] {
                let _ = stream.synchronize();
            }
        }
        let packed = if local_failed || part.own.len() == 0 {
            Ok(())
        } else {
            boundary::pack(streams[0], &part.own, devices[0].share(), &mine)
        };
        collectives.all_gather(&mine, &all, streams[0])?;
        packed?;
        if local_failed {
            return Ok(());
        }
        let gathered = if devices.len() > 1 {
            Some(streams[0].record()?)
        } else {
            None
        };
        for (d, (stream, sweeps)) in streams.iter().zip(devices).enumerate() {
            let received = self.received[d].slice(..len * self.ranks)?;
            if let Some(gathered) = gathered.as_ref().filter(|_| d > 0) {
                stream.wait(gathered)?;
                stream.copy(&received, &all)?;
            }
            for (r, theirs) in part.theirs[d].iter().enumerate() {
                if theirs.len() > 0 {
                    let words = received.slice(r * len..r * len + theirs.len())?;
                    boundary::unpack(stream, theirs, &words, sweeps.share())?;
                }
            }
        }
        Ok(())
    }

    /// Enqueues on device `d`'s stream the zeroing of the other processes' shares of step
    /// `step` in its share array (`share`): the pass that leaves the ranges
    /// (`ranks/sweep_ranges.rs`).
    pub(super) fn zero_theirs(
        &self,
        step: usize,
        d: usize,
        (context, share): (&Context, &Buffer<u32>),
    ) -> Result<(), Error> {
        let stream = context.devices()[d].stream();
        for theirs in self.steps[step].theirs[d].iter().filter(|t| t.len() > 0) {
            let zeros = self.zeros[d].slice(..theirs.len())?;
            boundary::unpack(stream, theirs, &zeros, share)?;
        }
        Ok(())
    }
}
