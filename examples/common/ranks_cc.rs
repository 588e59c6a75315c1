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
        super::ranks::on_mpi(|comm| super::rank_measure::measure_and_report(comm, job, measure))
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = job.name;
        super::ranks::built_without_mpi()
    }
}

/// The timed runs of the CC across the ranks, for the report.
#[cfg(feature = "mpi")]
fn measure(
    collectives: &mut super::rank_measure::MpiCollectives<'_>,
    ctx: &groute::core::Context,
    job: &RankJob<'_, u32>,
) -> Result<super::ranks::RankOutcome<u32>, AnyError> {
    use groute::cc::CcRanks;
    use groute::worklist::RankCollectives;

    use super::rank_measure::{plane_between_ranks, timed_stage};

    let (rank, ranks) = (collectives.rank(), collectives.ranks());
    let rows = job.graph.rows()?;
    let partition = &job.graph.partition;
    let (mut solver, stage_ms) =
        timed_stage(|| CcRanks::new(ctx, (&rows, partition), collectives))?;
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
                "each device's rows linked by sampling, the ranks' forests gathered once"
            } else {
                "the owned labels gathered between ranks until none moves"
            },
            plane_between_ranks(ctx)
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
