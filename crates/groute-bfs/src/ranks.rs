//! [`BfsRanks`]: direction-optimizing BFS of one process's share of a run spanning
//! processes (the ranks of an MPI job), level-synchronous across all of them.
//!
//! Each process's devices hold consecutive parts of one partition (process `r` of `R` with
//! `D` devices each: parts `r D .. (r + 1) D`), only their rows (and a full-length level
//! array each). A level runs on every device of every process: the step on its own rows,
//! the exchange of the level's discoveries within the process over its links, then device 0
//! of every process gathers the processes' discoveries as bitmaps and sums the level's
//! counts ([`RankCollectives`]: NCCL and MPI in `groute-dist`'s `CommCollectives`), so every
//! device of every process applies the same switch rule to the same counts and ends on the
//! same level. Every process ends with every vertex's level.
//!
//! Everything here is collective: every process makes its solver and runs it from the same
//! source in the same order. The checks of the graph and the partition, and the uploads,
//! are agreed on before any run, so a process that cannot take part fails every process's
//! [`BfsRanks::new`]. In a run, a process that fails (its reset, a level's step or exchange
//! on any of its devices, the levels' read-back) still takes part in the collectives it has
//! not reached, telling the others in the next sum (the reset's, the level's, or the one
//! after the read-back), and every process returns an error at the same step. An error
//! inside a collective itself (NCCL, MPI), or a fault of a CUDA device (its stream stops, so
//! its part of the next NCCL gather never runs and the others wait in theirs), can leave
//! the others waiting, so a job ends on it (the example aborts the MPI job).

use std::time::Duration;

use groute_core::{Context, Error};
use groute_graph::{Csr, HeldRows, Partition};
use groute_worklist::{DeviceParts, RankCollectives, all_ready, partition_shape, sum_with_shape};

use crate::direction::MultiDirection;
use crate::{BfsError, BfsResult, BfsTuning, Direction};

/// The run, as errors name it.
const RUN: &str = "the BFS across processes";

/// Direction-optimizing BFS of one process's share of a run spanning processes: the graph
/// uploaded once, each [`BfsRanks::run`] resetting the levels and traversing.
pub struct BfsRanks {
    multi: MultiDirection,
    num_vertices: usize,
}

impl std::fmt::Debug for BfsRanks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BfsRanks")
            .field("num_vertices", &self.num_vertices)
            .finish_non_exhaustive()
    }
}

impl BfsRanks {
    /// Whether `direction` makes a run spanning processes direction-optimizing, as
    /// [`Direction::optimizes`] decides for one process, on the average degree of the whole
    /// graph (collective: every process decides alike). `symmetric`: the graph's flag
    /// ([`Graph::symmetric`](groute_graph::Graph), the cache's), the same on every process.
    pub fn is_chosen(
        direction: Direction,
        context: &Context,
        (rows, partition): (&HeldRows<'_>, &Partition),
        symmetric: bool,
        collectives: &mut dyn RankCollectives,
    ) -> Result<bool, BfsError> {
        let first_part = collectives.rank() * context.num_devices();
        let parts = DeviceParts::check(context, rows, partition, first_part);
        let arcs = parts.as_ref().map_or(0, |_| {
            owned_arcs(rows.csr(), partition, first_part, context.num_devices())
        });
        let agreed = sum_with_shape(collectives, parts.is_err(), &[arcs], &[], RUN);
        parts?;
        let (sum, _) = agreed?;
        let n = rows.num_vertices().max(1);
        let devices = collectives.ranks() * context.num_devices();
        let chosen = direction.optimizes(devices, symmetric, sum[0] as f64 / n as f64, false);
        // Processes given different graphs could decide differently and then wait in
        // different collectives: every process learns how many chose it.
        let choosing = collectives.sum(&[u64::from(chosen.as_ref().is_ok_and(|&c| c))])?[0];
        let chosen = chosen?;
        if choosing != 0 && choosing != collectives.ranks() as u64 {
            return Err(Error::invalid(
                "processes",
                format!(
                    "{choosing} of {} chose the direction-optimizing BFS",
                    collectives.ranks()
                ),
                "the same graph (vertices, arcs, symmetry) on every process",
            )
            .into());
        }
        Ok(chosen)
    }

    /// Uploads this process's parts of `partition` (process `r`'s devices hold parts
    /// `r * devices..`; `rows` must hold their rows, of a graph renumbered so that part `p`
    /// owns `partition.range(p)`) and allocates the run storage (collective). A directed
    /// graph pulls over its transpose, which a process holds only when it holds the whole
    /// graph: one holding only its rows of a directed graph is an error naming the fix. Runs
    /// follow `tuning`'s switch rule (give every process the same one: each process decides
    /// every level by it) and pull bitmaps; its trace is [`BfsRanks::set_trace`]'s.
    pub fn new(
        context: &Context,
        (rows, partition): (&HeldRows<'_>, &Partition),
        collectives: &mut dyn RankCollectives,
        tuning: &BfsTuning,
    ) -> Result<Self, BfsError> {
        let (rank, ranks) = (collectives.rank(), collectives.ranks());
        let devices = context.num_devices();
        let first_part = rank * devices;
        let n = rows.num_vertices();
        let local = (|| -> Result<(Option<Csr>, u64), BfsError> {
            let (_, transpose) = DeviceParts::check_process(
                context,
                (rows, partition),
                (rank, ranks),
                Some(
                    "a direction-optimizing BFS across processes pulls over in-arcs: give a \
                     symmetric graph, let every process load the whole graph, or run the \
                     worklist BFS (--direction push)",
                ),
            )?;
            let arcs = owned_arcs(
                transpose.as_ref().unwrap_or(rows.csr()),
                partition,
                first_part,
                devices,
            );
            Ok((transpose, arcs))
        })();
        let shape = partition_shape(devices, n, partition);
        let arcs = local.as_ref().map_or(0, |l| l.1);
        let agreed = sum_with_shape(collectives, local.is_err(), &[arcs], &shape, RUN);
        let (transpose, _) = local?;
        let (sum, same_shape) = agreed?;
        let multi = same_shape.map_err(BfsError::from).and_then(|()| {
            MultiDirection::for_process(
                context,
                (rows.csr(), transpose.as_ref()),
                partition,
                (first_part, ranks),
                sum[0],
                tuning,
            )
        });
        let ready = all_ready(collectives, multi.is_err(), RUN);
        let multi = multi?;
        ready?;
        Ok(BfsRanks {
            multi,
            num_vertices: n,
        })
    }

    /// Whether the runs trace device 0's phases per level (CUDA devices; the result's
    /// `stats.do_trace`, one device: this process's device 0): the step (a push's with the
    /// listing of its frontier), counting a push's finds and marking the process's
    /// discoveries (`send`; with several devices per process, also their exchange within
    /// the process), the gather between the processes (`exchange`), applying the others'
    /// (`scan`), and the gap until the next step starts (`decide`: the wait for the counts,
    /// their sum over the processes, the launch).
    pub fn set_trace(&mut self, on: bool) {
        self.multi.set_trace(on);
    }

    /// The most bytes each process gives to a level's gather: after a pull step (`pulled`) a
    /// window of the bitmap holding its own vertices' words (as many words from every
    /// process: the most any owns), after a push step its whole bitmap (`n / 8` bytes; where
    /// the processes run one device each, a push whose frontier has few out-arcs gathers a
    /// list of its discoveries instead, of at most as many vertices as out-arcs). Every
    /// process receives every other's.
    pub fn gather_bytes(&self, pulled: bool) -> u64 {
        self.multi.gather_bytes(pulled)
    }

    /// The bytes this process gave to the gathers of its last run, summed over its levels
    /// (every process gives as many; every process receives every other's).
    pub fn last_gathered_bytes(&self) -> u64 {
        self.multi.last_gathered_bytes()
    }

    /// BFS from `source` (the partitioned numbering, the same on every process;
    /// collective): every vertex's level (partitioned numbering, `UNREACHED` where not
    /// reached) on every process, and the run's statistics (counts over every process;
    /// times of this process, from the moment every process has started the run).
    /// `time_limit` (give every process the same) is decided over the processes after each
    /// level: once any process is past it, every process stops with the time limit's error
    /// on the same level, and the solver can run again.
    pub fn run(
        &mut self,
        collectives: &mut dyn RankCollectives,
        source: u32,
        time_limit: Option<Duration>,
    ) -> Result<BfsResult, BfsError> {
        if source as usize >= self.num_vertices {
            return Err(Error::invalid(
                "source",
                source,
                format!("a vertex below {}", self.num_vertices),
            )
            .into());
        }
        // The processes start together: the run's first sum, after every process's reset.
        let mut out = self
            .multi
            .run_across(source, time_limit, Some(collectives))?;
        let levels = std::mem::take(&mut out.levels);
        Ok(crate::direction_result(out, levels))
    }
}

/// The arcs of the rows that `devices` parts from `first_part` own.
fn owned_arcs(csr: &Csr, partition: &Partition, first_part: usize, devices: usize) -> u64 {
    let owned = partition.range_of_parts(first_part..first_part + devices);
    let o = csr.offsets();
    o[owned.end as usize] - o[owned.start as usize]
}
