//! [`ShareSolver`]: the one interface of an executor that runs one process's share of a run
//! spanning several processes (the `groute-dist` crate's ranks), whatever the algorithm and
//! the backend, and its output ([`ShareOutput`]).

use std::ops::Range;

use bytemuck::Pod;
use groute_core::Context;
use groute_graph::{Csr, HeldRows, Partition};

use crate::algorithm::{HostOutput, WorklistAlgorithm, check_partition};
use crate::driver::SharedRun;
use crate::engine::WorklistOptions;
use crate::error::WorklistError;
use crate::ring::RingTransport;

/// The output of one process's share of a run, in the partitioned numbering: the vertices of
/// its parts, their values, under [`Combine::Sum`](crate::Combine::Sum) the value left on
/// each, and its counters (the fields of a host run's output, whatever the executor).
pub type ShareOutput<V> = HostOutput<V>;

/// The value type of a [`ShareSolver`]'s algorithm.
pub type ShareValue<S> = <<S as ShareSolver>::Algorithm as WorklistAlgorithm>::Value;

/// An executor of one process's share of a run spanning several processes: this process's
/// devices hold some consecutive parts of the partition, their ring continues on the other
/// processes' devices through a [`RingTransport`] of [`ShareSolver::Packed`] items, and the
/// run goes on until the caller finishes its [`SharedRun`] counter. Implemented by
/// [`HostSolver`](crate::algorithm::HostSolver) (any algorithm on the host backend),
/// [`MinTraversalSolver`](crate::traversal::MinTraversalSolver) (min-combined algorithms with
/// CUDA kernels: BFS, SSSP, label propagation) and by algorithms with CUDA executors of their
/// own (PageRank's `PageRankShare`).
pub trait ShareSolver: Sized + Send {
    /// The algorithm it runs.
    type Algorithm: WorklistAlgorithm;
    /// The item that crosses between processes.
    type Packed: Pod + Send + Sync;

    /// Uploads parts `first_part..first_part + context.num_devices()` of `partition` (of the
    /// graph whose rows `rows` holds, already renumbered so that part `p` owns
    /// `partition.range(p)`) to `context`'s devices, device `d` holding part
    /// `first_part + d`, and allocates the run storage. Reads only the rows of those parts,
    /// which `rows` must hold (checked: [`DeviceParts::check`](crate::DeviceParts::check)), and asks `rows` for what
    /// only the whole graph gives.
    fn for_parts(
        context: &Context,
        algorithm: Self::Algorithm,
        rows: &HeldRows<'_>,
        partition: &Partition,
        first_part: usize,
        options: &WorklistOptions,
    ) -> Result<Self, WorklistError>;

    /// The vertices this process's parts own.
    fn owned_vertices(&self) -> Range<u32>;

    /// Runs this process's share from `sources` (the whole run's, partitioned ids: each
    /// process seeds those its parts own), its ring continuing over `transport`, until the
    /// caller finishes `shared.counter`. The output covers [`ShareSolver::owned_vertices`].
    fn run_shared<T: RingTransport<Self::Packed>>(
        &mut self,
        sources: &[u32],
        options: &WorklistOptions,
        transport: &T,
        shared: SharedRun<'_>,
    ) -> Result<ShareOutput<ShareValue<Self>>, WorklistError>;

    /// After a run that failed with `error`: grows what overflowed where the options leave
    /// its size to the solver, and says whether the run can start again (`false`: the error
    /// stands). By default nothing grows: an executor whose buffers grow as they fill, or
    /// are sized for the worst case, has nothing to grow after a failure.
    fn grow_after(
        &mut self,
        error: &WorklistError,
        options: &WorklistOptions,
    ) -> Result<bool, WorklistError> {
        let _ = (error, options);
        Ok(false)
    }
}

/// The solver `S` of every part of `partition`, one per device of `context`, uploaded from
/// the whole graph `csr` (renumbered so that device `d` owns `partition.range(d)`): what the
/// solvers' `new` makes.
pub(crate) fn for_every_part<S: ShareSolver>(
    context: &Context,
    algorithm: S::Algorithm,
    csr: &Csr,
    partition: &Partition,
    options: &WorklistOptions,
) -> Result<S, WorklistError> {
    check_partition(context, csr, partition)?;
    S::for_parts(
        context,
        algorithm,
        &HeldRows::whole(csr),
        partition,
        0,
        options,
    )
}
