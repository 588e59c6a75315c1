//! What the rank runs of the solvers across the ranks (CC, PageRank, the direction-optimizing
//! BFS) share around their own `measure`: the collectives they take, the run from this rank's
//! devices to rank 0's report, the timed making of the solver and the name of the data plane
//! between ranks.

use std::time::Instant;

use super::AnyError;
use super::ranks::{RankJob, RankOutcome, rank_context, report_rank_run, with_collectives};

/// The collectives of an MPI job on this rank's devices (an NCCL communicator of every
/// rank's device 0 on CUDA).
pub(super) type MpiCollectives<'a> = groute::dist::CommCollectives<'a, groute::dist::MpiComm>;

/// Runs `measure` on this rank's devices with the collectives of `comm`, then rank 0
/// validates, writes and reports its outcome ([`report_rank_run`]).
pub(super) fn measure_and_report<V>(
    comm: &mut groute::dist::MpiComm,
    job: RankJob<'_, V>,
    measure: impl FnOnce(
        &mut MpiCollectives<'_>,
        &groute::core::Context,
        &RankJob<'_, V>,
    ) -> Result<RankOutcome<V>, AnyError>,
) -> Result<(), AnyError> {
    let ctx = rank_context(comm, job.run)?;
    let outcome = with_collectives(comm, &ctx, |collectives| measure(collectives, &ctx, &job))?;
    report_rank_run(comm, &ctx, &job, outcome)
}

/// The solver `make` returns and the time it took, ms (the report's stage time).
pub(super) fn timed_stage<S, E: Into<AnyError>>(
    make: impl FnOnce() -> Result<S, E>,
) -> Result<(S, f64), AnyError> {
    let started = Instant::now();
    let solver = make().map_err(Into::into)?;
    Ok((solver, started.elapsed().as_secs_f64() * 1e3))
}

/// What carries the data between ranks on `ctx`'s backend, for the engine's line: NCCL on
/// CUDA, MPI otherwise.
pub(super) fn plane_between_ranks(ctx: &groute::core::Context) -> &'static str {
    match ctx.backend_kind() {
        groute::core::BackendKind::Cuda => "NCCL",
        _ => "MPI",
    }
}
