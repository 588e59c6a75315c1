//! [`MemberSteps`]: the level steps of one device of a multi-device run, on its own host
//! thread, with [`LevelReduce`] summing the counts across the devices' threads.

use std::ops::Range;
use std::time::{Duration, Instant};

use groute_core::Error;
use groute_worklist::WorklistError;

use super::exchange::DeviceLinks;
use super::part::{Part, PartCounts};
use super::reduce::LevelReduce;
use crate::BfsError;
use crate::direction::{LevelSteps, StepCounts};

/// One device of a multi-device run: its kernels, links and position.
pub(super) struct Member {
    pub(super) part: Box<dyn Part>,
    pub(super) links: DeviceLinks,
    pub(super) owned: Range<u32>,
    /// Its current frontier.
    frontier: u32,
    /// Its counters as last read (cumulative).
    last: PartCounts,
}

impl Member {
    /// A device owning the vertices `owned`.
    pub(super) fn new(part: Box<dyn Part>, links: DeviceLinks, owned: Range<u32>) -> Self {
        Member {
            part,
            links,
            owned,
            frontier: 0,
            last: PartCounts::default(),
        }
    }

    /// The bitmap words this device sends after a step over a graph of `n` vertices: every
    /// word after a push step (it may discover any vertex), the words of its owned range
    /// after a pull step (at least one, so that every device sends a message).
    fn words(&self, n: u32, pulled: bool) -> Range<u32> {
        let total = n.div_ceil(32).max(1);
        if !pulled {
            return 0..total;
        }
        let first = (self.owned.start / 32).min(total - 1);
        first..self.owned.end.div_ceil(32).clamp(first + 1, total)
    }
}

/// The level steps of `member` (after its reset) in a run over `n` vertices.
pub(super) struct MemberSteps<'a> {
    member: &'a mut Member,
    /// Sums the counts with the other devices' threads.
    reduce: &'a LevelReduce,
    n: u32,
    /// The current frontier's vertices, over all devices.
    frontier: u64,
    /// Vertices reached so far (every frontier's, the current one's included).
    reached: u64,
    /// The current frontier's out-arcs, over all devices (what its push step reads).
    frontier_out_arcs: u64,
    started: Instant,
    time_limit: Option<Duration>,
}

impl<'a> MemberSteps<'a> {
    /// Steps of `member` from the source (already reset) over `n` vertices, and the counts of
    /// the source's frontier (over every device).
    pub(super) fn start(
        member: &'a mut Member,
        reduce: &'a LevelReduce,
        n: u32,
        time_limit: Option<Duration>,
    ) -> Result<(Self, StepCounts), BfsError> {
        member.last = PartCounts::default();
        let mut steps = MemberSteps {
            member,
            reduce,
            n,
            frontier: 0,
            reached: 0,
            frontier_out_arcs: 0,
            started: Instant::now(),
            time_limit,
        };
        let first = steps.finish(0, None, 0)?;
        Ok((steps, first))
    }

    /// After the step of level `mark - 1` (`pulled`: whether it pulled; `None`: no step,
    /// the source's level 0): exchanges the discoveries, scans the new frontier and sums the
    /// devices' counts; `items` is the step's work over all devices.
    fn finish(
        &mut self,
        mark: u32,
        pulled: Option<bool>,
        items: u64,
    ) -> Result<StepCounts, BfsError> {
        let m = &mut *self.member;
        if let Some(pulled) = pulled {
            let words = m.words(self.n, pulled);
            m.links.before_marking(m.part.as_ref())?;
            m.part.mark_bitmap(mark, words.clone())?;
            m.links.send(m.part.as_ref(), words)?;
            m.links.receive(m.part.as_ref(), mark)?;
        }
        m.part.scan_frontier(mark)?;
        let now = m.part.read_counts()?;
        let size = now.frontiers - m.last.frontiers;
        m.frontier = u32::try_from(size)
            .map_err(|_| Error::invalid("frontier", size, "at most u32::MAX vertices (a bug)"))?;
        let local = StepCounts {
            frontier: size,
            frontier_out_arcs: now.out_arcs - m.last.out_arcs,
            frontier_in_arcs: now.in_arcs - m.last.in_arcs,
            items: 0,
            arcs_examined: now.examined - m.last.examined,
        };
        m.last = now;
        let mut step = self.reduce.all_reduce(local)?;
        step.items = items;
        self.frontier = step.frontier;
        self.reached += step.frontier;
        self.frontier_out_arcs = step.frontier_out_arcs;
        Ok(step)
    }
}

impl LevelSteps for MemberSteps<'_> {
    fn push(&mut self, level: u32) -> Result<StepCounts, BfsError> {
        let m = &self.member;
        m.part.push(level, m.frontier)?;
        let (items, read) = (self.frontier, self.frontier_out_arcs);
        let mut step = self.finish(level + 1, Some(false), items)?;
        step.arcs_examined += read;
        Ok(step)
    }

    fn pull(&mut self, level: u32) -> Result<StepCounts, BfsError> {
        self.member.part.pull(level)?;
        let unvisited = u64::from(self.n) - self.reached;
        self.finish(level + 1, Some(true), unvisited)
    }

    fn check_time(&self) -> Result<(), BfsError> {
        match self.time_limit {
            Some(limit) if self.started.elapsed() > limit => Err(WorklistError::TimedOut {
                limit,
                outstanding: self.frontier as i64,
            }
            .into()),
            _ => Ok(()),
        }
    }
}
