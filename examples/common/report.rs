//! The one JSON report every example writes (`--json [PATH]`), described by
//! `docs/report.schema.json`.

use std::path::Path;

use groute::core::Context;
use groute::graph::Graph;
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;

use super::AnyError;
use super::run_args::RunArgs;
use super::tuning;

/// One run's report: the same sections for every example.
#[derive(Serialize, Debug)]
pub struct Report {
    /// The example (`bfs`, `sssp`, `pagerank`, `cc`, `pbf`, ...).
    pub algorithm: &'static str,
    /// groute's version.
    pub version: &'static str,
    /// The arguments the run saw, `GROUTE_TUNING`'s words appended.
    pub command_line: Vec<String>,
    /// The input graph (`None` for examples without one).
    pub graph: Option<GraphReport>,
    /// The devices of the run.
    pub devices: Vec<DeviceReport>,
    /// What was asked for and what ran (`None` for examples that run no algorithm).
    pub execution: Option<ExecutionReport>,
    /// Where the time went.
    pub times: Times,
    /// `true` when the result equals the reference, `null` when not checked (a failed check
    /// ends the run with an error instead).
    pub validated: Option<bool>,
    /// Memory per device and the host's peak (filled by runs that have a context).
    pub memory: Option<MemoryReport>,
    /// Traffic between devices (filled by the runs whose executor counts it: the worklist
    /// runs: host-driven, or device-driven on one or two devices).
    pub comm: Option<CommReport>,
    /// The algorithm's own counters (rounds, items, ...).
    pub algorithm_stats: Value,
}

/// Memory of a run: every device's counted allocations and the host process's peak.
#[derive(Serialize, Debug)]
pub struct MemoryReport {
    /// One entry per (virtual) device of the context.
    pub devices: Vec<DeviceMemoryReport>,
    /// The process's peak resident set (`VmHWM` of `/proc/self/status`); `None` where the
    /// system does not say.
    pub host_peak_bytes: Option<u64>,
    /// Under mpirun, every rank's memory (this report's `devices` and `host_peak_bytes` are
    /// rank 0's); absent for one process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Vec<RankMemoryReport>>,
}

/// Traffic between devices, summed over them. Host-driven worklist runs count what they put
/// on the ring; device-driven ones (`WorklistStats::device_driven`: members storing into the
/// next device's inbox) what they store there, the same items on the same ring of devices.
#[derive(Serialize, Debug)]
pub struct CommReport {
    /// Bytes of the items put on the ring (remote updates and items passed on): items sent
    /// times the item's size. Device-driven: the items stored into the next device's inbox.
    pub bytes: u64,
    /// Segments (messages) put on the ring. Device-driven: the batches published into the
    /// next device's inbox (each advance of the inbox end a member released to it).
    pub messages: u64,
    /// Updates of other devices' vertices put on the ring, after combining per vertex (an
    /// update leaves only when it improves the sender's halo copy). Device-driven: the items
    /// sent on two devices (nothing is passed on there; runs on more report no traffic).
    pub remote_updates: u64,
    /// Arcs to other devices' vertices the rounds relaxed, before combining; `None` where
    /// the executor does not count them (the CUDA kernels, device-driven runs included: a
    /// count on every relaxed arc would cost the expansion time).
    pub cut_arcs_traversed: Option<u64>,
}

impl CommReport {
    /// The traffic of a worklist run whose items on the ring (or in the inboxes) are
    /// `item_bytes` bytes each; `None` where the run did not count its remote updates
    /// (`WorklistStats::counts_remote_updates`: device-driven runs on more than two devices).
    pub fn of(stats: &groute::worklist::WorklistStats, item_bytes: usize) -> Option<CommReport> {
        stats.counts_remote_updates().then(|| CommReport {
            bytes: stats.items_sent() * item_bytes as u64,
            messages: stats.segments_sent(),
            remote_updates: stats.remote_updates(),
            cut_arcs_traversed: stats.cut_arcs_traversed(),
        })
    }
}

/// One MPI rank's memory.
#[derive(Serialize, Debug)]
pub struct RankMemoryReport {
    /// The rank.
    pub rank: usize,
    /// Its peak resident set, as [`MemoryReport::host_peak_bytes`].
    pub host_peak_bytes: Option<u64>,
    /// Whether it loaded only its parts' rows (from a cache), not the whole graph.
    pub loaded_own_rows: bool,
    /// The arcs of the rows it holds for its parts.
    pub held_arcs: u64,
    /// Its devices' peaks, as [`DeviceMemoryReport::peak_bytes`].
    pub device_peak_bytes: Vec<u64>,
    /// Its devices' graph bytes, as [`DeviceMemoryReport::graph_bytes`].
    pub device_graph_bytes: Vec<u64>,
}

/// One device's memory, as its pool counted it (live buffers and blocks cached for reuse).
#[derive(Serialize, Debug)]
pub struct DeviceMemoryReport {
    /// The (virtual) device.
    pub device: usize,
    /// Bytes held when the report was made.
    pub current_bytes: u64,
    /// The most bytes held at once since the context was built.
    pub peak_bytes: u64,
    /// `--device-memory-limit`, if set.
    pub limit_bytes: Option<u64>,
    /// The most bytes of graph structure (offsets, arcs, weights, maps) the device held at
    /// once: its part of the graph.
    pub graph_bytes: u64,
}

/// The memory section for `ctx`: every device's counts, and the host's peak.
pub fn memory_of(ctx: &Context) -> MemoryReport {
    MemoryReport {
        devices: ctx
            .memory_usage()
            .into_iter()
            .map(|usage| DeviceMemoryReport {
                device: usage.device.0,
                current_bytes: usage.current_bytes,
                peak_bytes: usage.peak_bytes,
                limit_bytes: usage.limit_bytes,
                graph_bytes: usage.peak_graph_bytes,
            })
            .collect(),
        host_peak_bytes: host_peak_bytes(),
        ranks: None,
    }
}

/// `VmHWM` of `/proc/self/status` in bytes (Linux); `None` elsewhere.
pub fn host_peak_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The input graph.
#[derive(Serialize, Debug, Clone)]
pub struct GraphReport {
    /// Its name (the file's, or the generator's spec).
    pub name: String,
    /// Vertices.
    pub vertices: u64,
    /// Arcs (directed edges; an undirected edge counts twice).
    pub arcs: u64,
    /// [`checksum`] of its CSR.
    pub checksum: String,
}

impl GraphReport {
    /// The report of `graph` (its checksum computed here).
    pub fn of(graph: &Graph) -> GraphReport {
        GraphReport {
            name: graph.name.clone(),
            vertices: graph.num_vertices() as u64,
            arcs: graph.num_edges(),
            checksum: checksum(graph),
        }
    }
}

/// One device.
#[derive(Serialize, Debug)]
pub struct DeviceReport {
    /// Its rank in the run.
    pub index: usize,
    /// The device's name (`NVIDIA H200`, `host executor 0`).
    pub name: String,
    /// `cuda` or `host`.
    pub kind: String,
}

/// The devices of `ctx`.
pub fn devices_of(ctx: &Context) -> Vec<DeviceReport> {
    let kind = ctx.backend_kind().to_string();
    ctx.devices()
        .iter()
        .enumerate()
        .map(|(index, d)| DeviceReport {
            index,
            name: d.properties().name.clone(),
            kind: kind.clone(),
        })
        .collect()
}

/// What was asked for and what ran.
#[derive(Serialize, Debug)]
pub struct ExecutionReport {
    /// The backend that ran (`host`, `cuda`).
    pub backend: String,
    /// `--backend` as given.
    pub backend_requested: String,
    /// The mode that ran: `host-driven` or `device-driven`.
    pub mode: &'static str,
    /// `--execution` as given.
    pub mode_requested: &'static str,
    /// The engine that ran (what `auto` picked).
    pub engine: String,
    /// The partition method that ran (`None` where the algorithm partitions nothing).
    pub partition: Option<String>,
    /// The algorithm's settings and engine details.
    pub detail: Value,
}

impl ExecutionReport {
    /// The report for a run of `ctx` under `run`'s flags.
    pub fn new(
        ctx: &Context,
        run: &RunArgs,
        mode: &'static str,
        engine: impl Into<String>,
        partition: Option<String>,
        detail: Value,
    ) -> ExecutionReport {
        ExecutionReport {
            backend: ctx.backend_kind().to_string(),
            backend_requested: run.backend.clone(),
            mode,
            mode_requested: run.execution.name(),
            engine: engine.into(),
            partition,
            detail,
        }
    }
}

/// Where a run's time went, in milliseconds.
#[derive(Serialize, Debug, Default)]
pub struct Times {
    /// Loading or generating the input.
    pub load_ms: f64,
    /// Preparing the run: partitioning, staging, uploading (the solver's construction).
    pub stage_ms: f64,
    /// The algorithm by the solver's host clock, over the timed runs.
    pub run_ms: Option<Spread>,
    /// The algorithm by device events (max over devices), over the timed runs; `None` on
    /// the host backend.
    pub device_ms: Option<Spread>,
    /// The whole call per run by the host clock: reset, algorithm, result in host memory.
    pub full_run_ms: Option<Spread>,
}

/// Median, min and max of repeated measurements.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Spread {
    /// The median (the upper one of an even count).
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// How many runs.
    pub repeats: usize,
}

impl Spread {
    /// The spread of `values`; `None` when empty.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        Some(Spread {
            median: *v.get(v.len() / 2)?,
            min: *v.first()?,
            max: *v.last()?,
            repeats: v.len(),
        })
    }
}

impl Report {
    /// A report of `algorithm` with this run's version and command line, everything else
    /// empty.
    pub fn new(algorithm: &'static str) -> Report {
        Report {
            algorithm,
            version: env!("CARGO_PKG_VERSION"),
            command_line: tuning::command_line(),
            graph: None,
            devices: Vec::new(),
            execution: None,
            times: Times::default(),
            validated: None,
            memory: None,
            comm: None,
            algorithm_stats: Value::Object(Default::default()),
        }
    }

    /// A report of `algorithm` run on `ctx`: [`Report::new`] with the graph, the devices and
    /// their memory filled in.
    pub fn of_run(algorithm: &'static str, ctx: &Context, graph: Option<GraphReport>) -> Report {
        Report {
            graph,
            devices: devices_of(ctx),
            memory: Some(memory_of(ctx)),
            ..Report::new(algorithm)
        }
    }

    /// Writes the report where `--json` says: one line on stdout for `-` (so runs append to
    /// a JSON-lines file), else indented into the file.
    pub fn write(&self, json: &Path) -> Result<(), AnyError> {
        if json == Path::new("-") {
            println!("{}", serde_json::to_string(self)?);
        } else {
            let text = serde_json::to_string_pretty(self)?;
            std::fs::write(json, text + "\n")
                .map_err(|e| format!("cannot write --json {}: {e}", json.display()))?;
        }
        Ok(())
    }
}

/// Elements per piece of [`checksum`].
pub const CHECKSUM_PIECE: usize = 1 << 20;

/// FNV-1a (64-bit) of `bytes`, continuing from `hash`.
fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a of each piece of `CHECKSUM_PIECE` elements of `values` (little-endian bytes).
fn piece_hashes<T: Copy + Sync, const N: usize>(values: &[T], bytes: fn(T) -> [u8; N]) -> Vec<u64> {
    values
        .par_chunks(CHECKSUM_PIECE)
        .map(|piece| piece.iter().fold(FNV_OFFSET, |h, &x| fnv1a(h, &bytes(x))))
        .collect()
}

/// The graph's checksum, `fnv1a64-pieces:<16 hex digits>`: the CSR's offsets (u64), targets
/// (u32) and weights (u32, if any) cut into pieces of 2^20 elements, each piece's
/// little-endian bytes hashed with 64-bit FNV-1a (in parallel), and the pieces' hashes, in
/// order, hashed again as little-endian u64s.
pub fn checksum(graph: &Graph) -> String {
    let csr = &graph.csr;
    let mut pieces = piece_hashes(csr.offsets(), u64::to_le_bytes);
    pieces.extend(piece_hashes(csr.targets(), u32::to_le_bytes));
    if let Some(w) = csr.weights() {
        pieces.extend(piece_hashes(w, u32::to_le_bytes));
    }
    let all = pieces
        .iter()
        .fold(FNV_OFFSET, |h, p| fnv1a(h, &p.to_le_bytes()));
    format!("fnv1a64-pieces:{all:016x}")
}

/// Prints the human table's first lines: graph, devices, execution, times.
pub fn print_header(r: &Report) {
    if let Some(g) = &r.graph {
        println!(
            "graph       {} ({} vertices, {} arcs, {})",
            g.name, g.vertices, g.arcs, g.checksum
        );
    }
    if let Some(first) = r.devices.first() {
        println!(
            "devices     {} x {} ({})",
            r.devices.len(),
            first.name,
            first.kind
        );
    }
    if let Some(e) = &r.execution {
        let partition = e
            .partition
            .as_ref()
            .map_or(String::new(), |p| format!(", partition {p}"));
        println!(
            "execution   {} on {}: {}{partition} (asked: --execution {} --backend {})",
            e.mode, e.backend, e.engine, e.mode_requested, e.backend_requested
        );
    }
    if let Some(t) = &r.times.run_ms {
        println!(
            "time        {:.3} ms (median of {}; min {:.3}, max {:.3})",
            t.median, t.repeats, t.min, t.max
        );
    }
    if let Some(d) = &r.times.device_ms {
        println!(
            "device      {:.3} ms (algorithm by device events; min {:.3}, max {:.3})",
            d.median, d.min, d.max
        );
    }
}

/// Prints a worklist traversal's speed, reach and work lines from its algorithm stats `st`:
/// `reach` says how far it went (`depth 5`), `items` what its count of work items is called.
pub fn print_traversal_work(st: &Value, reach: &str, items: &str) {
    println!(
        "speed       {:.3} GTEPS",
        st["gteps"].as_f64().unwrap_or(0.0)
    );
    println!(
        "reached     {} vertices, {reach}, {} edges traversed",
        st["reached"], st["edges_traversed"]
    );
    println!(
        "work        {} {items}, {} sent over the ring, {} rounds",
        st["work_items"], st["items_sent"], st["rounds"]
    );
}

/// Prints a traversal's soft-priority line from its algorithm stats `st`, where `prio_delta`
/// (the band width) is set.
pub fn print_priority_bands(st: &Value, prio_delta: u32) {
    if prio_delta > 0 {
        println!(
            "priority    bands of {prio_delta}: {} items deferred, {} epochs",
            st["deferred"], st["epochs"]
        );
    }
}

/// Prints the human table's last lines: load and stage times, validation.
pub fn print_footer(r: &Report) {
    println!(
        "load        {:.1} ms, stage {:.1} ms",
        r.times.load_ms, r.times.stage_ms
    );
    match r.validated {
        Some(true) => println!("validated   OK (checked against the sequential reference)"),
        Some(false) => println!("validated   FAILED"),
        None => println!("validated   not checked (pass --validate)"),
    }
}
