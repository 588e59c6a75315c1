//! The fused persistent kernel's tuning ([`FusedTuning`], [`FusedBarrier`]): how it is
//! launched and how it waits, set by benchmarks and experiments through
//! [`WorklistOptions`](crate::WorklistOptions). None of it changes a result.

use super::fused_tuning::FUSED_SPIN_NS;

/// The fused persistent kernel's tuning (`WorklistOptions::fused_tuning`; the examples'
/// `--fused-*` flags, listed by `--help-tuning`). Every combination computes the same values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FusedTuning {
    /// Blocks of the fused kernel (`--fused-grid`, at most every block that fits resident);
    /// `None`: one per multiprocessor on a sparse graph (at most
    /// [`FUSED_SPARSE_MAX_AVERAGE_DEGREE`](super::FUSED_SPARSE_MAX_AVERAGE_DEGREE)
    /// arcs per vertex), every resident block on a denser one. Device-driven members sharing
    /// a GPU ([`FusedDriver::Device`](super::FusedDriver::Device) on virtual
    /// devices) have their share: of k members, a k-th of the multiprocessors by default, and
    /// at most a k-th of the resident blocks (or clusters) less one.
    pub grid: Option<u32>,
    /// The fused kernel's single-block mode (`--fused-solo-max`): a batch of at most this many
    /// items is expanded by one block alone, level after level without grid barriers, until
    /// the frontier outgrows it. `Some(0)`: off. `None`: on a sparse graph the fused kernel's
    /// threads per block ([`block`](FusedTuning::block)): one item per thread,
    /// a single pass; off on a denser one.
    pub solo_max: Option<u32>,
    /// Threads per block of the fused kernel (`--fused-block`): a multiple of 32 from 32 to
    /// 1,024. `None`: [`FUSED_SPARSE_BLOCK`](super::FUSED_SPARSE_BLOCK) on a sparse
    /// graph, [`FUSED_BLOCK`](super::FUSED_BLOCK) on a denser one. Blocks over 256
    /// threads run the kernel's register-capped build (`<algo>_fused_wide`).
    pub block: Option<u32>,
    /// How the fused kernel's blocks wait at its grid barrier (`--fused-spin-ns`,
    /// `--fused-fenced-barrier`).
    pub barrier: FusedBarrier,
    /// The fused kernel relaxes low-degree lists (under 32 arcs, a thread each) with atomicMin
    /// at once instead of first reading the head's value and trying only improvements
    /// (`--fused-direct-min`): one memory round trip less per level of a road-like graph, more
    /// atomics on dense frontiers. Same results either way.
    pub direct_min: bool,
    /// The fused kernel's single-block mode keeps the next level's items, with their
    /// adjacency ranges, in a shared-memory frontier (`--fused-solo-shared`, on by default),
    /// so a level starts at the targets loads instead of reading the worklist and then the
    /// offsets: two dependent memory round trips less per level of a road-like graph. The
    /// producer loads an improved head's range beside its atomicMin. The frontier holds two
    /// items per thread of blocks over 256 threads (none in the narrow build), so a
    /// [`solo_max`](FusedTuning::solo_max) of up to twice the block runs both
    /// rounds of a level from it. Off for graphs of 2^32 arcs or more (the frontier holds
    /// 32-bit arc positions). Same results either way.
    pub solo_shared: bool,
    /// [`direct_min`](FusedTuning::direct_min) for the single-block mode's
    /// levels only (`--fused-solo-direct-min`): the grid's levels keep the filtering load.
    pub solo_direct_min: bool,
    /// The fused kernel's single-block mode runs on a cluster of
    /// [`SOLO_CLUSTER`](super::SOLO_CLUSTER) blocks (`--fused-cluster`): four
    /// multiprocessors run each level, separated by the cluster's hardware barrier, and
    /// batches of up to four blocks' threads stay out of the grid
    /// (kernels/include/cluster_solo.cuh). Used where the device has thread-block clusters
    /// (compute capability 9.0 or later), on one device or in the members of a device-driven
    /// run, with blocks over 256 threads, the shared frontier on, a grid of
    /// whole clusters, and graphs whose longest adjacency list has fewer than
    /// [`CLUSTER_MAX_DEGREE`](super::CLUSTER_MAX_DEGREE) arcs (the mode expands
    /// every list on one thread); the single block runs elsewhere (and in bounded rounds).
    /// `None`: on; on road networks (every level on the cluster) BFS and SSSP run markedly
    /// faster than on one block, on one device and device-driven alike. Same results either
    /// way.
    pub cluster: Option<bool>,
    /// Levels of one bounded fused launch on several devices (`--fused-round-levels`, with
    /// `--fused`): the device returns to its host (to send, receive and count) after this
    /// many levels at most. `None`: [`FUSED_ROUND_LEVELS`](super::FUSED_ROUND_LEVELS).
    pub round_levels: Option<u32>,
}

impl Default for FusedTuning {
    fn default() -> Self {
        FusedTuning {
            grid: None,
            solo_max: None,
            block: None,
            barrier: FusedBarrier::default(),
            direct_min: false,
            solo_shared: true,
            solo_direct_min: false,
            cluster: None,
            round_levels: None,
        }
    }
}

/// How the blocks of the fused kernel wait at its grid barrier
/// ([`FusedTuning::barrier`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FusedBarrier {
    /// Nanoseconds a waiting block sleeps (`__nanosleep`) between two polls of the barrier's
    /// generation word (`--fused-spin-ns`); 0: poll without sleeping. At most
    /// [`FUSED_MAX_SPIN_NS`](super::FUSED_MAX_SPIN_NS).
    pub spin_ns: u32,
    /// Order memory around the barrier with `__threadfence()` and relaxed atomics (the pattern
    /// of cooperative groups' grid sync, `--fused-fenced-barrier`) instead of single PTX
    /// acquire/release operations (an `atom.acq_rel` arrival, an `st.release` release, an
    /// `ld.acquire` poll).
    pub fenced: bool,
    /// Waiting blocks poll the barrier's release record itself, every word tagged with the
    /// generation that wrote it (`--fused-tagged-barrier`), instead of the generation word
    /// followed by a read of the record: one L2 round trip less per block and barrier.
    pub tagged: bool,
}

impl Default for FusedBarrier {
    fn default() -> Self {
        FusedBarrier {
            spin_ns: FUSED_SPIN_NS,
            fenced: false,
            tagged: false,
        }
    }
}
