//! PageRank's tuning ([`PageRankTuning`]): how the rounds sweep and how the CUDA forms are
//! built. None of it changes what the ranks converge to.

use crate::sweep::SweepMode;
use crate::{DEFAULT_FUSED_BLOCKS_PER_SM, DEFAULT_SWEEP_DIVISOR};

/// PageRank's tuning (`PageRankOptions::tuning`; the example's tuning flags, listed by
/// `--help-tuning`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRankTuning {
    /// CUDA: a round after the first is a topology-driven sweep over the owned range (instead
    /// of a worklist round) when the pending items are at least the owned range over this
    /// (`--sweep-divisor`, default [`DEFAULT_SWEEP_DIVISOR`]; 0: worklist rounds only). The
    /// host backend always runs worklist rounds.
    pub sweep_divisor: u32,
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
    /// sweeps, so more threads in flight win: road-usa on 1 H200 took 14.7 ms at 8, 17.1 at 6,
    /// 18.8 at 0 (then 48 registers, 5 blocks). Other values are an error.
    pub fused_blocks_per_sm: u32,
}

impl Default for PageRankTuning {
    fn default() -> Self {
        PageRankTuning {
            sweep_divisor: DEFAULT_SWEEP_DIVISOR,
            sweep: SweepMode::default(),
            lazy_receive: false,
            fused_fence_per_round: false,
            fused_blocks_per_sm: DEFAULT_FUSED_BLOCKS_PER_SM,
        }
    }
}
