//! Direction-optimizing BFS on 1..N devices (Beamer, Asanović, Patterson, SC 2012).
//!
//! A level-synchronous BFS whose every level is one of two steps:
//!
//! - **push** (top-down): the frontier's vertices relax their out-arcs; an unvisited head gets
//!   the next level and joins the next frontier. Work: the frontier's out-arcs.
//! - **pull** (bottom-up): every unvisited vertex scans its in-neighbours for one on the
//!   frontier and stops at the first; a hit gets the next level. Work: at most the unvisited
//!   vertices' in-arcs, usually far fewer on the big levels of a low-diameter graph, where
//!   most unvisited vertices find a parent among their first few in-neighbours.
//!
//! [`SwitchRule`] picks the step (GAP's form of Beamer's rule): push turns to pull when the
//! frontier's out-arcs exceed the unvisited vertices' in-arcs / `alpha`; pull stays while the
//! frontier grows or holds more than `n / beta` vertices. The counts come from a degree sum
//! over each new frontier (`bfs_frontier_arcs` on CUDA).
//!
//! **In-neighbours.** A symmetric graph ([`Graph::symmetric`](groute_graph::Graph)) is its own
//! transpose, so the pull step reads the same CSR. A directed graph uses its transpose, built
//! on the host and kept beside the graph (twice the graph's memory); [`Direction::Auto`] never
//! optimizes a directed graph, [`Direction::PullPush`] does.
//!
//! **Counting.** A level is a round ([`BfsStats::rounds`](crate::BfsStats)); a push step's
//! work items are its frontier's vertices, a pull step's the unvisited vertices it scanned;
//! [`BfsStats::arcs_examined`](crate::BfsStats) counts the arcs each step actually read (a
//! push step every out-arc of its frontier, a pull step the in-arcs scanned up to the first
//! hit). GTEPS conventionally divides the arcs of the reached vertices instead (Graph500);
//! the example reports both.
//!
//! **Devices.** One device, CUDA (`cuda.rs`, `kernels/bfs/bfs_direction.cu` plus the push expand
//! of `kernels/bfs/bfs.cu`) or host (`host.rs`, rayon). Several devices (`multi/`, either
//! backend) run the same level loop ([`run_levels`]) over steps that each device takes on its
//! owned range of the partition, followed by an all-gather of the level's discoveries as
//! bitmaps over links (between every pair of devices, or past 8 devices through device 0);
//! see `multi/mod.rs`. Counters
//! are summed over the devices.
//!
//! **Drivers.** [`MultiDriver`] says what drives the levels: by default
//! ([`MultiDriver::Auto`]) the devices themselves wherever the context supports it (CUDA,
//! distinct GPUs with peer access; `fused/`: one persistent kernel per device for the whole
//! run, the steps above, the exchange by peer stores and the switch rule applied on the
//! devices to counts summed across them), else the host as above.

mod cuda;
mod fused;
mod host;
mod multi;
mod pull_bits;
mod readback;
mod rule;
mod solver;

pub use fused::{DeviceTrace, DirectionTrace, PhaseTimes, StepKind, StepTrace};
pub(crate) use multi::MultiDirection;
pub use multi::MultiDriver;
pub use rule::{AUTO_MIN_AVERAGE_DEGREE, Direction, PULL_ALPHA, PULL_GAMMA, PUSH_BETA, SwitchRule};
pub(crate) use solver::{DirectionRun, DirectionSolver};

/// The counts of one level step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StepCounts {
    /// Vertices of the new frontier.
    pub frontier: u64,
    /// Their out-arcs (the next push step's work).
    pub frontier_out_arcs: u64,
    /// Their in-arcs (what a pull step no longer has to scan).
    pub frontier_in_arcs: u64,
    /// Vertices the step worked on (frontier vertices pushed, unvisited vertices pulled).
    pub items: u64,
    /// Arcs the step read.
    pub arcs_examined: u64,
}

impl StepCounts {
    /// The field-by-field sum (the counts of several devices' shares of one step).
    pub(crate) fn plus(&self, other: &StepCounts) -> StepCounts {
        StepCounts {
            frontier: self.frontier + other.frontier,
            frontier_out_arcs: self.frontier_out_arcs + other.frontier_out_arcs,
            frontier_in_arcs: self.frontier_in_arcs + other.frontier_in_arcs,
            items: self.items + other.items,
            arcs_examined: self.arcs_examined + other.arcs_examined,
        }
    }
}

/// What a direction-optimizing run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DirectionStats {
    /// Level steps run (the last one finds an empty frontier).
    pub levels: u64,
    /// Of them, pull steps.
    pub pull_levels: u64,
    /// Vertices worked on, over all steps.
    pub items: u64,
    /// Arcs read, over all steps.
    pub arcs_examined: u64,
}

/// One backend's level steps over its own frontier and levels.
pub(crate) trait LevelSteps {
    /// Pushes the frontier of `level` (top-down).
    fn push(&mut self, level: u32) -> Result<StepCounts, crate::BfsError>;
    /// Pulls level `level + 1` from the unvisited vertices (bottom-up).
    fn pull(&mut self, level: u32) -> Result<StepCounts, crate::BfsError>;
    /// Fails the run when past the time limit (checked once per level).
    fn check_time(&self) -> Result<(), crate::BfsError>;
}

/// Runs levels from the source's frontier `start` until a step finds no new vertex, choosing
/// each step by `rule` over a graph of `n` vertices and `in_arcs` arcs (of the pull CSR).
pub(crate) fn run_levels(
    steps: &mut impl LevelSteps,
    start: StepCounts,
    n: u64,
    in_arcs: u64,
    rule: &SwitchRule,
) -> Result<DirectionStats, crate::BfsError> {
    let mut stats = DirectionStats::default();
    let mut unvisited_in_arcs = in_arcs.saturating_sub(start.frontier_in_arcs);
    let mut current = start;
    let mut previous_frontier = 0;
    let mut pulling = false;
    let mut level = 0u32;
    while current.frontier > 0 {
        steps.check_time()?;
        pulling = rule.pulls(pulling, &current, previous_frontier, unvisited_in_arcs, n);
        let next = if pulling {
            stats.pull_levels += 1;
            steps.pull(level)?
        } else {
            steps.push(level)?
        };
        stats.levels += 1;
        stats.items += next.items;
        stats.arcs_examined += next.arcs_examined;
        unvisited_in_arcs = unvisited_in_arcs.saturating_sub(next.frontier_in_arcs);
        previous_frontier = current.frontier;
        current = next;
        level += 1;
    }
    Ok(stats)
}
