//! The level steps of direction-optimizing BFS on one host-backend device (rayon over the
//! CSRs uploaded to it, read through their host views).

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use groute_worklist::{HostCsrRows, WorklistError};
use rayon::prelude::*;

use super::{LevelSteps, StepCounts};
use crate::{BfsError, UNREACHED};

/// One host run: levels, the current frontier and the two CSRs' rows (every vertex's).
pub(super) struct HostSteps<'a> {
    push: HostCsrRows<'a>,
    pull: HostCsrRows<'a>,
    levels: Vec<AtomicU32>,
    frontier: Vec<u32>,
    started: Instant,
    time_limit: Option<Duration>,
}

impl<'a> HostSteps<'a> {
    /// A run over `n` vertices, whose rows `push` and `pull` hold, from `source` (< `n`): its
    /// frontier and the source's counts.
    pub(super) fn new(
        (push, pull): (HostCsrRows<'a>, HostCsrRows<'a>),
        n: usize,
        source: u32,
        time_limit: Option<Duration>,
    ) -> (Self, StepCounts) {
        let levels: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(UNREACHED)).collect();
        levels[source as usize].store(0, Ordering::Relaxed);
        let mut steps = HostSteps {
            push,
            pull,
            levels,
            frontier: Vec::new(),
            started: Instant::now(),
            time_limit,
        };
        let start = steps.advance(vec![source], 0, 0);
        (steps, start)
    }

    /// The levels reached.
    pub(super) fn into_levels(self) -> Vec<u32> {
        self.levels.into_iter().map(AtomicU32::into_inner).collect()
    }

    /// Makes `next` the frontier and returns its counts.
    fn advance(&mut self, next: Vec<u32>, items: u64, arcs_examined: u64) -> StepCounts {
        let (push, pull) = (self.push, self.pull);
        let (out_arcs, in_arcs) = next
            .par_iter()
            .map(|&v| (push.degree(v) as u64, pull.degree(v) as u64))
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        self.frontier = next;
        StepCounts {
            frontier: self.frontier.len() as u64,
            frontier_out_arcs: out_arcs,
            frontier_in_arcs: in_arcs,
            items,
            arcs_examined,
        }
    }
}

/// Discovered vertices and arcs read by one worker.
type Found = (Vec<u32>, u64);

fn merge(mut a: Found, b: Found) -> Found {
    a.0.extend(b.0);
    (a.0, a.1 + b.1)
}

impl LevelSteps for HostSteps<'_> {
    fn push(&mut self, level: u32) -> Result<StepCounts, BfsError> {
        let next_level = level + 1;
        let (push, levels) = (self.push, &self.levels);
        let (next, arcs) = self
            .frontier
            .par_iter()
            .with_min_len(64)
            .fold(
                || (Vec::new(), 0u64),
                |(mut out, mut arcs), &v| {
                    let heads = push.row(v).0;
                    arcs += heads.len() as u64;
                    for &u in heads {
                        let won = levels[u as usize]
                            .compare_exchange(
                                UNREACHED,
                                next_level,
                                Ordering::Relaxed,
                                Ordering::Relaxed,
                            )
                            .is_ok();
                        if won {
                            out.push(u);
                        }
                    }
                    (out, arcs)
                },
            )
            .reduce(|| (Vec::new(), 0), merge);
        let items = self.frontier.len() as u64;
        Ok(self.advance(next, items, arcs))
    }

    fn pull(&mut self, level: u32) -> Result<StepCounts, BfsError> {
        let (pull, levels) = (self.pull, &self.levels);
        let n = levels.len() as u32;
        // Which vertices are unvisited is fixed before any is set, so the count of scanned
        // vertices does not depend on the schedule.
        let unvisited: Vec<u32> = (0..n)
            .into_par_iter()
            .filter(|&v| levels[v as usize].load(Ordering::Relaxed) == UNREACHED)
            .collect();
        let (next, arcs) = unvisited
            .par_iter()
            .with_min_len(256)
            .fold(
                || (Vec::new(), 0u64),
                |(mut out, mut arcs), &v| {
                    for &u in pull.row(v).0 {
                        arcs += 1;
                        if levels[u as usize].load(Ordering::Relaxed) == level {
                            levels[v as usize].store(level + 1, Ordering::Relaxed);
                            out.push(v);
                            break;
                        }
                    }
                    (out, arcs)
                },
            )
            .reduce(|| (Vec::new(), 0), merge);
        Ok(self.advance(next, unvisited.len() as u64, arcs))
    }

    fn check_time(&self) -> Result<(), BfsError> {
        match self.time_limit {
            Some(limit) if self.started.elapsed() > limit => Err(WorklistError::TimedOut {
                limit,
                outstanding: self.frontier.len() as i64,
            }
            .into()),
            _ => Ok(()),
        }
    }
}
