//! Direction-optimizing BFS on several devices: the level loop of `run_levels` (the same as
//! one device's) over [`MultiSteps`], whose every step runs on all devices at once.
//!
//! Each device owns a contiguous range of the partitioned graph (`Partition::range`), holds
//! the whole CSR (and the transpose of a directed graph) and a full-length level array that
//! is globally consistent up to the current level. A level on every device:
//!
//! 1. **step** on its own part: push expands its frontier (its owned vertices at the level)
//!    over all their out-arcs, discovering owned and remote vertices; pull scans its owned
//!    unvisited vertices' in-neighbours against the level;
//! 2. **bitmap** of the vertices it discovered (its local level array at level + 1: all
//!    vertices after a push step, its owned words after a pull step);
//! 3. **all-gather** ([`exchange::BitmapExchange`]): the bitmap to every other device over a
//!    direct link; every received bitmap gives its unvisited vertices level + 1;
//! 4. **frontier scan**: its owned vertices at level + 1 become its frontier, their degrees
//!    summed into its counters.
//!
//! The host then reads every device's counters once (one synchronisation per device and
//! level) and sums them for [`SwitchRule`](super::SwitchRule). Levels come back from device 0
//! (every device holds them all).

mod cuda_part;
mod exchange;
mod host_part;
mod part;

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use groute_core::{Context, DeviceTimer, Error};
use groute_graph::{Graph, Partition};

use self::cuda_part::CudaPart;
use self::exchange::BitmapExchange;
use self::host_part::HostPart;
use self::part::{Part, PartCounts};
use super::{LevelSteps, StepCounts, SwitchRule, run_levels};
use crate::BfsError;
use crate::direction::solver::DirectionRun;
use groute_worklist::WorklistError;

/// Direction-optimizing BFS of one partitioned graph on every device of a context.
pub(crate) struct MultiDirection {
    context: Context,
    parts: Vec<Box<dyn Part>>,
    owned: Vec<Range<u32>>,
    exchange: BitmapExchange,
    n: u32,
    in_arcs: u64,
    rule: SwitchRule,
}

impl MultiDirection {
    /// Uploads `graph` (renumbered so that device `d` owns `partition.range(d)`; its transpose
    /// too when it is not symmetric) to every device and links the devices.
    pub(crate) fn new(
        context: &Context,
        graph: &Graph,
        partition: &Partition,
        rule: SwitchRule,
    ) -> Result<Self, BfsError> {
        let n = u32::try_from(graph.num_vertices()).map_err(|_| {
            Error::invalid("graph", graph.num_vertices(), "at most u32::MAX vertices")
        })?;
        let push = Arc::new(graph.csr.clone());
        let pull = if graph.symmetric {
            push.clone()
        } else {
            Arc::new(graph.csr.transpose())
        };
        let owned: Vec<Range<u32>> = (0..context.num_devices())
            .map(|d| partition.range(d))
            .collect();
        let parts = context
            .devices()
            .iter()
            .zip(&owned)
            .map(|(device, range)| -> Result<Box<dyn Part>, BfsError> {
                if device.stream().is_host() {
                    let part =
                        HostPart::new(context, device, push.clone(), pull.clone(), range.clone())?;
                    Ok(Box::new(part))
                } else {
                    let transpose = (!graph.symmetric).then_some(pull.as_ref());
                    let part = CudaPart::new(context, device, &push, transpose, range.clone())?;
                    Ok(Box::new(part))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let exchange = BitmapExchange::new(context, graph.num_vertices().div_ceil(32))?;
        Ok(MultiDirection {
            context: context.clone(),
            parts,
            owned,
            exchange,
            n,
            in_arcs: pull.num_edges(),
            rule,
        })
    }

    /// BFS from `source` (the partitioned graph's numbering, in range).
    pub(crate) fn run(
        &mut self,
        source: u32,
        time_limit: Option<Duration>,
    ) -> Result<DirectionRun, BfsError> {
        for part in &self.parts {
            part.reset(source)?;
        }
        for part in &self.parts {
            part.stream().synchronize()?;
        }
        let (n, in_arcs, rule) = (u64::from(self.n), self.in_arcs, self.rule);
        let started = Instant::now();
        let timer = DeviceTimer::start(&self.context)?;
        let mut steps = MultiSteps {
            last: vec![PartCounts::default(); self.parts.len()],
            frontiers: vec![0; self.parts.len()],
            solver: self,
            frontier: 0,
            reached: 0,
            frontier_out_arcs: 0,
            started,
            time_limit,
        };
        let first = steps.finish(0, None, 0)?;
        let stats = run_levels(&mut steps, first, n, in_arcs, &rule)?;
        let device_time = timer.stop()?;
        for part in &self.parts {
            part.check_worklist()?;
        }
        let elapsed = started.elapsed();
        Ok(DirectionRun {
            levels: self.parts[0].levels()?,
            stats,
            elapsed,
            device_time,
        })
    }

    /// The bitmap words device `d` sends after a step: every word after a push step (it may
    /// discover any vertex), the words of its owned range after a pull step (at least one, so
    /// that every device sends a message).
    fn words(&self, d: usize, pulled: bool) -> Range<u32> {
        let total = self.n.div_ceil(32).max(1);
        if !pulled {
            return 0..total;
        }
        let owned = &self.owned[d];
        let first = (owned.start / 32).min(total - 1);
        first..owned.end.div_ceil(32).clamp(first + 1, total)
    }
}

/// One run's position over all devices.
struct MultiSteps<'a> {
    solver: &'a mut MultiDirection,
    /// Each device's counters as last read (cumulative).
    last: Vec<PartCounts>,
    /// Each device's current frontier.
    frontiers: Vec<u32>,
    /// The current frontier's vertices, over all devices.
    frontier: u64,
    /// Vertices reached so far (every frontier's, the current one's included).
    reached: u64,
    /// The current frontier's out-arcs (what its push step reads).
    frontier_out_arcs: u64,
    started: Instant,
    time_limit: Option<Duration>,
}

impl MultiSteps<'_> {
    /// After the steps of level `mark - 1` (`pulled`: whether they pulled; `None`: no step,
    /// the source's level 0): exchanges the discoveries, scans every device's new frontier and
    /// sums the devices' counts; `items` is the steps' work.
    fn finish(
        &mut self,
        mark: u32,
        pulled: Option<bool>,
        items: u64,
    ) -> Result<StepCounts, BfsError> {
        let solver = &mut *self.solver;
        if let Some(pulled) = pulled {
            let words: Vec<Range<u32>> = (0..solver.parts.len())
                .map(|d| solver.words(d, pulled))
                .collect();
            for (d, part) in solver.parts.iter().enumerate() {
                solver.exchange.before_marking(d, part.as_ref())?;
                part.mark_bitmap(mark, words[d].clone())?;
            }
            solver.exchange.all_gather(&solver.parts, &words, mark)?;
        }
        for part in &solver.parts {
            part.scan_frontier(mark)?;
        }
        let mut step = StepCounts {
            items,
            ..StepCounts::default()
        };
        for ((part, last), frontier) in solver
            .parts
            .iter()
            .zip(&mut self.last)
            .zip(&mut self.frontiers)
        {
            let now = part.read_counts()?;
            let size = now.frontiers - last.frontiers;
            *frontier = u32::try_from(size).map_err(|_| {
                Error::invalid("frontier", size, "at most u32::MAX vertices (a bug)")
            })?;
            step.frontier += size;
            step.frontier_out_arcs += now.out_arcs - last.out_arcs;
            step.frontier_in_arcs += now.in_arcs - last.in_arcs;
            step.arcs_examined += now.examined - last.examined;
            *last = now;
        }
        self.frontier = step.frontier;
        self.reached += step.frontier;
        self.frontier_out_arcs = step.frontier_out_arcs;
        Ok(step)
    }
}

impl LevelSteps for MultiSteps<'_> {
    fn push(&mut self, level: u32) -> Result<StepCounts, BfsError> {
        for (part, &frontier) in self.solver.parts.iter().zip(&self.frontiers) {
            part.push(level, frontier)?;
        }
        let (items, read) = (self.frontier, self.frontier_out_arcs);
        let mut step = self.finish(level + 1, Some(false), items)?;
        step.arcs_examined += read;
        Ok(step)
    }

    fn pull(&mut self, level: u32) -> Result<StepCounts, BfsError> {
        for part in &self.solver.parts {
            part.pull(level)?;
        }
        let unvisited = u64::from(self.solver.n) - self.reached;
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
