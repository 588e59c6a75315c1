//! [`CcRanks`]: connected components of one process's share of a run spanning processes
//! (the ranks of an MPI job), hook and compress on every device, then rounds of label
//! exchange between the processes until no process's labels move.
//!
//! ```text
//!  process r, device d: hook the edges of its rows -> compress      (parent[] of n vertices)
//!  process r: devices 1.. --parent[]--> device 0: merge, compress   (the process's forest)
//!  repeat on device 0 of every process:
//!      all-gather every process's labels of the vertices it owns   (n words in all)
//!      merge the others' as edges (v, label[v]) -> compress
//!      take its own vertices' labels; stop when no process's moved  (a sum of one word)
//! ```
//!
//! **Why it is exact.** Each device hooks the arcs of its rows, except that of the two arcs of
//! an edge whose ends are owned by the same process only the one from the higher end is
//! hooked (the process merges its devices before anything leaves it); an arc between two
//! processes is hooked at both ends (a directed graph's in-arcs from other processes come
//! from its transpose). A process's labels only ever fall. When no process's labels moved in
//! a round, every process has merged every other's labels `g` and for every arc `(u, v)`
//! between processes, hooked at both owners, `g[u] = root(u) = root(v) = g[v]` at both, so
//! the labels agree across every arc: they are constant on each component, no larger than
//! any of its vertices, and a vertex of it: its minimum vertex, on every process.
//!
//! **Two processes need one round.** After the first round, process A's forest holds its own
//! arcs (its edges within A and every arc between A and B, all in A's rows) and, for each
//! vertex `x` of B, the edge `(x, root_B(x))`; an edge `(x, y)` within B has `root_B(x) =
//! root_B(y)`, so A's forest joins every edge of the graph, and its compressed labels are
//! final. With one or two processes the run ends there, with no check and no wait of the
//! host. With more, an arc between two other processes reaches a process only through
//! their labels, and rounds go on until one leaves every process's labels as they were
//! (a sum of one word a round).
//!
//! **What it costs.** Edges are expanded from the rows once, at [`CcRanks::new`], and stay
//! on the devices (8 bytes per hooked arc). A round moves every owned label once between
//! the processes.
//!
//! Everything here is collective: every process makes its solver and runs it in the same
//! order, as for [`groute_bfs`'s `BfsRanks`](https://docs.rs/groute-bfs). The checks of the
//! graph and the partition, and the uploads, are agreed on before any run, so that a process
//! that cannot take part fails every process's [`CcRanks::new`].

use std::ops::Range;
use std::time::{Duration, Instant};

use groute_core::{Buffer, Context, DeviceTimer, Error};
use groute_graph::{Csr, HeldRows, Partition};
use groute_worklist::{DeviceParts, RankCollectives, all_ready, sum_with_shape};
use rayon::prelude::*;

use crate::kernels::Kernels;
use crate::{CcError, Edge, component_stats};

/// The run, as errors name it.
const RUN: &str = "the connected components across processes";

/// Rows per task when expanding rows into edges.
const ROWS_PER_TASK: usize = 1 << 14;

/// Connected components of one process's share of a run spanning processes: the edges of
/// its rows uploaded once, each [`CcRanks::run`] labelling every vertex.
pub struct CcRanks {
    context: Context,
    devices: Vec<DeviceHooks>,
    exchange: Exchange,
    /// Every process's owned vertices, in process order.
    owned: Vec<Range<u32>>,
    rank: usize,
    edges_hooked: u64,
}

/// What one device hooks, and its parent array.
struct DeviceHooks {
    kernels: Kernels,
    edges: Buffer<Edge>,
    parent: Buffer<u32>,
}

/// Device 0's buffers for merging the process's devices and exchanging labels.
struct Exchange {
    /// Another device's parent array, copied here to be merged (several devices only).
    staging: Option<Buffer<u32>>,
    /// This process's owned labels, as last sent (padded to the longest process's share).
    mine: Buffer<u32>,
    /// Every process's `mine`, in process order.
    all: Buffer<u32>,
    /// Set to 1 when `mine` moved.
    changed: Buffer<u32>,
}

impl std::fmt::Debug for CcRanks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CcRanks")
            .field("devices", &self.devices.len())
            .field("owned", &self.owned)
            .field("rank", &self.rank)
            .field("edges_hooked", &self.edges_hooked)
            .finish_non_exhaustive()
    }
}

/// Labels and statistics of a [`CcRanks::run`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcRanksResult {
    /// `labels[v]`: the smallest vertex id of `v`'s component, for every vertex, on every
    /// process.
    pub labels: Vec<u32>,
    /// Number of components.
    pub components: usize,
    /// Vertices in the largest component.
    pub largest_component: usize,
    /// Measurements.
    pub stats: CcRanksStats,
}

/// Measurements of a [`CcRanks::run`] (times of this process; counts over every process).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CcRanksStats {
    /// Host clock from the start of the hooks to the final labels on device 0.
    pub elapsed: Duration,
    /// The same span on the devices (CUDA timing events; max over this process's devices);
    /// `None` on the host backend.
    pub device_time: Option<Duration>,
    /// Rounds of label exchange (with more than two processes, the last one confirms that
    /// nothing moved).
    pub rounds: u64,
    /// Edges hooked by every device of every process.
    pub edges_hooked: u64,
    /// Bytes of labels that crossed between processes (each process receives every other's
    /// share once a round).
    pub bytes_between_ranks: u64,
}

impl CcRanks {
    /// Expands this process's rows into the edges its devices hook and uploads them
    /// (collective). Process `r`'s devices hold parts `r * devices..` of `partition`; `rows`
    /// must hold their rows. A directed graph's in-arcs from other processes come from its
    /// transpose, which a process holds only when it holds the whole graph: one holding only
    /// its rows of a directed graph is an error naming the fix.
    pub fn new(
        context: &Context,
        (rows, partition): (&HeldRows<'_>, &Partition),
        collectives: &mut dyn RankCollectives,
    ) -> Result<Self, CcError> {
        let (rank, ranks) = (collectives.rank(), collectives.ranks());
        let devices = context.num_devices();
        let n = rows.num_vertices();
        let local = (|| -> Result<Vec<Vec<Edge>>, CcError> {
            let (_, transpose) = DeviceParts::check_process(
                context,
                (rows, partition),
                (rank, ranks),
                "connected components across processes need every arc at both ends: give a \
                 symmetric graph, or let every process load the whole graph",
            )?;
            let owned = partition.range_of_parts(rank * devices..(rank + 1) * devices);
            (0..devices)
                .map(|d| {
                    let part = partition.range(rank * devices + d);
                    device_edges(rows.csr(), transpose.as_ref(), part, owned.clone())
                })
                .collect()
        })();
        let shape = [
            ("devices per process", devices as u64),
            ("vertices", n as u64),
            ("parts", partition.num_parts() as u64),
            ("partition digest", u64::from(partition.digest())),
        ];
        let hooked = local
            .as_ref()
            .map_or(0, |edges| edges.iter().map(|e| e.len() as u64).sum());
        let agreed = sum_with_shape(collectives, local.is_err(), &[hooked], &shape, RUN);
        let edges = local?;
        let (sum, same_shape) = agreed?;
        let owned: Vec<Range<u32>> = (0..ranks)
            .map(|r| partition.range_of_parts(r * devices..(r + 1) * devices))
            .collect();
        let uploaded = same_shape
            .map_err(CcError::from)
            .and_then(|()| upload(context, edges, &owned));
        let ready = all_ready(collectives, uploaded.is_err(), RUN);
        let (devices, exchange) = uploaded?;
        ready?;
        Ok(CcRanks {
            context: context.clone(),
            devices,
            exchange,
            owned,
            rank,
            edges_hooked: sum[0],
        })
    }

    /// Labels every vertex with the smallest vertex of its component (collective): the
    /// labels on every process, the statistics (times of this process).
    pub fn run(&mut self, collectives: &mut dyn RankCollectives) -> Result<CcRanksResult, CcError> {
        let ranks = self.owned.len();
        let started = Instant::now();
        let devices = self.context.devices();
        for (device, hooks) in devices.iter().zip(&self.devices) {
            hooks.kernels.init(device.stream(), &hooks.parent)?;
        }
        let timer = DeviceTimer::start(&self.context)?;
        for (device, hooks) in devices.iter().zip(&self.devices) {
            let stream = device.stream();
            hooks.kernels.hook(stream, &hooks.edges, &hooks.parent)?;
            hooks.kernels.compress(stream, &hooks.parent)?;
        }
        let (first, others) = self.devices.split_at(1);
        let first = &first[0];
        let stream = devices[0].stream();
        if let Some(staging) = &self.exchange.staging {
            for (device, hooks) in devices[1..].iter().zip(others) {
                stream.wait(&device.stream().record()?)?;
                stream.copy(staging, &hooks.parent)?;
                first.kernels.merge(stream, 0, staging, &first.parent)?;
            }
            first.kernels.compress(stream, &first.parent)?;
        }
        let Exchange {
            mine, all, changed, ..
        } = &self.exchange;
        let own = &self.owned[self.rank];
        let share = mine.slice(..own.len())?;
        first
            .kernels
            .take_slice(stream, (&first.parent, own.start as usize), &share, changed)?;
        let mut rounds = 0u64;
        loop {
            rounds += 1;
            collectives.all_gather(mine, all, stream)?;
            for (r, range) in self.owned.iter().enumerate() {
                if r != self.rank && !range.is_empty() {
                    let at = r * mine.len();
                    let theirs = all.slice(at..at + range.len())?;
                    first
                        .kernels
                        .merge(stream, range.start as usize, &theirs, &first.parent)?;
                }
            }
            first.kernels.compress(stream, &first.parent)?;
            if ranks <= 2 {
                // Final after one round (see the module's docs): no check, no host wait.
                break;
            }
            stream.fill(changed, 0u32)?;
            first.kernels.take_slice(
                stream,
                (&first.parent, own.start as usize),
                &share,
                changed,
            )?;
            let moved = devices[0].download(changed)?[0] != 0;
            if collectives.sum(&[u64::from(moved)])?[0] == 0 {
                break;
            }
        }
        let device_time = timer.stop()?;
        let elapsed = started.elapsed();
        let labels = devices[0].download(&first.parent)?;
        let (components, largest_component) = component_stats(&labels);
        Ok(CcRanksResult {
            labels,
            components,
            largest_component,
            stats: CcRanksStats {
                elapsed,
                device_time,
                rounds,
                edges_hooked: self.edges_hooked,
                bytes_between_ranks: rounds
                    * (ranks * ranks.saturating_sub(1) * mine.len() * 4) as u64,
            },
        })
    }
}

/// The edges that the device owning `part` hooks: the arcs of its rows, except that an
/// arc to a vertex of `owned` (this process's) is hooked only from its higher end (its
/// reverse is in the other end's rows) unless the graph is directed (`transpose` given),
/// whose in-arcs from other processes are hooked too. Self-loops are left out.
fn device_edges(
    csr: &Csr,
    transpose: Option<&Csr>,
    part: Range<u32>,
    owned: Range<u32>,
) -> Result<Vec<Edge>, CcError> {
    let directed = transpose.is_some();
    let keep_out = |u: u32, v: u32| v != u && (directed || v < u || !owned.contains(&v));
    let keep_in = |u: u32, w: u32| w != u && !owned.contains(&w);
    let rows: Vec<Range<u32>> = part
        .clone()
        .step_by(ROWS_PER_TASK)
        .map(|s| s..s.saturating_add(ROWS_PER_TASK as u32).min(part.end))
        .collect();
    let count = |block: &Range<u32>| -> usize {
        block
            .clone()
            .map(|u| {
                let out = csr.neighbors(u).iter().filter(|&&v| keep_out(u, v)).count();
                let inn = transpose.map_or(0, |t| {
                    t.neighbors(u).iter().filter(|&&w| keep_in(u, w)).count()
                });
                out + inn
            })
            .sum()
    };
    let counts: Vec<usize> = rows.par_iter().map(count).collect();
    let total: usize = counts.iter().sum();
    let mut edges: Vec<Edge> = bytemuck::allocation::try_zeroed_vec(total).map_err(|()| {
        CcError::Core(Error::OutOfMemory {
            bytes: total.saturating_mul(std::mem::size_of::<Edge>()),
            location: "host memory (the edges of this process's rows)".into(),
            source: None,
        })
    })?;
    let mut slices = Vec::with_capacity(rows.len());
    let mut rest = edges.as_mut_slice();
    for &c in &counts {
        let (head, tail) = rest.split_at_mut(c);
        slices.push(head);
        rest = tail;
    }
    rows.par_iter().zip(slices).for_each(|(block, out)| {
        let mut k = 0;
        for u in block.clone() {
            let out_arcs = csr.neighbors(u).iter().filter(|&&v| keep_out(u, v));
            let in_arcs = transpose
                .map(|t| t.neighbors(u))
                .unwrap_or_default()
                .iter()
                .filter(|&&w| keep_in(u, w));
            for &v in out_arcs.chain(in_arcs) {
                out[k] = Edge::new(u, v);
                k += 1;
            }
        }
    });
    Ok(edges)
}

/// Uploads each device's edges and allocates the run's arrays.
fn upload(
    context: &Context,
    edges: Vec<Vec<Edge>>,
    owned: &[Range<u32>],
) -> Result<(Vec<DeviceHooks>, Exchange), CcError> {
    let n = owned.last().map_or(0, |r| r.end as usize);
    let share = owned.iter().map(|r| r.len()).max().unwrap_or(0);
    let mut hooks = Vec::with_capacity(edges.len());
    for (device, edges) in context.devices().iter().zip(edges) {
        hooks.push(DeviceHooks {
            kernels: Kernels::for_stream(device.stream())?,
            edges: device.upload_graph(&edges)?,
            parent: device.alloc(n)?,
        });
    }
    let device = &context.devices()[0];
    let stream = device.stream();
    let mine = device.alloc::<u32>(share.max(1))?;
    stream.fill(&mine, 0u32)?;
    let all = device.alloc::<u32>(mine.len() * owned.len())?;
    let changed = device.alloc::<u32>(1)?;
    let staging = if hooks.len() > 1 {
        Some(device.alloc::<u32>(n)?)
    } else {
        None
    };
    stream.synchronize()?;
    Ok((
        hooks,
        Exchange {
            staging,
            mine,
            all,
            changed,
        },
    ))
}
