//! # groute-pagerank: residual-push PageRank on 1..N devices
//!
//! Asynchronous push PageRank over groute's distributed worklist (the paper's custom PR
//! solver, built from the generic engine: ring, local worklists, receive split and
//! termination count are [`groute_worklist`]'s).
//!
//! | item | what it is |
//! |---|---|
//! | [`PageRankSolver`] | the multi-device solver with its device storage kept across runs (graph uploaded once) |
//! | [`pagerank`] | one-shot form: ranks in the input's order plus statistics |
//! | [`PageRankOptions`], [`PageRankResult`], [`PageRankStats`] | its settings and output |
//! | [`DeviceProfile`] | CUDA: one device's rounds, receives, host synchronisations and host time by part |
//! | [`pagerank_reference`], [`Reference`] | power iteration in `f64` to a tight tolerance, the oracle of the tests |
//! | [`l1_error_bound`] | the a-priori bound on the L1 error (below) |
//! | [`PageRank`] | residual push as a [`groute_worklist::WorklistAlgorithm`] (what the host backend runs) |
//! | [`VertexResidual`] | the CUDA worker's packed item: `(vertex, residual)`, merged per vertex before sending |
//! | [`cuda`] | typed launch wrappers of `kernels/pagerank/pagerank.cu` (the CUDA worker, used by [`pagerank`] on CUDA contexts, calls them) |
//! | [`PageRankRanks`], [`PageRankRanksResult`], [`PageRankRanksStats`] | synchronous sweeps, every device's shares copied to the others in a round that gathers (alone, a round that takes few arcs pushes instead): one process's share of a run spanning processes, or one process alone ([`Driver::Sweeps`]; both backends) |
//! | [`PageRankShare`] | CUDA: one process's share of a run spanning several processes (the `groute-dist` crate's ranks), host-driven rounds |
//! | [`Driver`] | who drives the rounds: the host over the worklist, one persistent kernel per device, or the host in synchronous sweeps |
//! | [`PageRankError`] | what can go wrong |
//!
//! ```
//! use groute_pagerank::{l1_distance, pagerank, pagerank_reference, PageRankOptions};
//! use groute_graph::{generate, partition_graph, GenSpec, NoProgress, PartitionMethod};
//!
//! let g = generate(&"road:side=16,p=0.6,seed=2".parse::<GenSpec>()?, &NoProgress)?;
//! let exact = pagerank_reference(&g.csr, 0.85);
//! let ctx = groute_core::Context::host(3)?;
//! let parted = partition_graph(g, 3, PartitionMethod::Block, &NoProgress)?;
//! let options = PageRankOptions::default();
//! let result = pagerank(&ctx, &parted, &options)?;
//! // Block partitioning keeps the input order, so ranks compare index by index.
//! let err = l1_distance(&result.ranks, &exact.ranks);
//! assert!(err <= result.stats.residual_left / (1.0 - 0.85) + 1e-3);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## The algorithm
//!
//! Unnormalised PageRank: `r*(v) = (1 - alpha) + alpha * sum over arcs u -> v of
//! r*(u) / outdeg(u)`; the mass of dangling vertices is not redistributed. Write
//! `(A x)(v) = sum over u -> v of x(u) / outdeg(u)`; then `r* = (1 - alpha) M 1` with
//! `M = (I - alpha A)^-1 = sum_k alpha^k A^k`.
//!
//! Push form: every vertex has a rank `r(v) = 0` and a residual `res(v) = 1 - alpha`.
//! Pushing `v` moves its residual `rho` into its rank and spreads `alpha * rho / outdeg(v)`
//! to each out-neighbour's residual. Each device owns a contiguous range of vertices and
//! schedules an owned vertex when its residual crosses `epsilon` (from at or below to
//! above, so a vertex is pending at most once while its residual stays above). A
//! contribution to a vertex of another device is added to this device's *halo slot* of that
//! vertex (a full-length residual array, `f32` atomics); the first contribution of a round
//! produces the item, and packing takes the whole accumulation, so a round sends at most one
//! `(vertex, residual)` item per remote vertex, whatever its size: several small ones may add
//! up past epsilon at the owner, which applies every contribution and schedules the vertex
//! only if its residual crosses epsilon. The first round of every device is a sweep over its
//! whole owned range, run as a range ([`groute_worklist::Start::EveryVertex`]),
//! not as a worklist of every vertex.
//!
//! ## Error bound
//!
//! **Invariant.** At every instant `r* = r + M res`, where `res` counts every residual not
//! yet pushed, wherever it sits (owned residuals, halo accumulations, items in flight). It
//! holds at the start (`r = 0`, `res = (1 - alpha) 1`) and a push of `rho` at `v` changes
//! `r + M res` by `rho e_v - rho M e_v + alpha rho M A e_v = rho e_v - rho M (I - alpha A)
//! e_v = 0`; moving mass between halo slots, items and owners changes nothing.
//!
//! **At the end** every halo slot has been sent and every item applied, and no owned vertex
//! has a residual above epsilon (it would be pending, and the run ends only when nothing is
//! pending anywhere). So `res >= 0`, `res(v) <= epsilon` and `r* - r = M res >= 0`: the
//! computed ranks never exceed the exact ones. Each column of `A` sums to 1 (0 for a
//! dangling vertex), so `|A x|_1 <= |x|_1` and `|M|_1 <= sum_k alpha^k = 1 / (1 - alpha)`:
//!
//! ```text
//!   |r - r*|_1  <=  |res|_1 / (1 - alpha)  <=  n * epsilon / (1 - alpha)
//! ```
//!
//! The first form is the *a-posteriori* bound, with the residual actually left
//! ([`PageRankStats::residual_left`], usually far below `n * epsilon`); the second is the
//! a-priori bound [`l1_error_bound`]. Since `r* >= 1 - alpha` everywhere, `|r*|_1 >= n (1 -
//! alpha)` and the **relative** L1 error is at most `epsilon / (1 - alpha)^2` (0.0089 for the
//! defaults; in practice the residual left is a small fraction of `n * epsilon`). Ranks are
//! accumulated in `f32`, which adds a rounding error of about `1e-6` relative per vertex;
//! the tests allow `1e-4 |r*|_1` for it.
//!
//! ## Pull sweeps
//!
//! [`SweepMode::Pull`] (`--sweep pull`, the default; `--sweep push` selects the push sweep
//! above) runs a sweep round as two passes with no atomic on
//! a local arc. **Take**: every owned vertex whose residual exceeds the round's floor (0 in
//! the first round, epsilon later) is taken (`rank += rho`, `res = 0`) and its share
//! `alpha * rho / outdeg(v)` stored in a share array (0 for every other vertex). **Cut**
//! (several devices): each *cut vertex*'s share is pushed as above only along its cut arcs
//! (heads owned by another device), into the halo slots, so a remote in-neighbour's mass
//! still reaches its owner as one merged item per vertex. The cut lists are compact, built
//! once at upload: only the owned vertices that have cut arcs, with their heads, so the pass
//! costs what the cut costs (a road network's block partition cuts a few thousand of
//! millions of vertices). **Gather**: every owned vertex
//! adds the shares of its owned in-neighbours (the in-CSR: the graph's own CSR when it is
//! symmetric, else its transpose, built once on the host; each device holds only its owned
//! rows of it) to its residual. A worklist round is always a push round.
//!
//! *Bound.* The sweep is the push of every taken vertex once, with the pushes' additions
//! delayed to the gather: between the passes the shares are mass in flight, like items on
//! the ring, so the invariant `r* = r + M res` holds at the end of the round. A vertex not
//! taken has a residual at most the floor `<= epsilon`, and a taken one 0, so the gather
//! appends a vertex to the worklist exactly when it makes it cross epsilon: after the round
//! every owned vertex above epsilon is pending, as after a push round. The end-of-run
//! argument, and so both bounds above, are unchanged. The difference is only in the
//! schedule: a push sweep may take a vertex's residual after some of the same sweep's
//! additions (asynchronous), a pull sweep leaves all of them to the next round (one Jacobi
//! step), which may need more rounds, each much cheaper.
//!
//! The host backend pulls in its first sweep (it runs worklist rounds after it); CUDA in
//! every sweep round.
//!
//! ## Device-driven runs
//!
//! *Status.* [`Driver::Auto`] runs device-driven with pull sweeps where
//! `groute_core::cuda::PeerGroup::auto_device_driven` holds (one device, distinct GPUs with
//! peer access, or members sharing a GPU) and the partition cuts few arcs, but for one device
//! holding a dense graph in degree order whose shares fit its L2 or that is large, or a
//! dense graph whose shares outgrow it ("Choosing a driver" below);
//! host-driven where the loop cannot run. Members sharing one GPU run
//! device-driven several times faster than host-driven on dense graphs, and faster on road
//! grids; host-driven rounds on two GPUs are slower than it on every graph, by far on dense
//! ones. Where a partition cuts many arcs, the synchronous sweeps ([`Driver::Sweeps`]) are
//! faster still.
//! The start gate of
//! `groute_core::cuda::PeerGroup` (every member running before the first exchange completes,
//! else the start is cancelled and relaunched) keeps 2-GPU runs from stalling beside other
//! threads' driver calls.
//!
//! [`Driver::Fused`] (`--driver fused`; CUDA with pull sweeps, on distinct physical GPUs with
//! peer access, or on virtual devices sharing a GPU, each member then launched on its share
//! of the GPU's resident blocks: `groute_core::cuda::member_share`)
//! runs the same rounds with no host in the loop: ONE persistent cooperative kernel per device
//! (`kernels/pagerank/pagerank_fused.cu`) runs every round, its passes separated by grid
//! barriers, the devices by cross-device all-reduces. The round bodies are the host-driven
//! kernels' (`pagerank_push.cuh`, `pull_sweep_gather.cuh`). What differs is how mass
//! crosses devices. A sweep pulls through *mirrors*: after its take, each device stores the
//! share of every owned vertex with an out-arc into a peer's range (its mirrors for that peer,
//! listed at upload: one per vertex and peer, however many arcs lead there) into the peer's
//! share array, and after an exchange every device gathers over its owned vertices' in-arcs
//! exactly as on one device. No cut list, no atomic per cut arc; sweeps are collective (every
//! device sweeps in the same rounds). A worklist round's contribution to another device's vertex
//! goes straight to its OWNER, added with a system-scope atomic into the owner's incoming halo
//! slot of the vertex (one array per round parity); the round's first contribution (old value
//! 0) appends the vertex to the owner's inbox of that parity. After the round's work the
//! devices pass ONE exchange, an all-reduce of (pending items, items sent, stop, vertices taken
//! by chained gathers, below) that also makes every peer write visible: the run ends when none
//! is pending, sent or taken; else every device drains its inbox (each slot's mass added to its
//! vertex's residual, a vertex that crosses epsilon scheduled: the receive rule above) and
//! starts the next round, of the kind the exchange's sums call for (the host mode's rule over
//! every device's pending items and the items in flight), while faster peers may already fill
//! the other parity. On one device there is no exchange and no drain.
//!
//! Where no device's gathers have pull hubs, sweeps are *chained*: a gather takes at once every
//! residual it leaves above epsilon, into a second share array, so the next sweep runs no take
//! pass (a pass and a grid barrier fewer; its mirror post reads that array, into the peers'
//! second ones). While the vertices taken, on every device, are at least the vertices over the
//! sweep divisor, the next round is another chained sweep; once fewer, a sweep that only
//! gathers their shares, listing the vertices that cross epsilon for the worklist rounds. Where
//! every in-list is shorter than a warp (road networks), a chained gather loads each list's
//! first tails, then their shares, together, from 32-bit row offsets (4 bytes a vertex more).
//! On one H200, road networks ran 1.7 to 1.8 times faster so (epsilon 0.01).
//!
//! *Bound.* The halo slots are mass in flight, like items on the ring: the invariant `r* = r +
//! M res` holds with `res` counting them, and moving a slot's mass into the owner's residual
//! changes nothing. A slot holding mass is listed in its inbox (a worklist round's first
//! contribution listed it; an inbox holds every in-cut vertex, and an overflow would stop the
//! run with an error); each round's slots are drained before the next round's work. A
//! sweep's shares are mass in flight between its take and its gather, mirrored or not, and
//! every arc's share is gathered by the arc's head's owner in the same sweep; a chained take
//! is the next sweep's take (floor epsilon) run early, its shares in flight until that
//! sweep's gather, and a sweep that took anything is always followed by one. The run ends
//! only at an exchange where no device sent anything in the round: so at the end no mass is
//! in flight, no owned residual exceeds epsilon (it would be pending), and both bounds above
//! hold unchanged.
//! [`PageRankStats::driver`] says which driver ran; the per-device profile then holds the
//! rounds by kind from the device's counters, its exchanges, its mirror values posted, and its
//! device time by phase ([`FusedPhaseTimes`]: sweep take, mirror post, hubs, gather, worklist
//! pushes, exchange, drain; `%globaltimer` stamps of the grid barriers' actions, a few per
//! round).
//!
//! ## Choosing a driver
//!
//! [`Driver::Auto`] picks by what a round costs on the partition at hand:
//!
//! - On several CUDA devices whose partition cuts at least a tenth of the arcs (a Kronecker
//!   graph's block partition cuts about half), [`Driver::Sweeps`]: every round a sweep of
//!   the whole graph (a pull sweep but for the push rounds below), launched by the host, the
//!   devices copying each other's owned shares
//!   between the take and the gather (bulk copies, one per device pair and round, instead of
//!   the device-driven loop's remote atomic per cut arc in worklist rounds). On two GPUs and
//!   on two members sharing one GPU it is the fastest driver on such graphs, and the one that
//!   makes a second GPU pay off there. On a graph in degree order of at least
//!   [`SWEEP_RANGES_MIN_ARCS`] arcs the first rounds go by vertex ranges, as on one device
//!   below: each device splits its vertices into ranges, the ranges of a step run side by
//!   side and each device copies its peers' shares of a step before its next gather (two
//!   H200s: 31 rounds where whole-graph rounds need 96 on a Kronecker graph of scale 25, at
//!   epsilon 0.01). The bound and the end test are those of
//!   [`PageRankRanks`] (a round is one pull sweep of these docs); so is the gather of a
//!   round that takes few vertices, which reads only their shares
//!   ([`PageRankTuning::sparse_gather_divisor`]). A round expected to take few arcs (at
//!   most an eighth of the graph's: [`PageRankTuning::sweep_push_divisor`]) pushes instead:
//!   the vertices taken add their shares along their out-arcs with atomics, each device
//!   collecting its peers' heads in its own slots of them, and the devices copy those slots
//!   to their owners (`ranks/sweeps.rs`, "Push rounds"); the same synchronous sweep, in
//!   another order of float additions.
//! - On one CUDA device holding a dense graph (at least [`DENSE_MIN_AVERAGE_DEGREE`] arcs
//!   per vertex) uploaded in degree order whose shares fit the L2 (where the gather is dealt
//!   out over the blocks: [`PageRankTuning::gather_interleave_for`]), [`Driver::Sweeps`] as
//!   well: its gathers keep several loads in flight per thread, and with the heavy vertices'
//!   shares in the L1 they beat the device-driven loop's (a Kronecker graph of scale 21 on
//!   one H200). On such a graph of at least [`SWEEP_RANGES_MIN_ARCS`] arcs a round gathers
//!   and takes [`SWEEP_RANGES`] ranges of the vertices one after the other
//!   ([`PageRankTuning::sweep_ranges_for`]): a range's gather reads the shares the earlier
//!   ranges took in the same round (block Gauss-Seidel), so fewer rounds converge (27
//!   against 43 on a Kronecker graph of scale 21) to the same bound: the run ends on a
//!   round that takes nothing, every residual then at most epsilon. Once a round takes few
//!   enough arcs that a whole-graph round would push them (not merely few enough vertices
//!   that it would gather only their shares), one pass delivers the shares still in flight
//!   and the run goes on in whole-graph rounds (`ranks/sweep_ranges.rs`, "Leaving the
//!   ranges"). On CUDA a range's gather goes by tiles ([`PageRankTuning::gather_tiles_for`]):
//!   runs of consecutive vertices whose in-arcs are kept a second time sorted by source,
//!   each summed by one block in shared memory, so that neighbouring threads read
//!   neighbouring shares (on one H200, Kronecker graphs of scale 21 and 25 ran 23% and 32%
//!   faster than gathering by vertex).
//! - Otherwise (one device, but for the dense graphs of the items around, or a partition that
//!   cuts few arcs, as METIS or blocks do on road networks), [`Driver::Fused`] where the
//!   devices can run it: there the copies of whole
//!   share arrays and the host's launch and read-back per round cost more than the few cut
//!   arcs, and the device-driven loop's worklist rounds, which push only from the vertices
//!   above epsilon, are cheaper than sweeping every vertex every round.
//! - On one CUDA device holding a dense graph in degree order whose shares (4 bytes per
//!   vertex) outgrow the L2, [`Driver::Sweeps`] too where it has at least
//!   [`SWEEP_RANGES_MIN_ARCS`] arcs, by [`SWEEP_RANGES_PAST_L2`] vertex ranges: 33 rounds
//!   (24 by ranges) against whole-graph rounds' 92 on a Kronecker graph of scale 25 at
//!   epsilon 0.01.
//! - On one CUDA device holding a dense graph (at least [`DENSE_MIN_AVERAGE_DEGREE`] arcs
//!   per vertex) whose shares outgrow the L2 and that is not in degree order (degrees not
//!   skewed, the order turned off, or the host short of memory for the renumbered copy), or
//!   whose sweeps would not go by ranges (the ranges turned off), [`Driver::Host`]: there
//!   most of a run is sweeps whose gathers read shares from DRAM, and the sweep's gather and
//!   hub tiles launched as kernels of their own run faster than as phases of the persistent
//!   loop, by more than the launch and read-back per round cost. Where the graph is sparse
//!   the device-driven loop is the faster, and where the shares fit the L2 the items above
//!   apply.
//! - With push sweeps, or on one device or a partition cutting few arcs where the
//!   device-driven loop cannot run, [`Driver::Host`].
//!
//! The host backend runs [`Driver::Host`] unless asked (its tests run every driver).
//!
//! ## Degree order
//!
//! A pull sweep reads, for every in-arc of a vertex, its tail's share: at random, over an
//! array of one share per vertex. Where the degrees are skewed (on CUDA, on any number of
//! devices), [`PageRankSolver::new`] uploads the graph renumbered so that each device's
//! vertices come in order of decreasing degree
//! (`groute_graph::order_parts_by_degree`: the partition's parts and cut are unchanged, the
//! ranks still come back in the input order). The few vertices that most in-arcs lead from
//! then share a few cache lines at the start of each device's range: they stay in the L2
//! where the shares outgrow it (on a Kronecker graph of scale 25 every driver's sweeps are
//! markedly faster), and in the SMs' L1 where the shares fit the L2 (scale 21: the pull hubs'
//! tiles run about a third faster, and on two devices the sweeps take about a quarter less
//! time than in the input order). In that order consecutive vertices have about equal
//! degrees, so the gather deals its vertices out over the blocks thread by thread, or the
//! first warps would get every long list
//! ([`PageRankTuning::gather_interleave_for`]; where the per-vertex arrays outgrow the L2,
//! a warp's loads of them falling on 32 lines instead of one cost more than the balance
//! gains). A road network's degrees are about equal and its input numbering has locality the
//! order would throw away. [`PageRankTuning::degree_order_for`] is the rule,
//! [`PageRankSolver::degree_ordered`] says what it picked. Renumbering costs the host a pass
//! over the arcs and a second copy of the graph while [`PageRankSolver::new`] uploads it;
//! where that copy cannot be allocated, the rule's choice gives way to the input order (a
//! renumbering asked for fails with the allocation error instead).
//!
//! [`PageRankRanks`] applies the same rule across processes, to the whole graph's counts and
//! every process's smallest L2: each process orders its own parts from its own rows
//! (`groute_graph::degree_order_of_parts`), the new ids are gathered once, and each process
//! renames its rows (`groute_graph::renumber_rows`), so a process holding only its rows of a
//! cache orders as one holding the whole graph would ([`PageRankRanks::degree_ordered`]).
//! The renamed rows live only while [`PageRankRanks::new`] uploads them (every row where a
//! process holds the whole of a directed graph, whose transpose is then built from them);
//! the runs keep one new id per vertex to map the ranks back.
//!
//! ## Vertex numbering
//!
//! Partitioning renumbers vertices; the solver returns ranks in the *input order*: the rank
//! of each vertex's external id (for generated graphs and every offset-numbered format,
//! simply the original vertex id).

mod algorithm;
pub mod cuda;
mod driver;
mod gather_tiles;
mod host_pull;
mod mirrors;
mod profile;
mod ranks;
mod reference;
mod share;
mod solver;
mod sweep;
mod tuning;

use std::time::Duration;

use groute_graph::PartitionedGraph;
use groute_worklist::{TraversalError, TraversalName, WorklistOptions, WorklistStats};
use rayon::prelude::*;

pub use algorithm::{PageRank, VertexResidual};
pub use driver::Driver;
pub use profile::{DeviceProfile, FusedPhaseTimes};
pub use ranks::{PageRankRanks, PageRankRanksResult, PageRankRanksStats, SweepRoundTimes};
pub use reference::{Reference, l1_distance, pagerank_reference};
pub use share::PageRankShare;
pub use sweep::{PULL_HUB_DEGREE, SweepMode};
pub use tuning::{
    DEGREE_ORDER_SKEW, GATHER_TILE_BY_DESTINATION, PageRankTuning, SPARSE_GATHER_DIVISOR,
    SWEEP_PUSH_DIVISOR, SWEEP_RANGES, SWEEP_RANGES_MIN_ARCS, SWEEP_RANGES_PAST_L2,
};

/// The default damping factor.
pub const DEFAULT_ALPHA: f32 = 0.85;
/// The default scheduling threshold: small enough that the ranks land within 1e-3 relative
/// L1 of the exact fixed point (the error grows about linearly with epsilon). The benchmarks
/// use [`BENCH_EPSILON`] to compare with published figures.
pub const DEFAULT_EPSILON: f32 = 2e-4;
/// The threshold of the benchmarks (`benches/scaling`): 0.01, as the published figures
/// they compare with (a few percent relative L1, within the a-priori bound).
pub const BENCH_EPSILON: f32 = 0.01;
/// [`PageRankTuning::sweep_divisor_for`] on graphs of fewer than
/// [`DENSE_MIN_AVERAGE_DEGREE`] arcs per vertex: sweep once a sixteenth of the owned range is
/// pending (the CUDA worker's docs give the cost model).
pub const SPARSE_SWEEP_DIVISOR: u32 = 16;
/// [`PageRankTuning::sweep_divisor_for`] on graphs of at least [`DENSE_MIN_AVERAGE_DEGREE`]
/// arcs per vertex: sweep once a sixty-fourth of the owned range is pending.
pub const DENSE_SWEEP_DIVISOR: u32 = 64;
/// The average degree from which [`PageRankTuning::sweep_divisor_for`] picks
/// [`DENSE_SWEEP_DIVISOR`], and from which [`Driver::Auto`] runs one CUDA device holding a
/// graph in degree order whose shares fit its L2, or a large one, in synchronous sweeps,
/// and one holding any other graph whose shares outgrow it host-driven ("Choosing a
/// driver"): between road grids
/// (about 2.4) and Kronecker graphs (31 and more).
pub const DENSE_MIN_AVERAGE_DEGREE: f64 = 8.0;
/// Default [`PageRankTuning::fused_blocks_per_sm`].
pub const DEFAULT_FUSED_BLOCKS_PER_SM: u32 = 8;

/// The a-priori bound on `|r - r*|_1` for a graph of `vertices` vertices:
/// `vertices * epsilon / (1 - alpha)` (see the crate docs).
pub fn l1_error_bound(vertices: usize, alpha: f64, epsilon: f64) -> f64 {
    vertices as f64 * epsilon / (1.0 - alpha)
}

/// Settings of [`PageRankSolver`] and [`pagerank`].
#[derive(Clone, Debug, PartialEq)]
pub struct PageRankOptions {
    /// Damping factor, in (0, 1) (`--alpha`, default 0.85).
    pub alpha: f32,
    /// A vertex is scheduled when its residual exceeds this (`--epsilon`, default
    /// [`DEFAULT_EPSILON`], 2e-4: ranks within 1e-3 relative L1 of the fixed point).
    pub epsilon: f32,
    /// How the rounds sweep and how the CUDA forms are built (the example's `--sweep`,
    /// `--sweep-divisor`, `--lazy-receive`, `--fused-*` flags), for benchmarks and
    /// experiments. None of it changes what the ranks converge to.
    #[doc(hidden)]
    pub tuning: PageRankTuning,
    /// Who drives the rounds (`--driver auto|fused|host|sweeps`, default [`Driver::Auto`]:
    /// see "Choosing a driver" above). The host backend runs host-driven unless asked for
    /// [`Driver::Fused`] (its persistent members) or [`Driver::Sweeps`].
    pub driver: Driver,
    /// The distributed worklist's settings (capacities, packet size, batch, time limit); the
    /// sweeps ([`Driver::Sweeps`]) run no worklist and take none of them.
    pub worklist: WorklistOptions,
}

impl Default for PageRankOptions {
    fn default() -> Self {
        PageRankOptions {
            alpha: DEFAULT_ALPHA,
            epsilon: DEFAULT_EPSILON,
            tuning: PageRankTuning::default(),
            driver: Driver::default(),
            worklist: WorklistOptions::default(),
        }
    }
}

/// Statistics of one PageRank run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageRankStats {
    /// Expand rounds of the busiest device (the first sweep included).
    pub rounds: u64,
    /// Vertices pushed on all devices (the first sweep counts every vertex once).
    pub work_items: u64,
    /// Items sent over the ring (merged remote residuals and items passed on).
    pub items_sent: u64,
    /// Sum of the residual not pushed (`|res|_1`; the L1 error is at most this over
    /// `1 - alpha`).
    pub residual_left: f64,
    /// Largest residual left on one vertex (at most epsilon).
    pub max_residual_left: f32,
    /// Wall time of the run (upload and download excluded).
    pub elapsed: Duration,
    /// The run's time on the devices (CUDA timing events after the reset, before the
    /// download, max over devices): what benchmarks report. `None` on the host backend.
    pub device_time: Option<Duration>,
    /// The worklist's per-device counters.
    pub worklist: WorklistStats,
    /// CUDA: per device, its rounds by kind, receives, host synchronisations and where the
    /// host time went ([`DeviceProfile`]); empty on the host backend.
    pub devices: Vec<DeviceProfile>,
    /// The driver that ran (never [`Driver::Auto`]).
    pub driver: Driver,
    /// [`Driver::Sweeps`] on CUDA: the rounds whose gathers read only the shares of the
    /// vertices taken ([`PageRankTuning::sparse_gather_divisor`]); 0 otherwise.
    pub sparse_gather_rounds: u64,
    /// [`Driver::Sweeps`]: the rounds that pushed the shares of the vertices taken instead of
    /// gathering ([`PageRankTuning::sweep_push_divisor`]); 0 otherwise.
    pub push_rounds: u64,
    /// [`Driver::Sweeps`]: the rounds that gathered and took the vertices range by range
    /// ([`PageRankTuning::sweep_ranges`]), the first of the run; 0 otherwise.
    pub ranged_rounds: u64,
    /// [`Driver::Sweeps`] in one process: of those, the rounds enqueued before the counts of
    /// the round before them were read ([`PageRankTuning::sweep_run_ahead`]).
    pub ranged_rounds_ahead: u64,
    /// [`Driver::Sweeps`]: the host time of the rounds by kind (gathers, sparse gathers,
    /// pushes); zero otherwise.
    pub sweep_round_times: SweepRoundTimes,
}

impl PageRankStats {
    /// Bytes that crossed from one device to another: 8 per ring item (a
    /// [`VertexResidual`]) in host-driven runs; device-driven, 8 per worklist-round add to an
    /// owner's halo (the value and its inbox entry) and 4 per mirror value posted; in
    /// [`Driver::Sweeps`] runs, 4 per share copied to another device.
    pub fn bytes_sent(&self) -> u64 {
        let item = std::mem::size_of::<VertexResidual>() as u64;
        match self.driver {
            Driver::Fused => item * self.items_sent + 4 * self.mirror_values_sent(),
            Driver::Sweeps => 4 * self.shares_copied(),
            _ => item * self.worklist.items_sent(),
        }
    }

    /// Values that crossed from one device to another after combining: the ring's remote
    /// updates in host-driven runs; device-driven, the halo adds and mirror values; in
    /// [`Driver::Sweeps`] runs, the values copied (a round that gathers: one share per
    /// vertex and receiving device; a push round: one slot per vertex and peer of its owner;
    /// whatever the arcs).
    pub fn remote_updates(&self) -> u64 {
        match self.driver {
            Driver::Fused => self.items_sent + self.mirror_values_sent(),
            Driver::Sweeps => self.shares_copied(),
            _ => self.worklist.remote_updates(),
        }
    }

    fn shares_copied(&self) -> u64 {
        self.worklist.devices.iter().map(|d| d.items_received).sum()
    }

    fn mirror_values_sent(&self) -> u64 {
        self.devices.iter().map(|p| p.mirror_values_sent).sum()
    }
}

/// The result of [`pagerank`].
#[derive(Clone, Debug)]
pub struct PageRankResult {
    /// Rank of each vertex in the input order.
    pub ranks: Vec<f32>,
    /// Statistics.
    pub stats: PageRankStats,
}

impl PageRankResult {
    /// Sum of the ranks (in `f64`).
    pub fn rank_sum(&self) -> f64 {
        self.ranks.par_iter().map(|&x| f64::from(x)).sum()
    }

    /// The `k` highest-ranked vertices (input-order ranks), highest first, ties by vertex.
    pub fn top(&self, k: usize) -> Vec<(u32, f32)> {
        top_ranks(&self.ranks, k)
    }
}

/// The `k` highest of `ranks` (indexed by vertex) as `(vertex, rank)`, highest first, ties by
/// vertex.
pub fn top_ranks(ranks: &[f32], k: usize) -> Vec<(u32, f32)> {
    let mut all: Vec<(u32, f32)> = ranks
        .iter()
        .enumerate()
        .map(|(v, &r)| (v as u32, r))
        .collect();
    let k = k.min(all.len());
    if k == 0 {
        return Vec::new();
    }
    let by_rank = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    all.select_nth_unstable_by(k - 1, by_rank);
    all.truncate(k);
    all.sort_by(by_rank);
    all
}

/// What can go wrong in [`pagerank`]: the worklist algorithm error of [`PageRank`].
pub type PageRankError = TraversalError<PageRank>;

impl TraversalName for PageRank {
    const NAME: &'static str = "PageRank";
}

impl PageRankOptions {
    /// Checks `alpha`, `epsilon` and `fused_blocks_per_sm`.
    pub fn validate(&self) -> Result<(), PageRankError> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(PageRankError::InvalidParameter {
                name: "alpha (--alpha)",
                value: self.alpha,
                expected: "a damping factor strictly between 0 and 1",
            });
        }
        if !(self.epsilon > 0.0 && self.epsilon.is_finite()) {
            return Err(PageRankError::InvalidParameter {
                name: "epsilon (--epsilon)",
                value: self.epsilon,
                expected: "a positive, finite residual threshold",
            });
        }
        if ![0, 6, 8].contains(&self.tuning.fused_blocks_per_sm) {
            return Err(PageRankError::InvalidParameter {
                name: "blocks per SM of the fused kernel (--fused-blocks-per-sm)",
                value: self.tuning.fused_blocks_per_sm as f32,
                expected: "0 (let the compiler choose), 6 or 8",
            });
        }
        Ok(())
    }
}

/// Residual-push PageRank with its device storage kept across runs: the graph is uploaded
/// and the arrays allocated once ([`PageRankSolver::new`]); each [`PageRankSolver::run`]
/// only resets the residuals and ranks and runs (what a benchmark times).
pub struct PageRankSolver {
    solver: solver::DeviceSolver,
    order: groute_graph::InputOrder,
    options: PageRankOptions,
    degree_ordered: bool,
    gather_interleaved: bool,
}

impl std::fmt::Debug for PageRankSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageRankSolver")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl PageRankSolver {
    /// Checks `options`, uploads `graph` to every device of `context` (device `d` owns
    /// `graph.partition.range(d)`) and allocates the run storage.
    pub fn new(
        context: &groute_core::Context,
        graph: &PartitionedGraph,
        options: &PageRankOptions,
    ) -> Result<Self, PageRankError> {
        options.validate()?;
        let n = graph.graph.num_vertices();
        if n == 0 {
            return Err(PageRankError::EmptyGraph);
        }
        if graph.partition.num_parts() != context.num_devices()
            || graph.partition.num_vertices() != n
        {
            return Err(PageRankError::PartitionMismatch {
                parts: graph.partition.num_parts(),
                devices: context.num_devices(),
            });
        }
        let l2 = context.smallest_l2_cache_bytes();
        let ordered = options
            .tuning
            .degree_order_for(&graph.graph, l2)
            .then(|| groute_graph::order_parts_by_degree(&graph.graph, &graph.partition));
        let reordered = match ordered {
            None => None,
            Some(Ok(g)) => Some(g),
            // Auto's choice gives way where the host cannot hold the renumbered copy.
            Some(Err(groute_graph::GraphError::OutOfMemory { .. }))
                if options.tuning.degree_order.is_none() =>
            {
                None
            }
            Some(Err(e)) => return Err(e.into()),
        };
        let degree_ordered = reordered.is_some();
        let uploaded = reordered.as_ref().unwrap_or(&graph.graph);
        let gather_interleaved = options
            .tuning
            .gather_interleave_for(degree_ordered, n as u64, l2);
        let sweep_ranges = options.tuning.sweep_ranges_for(
            degree_ordered,
            (n as u64, uploaded.csr.num_edges()),
            l2,
        );
        let push = cuda::storage::PushSettings {
            interleave_gather: gather_interleaved,
            degree_ordered,
            sweep_ranges,
            ..cuda::storage::PushSettings::of(options, uploaded.csr.num_edges() as f64 / n as f64)
        };
        let solver = solver::DeviceSolver::new(
            context,
            &uploaded.csr,
            uploaded.symmetric,
            &graph.partition,
            push,
            options.driver,
            &options.worklist,
        )?;
        Ok(PageRankSolver {
            solver,
            // The uploaded graph's ids follow its vertices: its order maps the ranks back.
            order: groute_graph::InputOrder::of(uploaded),
            options: options.clone(),
            degree_ordered,
            gather_interleaved,
        })
    }

    /// Whether the sweeps' gather deals its vertices out over the blocks
    /// ([`PageRankTuning::gather_interleave_for`]; CUDA sweeps only, the host backend's
    /// ignore it).
    pub fn gather_interleaved(&self) -> bool {
        self.gather_interleaved
    }

    /// The vertex ranges a round of [`Driver::Sweeps`] gathers and takes one after the
    /// other ([`PageRankTuning::sweep_ranges`]); 1 for the other drivers.
    pub fn sweep_ranges(&self) -> u32 {
        self.solver.sweep_ranges()
    }

    /// Whether the rounds by vertex ranges gather by tiles on some device
    /// ([`PageRankTuning::gather_tiles_for`]; CUDA [`Driver::Sweeps`] only, where they fit).
    pub fn gathers_by_tiles(&self) -> bool {
        self.solver.gathers_by_tiles()
    }

    /// Whether the graph was uploaded in degree order
    /// ([`PageRankTuning::degree_order_for`]); the ranks come back in the input order
    /// either way.
    pub fn degree_ordered(&self) -> bool {
        self.degree_ordered
    }

    /// Runs PageRank from the initial residuals; ranks come back in the input order.
    pub fn run(&mut self) -> Result<PageRankResult, PageRankError> {
        let out = self.solver.run()?;
        let ranks = self.order.to_rank_order(out.ranks);
        let ws = out.stats;
        Ok(PageRankResult {
            ranks,
            stats: PageRankStats {
                rounds: ws.rounds(),
                work_items: ws.items_processed(),
                items_sent: ws.items_sent(),
                residual_left: out.residual_left,
                max_residual_left: out.max_residual_left,
                elapsed: ws.elapsed,
                device_time: ws.device_time,
                worklist: ws,
                devices: out.profiles,
                driver: out.driver,
                sparse_gather_rounds: out.sparse_gather_rounds,
                push_rounds: out.push_rounds,
                ranged_rounds: out.ranged_rounds,
                ranged_rounds_ahead: out.ranged_rounds_ahead,
                sweep_round_times: out.sweep_round_times,
            },
        })
    }
}

/// Residual-push PageRank of `graph` on every device of `context`; device `d` owns
/// `graph.partition.range(d)`. Ranks come back in the input order (a one-shot
/// [`PageRankSolver`]).
pub fn pagerank(
    context: &groute_core::Context,
    graph: &PartitionedGraph,
    options: &PageRankOptions,
) -> Result<PageRankResult, PageRankError> {
    PageRankSolver::new(context, graph, options)?.run()
}
