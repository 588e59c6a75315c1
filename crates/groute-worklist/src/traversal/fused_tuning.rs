//! Tuning knobs of the fused kernel (`fused.rs`): its block size and how its blocks wait at
//! the grid barrier (`grid_barrier` of `kernels/include/grid_barrier.cuh`). They change the
//! speed of a run, never its result.

use groute_core::Error;
use groute_core::cuda::member_share;

use super::FusedBarrier;
use crate::WorklistOptions;

/// Graphs of at most this many arcs per vertex are *sparse* for the fused kernel's default
/// launch shape: road-like graphs of thousands of small levels,
/// where the grid barrier's cost dominates. Denser graphs (few huge levels) get a grid of
/// every resident block instead, to hide memory latency in their large expands.
pub const FUSED_SPARSE_MAX_AVERAGE_DEGREE: f64 = 8.0;

/// Threads per block of the fused kernel on a dense graph when
/// [`FusedTuning::block`](crate::traversal::FusedTuning::block) is `None` (the narrow build;
/// several blocks per multiprocessor).
pub const FUSED_BLOCK: u32 = 256;

/// Threads per block of the fused kernel on a sparse graph when
/// [`FusedTuning::block`](crate::traversal::FusedTuning::block) is `None`: one block of 1,024 threads per multiprocessor
/// (the wide build), so that the single-block mode covers levels of up to 1,024 items in one
/// pass.
///
/// On a road network (levels of about a thousand vertices) wider blocks run many more levels
/// in the single-block mode, and BFS and SSSP run faster for it. One block is worth it only
/// while a level needs a single pass of its threads; levels that need several run faster on
/// the grid.
pub const FUSED_SPARSE_BLOCK: u32 = 1024;

/// How many blocks the fused kernel launches by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FusedGrid {
    /// One block per multiprocessor: the cheapest grid barrier.
    PerMultiprocessor,
    /// Every block that fits resident at once (the cooperative launch's limit).
    Resident,
}

/// The fused kernel's launch shape for one graph before any setting overrides it
/// (`--fused-block`, `--fused-grid`, `--fused-solo-max` each replace one part).
///
/// A dense graph's large expands are bound by memory latency, so the more 256-thread blocks
/// in flight the faster: every resident block beats one per multiprocessor and beats
/// 1,024-thread blocks, and so fused beats one launch per round. Its few small levels run
/// faster on the full grid than in the single-block mode, which is off there. On a sparse
/// graph more blocks than multiprocessors cost more at every level's barrier, and fewer cost
/// more too: the grid barrier's cost is its chain of round trips, not the number of blocks
/// arriving.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FusedDefaults {
    /// Threads per block.
    pub(crate) block: u32,
    /// Blocks.
    pub(crate) grid: FusedGrid,
    /// Whether small batches run in the single-block mode (bound: the block's threads).
    pub(crate) solo: bool,
}

impl FusedDefaults {
    /// The defaults for a graph of `average_degree` arcs per vertex: sparse graphs (at most
    /// [`FUSED_SPARSE_MAX_AVERAGE_DEGREE`]) one block of [`FUSED_SPARSE_BLOCK`] threads per
    /// multiprocessor with the single-block mode; denser graphs every resident block of
    /// [`FUSED_BLOCK`] threads, without it.
    pub(crate) fn for_graph(average_degree: f64) -> Self {
        if average_degree <= FUSED_SPARSE_MAX_AVERAGE_DEGREE {
            FusedDefaults {
                block: FUSED_SPARSE_BLOCK,
                grid: FusedGrid::PerMultiprocessor,
                solo: true,
            }
        } else {
            FusedDefaults {
                block: FUSED_BLOCK,
                grid: FusedGrid::Resident,
                solo: false,
            }
        }
    }
}

/// Blocks of more threads than this run the kernel's build for 1,024-thread blocks
/// (`<algo>_fused_wide`, `__launch_bounds__(1024, 1)`: its registers are capped so that such a
/// block fits on a multiprocessor).
pub(crate) const FUSED_NARROW_MAX_BLOCK: u32 = 256;

/// [`FusedBarrier::spin_ns`] when not set: the sleep between two polls of the generation word.
pub const FUSED_SPIN_NS: u32 = 20;

/// The longest sleep `__nanosleep` takes (1 ms); [`FusedBarrier::spin_ns`] is at most this.
pub const FUSED_MAX_SPIN_NS: u32 = 1_000_000;

// The barrier's and the kernel's flag bits (`kernels/include/abi*.h`): FUSED_DIRECT_MIN is
// [`FusedTuning::direct_min`](crate::traversal::FusedTuning::direct_min), FUSED_SOLO_SHARED `fused_tuning.solo_shared`,
// FUSED_SOLO_DIRECT_MIN `fused_tuning.solo_direct_min`.
pub(crate) use groute_kernels::abi::FUSED_DIRECT_MIN;
use groute_kernels::abi::{
    FUSED_BARRIER_FENCED, FUSED_BARRIER_TAGGED, FUSED_SOLO_DIRECT_MIN, FUSED_SOLO_SHARED,
};

/// The fused kernel's `(spin_ns, flags)` arguments for `options` on a graph of `arcs` arcs:
/// the barrier's settings ([`FusedBarrier::kernel_args`], whose error names a bad one) and
/// the relaxation's (`FUSED_DIRECT_MIN`, and the single-block mode's shared frontier, which
/// needs arc positions below 2^32, and direct atomicMin).
pub(crate) fn fused_kernel_flags(
    options: &WorklistOptions,
    arcs: usize,
) -> Result<(u32, u32), Error> {
    let (spin_ns, barrier) = options.fused_tuning.barrier.kernel_args()?;
    let bit = |on: bool, flag: u32| if on { flag } else { 0 };
    let flags = barrier
        | bit(options.fused_tuning.direct_min, FUSED_DIRECT_MIN)
        | bit(
            options.fused_tuning.solo_shared && u32::try_from(arcs).is_ok(),
            FUSED_SOLO_SHARED,
        )
        | bit(options.fused_tuning.solo_direct_min, FUSED_SOLO_DIRECT_MIN);
    Ok((spin_ns, flags))
}

impl FusedBarrier {
    /// The kernel's `(spin_ns, barrier_flags)` arguments, or an error naming the setting.
    pub(crate) fn kernel_args(&self) -> Result<(u32, u32), Error> {
        if self.spin_ns > FUSED_MAX_SPIN_NS {
            return Err(Error::invalid(
                "fused_tuning.barrier.spin_ns (--fused-spin-ns)",
                self.spin_ns,
                format!("give 0..={FUSED_MAX_SPIN_NS} ns (0: poll without sleeping)"),
            ));
        }
        let flags = if self.fenced { FUSED_BARRIER_FENCED } else { 0 }
            | if self.tagged { FUSED_BARRIER_TAGGED } else { 0 };
        Ok((self.spin_ns, flags))
    }
}

/// The fused kernel's threads per block: `requested` (a multiple of 32 from 32 to 1,024) or
/// `default`.
pub(crate) fn fused_block(requested: Option<u32>, default: u32) -> Result<u32, Error> {
    match requested {
        None => Ok(default),
        Some(b) if (32..=1024).contains(&b) && b % 32 == 0 => Ok(b),
        Some(b) => Err(Error::invalid(
            "fused_tuning.block (--fused-block)",
            b,
            "give a multiple of 32 from 32 to 1024 threads",
        )),
    }
}

/// The part of its GPU a fused launch may use: all of it, or a device-driven member's share
/// where `members` members of one group share the GPU (`FusedDriver::Device` on virtual
/// devices), sized so that every member's blocks are resident at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MemberShare {
    members: u32,
}

impl MemberShare {
    /// The whole GPU (one launch alone on it).
    #[cfg(test)]
    pub(crate) const WHOLE: MemberShare = MemberShare { members: 1 };

    /// A member's share of a GPU that `members` members share (0 counts as 1).
    pub(crate) fn new(members: u32) -> Self {
        MemberShare {
            members: members.max(1),
        }
    }

    /// The grid of one block per multiprocessor, of a GPU of `multiprocessors`: at least 1
    /// (a member's share is also capped by [`MemberShare::of_resident`]).
    pub(crate) fn of_multiprocessors(self, multiprocessors: u32) -> u32 {
        (multiprocessors / self.members).max(1)
    }

    /// Of `max` blocks, or clusters of the cluster build, resident at once (one grid alone on
    /// the GPU): the most this launch may have (`groute_core::cuda::member_share`: on a shared
    /// GPU one less than an equal share). Members sharing a GPU with an equal share of its
    /// clusters each may never start together (every start cancelled until the group's
    /// timeout), while one cluster fewer each, or an equal share of plain blocks, always do:
    /// clusters of separate grids do not pack the GPU fully.
    pub(crate) fn of_resident(self, max: u32) -> u32 {
        member_share(max, self.members as usize)
    }

    /// For errors: which share a limit is of.
    fn describe(self) -> String {
        if self.members == 1 {
            "this device".into()
        } else {
            format!(
                "this member's share of its GPU (1/{0}: {0} devices of the run share it; give \
                 fewer devices to get more of it)",
                self.members
            )
        }
    }
}

/// The grid of a cooperative launch of `function` in blocks of `block` threads: `requested`
/// (`--fused-grid`, 1 to every resident block of `share`) or `default(max)` given that
/// maximum; an error names the setting when no block fits or the request is out of range.
pub(crate) fn cooperative_grid(
    function: &groute_core::cuda::CudaFunction,
    block: u32,
    requested: Option<u32>,
    default: impl FnOnce(u32) -> u32,
    share: MemberShare,
) -> Result<u32, Error> {
    let max_grid = share.of_resident(function.max_resident_grid(block, 0)?);
    if max_grid == 0 {
        return Err(Error::invalid(
            "fused_tuning.block (--fused-block)",
            block,
            format!(
                "no block of this many threads of the fused kernel fits on {}: give fewer \
                 threads",
                share.describe()
            ),
        ));
    }
    match requested {
        None => Ok(default(max_grid).clamp(1, max_grid)),
        Some(g) if (1..=max_grid).contains(&g) => Ok(g),
        Some(g) => Err(Error::invalid(
            "fused_tuning.grid (--fused-grid)",
            g,
            format!(
                "give 1..={max_grid} blocks of {block} threads, the most resident at once on \
                 {}: a cooperative launch needs every block resident at once",
                share.describe()
            ),
        )),
    }
}

/// Blocks of the cluster that runs the fused kernel's single-block mode in its cluster build
/// (`groute::SOLO_CLUSTER` of kernels/include/cluster_solo.cuh,
/// [`FusedTuning::cluster`](crate::traversal::FusedTuning::cluster)).
///
/// A road network's BFS run whole in one cluster is much faster on four blocks than on one
/// or two, and eight gain nothing over four.
pub const SOLO_CLUSTER: u32 = 4;

/// Graphs whose longest adjacency list has fewer arcs than this may run the single-block mode
/// on a cluster ([`FusedTuning::cluster`](crate::traversal::FusedTuning::cluster)): the mode expands every list on one
/// thread, THREAD_ARCS (4) arcs per dependent step, without the nested load balancing.
pub const CLUSTER_MAX_DEGREE: u64 = 32;

/// Whether a fused run on one device runs its single-block mode on a cluster: asked for
/// ([`FusedTuning::cluster`](crate::traversal::FusedTuning::cluster), on by default), a
/// cluster build exists (`has_build`: the device has
/// compute capability 9.0 or later), blocks over 256 threads (the wide build's frontier), the
/// single-block mode on (`solo`), the shared frontier on (`flags`: the graph's arc
/// positions fit 32 bits), and every list under [`CLUSTER_MAX_DEGREE`] arcs.
pub(crate) fn uses_cluster(
    options: &WorklistOptions,
    has_build: bool,
    block: u32,
    solo: bool,
    (_, flags): (u32, u32),
    max_degree: u64,
) -> bool {
    options.fused_tuning.cluster.unwrap_or(true)
        && has_build
        && block > FUSED_NARROW_MAX_BLOCK
        && solo
        && flags & FUSED_SOLO_SHARED != 0
        && max_degree < CLUSTER_MAX_DEGREE
}

/// The grid of a cooperative launch of `function`, a cluster build, in blocks of `block`
/// threads: `requested` (`--fused-grid`) or `default` blocks, rounded down to whole clusters
/// of [`SOLO_CLUSTER`] and at most every cluster of `share` resident at once. `None` when the
/// request is not a number of whole clusters that fit, or no cluster fits (the caller runs
/// the build without clusters, which takes any grid).
pub(crate) fn cluster_grid(
    function: &groute_core::cuda::CudaFunction,
    block: u32,
    requested: Option<u32>,
    default: u32,
    share: MemberShare,
) -> Result<Option<u32>, Error> {
    let max_grid =
        share.of_resident(function.max_active_clusters(SOLO_CLUSTER, block)?) * SOLO_CLUSTER;
    Ok(match requested {
        _ if max_grid == 0 => None,
        None => Some((default.min(max_grid) / SOLO_CLUSTER).max(1) * SOLO_CLUSTER),
        Some(g) if g % SOLO_CLUSTER == 0 && (SOLO_CLUSTER..=max_grid).contains(&g) => Some(g),
        Some(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_sharing_a_gpu_split_its_blocks_and_leave_a_cluster_spare() {
        let whole = MemberShare::WHOLE;
        assert_eq!(MemberShare::new(0), whole);
        assert_eq!(whole.of_multiprocessors(132), 132);
        assert_eq!(whole.of_resident(264), 264);
        assert_eq!(whole.of_resident(32), 32);
        let half = MemberShare::new(2);
        assert_eq!(half.of_multiprocessors(132), 66);
        assert_eq!(half.of_resident(132), 65);
        assert_eq!(half.of_resident(32), 15);
        let third = MemberShare::new(3);
        assert_eq!(third.of_resident(132), 43);
        assert_eq!(third.of_resident(32), 9);
        // Every member keeps at least one block of a default grid; a share too small for a
        // cluster or a block is none (the callers fall back or fail naming the setting).
        let many = MemberShare::new(200);
        assert_eq!(many.of_multiprocessors(132), 1);
        assert_eq!(many.of_resident(132), 0);
        assert_eq!(MemberShare::new(8).of_resident(8), 0);
        assert!(
            many.describe().contains("fewer devices"),
            "{}",
            many.describe()
        );
    }

    #[test]
    fn block_sizes_are_multiples_of_a_warp_up_to_1024() {
        assert_eq!(fused_block(None, FUSED_BLOCK).unwrap(), FUSED_BLOCK);
        assert_eq!(fused_block(None, 1024).unwrap(), 1024);
        for b in [32, 64, 256, 512, 1024] {
            assert_eq!(fused_block(Some(b), FUSED_BLOCK).unwrap(), b);
        }
        for b in [0, 1, 31, 33, 100, 1056, 2048] {
            let err = fused_block(Some(b), FUSED_BLOCK).unwrap_err().to_string();
            assert!(err.contains("--fused-block"), "{b}: {err}");
        }
    }

    #[test]
    fn sparse_graphs_get_one_wide_block_per_multiprocessor_dense_ones_every_resident_block() {
        for degree in [0.0, 2.4, FUSED_SPARSE_MAX_AVERAGE_DEGREE] {
            let d = FusedDefaults::for_graph(degree);
            assert_eq!(d.block, FUSED_SPARSE_BLOCK, "{degree}");
            assert_eq!(d.grid, FusedGrid::PerMultiprocessor, "{degree}");
            assert!(d.solo, "{degree}");
        }
        for degree in [8.01, 30.0, 86.4] {
            let d = FusedDefaults::for_graph(degree);
            assert_eq!(d.block, FUSED_BLOCK, "{degree}");
            assert_eq!(d.grid, FusedGrid::Resident, "{degree}");
            assert!(!d.solo, "{degree}");
        }
    }

    #[test]
    fn the_single_block_frontier_is_on_by_default_and_off_past_32_bit_arc_positions() {
        let mut o = WorklistOptions::default();
        let flags = |o: &WorklistOptions, arcs: usize| fused_kernel_flags(o, arcs).unwrap().1;
        assert_eq!(flags(&o, 1000), FUSED_SOLO_SHARED);
        assert_eq!(flags(&o, u32::MAX as usize), FUSED_SOLO_SHARED);
        assert_eq!(flags(&o, u32::MAX as usize + 1), 0);
        o.fused_tuning.solo_shared = false;
        assert_eq!(flags(&o, 1000), 0);
        o.fused_tuning.solo_direct_min = true;
        o.fused_tuning.direct_min = true;
        o.fused_tuning.barrier.tagged = true;
        assert_eq!(
            flags(&o, 1000),
            FUSED_SOLO_DIRECT_MIN | FUSED_DIRECT_MIN | FUSED_BARRIER_TAGGED
        );
        o.fused_tuning.barrier.spin_ns = FUSED_MAX_SPIN_NS + 1;
        let err = fused_kernel_flags(&o, 1000).unwrap_err().to_string();
        assert!(err.contains("--fused-spin-ns"), "{err}");
    }

    #[test]
    fn the_barrier_arguments_name_a_bad_sleep() {
        assert_eq!(
            FusedBarrier::default().kernel_args().unwrap(),
            (FUSED_SPIN_NS, 0)
        );
        let fenced = FusedBarrier {
            spin_ns: 0,
            fenced: true,
            tagged: false,
        };
        assert_eq!(fenced.kernel_args().unwrap(), (0, FUSED_BARRIER_FENCED));
        let both = FusedBarrier {
            spin_ns: 7,
            fenced: true,
            tagged: true,
        };
        assert_eq!(
            both.kernel_args().unwrap(),
            (7, FUSED_BARRIER_FENCED | FUSED_BARRIER_TAGGED)
        );
        let too_long = FusedBarrier {
            spin_ns: FUSED_MAX_SPIN_NS + 1,
            ..FusedBarrier::default()
        };
        let err = too_long.kernel_args().unwrap_err().to_string();
        assert!(err.contains("--fused-spin-ns"), "{err}");
    }

    #[test]
    fn the_cluster_runs_only_where_its_build_and_the_graph_allow_it() {
        let o = WorklistOptions::default();
        let flags = fused_kernel_flags(&o, 1000).unwrap();
        assert!(uses_cluster(&o, true, 1024, true, flags, 4));
        assert!(uses_cluster(
            &o,
            true,
            512,
            true,
            flags,
            CLUSTER_MAX_DEGREE - 1
        ));
        // No build (compute capability below 9.0), the narrow build, the mode off.
        assert!(!uses_cluster(&o, false, 1024, true, flags, 4));
        assert!(!uses_cluster(
            &o,
            true,
            FUSED_NARROW_MAX_BLOCK,
            true,
            flags,
            4
        ));
        assert!(!uses_cluster(&o, true, 1024, false, flags, 4));
        // A list the mode would expand on one thread.
        assert!(!uses_cluster(
            &o,
            true,
            1024,
            true,
            flags,
            CLUSTER_MAX_DEGREE
        ));
        // Arc positions past 32 bits (no shared frontier), or asked not to.
        let wide = fused_kernel_flags(&o, 1usize << 32).unwrap();
        assert!(!uses_cluster(&o, true, 1024, true, wide, 4));
        let mut off = o.clone();
        off.fused_tuning.cluster = Some(false);
        assert!(!uses_cluster(&off, true, 1024, true, flags, 4));
        // Asked for explicitly, as by default.
        let mut on = o.clone();
        on.fused_tuning.cluster = Some(true);
        assert!(uses_cluster(&on, true, 1024, true, flags, 4));
    }
}
