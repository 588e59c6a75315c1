//! Runs across the ranks of an MPI job: an example started by `mpirun -np R` (built with
//! `--features mpi`) runs its algorithm over the devices of every rank
//! (`groute::dist::DistSolver`), rank 0 validating, writing `--output` and the report. The
//! launcher's environment tells (`groute::dist::launched_rank`); no flag is needed. BFS,
//! SSSP, CC (label propagation) and PageRank run on the GPUs when the binary also has the
//! `nccl` feature (their items cross between ranks over NCCL), each rank's devices starting
//! at a GPU of its own on its node.

use std::path::Path;

use groute::worklist::traversal::MinTraversalSolver;
use groute::worklist::{ShareSolver, ShareValue, WorklistAlgorithm, WorklistOptions};
use serde_json::Value;

use super::rank_graph::RankGraph;
use super::report::{ExecutionReport, GraphReport, Report};
use super::{AnyError, RunArgs};

/// The ranks of the MPI job that started this process, when more than one; `None` for a
/// process of its own (or a job of one rank), which runs as usual. A job of several ranks
/// of a binary built without the `mpi` feature is an error that names it.
pub fn job_size() -> Result<Option<usize>, AnyError> {
    match groute::dist::launched_rank() {
        Some((_, size)) if size > 1 => {
            if cfg!(feature = "mpi") {
                Ok(Some(size))
            } else {
                Err(format!(
                    "started as one of {size} MPI ranks, but this binary was built without MPI: \
                     build it with `cargo build --release --features mpi --examples`"
                )
                .into())
            }
        }
        _ => Ok(None),
    }
}

/// Whether this process is a rank other than 0 of an MPI job (its notes are rank 0's too:
/// it prints none).
pub fn is_secondary_rank() -> bool {
    groute::dist::launched_rank().is_some_and(|(rank, _)| rank > 0)
}

/// Rank 0's check of the values against the reference.
pub type Validate<'a, V> = Box<dyn Fn(&[V]) -> Result<(), String> + 'a>;
/// Rank 0's writer of `--output`.
pub type WriteOutput<'a, V> = Box<dyn Fn(&Path, &[V]) -> Result<(), AnyError> + 'a>;
/// Rank 0's `algorithm_stats` from the values and the median run time, ms.
pub type Stats<'a, V> = Box<dyn Fn(&[V], f64) -> Value + 'a>;

/// What an example gives [`run`] besides the algorithm.
pub struct RankJob<'a, V> {
    /// The example's name (the report's `algorithm`).
    pub name: &'static str,
    /// The run flags (devices per rank, repeats, output, JSON).
    pub run: &'a RunArgs,
    /// The graph as this rank holds it (rank 0: whole), in its own numbering.
    pub graph: &'a RankGraph,
    /// Its report entry.
    pub graph_report: GraphReport,
    /// Sources in the graph's numbering. Rank 0's are every rank's (a rank that holds only
    /// its rows cannot pick the default source).
    pub sources: Vec<u32>,
    /// The worklist's settings; `prio_delta` is rank 0's on every rank.
    pub options: WorklistOptions,
    /// Rank 0: checks the values (graph numbering) against the reference when validation is on.
    pub validate: Option<Validate<'a, V>>,
    /// Rank 0: writes `--output` from the values.
    pub write: WriteOutput<'a, V>,
    /// Rank 0: the report's `algorithm_stats` from the values and the median run time, ms.
    pub stats: Stats<'a, V>,
}

/// Runs `algorithm` over every rank's devices, on CUDA devices with the min traversals'
/// executor (`job_size` said this is a job of several ranks).
pub fn run<A: WorklistAlgorithm>(job: RankJob<'_, A::Value>, algorithm: A) -> Result<(), AnyError> {
    run_on::<MinTraversalSolver<A>>(job, algorithm)
}

/// Runs `algorithm` over every rank's devices, on CUDA devices with the executor `D`. Any
/// error on this rank after MPI started ends the whole job (`MPI_Abort`): the other ranks may
/// be waiting for it in a collective.
#[cfg(feature = "mpi")]
pub fn run_on<D: ShareSolver>(
    job: RankJob<'_, ShareValue<D>>,
    algorithm: D::Algorithm,
) -> Result<(), AnyError> {
    on_mpi(|comm| run_ranks::<D>(comm, job, algorithm))
}

/// Starts MPI and runs `body` on this rank; any error ends the whole job (`MPI_Abort`: the
/// other ranks may be waiting for this one in a collective).
#[cfg(feature = "mpi")]
pub(super) fn on_mpi(
    body: impl FnOnce(&mut groute::dist::MpiComm) -> Result<(), AnyError>,
) -> Result<(), AnyError> {
    let mut comm = groute::dist::MpiComm::init()?;
    match body(&mut comm) {
        Ok(()) => Ok(()),
        Err(e) => {
            super::report_error(&*e);
            comm.abort(1)
        }
    }
}

/// `measure` with the collectives of `comm` on `ctx`'s devices (an NCCL communicator of
/// every rank's device 0 on CUDA). An error while they hold the communicator ends the job
/// here: freeing it could wait for the other ranks, which may be waiting in a collective for
/// this one.
#[cfg(feature = "mpi")]
pub(super) fn with_collectives<V>(
    comm: &mut groute::dist::MpiComm,
    ctx: &groute::core::Context,
    measure: impl FnOnce(
        &mut super::rank_measure::MpiCollectives<'_>,
    ) -> Result<RankOutcome<V>, AnyError>,
) -> Result<RankOutcome<V>, AnyError> {
    let mut collectives = groute::dist::CommCollectives::new(comm, ctx)?;
    match measure(&mut collectives) {
        Ok(outcome) => Ok(outcome),
        Err(e) => {
            super::report_error(&*e);
            collectives.comm().abort(1)
        }
    }
}

/// Without the `mpi` feature [`job_size`] never asks for a rank run.
#[cfg(not(feature = "mpi"))]
pub fn run_on<D: ShareSolver>(
    job: RankJob<'_, ShareValue<D>>,
    algorithm: D::Algorithm,
) -> Result<(), AnyError> {
    let _ = (job.name, algorithm);
    built_without_mpi()
}

/// The error of a rank run in a binary built without the `mpi` feature.
#[cfg(not(feature = "mpi"))]
pub(super) fn built_without_mpi() -> Result<(), AnyError> {
    Err("this binary was built without MPI: build it with --features mpi".into())
}

#[cfg(feature = "mpi")]
fn run_ranks<D: ShareSolver>(
    comm: &mut groute::dist::MpiComm,
    job: RankJob<'_, ShareValue<D>>,
    algorithm: D::Algorithm,
) -> Result<(), AnyError> {
    let ctx = rank_context(comm, job.run)?;
    run_worklist::<D>(comm, &ctx, job, algorithm)
}

/// This rank's devices: `--devices` of them from GPU `local rank x devices` of its node, on
/// the backend of [`rank_backend`]; rank 0 prints the context's fallback note.
#[cfg(feature = "mpi")]
pub(super) fn rank_context(
    comm: &groute::dist::MpiComm,
    run: &RunArgs,
) -> Result<groute::core::Context, AnyError> {
    use groute::core::{Context, Jitter};
    use groute::dist::RankComm;

    let rank = comm.rank();
    let mut builder = Context::builder()
        .devices(run.devices)
        .backend(rank_backend(run)?)
        .first_physical_device(groute::dist::launched_local_rank().unwrap_or(0) * run.devices)
        .jitter(run.jitter.map(|s| Jitter::seeded(s + rank as u64)));
    if let Some(limit) = run.device_memory_limit {
        builder = builder.device_memory_limit(limit.bytes());
    }
    let ctx: Context = builder.build()?;
    if rank == 0
        && let Some(note) = ctx.fallback_note()
    {
        eprintln!("note: {note}");
    }
    Ok(ctx)
}

/// The worklist over every rank's devices ([`DistSolver`](groute::dist::DistSolver)) with
/// the executor `D`.
#[cfg(feature = "mpi")]
pub(super) fn run_worklist<D: ShareSolver>(
    comm: &mut groute::dist::MpiComm,
    ctx: &groute::core::Context,
    job: RankJob<'_, ShareValue<D>>,
    algorithm: D::Algorithm,
) -> Result<(), AnyError> {
    use groute::dist::{DistSolver, RankComm};

    let run = job.run;
    let ranks = comm.size();
    let mut job = job;
    if job.options.prio_delta.is_none() && comm.rank() == 0 {
        job.options.prio_delta = default_band::<D::Algorithm>(ctx, ranks, &job);
    }
    let (sources, options) = rank_zero_settings(comm, &job)?;
    let (mut solver, stage_ms) = super::rank_measure::timed_stage(|| -> Result<_, AnyError> {
        Ok(DistSolver::<_, _, D>::with_device_solver(
            comm,
            ctx,
            algorithm,
            job.graph.rows()?,
            &job.graph.partition,
            &options,
        )?)
    })?;
    let runs = super::timing::timed_runs(
        run.repeats()?,
        || solver.run(&sources, &options),
        |o| (o.stats.elapsed, o.stats.device_time),
    )?;
    drop(solver);
    let super::timing::TimedRuns {
        last: out,
        run_ms,
        device_ms,
        full_run_ms,
    } = runs;
    let totals = out.totals;
    let outcome = RankOutcome {
        runs: super::timing::TimedRuns {
            last: out.values,
            run_ms,
            device_ms,
            full_run_ms,
        },
        stage_ms,
        mode: super::execution::mode_of(false),
        engine: format!(
            "worklist over {ranks} MPI ranks x {} devices, {}",
            run.devices,
            match ctx.backend_kind() {
                groute::core::BackendKind::Cuda => "CUDA executor, NCCL between ranks",
                _ => "host executor, MPI between ranks",
            }
        ),
        detail: serde_json::json!({ "termination_waves": totals.waves }),
        comm: Some(super::report::CommReport {
            bytes: totals.items_sent * size_of::<D::Packed>() as u64,
            messages: totals.segments_sent,
            remote_updates: totals.remote_updates,
            cut_arcs_traversed: totals.cut_arcs_traversed,
        }),
        stats: vec![
            ("work_items", totals.items_processed.into()),
            ("items_sent", totals.items_sent.into()),
            ("items_between_ranks", totals.items_between_ranks.into()),
            ("rounds", totals.max_rounds.into()),
        ],
        summary: format!(
            "{} items processed, {} crossed between ranks, {} termination waves",
            totals.items_processed, totals.items_between_ranks, totals.waves
        ),
    };
    report_rank_run(comm, ctx, &job, outcome)
}

/// What a run over every rank's devices measured, for rank 0's report.
#[cfg(feature = "mpi")]
pub(super) struct RankOutcome<V> {
    /// The timed runs; the values (rank 0's; empty elsewhere) of the last.
    pub runs: super::timing::TimedRuns<Vec<V>>,
    /// Making the solver, ms.
    pub stage_ms: f64,
    /// The execution mode (`host-driven`, ...).
    pub mode: &'static str,
    /// The engine, in words.
    pub engine: String,
    /// The executor's own fields of `execution.detail`.
    pub detail: Value,
    /// The traffic between devices, where the executor counts it.
    pub comm: Option<super::report::CommReport>,
    /// The executor's fields of `algorithm_stats`.
    pub stats: Vec<(&'static str, Value)>,
    /// The console's line on the ranks.
    pub summary: String,
}

/// Rank 0 validates, writes `--output` and the report of `outcome`; every rank gives its
/// memory (collective).
#[cfg(feature = "mpi")]
pub(super) fn report_rank_run<V>(
    comm: &mut groute::dist::MpiComm,
    ctx: &groute::core::Context,
    job: &RankJob<'_, V>,
    outcome: RankOutcome<V>,
) -> Result<(), AnyError> {
    use groute::dist::RankComm;

    let (run, ranks) = (job.run, comm.size());
    let memory = gather_memory(comm, ctx, job.graph)?;
    let Some(rank_memory) = memory else {
        return Ok(());
    };
    let values = &outcome.runs.last;
    let check = job.validate.as_ref();
    if let Some(validate) = check {
        validate(values).map_err(|e| format!("validation FAILED: {e}"))?;
    }
    if let Some(path) = &run.output {
        (job.write)(path, values)?;
    }
    let mut report = Report::of_run(job.name, ctx, Some(job.graph_report.clone()));
    if let Some(memory) = &mut report.memory {
        memory.ranks = Some(rank_memory);
    }
    let own_rows = report
        .memory
        .as_ref()
        .and_then(|m| m.ranks.as_ref())
        .map_or(0, |r| r.iter().filter(|r| r.loaded_own_rows).count());
    let partition = &job.graph.partition;
    let mut detail = serde_json::json!({
        "ranks": ranks,
        "devices_per_rank": run.devices,
        "ranks_loading_own_rows": own_rows,
    });
    if let (Value::Object(all), Value::Object(own)) = (&mut detail, outcome.detail) {
        all.extend(own);
    }
    report.execution = Some(ExecutionReport::new(
        ctx,
        run,
        outcome.mode,
        outcome.engine,
        Some(format!(
            "blocks of vertices + arcs, {} parts: rank r holds parts r*{d}..(r+1)*{d}",
            partition.num_parts(),
            d = run.devices
        )),
        detail,
    ));
    report.times = outcome.runs.times(job.graph.load_ms, outcome.stage_ms);
    report.comm = outcome.comm;
    report.validated = check.map(|_| true);
    let mut stats = (job.stats)(values, outcome.runs.median_ms());
    if let Value::Object(map) = &mut stats {
        for (key, value) in outcome.stats {
            map.insert(key.into(), value);
        }
    }
    report.algorithm_stats = stats;
    if let Some(path) = &run.json {
        report.write(path)?;
    }
    if !run.json_on_stdout() {
        super::report::print_header(&report);
        println!(
            "ranks       {ranks} x {} devices: {}",
            run.devices, outcome.summary
        );
        super::report::print_footer(&report);
    }
    Ok(())
}

/// The default band of soft priority of algorithm `A` ([`WorklistAlgorithm::default_band`])
/// for a run of `job` over `ranks` ranks of `ctx`'s devices each, on the whole graph (rank 0
/// holds it): what one process of as many devices would use, never device-driven (ranks run
/// host-driven rounds). Rank 0's band becomes every rank's ([`rank_zero_settings`]).
///
/// [`WorklistAlgorithm::default_band`]: groute::worklist::WorklistAlgorithm::default_band
#[cfg(feature = "mpi")]
fn default_band<A: groute::worklist::WorklistAlgorithm>(
    ctx: &groute::core::Context,
    ranks: usize,
    job: &RankJob<'_, impl Sized>,
) -> Option<u32> {
    use groute::worklist::{BandQuery, GraphShape};
    A::default_band(&BandQuery {
        graph: GraphShape::of(&job.graph.graph.csr),
        cuda: ctx.backend_kind() == groute::core::BackendKind::Cuda,
        devices: ranks * ctx.num_devices(),
        fused: job.options.fused,
        device_driven: false,
    })
}

/// Rank 0's sources and soft-priority band, on every rank (collective).
#[cfg(feature = "mpi")]
pub(super) fn rank_zero_settings(
    comm: &mut groute::dist::MpiComm,
    job: &RankJob<'_, impl Sized>,
) -> Result<(Vec<u32>, WorklistOptions), AnyError> {
    use groute::dist::RankComm;
    let mut words: Vec<u64> = vec![job.options.prio_delta.map_or(0, |d| u64::from(d) + 1)];
    words.extend(job.sources.iter().map(|&s| u64::from(s)));
    let words = comm.broadcast_from_root(&words)?;
    let prio_delta = match words.first().copied().unwrap_or(0) {
        0 => None,
        d => Some(u32::try_from(d - 1)?),
    };
    let sources = words[1..]
        .iter()
        .map(|&s| u32::try_from(s))
        .collect::<Result<_, _>>()?;
    Ok((
        sources,
        WorklistOptions {
            prio_delta,
            ..job.options.clone()
        },
    ))
}

/// Every rank's memory on rank 0 (`None` on the others; collective).
#[cfg(feature = "mpi")]
fn gather_memory(
    comm: &mut groute::dist::MpiComm,
    ctx: &groute::core::Context,
    graph: &RankGraph,
) -> Result<Option<Vec<super::report::RankMemoryReport>>, AnyError> {
    use groute::dist::RankComm;
    let offsets = graph.graph.csr.offsets();
    let held_arcs = offsets[graph.held.end as usize] - offsets[graph.held.start as usize];
    let usage = ctx.memory_usage();
    let mut words = vec![
        super::report::host_peak_bytes().unwrap_or(u64::MAX),
        u64::from(!graph.whole),
        held_arcs,
    ];
    words.extend(
        usage
            .iter()
            .flat_map(|u| [u.peak_bytes, u.peak_graph_bytes]),
    );
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let Some(all) = comm.gather_to_root(&bytes)? else {
        return Ok(None);
    };
    let reports = all
        .iter()
        .enumerate()
        .map(|(rank, bytes)| {
            let w: Vec<u64> = bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect();
            let devices = w.get(3..).unwrap_or_default();
            super::report::RankMemoryReport {
                rank,
                host_peak_bytes: w.first().copied().filter(|&b| b != u64::MAX),
                loaded_own_rows: w.get(1) == Some(&1),
                held_arcs: w.get(2).copied().unwrap_or(0),
                device_peak_bytes: devices.iter().step_by(2).copied().collect(),
                device_graph_bytes: devices.iter().skip(1).step_by(2).copied().collect(),
            }
        })
        .collect();
    Ok(Some(reports))
}

/// The backend of a rank run: `--backend` in a binary with the NCCL plane (auto: CUDA when a
/// GPU is usable), else the host backend (`--backend cuda` is then an error naming why).
#[cfg(feature = "mpi")]
fn rank_backend(run: &RunArgs) -> Result<groute::core::BackendChoice, AnyError> {
    use groute::core::BackendChoice;
    match run.backend_choice()? {
        BackendChoice::Cuda if !cfg!(feature = "nccl") => Err(
            "--backend cuda: this binary has no GPU data plane between ranks: build it with \
             `--features mpi,nccl`; pass --backend host or leave it out"
                .into(),
        ),
        _ if !cfg!(feature = "nccl") => Ok(BackendChoice::Host),
        asked => Ok(asked),
    }
}

/// The job of a traversal from one source (`--source`, or the default source; BFS levels,
/// SSSP distances: `u32` values, `UNREACHED` for vertices not reached), validated against
/// `reference`.
pub fn traversal_job<'a>(
    name: &'static str,
    run: &'a RunArgs,
    rank_graph: &'a RankGraph,
    graph_report: GraphReport,
    given_source: Option<u64>,
    validate: bool,
    reference: fn(&groute::graph::Csr, u32) -> Vec<u32>,
) -> Result<RankJob<'a, u32>, AnyError> {
    use groute::worklist::traversal::UNREACHED;
    let graph = &rank_graph.graph;
    let order = groute::graph::InputOrder::of(graph);
    let source_rank = rank_graph.source(&order, given_source)?;
    let source = order.vertex_of_rank(source_rank);
    let source_ext = order.external_of_rank(source_rank);
    let check = move |values: &[u32]| {
        let expected = reference(&graph.csr, source);
        let wrong = expected.iter().zip(values).filter(|(a, b)| a != b).count();
        if wrong == 0 && expected.len() == values.len() {
            Ok(())
        } else {
            Err(format!(
                "{wrong} of {} values differ from the sequential reference",
                expected.len()
            ))
        }
    };
    let write_order = order.clone();
    Ok(RankJob {
        name,
        run,
        graph: rank_graph,
        graph_report,
        sources: vec![source],
        options: WorklistOptions::default().for_graph(graph.num_vertices()),
        validate: validate.then(|| Box::new(check) as Validate<'a, u32>),
        write: Box::new(move |path, values| {
            super::write_values(
                path,
                &write_order.to_rank_order(values.to_vec()),
                &write_order,
            )
        }),
        stats: Box::new(move |values, median_ms| {
            let reached: Vec<u32> = (0..values.len() as u32)
                .filter(|&v| values[v as usize] != UNREACHED)
                .collect();
            let edges: u64 = reached.iter().map(|&v| graph.csr.out_degree(v)).sum();
            serde_json::json!({
                "source": source_ext,
                "reached": reached.len(),
                "max_value": reached.iter().map(|&v| values[v as usize]).max().unwrap_or(0),
                "edges_traversed": edges,
                "gteps": edges as f64 / (median_ms * 1e-3).max(1e-12) / 1e9,
            })
        }),
    })
}
