//! [`HostSolver`]: any [`WorklistAlgorithm`] over every device of a host-backend context, its
//! storage allocated once and reused by every run.

use std::ops::Range;
use std::sync::Arc;

use groute_core::{Buffer, Context, Device, Error};
use groute_graph::{Csr, HeldRows, Partition};

use super::{Combine, HostAlgorithm, Start, WorklistAlgorithm};
use crate::device_parts::DeviceParts;
use crate::driver::SharedRun;
use crate::engine::{PackedOf, WorklistOptions, WorklistStats, run, run_shared};
use crate::error::WorklistError;
use crate::members::run_device_driven;
use crate::ring::RingTransport;
use crate::share::{ShareSolver, for_every_part};

/// The output of a [`HostSolver`] run, in the partitioned numbering (also of any executor's
/// share of a run spanning processes: [`ShareOutput`](crate::ShareOutput)).
#[derive(Clone, Debug)]
pub struct HostOutput<V> {
    /// The vertices the output covers: the whole graph, or the vertices of one process's
    /// parts ([`HostSolver::run_shared`]); `values[i]` is vertex `vertices.start + i`'s.
    pub vertices: Range<u32>,
    /// Each vertex's result: its value under [`Combine::Min`]; under [`Combine::Sum`] the sum
    /// of what its items took.
    pub values: Vec<V>,
    /// Under [`Combine::Sum`], the value left on each vertex (accumulated, never processed:
    /// [`WorklistAlgorithm::schedules`] did not make it an item); empty under
    /// [`Combine::Min`].
    pub left: Vec<V>,
    /// The engine's counters.
    pub stats: WorklistStats,
}

/// A [`WorklistAlgorithm`] on every device of a host-backend context: each device's part of
/// the graph is uploaded and its value arrays allocated once ([`HostSolver::new`]); each
/// [`HostSolver::run`] resets the values and runs the distributed worklist.
pub struct HostSolver<A: WorklistAlgorithm> {
    /// The parts this context's devices hold (all of them, unless the solver is one
    /// process's share: [`HostSolver::for_parts`]).
    held: DeviceParts,
    programs: Vec<Arc<HostAlgorithm<A>>>,
}

impl<A: WorklistAlgorithm> std::fmt::Debug for HostSolver<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostSolver")
            .field("devices", &self.programs.len())
            .field("num_vertices", &self.held.num_vertices())
            .finish()
    }
}

impl<A: WorklistAlgorithm> HostSolver<A> {
    /// Uploads `csr` (already renumbered so that device `d` owns `partition.range(d)`) to
    /// every device of `context` (host backend) for `algorithm`. Each local worklist holds
    /// `options.wl_capacity` items, or [`HostAlgorithm::default_capacity`].
    pub fn new(
        context: &Context,
        algorithm: A,
        csr: &Csr,
        partition: &Partition,
        options: &WorklistOptions,
    ) -> Result<Self, WorklistError> {
        for_every_part(context, algorithm, csr, partition, options)
    }

    /// A solver over programs built by the caller (one per device, in device order, device
    /// `d`'s over `partition.range(d)`), for example with a first round of their own
    /// ([`HostAlgorithm::with_first_round`]).
    pub fn from_programs(
        context: &Context,
        partition: &Partition,
        programs: Vec<HostAlgorithm<A>>,
    ) -> Result<Self, WorklistError> {
        let mismatch = programs.len() != context.num_devices()
            || partition.num_parts() != context.num_devices()
            || programs
                .iter()
                .enumerate()
                .any(|(d, p)| p.owned() != partition.range(d));
        if mismatch {
            return Err(Error::invalid(
                "host programs",
                format!(
                    "{} programs for {} devices",
                    programs.len(),
                    context.num_devices()
                ),
                "one program per device, device d's over partition.range(d)",
            )
            .into());
        }
        Ok(HostSolver {
            held: DeviceParts::every_part(context, partition),
            programs: programs.into_iter().map(Arc::new).collect(),
        })
    }

    /// The number of vertices of the graph.
    pub fn num_vertices(&self) -> usize {
        self.held.num_vertices()
    }

    /// Runs the algorithm from `sources` (partitioned ids; ignored under
    /// [`Start::EveryVertex`]) with `options` as given
    /// ([`WorklistOptions::for_graph`] fits the packet size to a small graph), except that
    /// without a `send_capacity` the sends are not capped: a host device's outgoing buffer
    /// grows, and what a device passes on for its ring predecessors has no fixed bound (a cap
    /// the caller sets stays an error naming `--send-capacity`, never a loss). The
    /// statistics' elapsed time covers the run only (reset and download excluded).
    ///
    /// Options that ask for device-driven execution
    /// ([`WorklistOptions::device_driven_on_host`]) run one persistent member per device
    /// instead of driven rounds: the protocol of the CUDA device-driven traversal, on host
    /// threads (`stats.device_driven` says so). There a `send_capacity` bounds what one
    /// device's inbox holds: a sender waits for room, never fails.
    pub fn run(
        &mut self,
        sources: &[u32],
        options: &WorklistOptions,
    ) -> Result<HostOutput<A::Value>, WorklistError> {
        self.held.check_whole_run("HostSolver::run")?;
        self.run_with(sources, options, |context, programs, seeds, options| {
            if options.device_driven_on_host() {
                run_device_driven(context, programs, seeds, options)
            } else {
                run(context, programs, seeds, options)
            }
        })
    }

    fn run_with(
        &mut self,
        sources: &[u32],
        options: &WorklistOptions,
        execute: impl FnOnce(
            &Context,
            &[Arc<HostAlgorithm<A>>],
            Vec<Vec<u32>>,
            &WorklistOptions,
        ) -> Result<WorklistStats, WorklistError>,
    ) -> Result<HostOutput<A::Value>, WorklistError> {
        let mut options = options.clone();
        if options.send_capacity.is_none() {
            options.send_capacity = Some(usize::MAX);
        }
        let mut sorted = sources.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let seeds = match A::START {
            Start::Sources => self.held.sources(&sorted),
            Start::EveryVertex => vec![Vec::new(); self.programs.len()],
        };
        let context = self.held.context();
        for (program, device) in self.programs.iter().zip(context.devices()) {
            program.reset(device, &sorted)?;
        }
        let mut stats = execute(context, &self.programs, seeds, &options)?;
        stats.prio_delta = options.prio_delta.unwrap_or(0);
        let vertices = self.held.owned_vertices();
        let len = (vertices.end - vertices.start) as usize;
        let mut values = for_owned_ranges(len)?;
        let mut left = Vec::new();
        if A::COMBINE == Combine::Sum {
            left = for_owned_ranges(len)?;
        }
        for (owned, (program, device)) in self
            .held
            .owned_ranges()
            .zip(self.programs.iter().zip(context.devices()))
        {
            let own_values = program.values().buffer();
            match program.results() {
                Some(results) => {
                    let count = (owned.end - owned.start) as usize;
                    let to = (owned.start - vertices.start) as usize..;
                    download_range(device, results.buffer(), 0..count, &mut values[to][..count])?;
                    download_owned(device, own_values, owned, (&mut left, vertices.start))?;
                }
                None => download_owned(device, own_values, owned, (&mut values, vertices.start))?,
            }
        }
        Ok(HostOutput {
            vertices,
            values: bytemuck::allocation::cast_vec(values),
            left: bytemuck::allocation::cast_vec(left),
            stats,
        })
    }
}

/// One process's share of a run spanning several (the `groute-dist` crate), on the host
/// backend: any algorithm. Its buffers grow as they fill: nothing grows after a failure
/// ([`ShareSolver::grow_after`]'s default).
impl<A: WorklistAlgorithm> ShareSolver for HostSolver<A> {
    type Algorithm = A;
    type Packed = PackedOf<HostAlgorithm<A>>;

    /// One process's share of a run spanning several (the `groute-dist` crate): `context`'s
    /// devices hold parts `first_part..first_part + context.num_devices()` of `partition`
    /// (device `d` part `first_part + d`), uploaded from their rows of `rows` as
    /// [`HostSolver::new`] does; [`ShareSolver::run_shared`] runs them.
    fn for_parts(
        context: &Context,
        algorithm: A,
        rows: &HeldRows<'_>,
        partition: &Partition,
        first_part: usize,
        options: &WorklistOptions,
    ) -> Result<Self, WorklistError> {
        let held = DeviceParts::check(context, rows, partition, first_part)?;
        let csr = rows.csr();
        let algorithm = Arc::new(algorithm);
        let mut programs = Vec::with_capacity(context.num_devices());
        for (owned, device) in held.owned_ranges().zip(context.devices()) {
            let capacity = options
                .wl_capacity
                .unwrap_or_else(|| HostAlgorithm::<A>::default_capacity(csr, &owned));
            programs.push(HostAlgorithm::upload(
                device,
                Arc::clone(&algorithm),
                csr,
                owned,
                capacity,
            )?);
        }
        Ok(HostSolver {
            held,
            programs: programs.into_iter().map(Arc::new).collect(),
        })
    }

    /// The vertices this solver's parts own.
    fn owned_vertices(&self) -> Range<u32> {
        self.held.owned_vertices()
    }

    /// Runs this process's share of a run spanning several processes ([`SharedRun`]: the
    /// caller holds the count open until every process is done), its devices linked to the
    /// other processes' by `transport`; `sources` are the whole run's (each process seeds the
    /// ones its parts own). The output covers this process's parts' vertices.
    fn run_shared<T: RingTransport<Self::Packed>>(
        &mut self,
        sources: &[u32],
        options: &WorklistOptions,
        transport: &T,
        shared: SharedRun<'_>,
    ) -> Result<HostOutput<A::Value>, WorklistError> {
        self.run_with(sources, options, |context, programs, seeds, options| {
            run_shared(context, programs, seeds, transport, shared, options)
        })
    }
}

/// Checks that `partition` splits `csr`'s vertices into one part per device of `context`.
pub(crate) fn check_partition(
    context: &Context,
    csr: &Csr,
    partition: &Partition,
) -> Result<(), Error> {
    let n = csr.num_vertices();
    let num_devices = context.num_devices();
    if partition.num_parts() != num_devices || partition.num_vertices() != n {
        return Err(Error::invalid(
            "partition",
            format!(
                "{} parts over {} vertices",
                partition.num_parts(),
                partition.num_vertices()
            ),
            format!("partition the graph of {n} vertices into {num_devices} parts, one per device"),
        ));
    }
    Ok(())
}

/// The word array that every device's owned range is downloaded into: zeroed lazily (no pass
/// over it), since the partition's ranges tile `0..n`, so the downloads, which touch its
/// pages on rayon's threads, overwrite every word. An error, not an abort, when the host
/// cannot hold it.
pub(crate) fn for_owned_ranges(n: usize) -> Result<Vec<u32>, Error> {
    bytemuck::allocation::try_zeroed_vec(n).map_err(|()| Error::OutOfMemory {
        bytes: n.saturating_mul(std::mem::size_of::<u32>()),
        location: format!(
            "the host for the result of {n} vertices (a smaller graph, or a machine with more \
             memory)"
        ),
        source: None,
    })
}

/// Copies the `owned` range of `buffer` (a full-length array on `device`) into `words`, whose
/// word `i` is vertex `first + i`'s (`first` 0: the whole graph's, in the partitioned
/// numbering; else one process's vertices).
pub(crate) fn download_owned(
    device: &Device,
    buffer: &Buffer<u32>,
    owned: Range<u32>,
    (words, first): (&mut [u32], u32),
) -> Result<(), Error> {
    let to = (owned.start - first) as usize..(owned.end - first) as usize;
    download_range(
        device,
        buffer,
        owned.start as usize..owned.end as usize,
        &mut words[to],
    )
}

/// Copies words `from` of `buffer` (on `device`) into `words` (as long as `from`).
fn download_range(
    device: &Device,
    buffer: &Buffer<u32>,
    from: Range<usize>,
    words: &mut [u32],
) -> Result<(), Error> {
    if from.is_empty() {
        return Ok(());
    }
    device.download_into(&buffer.slice(from)?, words)
}
