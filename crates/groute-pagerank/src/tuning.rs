//! PageRank's tuning ([`PageRankTuning`]): how the rounds sweep and how the CUDA forms are
//! built. None of it changes what the ranks converge to.

use crate::sweep::SweepMode;
use crate::{
    DEFAULT_FUSED_BLOCKS_PER_SM, DENSE_MIN_AVERAGE_DEGREE, DENSE_SWEEP_DIVISOR,
    SPARSE_SWEEP_DIVISOR,
};

/// PageRank's tuning (`PageRankOptions::tuning`; the example's tuning flags, listed by
/// `--help-tuning`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRankTuning {
    /// CUDA: a round after the first is a topology-driven sweep over the owned range (instead
    /// of a worklist round) when the pending items are at least the owned range over this
    /// (`--sweep-divisor`; 0: worklist rounds only, after the first sweep and, where the
    /// device-driven loop chains its sweeps, one more that delivers what the first one's gather
    /// took). `None` (the default) picks it from the
    /// graph's average degree ([`PageRankTuning::sweep_divisor_for`]). The host backend
    /// always runs worklist rounds.
    pub sweep_divisor: Option<u32>,
    /// How sweep rounds move the residuals (`--sweep push|pull`, default
    /// [`SweepMode::Pull`]; see the crate's "Pull sweeps").
    pub sweep: SweepMode,
    /// CUDA: a receive step reads nothing back (`--lazy-receive`, default off): its split
    /// kernels are enqueued and its counts go with the next round's read-back, one host
    /// synchronisation less per receive. The received items stay outstanding in the
    /// termination count until then (so the run cannot end early), and the device sends
    /// nothing while a receive is unsettled (its passed items are not counted yet). The host
    /// backend ignores it.
    pub lazy_receive: bool,
    /// CUDA, device-driven runs on several devices: one `__threadfence_system()` per thread
    /// and round instead of one after every add to a peer's halo (`--fused-fence-per-round`,
    /// default off; `kernels/pagerank/pagerank_fused.cu` says why it suffices).
    pub fused_fence_per_round: bool,
    /// CUDA, device-driven runs: the blocks of 256 threads per SM the kernel is compiled for
    /// (`--fused-blocks-per-sm`): 8 (default) caps its registers at 32 (a few spilled), 6 at
    /// 40, 0 lets ptxas choose (40 registers: 6 blocks fit). Memory latency bounds the
    /// sweeps, so more threads in flight win, a few spilled registers notwithstanding. Other
    /// values are an error.
    pub fused_blocks_per_sm: u32,
    /// Whether the solver uploads the graph renumbered so that each device's vertices come
    /// in order of decreasing degree (`--degree-order true|false`;
    /// `groute_graph::order_parts_by_degree`: same parts, ranks still returned in the input
    /// order). `None` (the default) decides by [`PageRankTuning::degree_order_for`].
    pub degree_order: Option<bool>,
    /// CUDA, [`crate::Driver::Sweeps`] and PageRank across processes: a round's gather
    /// reads only the shares of the vertices the round took (through a bitmap of them,
    /// marked first) where it took at most the vertices over this
    /// (`--sparse-gather-divisor`; 0: never). `None` (the default) picks
    /// [`SPARSE_GATHER_DIVISOR`] where a share per vertex outgrows the devices' L2, never
    /// where the shares fit it ([`PageRankTuning::sparse_gather_below`]). Rounds by vertex
    /// ranges ([`PageRankTuning::sweep_ranges`]) read every share; across processes a run
    /// leaves them for whole-graph rounds once a round takes that few, in one process not
    /// (a sparse gather still reads a bit per in-arc).
    pub sparse_gather_divisor: Option<u32>,
    /// [`crate::Driver::Sweeps`] in one process: a round after the first pushes the shares
    /// of the vertices it takes along their out-arcs (an atomic each) instead of gathering
    /// over every in-arc, where it is expected to take at most the graph's arcs over this
    /// (`--sweep-push-divisor`; 0: never). `None` (the default) is
    /// [`SWEEP_PUSH_DIVISOR`]. Across processes the sweeps always gather. A run by vertex
    /// ranges leaves them for whole-graph rounds once a round takes that few arcs.
    pub sweep_push_divisor: Option<u32>,
    /// CUDA, the pull sweeps of every driver and of [`crate::PageRankRanks`] (not
    /// [`crate::PageRankShare`]'s rounds): the gather deals its vertices out over the blocks
    /// thread by thread (`true`) or warp by warp, 32 consecutive vertices each (`false`; the
    /// device-driven loop's gather gives each block consecutive ones)
    /// (`--gather-interleave true|false`). `None` (the default) decides by
    /// [`PageRankTuning::gather_interleave_for`].
    pub gather_interleave: Option<bool>,
    /// [`crate::Driver::Sweeps`] and [`crate::PageRankRanks`]: each device splits its
    /// vertices into this many ranges of about equal in-arcs, and a round gathers and takes
    /// one range at a time (`--sweep-ranges`; 1: the whole graph at once), the devices'
    /// ranges of a step side by side. A range's take then sees the shares the earlier ranges took in the same
    /// round (block Gauss-Seidel), so fewer rounds converge, each still one gather over every
    /// in-arc; once a round takes few vertices the run goes on in whole-graph rounds. `None`
    /// (the default) decides by [`PageRankTuning::sweep_ranges_for`] in one process; across
    /// processes the whole graph at once unless asked (every process asking the same), each
    /// step's boundary shares then all-gathered before the next step.
    pub sweep_ranges: Option<u32>,
    /// CUDA, the gathers of the rounds by vertex ranges ([`PageRankTuning::sweep_ranges`]):
    /// each range's in-arcs are also kept in tiles of consecutive destinations, sorted by
    /// source, which a block sums in shared memory (`crate::gather_tiles`; 6 bytes a
    /// gathered arc more device memory), instead of each destination gathering its
    /// in-list (`--gather-tiles true|false`). `None` (the default) decides by
    /// [`PageRankTuning::gather_tiles_for`].
    pub gather_tiles: Option<bool>,
    /// CUDA, the gather tiles ([`PageRankTuning::gather_tiles`]): a tile whose destinations
    /// have at least this many of its arcs each, on average, keeps them by destination (each
    /// thread of its block sums runs of one destination's arcs in a register) instead of by
    /// source. `None` (the default): [`GATHER_TILE_BY_DESTINATION`].
    pub gather_tile_by_destination: Option<u64>,
    /// CUDA, the gather tiles ([`PageRankTuning::gather_tiles`]): the in-arcs a tile takes
    /// about (a vertex of more gets tiles of its own). `None` (the default): the shortest
    /// length at which the range's tiles fit one wave of the device's multiprocessors, a
    /// tile each (or the fewest waves the destination bound allows: `one_wave_arcs` in
    /// `gather_tiles.rs`). Tests set it to give small graphs tiles long enough for every
    /// path of the kernel.
    pub gather_tile_arcs: Option<u64>,
    /// [`crate::Driver::Sweeps`] in one process, rounds by vertex ranges: the host enqueues
    /// the next round before it reads this one's counts where the rounds before say the next
    /// one will be ranged too, so that the devices do not idle between rounds on the
    /// read-back (`--sweep-run-ahead true|false`, default `true`; `ranks/run_ahead.rs`). A
    /// round enqueued ahead is a ranged round like any other (the bounds hold); where the
    /// guess is wrong the run has one ranged round more than a run that waited.
    pub sweep_run_ahead: bool,
}

/// The default [`PageRankTuning::gather_tile_by_destination`]: on large graphs the tiles of
/// one vertex of that many arcs (mostly the parts of a vertex split over tiles of its own)
/// go by destination. On one H200, PageRank on a Kronecker graph of scale 25 ran 1-2% faster
/// with this than with every tile by source, and 12% slower with tiles of 4,096 arcs a
/// destination by destination: merged by source, the in-lists of a tile's destinations share
/// the lines of the shares they read, where by destination each list reads its own.
pub const GATHER_TILE_BY_DESTINATION: u64 = 100_000;

/// The default [`PageRankTuning::sweep_push_divisor`]: a round that takes at most one in
/// this many of the graph's arcs pushes them.
pub const SWEEP_PUSH_DIVISOR: u32 = 8;

/// The default [`PageRankTuning::sweep_ranges`] of a large graph in degree order whose
/// shares fit the L2 (one process, one device).
pub const SWEEP_RANGES: u32 = 4;

/// The default [`PageRankTuning::sweep_ranges`] of a large graph in degree order whose
/// shares outgrow the L2 (one process, one device).
pub const SWEEP_RANGES_PAST_L2: u32 = 8;

/// The fewest arcs for which [`PageRankTuning::sweep_ranges_for`] splits the vertices.
pub const SWEEP_RANGES_MIN_ARCS: u64 = 1 << 26;

/// The default [`PageRankTuning::sparse_gather_divisor`] where the shares outgrow the L2: a
/// round that takes at most one in this many vertices gathers through the bitmap of the
/// vertices taken.
pub const SPARSE_GATHER_DIVISOR: u32 = 16;

/// Whether a share per vertex (4 bytes) of a graph of `vertices` outgrows an L2 of
/// `l2_cache_bytes` (0, the host backend's: never), so that a sweep's random reads of shares
/// miss in it: what the degree order, the sparse gathers and one device's driver weigh.
pub(crate) fn shares_outgrow_l2(vertices: u64, l2_cache_bytes: u64) -> bool {
    groute_core::outgrows_l2(4 * vertices, l2_cache_bytes)
}

/// How many times the average degree the largest must be for
/// [`PageRankTuning::degree_order_for`] to call a graph's degrees skewed.
pub const DEGREE_ORDER_SKEW: f64 = 64.0;

impl Default for PageRankTuning {
    fn default() -> Self {
        PageRankTuning {
            sweep_divisor: None,
            sweep: SweepMode::default(),
            lazy_receive: false,
            fused_fence_per_round: false,
            fused_blocks_per_sm: DEFAULT_FUSED_BLOCKS_PER_SM,
            degree_order: None,
            sparse_gather_divisor: None,
            sweep_push_divisor: None,
            gather_interleave: None,
            sweep_ranges: None,
            gather_tiles: None,
            gather_tile_by_destination: None,
            gather_tile_arcs: None,
            sweep_run_ahead: true,
        }
    }
}

impl PageRankTuning {
    /// Whether a run on CUDA devices whose smallest L2 holds `l2_cache_bytes` renumbers
    /// `graph` by degree: as asked, else where the degrees are skewed (the largest
    /// at least [`DEGREE_ORDER_SKEW`] times the average; crate docs, "Degree order"), on any
    /// number of devices. The pull sweeps read a share at random for every arc; numbered
    /// together, the few vertices that take most of those reads share lines, which stay in
    /// the L2 where the shares do not fit it and in the SMs' L1 where they do (the gather
    /// then deals its vertices out over the blocks, [`PageRankTuning::gather_interleave_for`]):
    /// on two devices each holding half of a Kronecker graph of scale 21, whose shares fit
    /// the L2, each device's gather over its half of the arcs took as long as one device's
    /// over all of them in degree order. A road network's vertices have about equal degrees,
    /// and their input numbering's locality is worth more.
    ///
    /// The host backend (`l2_cache_bytes` 0) renumbers only when asked.
    pub fn degree_order_for(&self, graph: &groute_graph::Graph, l2_cache_bytes: u64) -> bool {
        let csr = &graph.csr;
        let largest = || {
            (0..csr.num_vertices() as u32)
                .map(|v| csr.out_degree(v))
                .max()
                .unwrap_or(0)
        };
        self.degree_order_of(
            (csr.num_vertices() as u64, csr.num_edges()),
            largest,
            l2_cache_bytes,
        )
    }

    /// [`PageRankTuning::degree_order_for`] from a graph's counts: its `(vertices, arcs)`,
    /// its largest out-degree (asked for only where the other terms leave the choice open) and
    /// the smallest L2 of the devices.
    pub(crate) fn degree_order_of(
        &self,
        (vertices, arcs): (u64, u64),
        largest_degree: impl FnOnce() -> u64,
        l2_cache_bytes: u64,
    ) -> bool {
        if let Some(asked) = self.degree_order {
            return asked;
        }
        if l2_cache_bytes == 0 {
            return false;
        }
        largest_degree() as f64 >= DEGREE_ORDER_SKEW * (arcs as f64 / vertices as f64)
    }

    /// Whether the sweeps' gather over a graph of `vertices`, uploaded in degree order or not
    /// (`degree_ordered`), deals its vertices out over the blocks thread by thread: as asked,
    /// else where the graph is in degree order and its per-vertex arrays stay in an L2 of
    /// `l2_cache_bytes` (a share per vertex fits it). In degree order, consecutive vertices
    /// have about equal in-degrees, so warps given 32 consecutive vertices get either every
    /// long list or none; dealt out thread by thread, each gets its share. A warp's
    /// per-vertex loads then touch 32 lines instead of one, which costs little where those
    /// lines stay in the L2 and more than it gains where they do not.
    pub fn gather_interleave_for(
        &self,
        degree_ordered: bool,
        vertices: u64,
        l2_cache_bytes: u64,
    ) -> bool {
        self.gather_interleave.unwrap_or(
            degree_ordered && l2_cache_bytes > 0 && !shares_outgrow_l2(vertices, l2_cache_bytes),
        )
    }

    /// Whether the ranged gathers of a run on CUDA (`cuda`) go by tiles: as asked, else on
    /// CUDA. By tiles, neighbouring threads read neighbouring shares, and a share that many
    /// destinations of a tile read is read once a line, where a gather by destination reads
    /// one share at random per arc: on one H200 the ranged rounds' gathers and takes took
    /// 24% less time on a Kronecker graph of scale 21 and 33% less on one of scale 25. The
    /// tiles are built on the host at upload (a radix sort of each tile's arcs by source; on
    /// scale 25, seconds of staging) and take 6 bytes of device memory per gathered arc;
    /// where they do not fit the device's memory the run gathers by destination.
    pub fn gather_tiles_for(&self, cuda: bool) -> bool {
        cuda && self.gather_tiles.unwrap_or(true)
    }

    /// [`PageRankTuning::gather_tile_by_destination`], as asked, else
    /// [`GATHER_TILE_BY_DESTINATION`].
    pub fn gather_tile_by_destination_for(&self) -> u64 {
        self.gather_tile_by_destination
            .unwrap_or(GATHER_TILE_BY_DESTINATION)
    }

    /// The most vertices a sweep round over a graph of `vertices` may take for its gather to
    /// read only their shares, on devices whose smallest L2 holds `l2_cache_bytes` (0 on the
    /// host backend): `vertices /` the divisor asked for; else, where a share per vertex
    /// outgrows the L2, `vertices /` [`SPARSE_GATHER_DIVISOR`]; else 0 (never). A gather reads
    /// the share of every in-arc's tail at random: where the shares outgrow the L2 most of
    /// those reads are a DRAM sector each, and in a round that takes few vertices most of
    /// them read a 0, while the bitmap of the vertices taken, 32 times smaller, stays in the
    /// L2. In a round that takes many, the bitmap's read before each share only adds
    /// latency, as it does wherever the shares fit the L2.
    pub fn sparse_gather_below(&self, vertices: u64, l2_cache_bytes: u64) -> u64 {
        let divisor = match self.sparse_gather_divisor {
            Some(asked) => asked,
            None if shares_outgrow_l2(vertices, l2_cache_bytes) => SPARSE_GATHER_DIVISOR,
            None => 0,
        };
        vertices.checked_div(u64::from(divisor)).unwrap_or(0)
    }

    /// The most out-arcs a round of the synchronous sweeps over a graph of `arcs` may be
    /// expected to take and push: `arcs /` [`PageRankTuning::sweep_push_divisor`] (0: never).
    pub fn sweep_push_below(&self, arcs: u64) -> u64 {
        let divisor = self.sweep_push_divisor.unwrap_or(SWEEP_PUSH_DIVISOR);
        arcs.checked_div(u64::from(divisor)).unwrap_or(0)
    }

    /// The vertex ranges per device of a [`crate::Driver::Sweeps`] run of one process over
    /// a graph of `vertices` and `arcs`, uploaded in degree order where `degree_ordered`, on
    /// devices whose smallest L2 holds `l2_cache_bytes` (0: the host backend): as asked (at
    /// least 1), else, on CUDA devices holding a graph in degree order of at least
    /// [`SWEEP_RANGES_MIN_ARCS`] arcs, [`SWEEP_RANGES`] where a share per vertex fits the L2
    /// and [`SWEEP_RANGES_PAST_L2`] where it outgrows it, else 1. Rounds by vertex ranges
    /// converge in fewer rounds (on one H200: 27 against 43 on a Kronecker graph of scale
    /// 21, 33 against 92 on scale 25, at epsilon 0.01) but launch a gather and a take per
    /// range: on small graphs the launches would cost more than the rounds saved. On several
    /// devices the ranges of a step run side by side, each device copying its peers' shares
    /// of a step before its next gather, and converge about as fast (two H200s: 28 rounds on
    /// scale 21, 31 on scale 25). The round counts do not fall steadily with more ranges
    /// (scale 21: 28 with 4, 30 with 8, 26 with 16; scale 25: 38 with 4, 31 with 8, 34 with
    /// 16), so the counts are the measured best.
    pub fn sweep_ranges_for(
        &self,
        degree_ordered: bool,
        (vertices, arcs): (u64, u64),
        l2_cache_bytes: u64,
    ) -> u32 {
        self.sweep_ranges.map(|b| b.max(1)).unwrap_or(
            if !degree_ordered || arcs < SWEEP_RANGES_MIN_ARCS || l2_cache_bytes == 0 {
                1
            } else if shares_outgrow_l2(vertices, l2_cache_bytes) {
                SWEEP_RANGES_PAST_L2
            } else {
                SWEEP_RANGES
            },
        )
    }

    /// The sweep divisor of a run over a graph of `average_degree` arcs per vertex: the one
    /// asked for, else [`DENSE_SWEEP_DIVISOR`] from [`DENSE_MIN_AVERAGE_DEGREE`] arcs per
    /// vertex and [`SPARSE_SWEEP_DIVISOR`] below. A worklist round pushes every arc of its
    /// pending vertices with an atomic (to a peer's memory where the head is remote), a sweep
    /// reads every arc once without one: the more arcs per vertex, the smaller the pending
    /// share at which a sweep is the cheaper round. Dense graphs gain from the earlier sweep,
    /// most on several devices, where a worklist round's atomics go to a peer's memory; road
    /// grids run marginally faster with the later one.
    pub fn sweep_divisor_for(&self, average_degree: f64) -> u32 {
        self.sweep_divisor
            .unwrap_or(if average_degree >= DENSE_MIN_AVERAGE_DEGREE {
                DENSE_SWEEP_DIVISOR
            } else {
                SPARSE_SWEEP_DIVISOR
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_degree_order_is_picked_for_skewed_graphs_on_cuda() {
        let graph = |spec: &str| {
            groute_graph::generate(&spec.parse().unwrap(), &groute_graph::NoProgress).unwrap()
        };
        let kron = graph("kron:scale=12,ef=8,sym,seed=1");
        let road = graph("road:side=64,p=0.6,seed=1");
        let auto = PageRankTuning::default();
        let (small_l2, large_l2) = (1024, 1 << 30);
        for l2 in [small_l2, large_l2] {
            assert!(auto.degree_order_for(&kron, l2), "skewed, L2 of {l2} bytes");
            assert!(
                !auto.degree_order_for(&road, l2),
                "a road network: equal degrees"
            );
        }
        assert!(!auto.degree_order_for(&kron, 0), "the host backend");
        for asked in [true, false] {
            let t = PageRankTuning {
                degree_order: Some(asked),
                ..PageRankTuning::default()
            };
            assert_eq!(t.degree_order_for(&road, 0), asked);
            assert_eq!(t.degree_order_for(&kron, large_l2), asked);
        }
    }

    #[test]
    fn the_gather_interleaves_in_degree_order_where_the_shares_fit_the_l2() {
        let auto = PageRankTuning::default();
        let n = 1 << 20;
        assert!(auto.gather_interleave_for(true, n, 4 * n));
        assert!(
            !auto.gather_interleave_for(true, n, 4 * n - 1),
            "shares past the L2"
        );
        assert!(!auto.gather_interleave_for(false, n, 4 * n), "input order");
        assert!(!auto.gather_interleave_for(true, n, 0), "the host backend");
        for asked in [true, false] {
            let t = PageRankTuning {
                gather_interleave: Some(asked),
                ..PageRankTuning::default()
            };
            for (ordered, l2) in [(true, 4 * n), (false, 0), (true, 1)] {
                assert_eq!(t.gather_interleave_for(ordered, n, l2), asked);
            }
        }
    }

    #[test]
    fn sparse_gathers_are_picked_where_the_shares_outgrow_the_l2_or_as_asked() {
        let auto = PageRankTuning::default();
        let n = 1 << 20;
        assert_eq!(
            auto.sparse_gather_below(n, 4 * n),
            0,
            "the shares fit the L2"
        );
        assert_eq!(auto.sparse_gather_below(n, 0), 0, "the host backend");
        assert_eq!(
            auto.sparse_gather_below(n, 4 * n - 1),
            n / u64::from(SPARSE_GATHER_DIVISOR)
        );
        for (asked, below) in [(0, 0), (1, n), (4, n / 4), (u32::MAX, 0)] {
            let t = PageRankTuning {
                sparse_gather_divisor: Some(asked),
                ..PageRankTuning::default()
            };
            assert_eq!(t.sparse_gather_below(n, 0), below, "divisor {asked}");
            assert_eq!(t.sparse_gather_below(n, 1 << 40), below, "divisor {asked}");
        }
    }

    #[test]
    fn the_sweep_divisor_is_the_one_asked_for_else_picked_by_average_degree() {
        let auto = PageRankTuning::default();
        assert_eq!(auto.sweep_divisor_for(2.4), SPARSE_SWEEP_DIVISOR);
        assert_eq!(
            auto.sweep_divisor_for(DENSE_MIN_AVERAGE_DEGREE),
            DENSE_SWEEP_DIVISOR
        );
        assert_eq!(auto.sweep_divisor_for(86.4), DENSE_SWEEP_DIVISOR);
        for asked in [0, 16, 64, u32::MAX] {
            let t = PageRankTuning {
                sweep_divisor: Some(asked),
                ..PageRankTuning::default()
            };
            assert_eq!(t.sweep_divisor_for(2.4), asked);
            assert_eq!(t.sweep_divisor_for(86.4), asked);
        }
    }

    #[test]
    fn vertices_split_on_one_cuda_device_for_large_graphs_in_degree_order() {
        let auto = PageRankTuning::default();
        let l2 = 50 << 20;
        let kron21 = (1 << 21, 181_154_768);
        assert_eq!(auto.sweep_ranges_for(true, kron21, l2), SWEEP_RANGES);
        assert_eq!(auto.sweep_ranges_for(false, kron21, l2), 1, "input order");
        assert_eq!(auto.sweep_ranges_for(true, kron21, 0), 1, "host backend");
        let small = (1 << 16, SWEEP_RANGES_MIN_ARCS - 1);
        assert_eq!(auto.sweep_ranges_for(true, small, l2), 1, "few arcs");
        let kron25 = (1 << 25, 1 << 30);
        assert_eq!(
            auto.sweep_ranges_for(true, kron25, l2),
            SWEEP_RANGES_PAST_L2
        );
        for asked in [0, 1, 3] {
            let t = PageRankTuning {
                sweep_ranges: Some(asked),
                ..PageRankTuning::default()
            };
            assert_eq!(t.sweep_ranges_for(false, small, 0), asked.max(1));
        }
    }
}
