//! PageRank across the ranks of an MPI job ([`groute::pagerank::PageRankRanks`]): every
//! rank's devices take their residuals and gather over the in-arcs of their vertices in
//! synchronous pull sweeps, device 0 of every rank gathering every rank's shares each round
//! (NCCL on CUDA, MPI on the host).

use super::AnyError;
use super::ranks::RankJob;

/// Runs the PageRank of `job` (`algorithm`'s alpha and epsilon; `tuning` as
/// [`groute::pagerank::PageRankRanks::with_tuning`] takes it) over every rank's devices;
/// any error on this rank ends the whole job (`MPI_Abort`: the other ranks may be waiting
/// for it in a collective). Without the `mpi` feature `job_size` never asks for a rank run.
pub fn run(
    job: RankJob<'_, f32>,
    algorithm: groute::pagerank::PageRank,
    tuning: groute::pagerank::PageRankTuning,
) -> Result<(), AnyError> {
    #[cfg(feature = "mpi")]
    {
        super::ranks::on_mpi(|comm| {
            super::rank_measure::measure_and_report(comm, job, |collectives, ctx, job| {
                measure(collectives, ctx, job, (algorithm, &tuning))
            })
        })
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (job.name, algorithm, tuning);
        super::ranks::built_without_mpi()
    }
}

/// The timed runs of the PageRank across the ranks, for the report.
#[cfg(feature = "mpi")]
fn measure(
    collectives: &mut super::rank_measure::MpiCollectives<'_>,
    ctx: &groute::core::Context,
    job: &RankJob<'_, f32>,
    (algorithm, tuning): (
        groute::pagerank::PageRank,
        &groute::pagerank::PageRankTuning,
    ),
) -> Result<super::ranks::RankOutcome<f32>, AnyError> {
    use groute::pagerank::PageRankRanks;
    use groute::worklist::RankCollectives;

    use super::rank_measure::{plane_between_ranks, timed_stage};

    let (rank, ranks) = (collectives.rank(), collectives.ranks());
    let rows = job.graph.rows()?;
    let partition = &job.graph.partition;
    let (mut solver, stage_ms) = timed_stage(|| {
        PageRankRanks::with_tuning(ctx, (&rows, partition), algorithm, tuning, collectives)
    })?;
    let degree_ordered = solver.degree_ordered();
    let gather_interleaved = solver.gather_interleaved();
    let gather_tiles = solver.gathers_by_tiles();
    let runs = super::timing::timed_runs(
        job.run.repeats()?,
        || solver.run(collectives),
        |r| (r.stats.elapsed, r.stats.device_time),
    )?;
    let steps = solver.sweep_ranges();
    drop(solver);
    let s = runs.last.stats.clone();
    let alpha = f64::from(algorithm.alpha);
    Ok(super::ranks::RankOutcome {
        stage_ms,
        mode: super::execution::mode_of(false),
        engine: format!(
            "synchronous pull sweeps over {ranks} MPI ranks x {} devices, the shares of every \
             rank's boundary gathered each {} ({})",
            job.run.devices,
            match steps {
                1 => "round".to_string(),
                steps => format!("of a round's {steps} steps by vertex ranges"),
            },
            plane_between_ranks(ctx)
        ),
        detail: serde_json::json!({
            "rounds": s.rounds,
            "pushes": s.pushes,
            "residual_left": s.residual_left,
            "bytes_between_ranks": s.bytes_between_ranks,
            "degree_order": degree_ordered,
            "gather_interleave": gather_interleaved,
            "gather_tiles": gather_tiles,
            "sparse_gather_divisor_requested": tuning.sparse_gather_divisor,
            "sparse_gather_rounds": s.sparse_gather_rounds,
            "sweep_ranges_requested": tuning.sweep_ranges,
            "ranged_rounds": s.ranged_rounds,
            "round_ms": {
                "gather": s.round_times.gather.as_secs_f64() * 1e3,
                "sparse_gather": s.round_times.sparse_gather.as_secs_f64() * 1e3,
            },
        }),
        comm: None,
        stats: vec![
            ("rounds", s.rounds.into()),
            ("pushes", s.pushes.into()),
            ("sparse_gather_rounds", s.sparse_gather_rounds.into()),
            ("ranged_rounds", s.ranged_rounds.into()),
            ("residual_left", s.residual_left.into()),
        ],
        summary: format!(
            "{} pull sweeps, {} pushes, residual left {:.4} (L1 error <= {:.4}), {} bytes \
             between ranks",
            s.rounds,
            s.pushes,
            s.residual_left,
            s.residual_left / (1.0 - alpha),
            s.bytes_between_ranks
        ),
        // Every rank holds every rank; rank 0 reports them.
        runs: runs.map_last(|last| if rank == 0 { last.ranks } else { Vec::new() }),
    })
}
