//! Connected components across the ranks of an MPI job ([`groute::cc::CcRanks`]): every
//! rank's devices hook the edges of their rows and compress, then device 0 of every rank
//! gathers the other ranks' forests (NCCL on CUDA, MPI on the host): two ranks' parent arrays
//! once, with more ranks the labels each owns until none moves.

use super::AnyError;
use super::ranks::RankJob;

/// Runs the CC of `job` over every rank's devices; any error on this rank ends the whole job
/// (`MPI_Abort`: the other ranks may be waiting for it in a collective). Without the `mpi`
/// feature `job_size` never asks for a rank run.
pub fn run(job: RankJob<'_, u32>) -> Result<(), AnyError> {
    #[cfg(feature = "mpi")]
    {
        super::ranks::on_mpi(|comm| run_ranks(comm, job))
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = job.name;
        Err("this binary was built without MPI: build it with --features mpi".into())
    }
}

#[cfg(feature = "mpi")]
fn run_ranks(comm: &mut groute::dist::MpiComm, job: RankJob<'_, u32>) -> Result<(), AnyError> {
    use super::ranks::{rank_context, report_rank_run, with_collectives};

    let ctx = rank_context(comm, job.run)?;
    let outcome = with_collectives(comm, &ctx, |collectives| measure(collectives, &ctx, &job))?;
    report_rank_run(comm, &ctx, &job, outcome)
}

/// The timed runs of the CC across the ranks, for the report.
#[cfg(feature = "mpi")]
fn measure(
    collectives: &mut groute::dist::CommCollectives<'_, groute::dist::MpiComm>,
    ctx: &groute::core::Context,
    job: &RankJob<'_, u32>,
) -> Result<super::ranks::RankOutcome<u32>, AnyError> {
    use std::time::Instant;

    use groute::cc::CcRanks;
    use groute::worklist::RankCollectives;

    let (rank, ranks) = (collectives.rank(), collectives.ranks());
    let rows = job.graph.rows()?;
    let partition = &job.graph.partition;
    let started = Instant::now();
    let mut solver = CcRanks::new(ctx, (&rows, partition), collectives)?;
    let stage_ms = started.elapsed().as_secs_f64() * 1e3;
    let runs = super::timing::timed_runs(
        job.run.repeats()?,
        || solver.run(collectives),
        |r| (r.stats.elapsed, r.stats.device_time),
    )?;
    drop(solver);
    let s = runs.last.stats.clone();
    Ok(super::ranks::RankOutcome {
        stage_ms,
        mode: super::execution::mode_of(false),
        engine: format!(
            "hook and compress over {ranks} MPI ranks x {} devices, {} ({})",
            job.run.devices,
            if ranks <= 2 {
                "the ranks' forests gathered once"
            } else {
                "the owned labels gathered between ranks until none moves"
            },
            match ctx.backend_kind() {
                groute::core::BackendKind::Cuda => "NCCL",
                _ => "MPI",
            }
        ),
        detail: serde_json::json!({
            "rounds": s.rounds,
            "edges_hooked": s.edges_hooked,
            "bytes_between_ranks": s.bytes_between_ranks,
            "edges_per_rank": s.edges_per_process,
            // Each rank's device 0 from the start to its forest ready for the exchange.
            "local_ms_per_rank": s.local_times.as_ref().map(|t| {
                t.iter().map(|d| d.as_secs_f64() * 1e3).collect::<Vec<_>>()
            }),
        }),
        comm: None,
        stats: vec![
            ("rounds", s.rounds.into()),
            ("edges_hooked", s.edges_hooked.into()),
        ],
        summary: format!(
            "hook and compress, {} edges hooked ({:?} per rank), {} rounds of exchange ({} \
             bytes between ranks){}",
            s.edges_hooked,
            s.edges_per_process,
            s.rounds,
            s.bytes_between_ranks,
            s.local_times.as_ref().map_or(String::new(), |t| format!(
                "; forests ready after {:?} ms",
                t.iter()
                    .map(|d| (d.as_secs_f64() * 1e4).round() / 10.0)
                    .collect::<Vec<_>>()
            ))
        ),
        // Every rank holds every label; rank 0 reports them.
        runs: runs.map_last(|last| if rank == 0 { last.labels } else { Vec::new() }),
    })
}
