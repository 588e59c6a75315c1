//! [`CcRanks`]: connected components of one process's share of a run spanning processes
//! (the ranks of an MPI job): link (or hook and compress) on every device, then the
//! processes' forests meet on device 0 of every process.
//!
//! ```text
//!  process r, device d: link its rows (or hook their edges, compress)  (parent[] of n)
//!  process r: devices 1.. --parent[]--> device 0: merge (compress: hooked edges, or
//!             label rounds to follow)                             (the process's forest)
//!  2 processes: all-gather the parent arrays; merge the other's as edges (v, parent[v]),
//!               compress: final
//!  more: repeat  all-gather the labels of the vertices each owns   (n words in all)
//!                merge the others' as edges (v, label[v]), compress
//!                take its own vertices' labels; stop when no process's moved (a sum)
//! ```
//!
//! **One or two processes holding a symmetric graph** of at least
//! [`CcStorage::DENSE_DEGREE`](crate::CcStorage::DENSE_DEGREE) arcs per vertex (the graphs on which
//! one process keeps the rows on its devices) link their devices' rows as one process does
//! ([`DeviceRows`](crate::DeviceRows): each row's arc 0 as its parent where that is lower, the
//! first arcs of every row, then the rest of the rows outside the anchor's tree), around one anchor
//! that every process agrees on (the vertex of largest degree, from a sum of one word per process):
//! most arcs of a power-law graph are skipped, and every arc skipped is linked from its other end
//! or joins what the anchor joins in every forest. **Two processes holding a sparser graph** hook
//! each edge once, from one of its ends chosen by a hash of the pair so that the edges between the
//! processes are split evenly (a directed graph's every arc, at its tail), lower ends first made
//! their roots' parents as one process's stream does. Either way, merging the other's whole parent
//! array hooks, for each vertex, an edge to its parent in the other's forest (its root, where that
//! forest was compressed), which joins everything the other's links join: the union of the two
//! forests, the components of the whole graph. One gather of `4 n` bytes per process, no host
//! wait.
//!
//! **More processes** would gather `(R - 1) 4 n` bytes each that way; they exchange only the
//! labels of the vertices each owns, in rounds. An arc between two processes is then hooked
//! at both ends (a directed graph's in-arcs from other processes come from its transpose).
//! A process's labels only ever fall. When no process's labels moved in a round, every
//! process has merged every other's labels `g` and, for every arc `(u, v)` between two
//! processes, hooked at both owners, `g[u] = root(u) = root(v) = g[v]` at both: the labels
//! agree across every arc, so they are constant on each component, no larger than any of
//! its vertices, and a vertex of it: its minimum vertex, on every process. An arc between
//! two other processes reaches a process only through their labels, a round at a time.
//!
//! Rows are uploaded (or edges expanded from them) once, at [`CcRanks::new`], and stay on the
//! devices: the rows as one process holds them, or 8 bytes per hooked arc, each listed from
//! its lower end and in order of it, as one process stages its edges: the hook's warps then
//! find a hub's root once for a run of its edges.
//!
//! Everything here is collective: every process makes its solver and runs it in the same
//! order, as for [`groute_bfs`'s `BfsRanks`](https://docs.rs/groute-bfs). The checks of the
//! graph and the partition, and the uploads, are agreed on before any run, so that a process
//! that cannot take part fails every process's [`CcRanks::new`]. In a run, a process that
//! fails to enqueue its forest, or fails between two collectives, tells the others in the
//! next sum, and every process returns the error at the same step. An error inside a
//! collective itself (NCCL, MPI), or a fault of a CUDA device (its stream stops, so its part
//! of the next NCCL gather never runs and the others wait in theirs), can leave the others
//! waiting, so a job ends on it (the example aborts the MPI job).

mod edges;

use std::ops::Range;
use std::time::{Duration, Instant};

use groute_core::{Buffer, Context, Device, DeviceTimer, Event};
use groute_graph::{HeldRows, Partition};
use groute_worklist::{
    DeviceParts, RankCollectives, all_ready, partition_shape, peers_failed, process_ranges,
    sum_with_shape,
};

use crate::device_rows::{RowsLinking, RowsPart, largest_degree};
use crate::kernels::Kernels;
use crate::{CcError, CcStorage, Edge, component_stats};
use edges::device_edges;

/// The run, as errors name it.
const RUN: &str = "the connected components across processes";

/// Connected components of one process's share of a run spanning processes: the edges of
/// its rows uploaded once, each [`CcRanks::run`] labelling every vertex.
pub struct CcRanks {
    context: Context,
    devices: Vec<DeviceHooks>,
    /// Another device's parent array, copied to device 0 to be merged (several devices).
    staging: Option<Buffer<u32>>,
    exchange: Exchange,
    /// Every process's owned vertices, in process order.
    owned: Vec<Range<u32>>,
    rank: usize,
    /// The vertex whose tree's rows the devices skip, where they link rows (every process
    /// agreed on it).
    anchor: Option<u32>,
}

/// What one device links (its rows or their edges), and its parent array.
struct DeviceHooks {
    kernels: Kernels,
    hooks: Hooks,
    parent: Buffer<u32>,
}

/// What a device links: its rows, by sampling first (one or two processes holding a symmetric
/// graph), or the edges expanded from them.
enum Hooks {
    /// The device's rows, linked as [`DeviceRows`](crate::DeviceRows) links them, around the
    /// anchor every process agreed on.
    Rows(RowsPart),
    /// The edges the device hooks ([`device_edges`]).
    Edges(Buffer<Edge>),
}

/// How the processes' forests meet, on device 0.
enum Exchange {
    /// Two processes: each gathers the other's whole parent array once and merges it (the
    /// union of two forests), so each edge is hooked once, by either process.
    Forests {
        /// Both processes' parent arrays, in process order.
        all: Buffer<u32>,
    },
    /// More processes: rounds of gathering the labels each owns, until none moves (each arc
    /// between two processes hooked at both ends).
    Labels {
        /// This process's owned labels, as last sent (padded to the longest share).
        mine: Buffer<u32>,
        /// Every process's `mine`, in process order.
        all: Buffer<u32>,
        /// Set to 1 when `mine` moved.
        changed: Buffer<u32>,
    },
}

impl Exchange {
    /// One process's words in the gathered buffer.
    fn share_len(&self, n: usize) -> usize {
        match self {
            Exchange::Forests { .. } => n,
            Exchange::Labels { mine, .. } => mine.len(),
        }
    }
}

impl std::fmt::Debug for CcRanks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CcRanks")
            .field("devices", &self.devices.len())
            .field("owned", &self.owned)
            .field("rank", &self.rank)
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
    /// Host clock from the start of the run (every process has started it) to the labels
    /// final on device 0, before they are downloaded.
    pub elapsed: Duration,
    /// The same span on the devices (CUDA timing events; max over this process's devices);
    /// `None` on the host backend.
    pub device_time: Option<Duration>,
    /// Each process's time on its device 0 (CUDA timing events) from the start to its forest
    /// being ready for the exchange (its hooks, and with several devices their merge), in
    /// process order: how evenly the hooks are spread; `None` on the host backend.
    pub local_times: Option<Vec<Duration>>,
    /// Rounds of exchange between the processes: 1 for one or two processes (their
    /// forests); with more, rounds of labels, the last one confirming that nothing moved.
    pub rounds: u64,
    /// Edges hooked (arcs linked, where the devices link their rows by sampling: a count
    /// that varies a little from run to run) by every device of every process.
    pub edges_hooked: u64,
    /// Edges hooked by each process's devices, in process order.
    pub edges_per_process: Vec<u64>,
    /// Bytes that crossed between processes: each process receives every other's share once
    /// a round (two processes: the whole parent array; more: the owned labels, every share
    /// padded to the longest, as the gather moves them).
    pub bytes_between_ranks: u64,
}

impl CcRanks {
    /// Uploads this process's rows to its devices, or the edges expanded from them (see the
    /// module docs for which), and agrees on the anchor (collective). Process `r`'s devices
    /// hold parts `r * devices..` of `partition`; `rows` must hold their rows. A directed
    /// graph's in-arcs from other processes come from its transpose, which a process holds only
    /// when it holds the whole graph: one holding only its rows of a directed graph is an error
    /// naming the fix.
    pub fn new(
        context: &Context,
        (rows, partition): (&HeldRows<'_>, &Partition),
        collectives: &mut dyn RankCollectives,
    ) -> Result<Self, CcError> {
        let (rank, ranks) = (collectives.rank(), collectives.ranks());
        let devices = context.num_devices();
        let n = rows.num_vertices();
        // Label rounds (more than two processes) hook every arc between processes at both
        // ends: a directed graph's in-arcs come from its transpose.
        let local = DeviceParts::check_process(
            context,
            (rows, partition),
            (rank, ranks),
            (ranks > 2).then_some(
                "connected components across more than two processes need every arc at both \
                 ends: give a symmetric graph, or let every process load the whole graph",
            ),
        );
        let shape = partition_shape(devices, n, partition);
        let agreed = sum_with_shape(collectives, local.is_err(), &[], &shape, RUN);
        let (_, transpose) = local?;
        let directed = transpose.is_some() || !rows.is_symmetric();
        let (_, same_shape) = agreed?;
        // Every process learns of a different shape before it hooks anything.
        let ready = all_ready(collectives, same_shape.is_err(), RUN);
        same_shape?;
        ready?;
        let owned = process_ranges(partition, devices, ranks);
        let mine = owned[rank].clone();
        // Each process's largest-degree row in a word of its own, and its arcs in a word they
        // all add to: every process learns the anchor (the largest row of all) and the arcs.
        let mut words = vec![0u64; ranks + 1];
        words[rank] = anchor_word(largest_degree(rows.csr().offsets(), mine.clone()));
        words[ranks] =
            rows.csr().offsets()[mine.end as usize] - rows.csr().offsets()[mine.start as usize];
        let (sum, _) = sum_with_shape(collectives, false, &words, &[], RUN)?;
        let anchor = sum[..ranks].iter().copied().max().and_then(anchor_of_word);
        // One or two processes holding a symmetric graph dense enough link their rows by
        // sampling first, around the anchor (as CcStorage::Auto picks in one process); label
        // rounds need every arc between processes at both ends.
        let sampled = ranks <= 2
            && !directed
            && CcStorage::Auto.resolve(n, sum[ranks]) == CcStorage::DeviceRows;
        let edges: Result<Vec<Vec<Edge>>, CcError> = if sampled {
            Ok(Vec::new())
        } else {
            (0..devices)
                .map(|d| {
                    let part = partition.range(rank * devices + d);
                    device_edges(
                        (rows.csr(), transpose.as_ref(), directed),
                        part,
                        mine.clone(),
                        ranks > 2,
                    )
                })
                .collect()
        };
        let uploaded = edges.and_then(|edges| {
            let mut edges = edges.into_iter();
            upload(context, &owned, |d, device| {
                Ok(if sampled {
                    let part = partition.range(rank * devices + d);
                    Hooks::Rows(RowsPart::upload(device, rows.csr(), part)?)
                } else {
                    let edges = edges.next().unwrap_or_default();
                    Hooks::Edges(device.upload_graph(&edges)?)
                })
            })
        });
        let ready = all_ready(collectives, uploaded.is_err(), RUN);
        let (devices, staging, exchange) = uploaded?;
        ready?;
        Ok(CcRanks {
            context: context.clone(),
            devices,
            staging,
            exchange,
            owned,
            rank,
            anchor: anchor.filter(|_| sampled),
        })
    }

    /// Labels every vertex with the smallest vertex of its component (collective): the
    /// labels on every process, the statistics (times of this process, from the moment every
    /// process has started the run).
    pub fn run(&mut self, collectives: &mut dyn RankCollectives) -> Result<CcRanksResult, CcError> {
        let ranks = self.owned.len();
        // The processes start together (a sum of one word), so that one that comes late to
        // the gather does not add its lateness to the others' clocks.
        collectives.sum(&[0])?;
        let started = Instant::now();
        // Every process has enqueued its forest (or failed to) before any gathers: a process
        // that failed leaves none of the others waiting in the gather.
        let local = self.local_forest();
        let ready = all_ready(collectives, local.is_err(), RUN);
        let (timer, local_span) = local?;
        ready?;
        let first = &self.devices[0];
        let stream = self.context.devices()[0].stream();
        let rounds = match &self.exchange {
            Exchange::Forests { all } => {
                let n = first.parent.len();
                let merged = collectives
                    .all_gather(&first.parent, all, stream)
                    .map_err(CcError::from)
                    .and_then(|()| {
                        (0..ranks).filter(|&r| r != self.rank).try_for_each(|r| {
                            let theirs = all.slice(r * n..(r + 1) * n)?;
                            first.kernels.merge(stream, 0, &theirs, &first.parent)
                        })
                    })
                    .and_then(|()| first.kernels.compress(stream, &first.parent));
                // Folded into the last sum below: no collective is left between.
                merged.map(|()| 1)
            }
            Exchange::Labels { mine, all, changed } => {
                Ok(self.label_rounds(collectives, (mine, all, changed))?)
            }
        };
        let timed = rounds.and_then(|rounds| {
            let device_time = timer.stop()?;
            let elapsed = started.elapsed();
            let local = local_span
                .map(|(start, end)| Event::elapsed(&start, &end))
                .transpose()?;
            let labels = self.context.devices()[0].download(&first.parent)?;
            Ok((
                rounds,
                device_time,
                elapsed,
                local,
                labels,
                self.linked_here()?,
            ))
        });
        // Every process takes part in this sum, timed or not, failed or not (the collectives
        // must not depend on a process's backend or luck), with its labels downloaded (a
        // device that failed may only tell then): each one's time until its forest was
        // ready, in its own word, then a word counting the processes that failed, then each
        // one's arcs linked, in its own word.
        let mut words = vec![0u64; 2 * ranks + 1];
        if let Ok((_, _, _, local, _, linked)) = &timed {
            if let Some(t) = local {
                words[self.rank] = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
            }
            words[ranks + 1 + self.rank] = *linked;
        }
        words[ranks] = u64::from(timed.is_err());
        let sums = collectives.sum(&words)?;
        let (rounds, device_time, elapsed, local, labels, _) = timed?;
        if sums[ranks] > 0 {
            return Err(peers_failed(RUN, sums[ranks], collectives).into());
        }
        let local_times = local.map(|_| {
            sums[..ranks]
                .iter()
                .map(|&t| Duration::from_nanos(t))
                .collect()
        });
        let (components, largest_component) = component_stats(&labels);
        Ok(CcRanksResult {
            labels,
            components,
            largest_component,
            stats: CcRanksStats {
                elapsed,
                device_time,
                local_times,
                rounds,
                edges_hooked: sums[ranks + 1..].iter().sum(),
                edges_per_process: sums[ranks + 1..].to_vec(),
                bytes_between_ranks: rounds
                    * (ranks * ranks.saturating_sub(1) * 4) as u64
                    * self.exchange.share_len(first.parent.len()) as u64,
            },
        })
    }

    /// Enqueues this process's forest on its devices: every device's links (or hooks and
    /// compress), the other devices' arrays merged into device 0's, and with label rounds the owned
    /// labels taken; the run's timer and device 0's span until the forest is ready (CUDA).
    fn local_forest(&self) -> Result<(DeviceTimer, Option<(Event, Event)>), CcError> {
        let devices = self.context.devices();
        for (device, hooks) in devices.iter().zip(&self.devices) {
            hooks.kernels.init(device.stream(), &hooks.parent)?;
        }
        let timer = DeviceTimer::start(&self.context)?;
        let stream = devices[0].stream();
        let timing = !stream.is_host();
        let local_start = timing
            .then(|| devices[0].record_timing(stream))
            .transpose()?;
        for (device, hooks) in devices.iter().zip(&self.devices) {
            let stream = device.stream();
            match &hooks.hooks {
                // A forest of linked rows merges as it is (see below).
                Hooks::Rows(part) => {
                    let linking = RowsLinking::Sampled {
                        anchor: self.anchor,
                    };
                    part.enqueue_link(&hooks.kernels, stream, &hooks.parent, linking)?
                }
                // Hooked edges' forests, deep on sparse graphs, merge faster compressed.
                Hooks::Edges(edges) => {
                    hooks.kernels.link_edges(stream, edges, &hooks.parent)?;
                    hooks.kernels.compress(stream, &hooks.parent)?;
                }
            }
        }
        let (first, others) = self.devices.split_at(1);
        let first = &first[0];
        if let Some(staging) = &self.staging {
            for (device, hooks) in devices[1..].iter().zip(others) {
                stream.wait(&device.stream().record()?)?;
                stream.copy(staging, &hooks.parent)?;
                first.kernels.merge(stream, 0, staging, &first.parent)?;
            }
        }
        // Device 0's forest is compressed before the exchange where hooked edges' forests
        // merged into it, and where label rounds take its owned labels from it (those come
        // with hooked edges only, more than two processes never linking rows: a guard); a
        // forest of linked rows goes to the gather as it is, since the merges there link any
        // forest's entries and the final compress follows them.
        let edges_hooked = self
            .devices
            .iter()
            .any(|h| matches!(h.hooks, Hooks::Edges(_)));
        let compress_now = if edges_hooked {
            self.staging.is_some()
        } else {
            matches!(self.exchange, Exchange::Labels { .. })
        };
        if compress_now {
            first.kernels.compress(stream, &first.parent)?;
        }
        let local_end = timing
            .then(|| devices[0].record_timing(stream))
            .transpose()?;
        if let Exchange::Labels { mine, changed, .. } = &self.exchange {
            self.take_own_labels(mine, changed)?;
        }
        Ok((timer, local_start.zip(local_end)))
    }

    /// The arcs this process's devices linked in the run just done (all the edges they hold,
    /// where they hook edges).
    fn linked_here(&self) -> Result<u64, CcError> {
        let mut linked = 0;
        for (device, hooks) in self.context.devices().iter().zip(&self.devices) {
            linked += match &hooks.hooks {
                Hooks::Rows(part) => part.linked(device)?,
                Hooks::Edges(edges) => edges.len() as u64,
            };
        }
        Ok(linked)
    }

    /// Enqueues the take of this process's owned labels into `mine` on device 0, setting
    /// `changed` when one moved.
    fn take_own_labels(&self, mine: &Buffer<u32>, changed: &Buffer<u32>) -> Result<(), CcError> {
        let first = &self.devices[0];
        let own = &self.owned[self.rank];
        let share = mine.slice(..own.len())?;
        let stream = self.context.devices()[0].stream();
        first
            .kernels
            .take_slice(stream, (&first.parent, own.start as usize), &share, changed)
    }

    /// Rounds of label exchange on device 0 (more than two processes) until no process's
    /// labels moved: how many. Each round's sum carries whether any process failed, so that
    /// all stop on the same round.
    fn label_rounds(
        &self,
        collectives: &mut dyn RankCollectives,
        (mine, all, changed): (&Buffer<u32>, &Buffer<u32>, &Buffer<u32>),
    ) -> Result<u64, CcError> {
        let first = &self.devices[0];
        let device = &self.context.devices()[0];
        let stream = device.stream();
        let mut rounds = 0u64;
        loop {
            rounds += 1;
            let gathered = collectives.all_gather(mine, all, stream);
            let step = (|| -> Result<bool, CcError> {
                gathered?;
                for (r, range) in self.owned.iter().enumerate() {
                    if r != self.rank && !range.is_empty() {
                        let at = r * mine.len();
                        let theirs = all.slice(at..at + range.len())?;
                        first.kernels.merge(
                            stream,
                            range.start as usize,
                            &theirs,
                            &first.parent,
                        )?;
                    }
                }
                first.kernels.compress(stream, &first.parent)?;
                stream.fill(changed, 0u32)?;
                self.take_own_labels(mine, changed)?;
                Ok(device.download(changed)?[0] != 0)
            })();
            let words = [
                u64::from(step.as_ref().is_ok_and(|&moved| moved)),
                u64::from(step.is_err()),
            ];
            let sums = collectives.sum(&words)?;
            step?;
            if sums[1] > 0 {
                return Err(peers_failed(RUN, sums[1], collectives).into());
            }
            if sums[0] == 0 {
                return Ok(rounds);
            }
        }
    }
}

/// What [`upload`] makes: each device's edges and parent array, and on device 0 the staging
/// array (several devices) and the exchange's buffers (two processes or fewer: forests, else
/// labels).
type Uploaded = (Vec<DeviceHooks>, Option<Buffer<u32>>, Exchange);

/// Uploads what each device links (`hooks_of(d, device)`) and allocates the run's arrays.
fn upload(
    context: &Context,
    owned: &[Range<u32>],
    mut hooks_of: impl FnMut(usize, &Device) -> Result<Hooks, CcError>,
) -> Result<Uploaded, CcError> {
    let n = owned.last().map_or(0, |r| r.end as usize);
    let mut hooks = Vec::with_capacity(context.num_devices());
    for (d, device) in context.devices().iter().enumerate() {
        hooks.push(DeviceHooks {
            kernels: Kernels::for_stream(device.stream())?,
            hooks: hooks_of(d, device)?,
            parent: device.alloc(n)?,
        });
    }
    let device = &context.devices()[0];
    let stream = device.stream();
    let staging = if hooks.len() > 1 {
        Some(device.alloc::<u32>(n)?)
    } else {
        None
    };
    let exchange = if owned.len() <= 2 {
        Exchange::Forests {
            all: device.alloc::<u32>(n * owned.len())?,
        }
    } else {
        let share = owned.iter().map(|r| r.len()).max().unwrap_or(0);
        let mine = device.alloc::<u32>(share.max(1))?;
        stream.fill(&mine, 0u32)?;
        Exchange::Labels {
            all: device.alloc::<u32>(mine.len() * owned.len())?,
            mine,
            changed: device.alloc::<u32>(1)?,
        }
    };
    stream.synchronize()?;
    Ok((hooks, staging, exchange))
}

/// A process's candidate anchor as one word of a sum in which every other process adds 0
/// there: its degree in the high half, the complement of its id in the low half, so that the
/// largest word is the largest degree, and of those the lowest vertex (0: no candidate).
fn anchor_word(candidate: Option<(u64, u32)>) -> u64 {
    candidate.map_or(0, |(degree, v)| {
        (degree.min(u64::from(u32::MAX)) << 32) | u64::from(u32::MAX - v)
    })
}

/// The anchor of the largest [`anchor_word`] (`None` for 0: no process had an arc).
fn anchor_of_word(word: u64) -> Option<u32> {
    (word != 0).then(|| u32::MAX - (word & u64::from(u32::MAX)) as u32)
}
