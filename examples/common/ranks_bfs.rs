//! BFS across the ranks of an MPI job: direction-optimizing ([`groute::bfs::BfsRanks`],
//! level-synchronous, the levels' discoveries gathered between ranks as bitmaps, or lists
//! after a push with few out-arcs: NCCL on CUDA) where `--direction` chooses it for the whole
//! graph as it would in one process, the worklist BFS over the ring of every rank's devices
//! otherwise.

use groute::bfs::{BfsTuning, Direction};

use super::AnyError;
use super::ranks::RankJob;

/// Runs the BFS of `job` over every rank's devices; any error on this rank ends the whole
/// job (`MPI_Abort`: the other ranks may be waiting for it in a collective). Without the
/// `mpi` feature `job_size` never asks for a rank run.
pub fn run(job: RankJob<'_, u32>, direction: Direction, tuning: BfsTuning) -> Result<(), AnyError> {
    #[cfg(feature = "mpi")]
    {
        super::ranks::on_mpi(|comm| run_ranks(comm, job, direction, &tuning))
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (job.name, direction, tuning);
        super::ranks::built_without_mpi()
    }
}

#[cfg(feature = "mpi")]
fn run_ranks(
    comm: &mut groute::dist::MpiComm,
    job: RankJob<'_, u32>,
    direction: Direction,
    tuning: &BfsTuning,
) -> Result<(), AnyError> {
    use groute::bfs::BfsRanks;
    use groute::dist::CommCollectives;
    use groute::worklist::traversal::MinTraversalSolver;

    use super::ranks::{rank_context, report_rank_run, with_collectives};

    let ctx = rank_context(comm, job.run)?;
    // The decision needs only sums: no NCCL communicator for the worklist path.
    let rows = job.graph.rows()?;
    let (partition, symmetric) = (&job.graph.partition, job.graph.graph.symmetric);
    let chosen = BfsRanks::is_chosen(
        direction,
        &ctx,
        (&rows, partition),
        symmetric,
        &mut CommCollectives::sums_only(comm),
    )?;
    if chosen {
        let outcome = with_collectives(comm, &ctx, |collectives| {
            measure(collectives, &ctx, &job, tuning)
        })?;
        report_rank_run(comm, &ctx, &job, outcome)
    } else {
        super::ranks::run_worklist::<MinTraversalSolver<groute::bfs::Bfs>>(
            comm,
            &ctx,
            job,
            groute::bfs::Bfs,
        )
    }
}

/// The timed runs of the direction-optimizing BFS across the ranks, for the report.
#[cfg(feature = "mpi")]
fn measure(
    collectives: &mut super::rank_measure::MpiCollectives<'_>,
    ctx: &groute::core::Context,
    job: &RankJob<'_, u32>,
    tuning: &BfsTuning,
) -> Result<super::ranks::RankOutcome<u32>, AnyError> {
    use groute::bfs::BfsRanks;
    use groute::worklist::RankCollectives;

    use super::rank_measure::{plane_between_ranks, timed_stage};

    let (rank, ranks) = (collectives.rank(), collectives.ranks());
    let rows = job.graph.rows()?;
    let partition = &job.graph.partition;
    let (sources, options) = super::ranks::rank_zero_settings(collectives.comm(), job)?;
    let source = sources[0];
    let (mut solver, stage_ms) = timed_stage(|| {
        BfsRanks::new(ctx, (&rows, partition), collectives, tuning).map(|mut solver| {
            solver.set_trace(tuning.trace);
            solver
        })
    })?;
    let (push_bytes, pull_bytes) = (solver.gather_bytes(false), solver.gather_bytes(true));
    let runs = super::timing::timed_runs(
        job.run.repeats()?,
        || solver.run(collectives, source, options.time_limit),
        |r| (r.stats.elapsed, r.stats.device_time),
    )?;
    let gathered_bytes = solver.last_gathered_bytes();
    drop(solver);
    let s = runs.last.stats.clone();
    let do_trace = s.do_trace.as_ref().map(super::do_trace::trace_json);
    if rank == 0
        && !job.run.json_on_stdout()
        && let Some(trace) = &s.do_trace
    {
        super::do_trace::print_trace(trace);
    }
    // Each rank receives every other rank's part of every level's gather.
    let pairs = (ranks * ranks.saturating_sub(1)) as u64;
    let gathered = pairs * gathered_bytes;
    Ok(super::ranks::RankOutcome {
        stage_ms,
        mode: super::execution::mode_of(false),
        engine: format!(
            "direction-optimizing BFS over {ranks} MPI ranks x {} devices, the levels' \
             discoveries gathered between ranks as bitmaps or lists ({})",
            job.run.devices,
            plane_between_ranks(ctx)
        ),
        detail: serde_json::json!({
            "levels": s.rounds,
            "pull_levels": s.pull_levels,
            "gather_bytes_per_rank_after_push": push_bytes,
            "gather_bytes_per_rank_after_pull": pull_bytes,
            "bytes_between_ranks": gathered,
        }),
        comm: None,
        stats: vec![
            ("rounds", s.rounds.into()),
            ("pull_levels", s.pull_levels.into()),
            ("work_items", s.work_items.into()),
            ("arcs_examined", s.arcs_examined.unwrap_or(0).into()),
            ("do_trace", serde_json::to_value(do_trace)?),
        ],
        summary: format!(
            "direction-optimizing, {} levels ({} pulled), {push_bytes} bytes a rank gathered \
             after a push level, {pull_bytes} after a pull level",
            s.rounds, s.pull_levels
        ),
        // Every rank holds every level; rank 0 reports them.
        runs: runs.map_last(|last| if rank == 0 { last.levels } else { Vec::new() }),
    })
}
