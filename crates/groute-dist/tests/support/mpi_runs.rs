//! The runs across ranks that both MPI jobs make alike, every rank holding the whole graph:
//! connected components by hook and compress ([`CcRanks`]) and PageRank by pull sweeps
//! ([`PageRankRanks`]), each solver run twice.

use std::error::Error;

use groute_cc::CcRanks;
use groute_core::Context;
use groute_dist::CommCollectives;
use groute_graph::{Csr, HeldRows, Partition};
use groute_pagerank::{PageRank, PageRankRanks, PageRankTuning};

use super::mpi_job::Job;

impl Job {
    /// Connected components across the ranks ([`CcRanks`]: hook and compress, labels
    /// exchanged) over `csr` on `ctx`'s devices, which hold their parts of `partition`, run
    /// twice; this rank's labels of each run (every rank holds them all).
    pub fn hook_twice(
        &mut self,
        ctx: &Context,
        csr: &Csr,
        partition: &Partition,
    ) -> Result<Vec<Vec<u32>>, Box<dyn Error>> {
        let mut collectives = CommCollectives::new(&mut self.comm, ctx)?;
        let rows = HeldRows::whole(csr);
        let mut solver = CcRanks::new(ctx, (&rows, partition), &mut collectives)?;
        (0..2)
            .map(|_| Ok(solver.run(&mut collectives)?.labels))
            .collect()
    }

    /// PageRank `algorithm` across the ranks ([`PageRankRanks`]: pull sweeps, shares
    /// gathered) over `csr` on `ctx`'s devices, which hold their parts of `partition`, run
    /// twice; this rank's ranks of each run (every rank holds them all). Each device splits
    /// its vertices into `sweep_ranges` ranges (1: whole-graph rounds). The rounds that take
    /// at most a quarter of the vertices gather only their shares (on CUDA devices, after the
    /// other ranks' shares are unpacked and spread), the others every share; a run by ranges
    /// leaves them once a round takes that few.
    pub fn sweep_twice(
        &mut self,
        ctx: &Context,
        csr: &Csr,
        partition: &Partition,
        (algorithm, sweep_ranges): (PageRank, u32),
    ) -> Result<Vec<Vec<f32>>, Box<dyn Error>> {
        let mut collectives = CommCollectives::new(&mut self.comm, ctx)?;
        let rows = HeldRows::whole(csr);
        let tuning = PageRankTuning {
            sparse_gather_divisor: Some(4),
            sweep_ranges: Some(sweep_ranges),
            ..PageRankTuning::default()
        };
        let mut solver = PageRankRanks::with_tuning(
            ctx,
            (&rows, partition),
            algorithm,
            &tuning,
            &mut collectives,
        )?;
        (0..2)
            .map(|_| Ok(solver.run(&mut collectives)?.ranks))
            .collect()
    }
}
