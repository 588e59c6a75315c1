//! The host backend's executor of any [`WorklistAlgorithm`]: one [`HostAlgorithm`] per
//! device holds the device's part of the graph and its value arrays, and is the
//! [`DeviceProgram`] that the worklist engine ([`run`](crate::run)) drives; its split
//! ([`AlgorithmSplit`]) applies the algorithm's combine to received updates.

use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use groute_core::{Buffer, Device, Error};
use groute_graph::Csr;
use rayon::prelude::*;

use super::{AtomicValue, Combine, Start, WorklistAlgorithm, changes};
use crate::engine::DeviceProgram;
use crate::part::{DeviceCsr, HostCsrRows};
use crate::split::{SplitFlags, SplitOps, VertexValue};

/// A `u32` array in host-backend device memory, viewed as atomics by the host kernels.
#[derive(Clone)]
pub struct AtomicArray {
    buffer: Buffer<u32>,
    ptr: NonNull<AtomicU32>,
    len: usize,
}

// SAFETY: the pointer targets the atomics of `buffer`, which this struct keeps alive; atomics
// may be shared between threads.
unsafe impl Send for AtomicArray {}
// SAFETY: as above: only atomic accesses go through the pointer.
unsafe impl Sync for AtomicArray {}

impl std::fmt::Debug for AtomicArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtomicArray")
            .field("len", &self.len)
            .finish()
    }
}

impl AtomicArray {
    /// Views `buffer` as atomics; an error when it is not host-backend memory.
    pub(crate) fn new(buffer: Buffer<u32>) -> Result<Self, Error> {
        let view = buffer.host_atomic_u32().ok_or(Error::Unsupported {
            operation: "host kernels on device memory",
            backend: "cuda",
        })?;
        let len = view.len();
        let ptr = NonNull::from(view).cast::<AtomicU32>();
        Ok(AtomicArray { buffer, ptr, len })
    }

    /// The underlying buffer.
    pub fn buffer(&self) -> &Buffer<u32> {
        &self.buffer
    }

    /// The words as atomics.
    pub(crate) fn atomics(&self) -> &[AtomicU32] {
        // SAFETY: `ptr`/`len` came from `buffer.host_atomic_u32()`, and `self.buffer` keeps the
        // allocation alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Element `i` as a value (`None` out of range).
    pub fn load<V: AtomicValue>(&self, i: u32) -> Option<V> {
        let a = self.atomics().get(i as usize)?;
        Some(V::from_bits(a.load(Ordering::Acquire)))
    }

    /// Takes element `i`, leaving zero (`None` out of range).
    pub fn take<V: AtomicValue>(&self, i: u32) -> Option<V> {
        let a = self.atomics().get(i as usize)?;
        Some(V::from_bits(a.swap(V::ZERO.to_bits(), Ordering::AcqRel)))
    }

    /// Adds `x` to element `i`; the value before (`None` out of range).
    pub fn add<V: AtomicValue>(&self, i: u32, x: V) -> Option<V> {
        Some(V::fetch_add(self.atomics().get(i as usize)?, x))
    }

    /// Combines `x` into element `i` as `combine` says; the value before (`None` out of
    /// range).
    pub fn combine<V: AtomicValue>(&self, combine: Combine, i: u32, x: V) -> Option<V> {
        let a = self.atomics().get(i as usize)?;
        Some(match combine {
            Combine::Min => V::fetch_min(a, x),
            Combine::Sum => V::fetch_add(a, x),
        })
    }
}

/// What a host round of algorithm `A` on one device reads and writes: the executor's kernel,
/// also lent to a first round that an algorithm's solver supplies
/// ([`HostAlgorithm::with_first_round`]).
pub struct HostRound<'a, A: WorklistAlgorithm> {
    /// The algorithm.
    pub algorithm: &'a A,
    /// The device's rows of the CSR (its owned vertices'), by global ids.
    pub rows: HostCsrRows<'a>,
    /// Every vertex's value: the owned vertices', and the device's halo slots for the others.
    pub values: &'a AtomicArray,
    /// Under [`Combine::Sum`], the owned vertices' results (what their items took), indexed by
    /// `v - owned.start`.
    pub results: Option<&'a AtomicArray>,
    /// The owned range.
    pub owned: Range<u32>,
    /// Counts the arcs to other devices' vertices that the round relaxes
    /// ([`HostRound::process`] counts its own; a first round of a solver's counts its own).
    pub cut_arcs: &'a ArcCounter,
}

/// A count that rayon's threads add to without contending: one cache-line-padded word per
/// thread (and one for any other thread), summed when taken.
pub struct ArcCounter {
    shards: Box<[crossbeam::utils::CachePadded<AtomicU64>]>,
}

impl std::fmt::Debug for ArcCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArcCounter")
            .field("shards", &self.shards.len())
            .finish()
    }
}

impl Default for ArcCounter {
    fn default() -> Self {
        let shards = rayon::current_num_threads() + 1;
        ArcCounter {
            shards: (0..shards).map(|_| Default::default()).collect(),
        }
    }
}

impl ArcCounter {
    /// Adds `count` on the calling thread's word.
    pub fn add(&self, count: u64) {
        if count == 0 {
            return;
        }
        let shard = rayon::current_thread_index().map_or(0, |i| i + 1) % self.shards.len();
        self.shards[shard].fetch_add(count, Ordering::Relaxed);
    }

    /// The count, leaving zero.
    pub fn take(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.swap(0, Ordering::Relaxed))
            .sum()
    }
}

impl<A: WorklistAlgorithm> HostRound<'_, A> {
    /// The value an item of owned vertex `v` relaxes its arcs with: its value under
    /// [`Combine::Min`]; under [`Combine::Sum`] the value taken (leaving zero) and added to
    /// its result. `None`: nothing to relax (a zero taken, or `v` not owned).
    pub fn take(&self, v: u32) -> Option<A::Value> {
        if !self.owned.contains(&v) {
            return None;
        }
        match A::COMBINE {
            Combine::Min => self.values.load(v),
            Combine::Sum => {
                let x: A::Value = self.values.take(v)?;
                // Nothing pending (zero; a NaN is not greater either).
                if x.partial_cmp(&A::Value::ZERO) != Some(std::cmp::Ordering::Greater) {
                    return None;
                }
                if let Some(results) = self.results {
                    results.add(v - self.owned.start, x);
                }
                Some(x)
            }
        }
    }

    /// Combines `update` into vertex `v`; whether `v` becomes an item of this round: an
    /// owned vertex when [`WorklistAlgorithm::schedules`] says so, another device's when the
    /// update is one to send (under [`Combine::Min`] it improved the halo copy, under
    /// [`Combine::Sum`] it is the first added to the halo slot since its last send).
    pub fn combine(&self, v: u32, update: A::Value) -> bool {
        let Some((old, new)) = apply::<A>(self.values, v, update) else {
            return false;
        };
        if self.owned.contains(&v) {
            self.algorithm.schedules(old, new)
        } else {
            changes::<A>(old, new)
        }
    }

    /// Processes the item of owned vertex `v`: relaxes each out-arc and appends the heads that
    /// become items to `out`.
    pub fn process(&self, v: u32, out: &mut Vec<u32>) {
        let Some(x) = self.take(v) else { return };
        // Items are owned vertices (`take` checked): `row` panics otherwise.
        let (targets, weights) = self.rows.row(v);
        let degree = u32::try_from(targets.len()).unwrap_or(u32::MAX);
        // Arcs relaxed to other devices' vertices: one count a row, not an atomic an arc.
        let mut cut = 0u64;
        if !A::WEIGHTED {
            // The same update for every arc.
            let Some(update) = self.algorithm.relax(x, 1, degree) else {
                return;
            };
            for &u in targets {
                cut += u64::from(!self.owned.contains(&u));
                if self.combine(u, update) {
                    out.push(u);
                }
            }
        } else {
            for (i, &u) in targets.iter().enumerate() {
                let w = weights.map_or(1, |w| w[i]);
                if let Some(update) = self.algorithm.relax(x, w, degree) {
                    cut += u64::from(!self.owned.contains(&u));
                    if self.combine(u, update) {
                        out.push(u);
                    }
                }
            }
        }
        self.cut_arcs.add(cut);
    }

    /// A round over `items`, on rayon's threads.
    pub fn expand(&self, items: &[u32]) -> Vec<u32> {
        par_collect(items.par_iter().copied(), |v, out| self.process(v, out))
    }

    /// A round over every owned vertex, as a range.
    pub fn sweep(&self) -> Vec<u32> {
        par_collect(self.owned.clone().into_par_iter(), |v, out| {
            self.process(v, out)
        })
    }
}

/// Combines `update` into element `v` of `values` as `A` combines; the value before and
/// after (`None` out of range).
fn apply<A: WorklistAlgorithm>(
    values: &AtomicArray,
    v: u32,
    update: A::Value,
) -> Option<(A::Value, A::Value)> {
    let old = values.combine(A::COMBINE, v, update)?;
    let new = match A::COMBINE {
        Combine::Min if update < old => update,
        Combine::Min => old,
        Combine::Sum => old.add(update),
    };
    Some((old, new))
}

/// Runs `process` over `items` on rayon's threads and gathers what it appends (the items
/// that a round's kernel produced): for first rounds of an algorithm's own
/// ([`HostAlgorithm::with_first_round`]).
#[doc(hidden)]
pub fn par_collect<I>(items: I, process: impl Fn(u32, &mut Vec<u32>) + Sync) -> Vec<u32>
where
    I: IndexedParallelIterator<Item = u32>,
{
    items
        .with_min_len(64)
        .fold(Vec::new, |mut out, v| {
            process(v, &mut out);
            out
        })
        .reduce(Vec::new, |mut a, b| {
            a.extend(b);
            a
        })
}

/// A first round that a solver supplies in place of the sweep over the owned range
/// ([`Start::EveryVertex`]), such as PageRank's pull sweep.
type FirstRound<A> = Box<dyn Fn(&HostRound<'_, A>) -> Vec<u32> + Send + Sync>;

/// One host-backend device's share of a run of algorithm `A`: its rows of the graph, every
/// vertex's value (owned ones and halo slots), the owned results under [`Combine::Sum`].
/// Allocated once ([`HostAlgorithm::upload`]) and reset by
/// [`HostSolver::run`](super::HostSolver::run) before each run.
pub struct HostAlgorithm<A: WorklistAlgorithm> {
    algorithm: Arc<A>,
    csr: DeviceCsr,
    owned: Range<u32>,
    values: AtomicArray,
    results: Option<AtomicArray>,
    capacity: usize,
    first_round: Option<FirstRound<A>>,
    cut_arcs: ArcCounter,
}

impl<A: WorklistAlgorithm> std::fmt::Debug for HostAlgorithm<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostAlgorithm")
            .field("owned", &self.owned)
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl<A: WorklistAlgorithm> HostAlgorithm<A> {
    /// Uploads to `device` (host backend; a CUDA device is [`Error::Unsupported`]) its rows of
    /// `csr` (the `owned` range of the partitioned graph, with weights when `A` reads them)
    /// and allocates its value arrays; its local worklist holds `capacity` items unless the
    /// run's options say otherwise.
    pub fn upload(
        device: &Device,
        algorithm: Arc<A>,
        csr: &Csr,
        owned: Range<u32>,
        capacity: usize,
    ) -> Result<Self, Error> {
        if !device.stream().is_host() {
            return Err(Error::Unsupported {
                operation: "the host executor of worklist algorithms on a CUDA device (it runs \
                            host kernels on host-backend devices)",
                backend: "cuda",
            });
        }
        check_weights::<A>(csr)?;
        let part = DeviceCsr::upload(device, csr, owned.clone(), A::WEIGHTED)?;
        let values = AtomicArray::new(device.alloc::<u32>(csr.num_vertices().max(1))?)?;
        let results = match A::COMBINE {
            Combine::Min => None,
            Combine::Sum => {
                let local = (owned.end - owned.start) as usize;
                Some(AtomicArray::new(device.alloc::<u32>(local.max(1))?)?)
            }
        };
        device.stream().synchronize()?;
        Ok(HostAlgorithm {
            algorithm,
            csr: part,
            owned,
            values,
            results,
            capacity,
            first_round: None,
            cut_arcs: ArcCounter::default(),
        })
    }

    /// The local worklist's capacity when the options leave it to the executor: under
    /// [`Combine::Min`] twice the `owned` vertices and their arcs (four times when weighted:
    /// a vertex is queued once per improvement not yet expanded), under [`Combine::Sum`]
    /// twice the owned vertices (a vertex is pending at most once while its value stays
    /// above the threshold; the margin covers duplicates); plus 1,024.
    pub fn default_capacity(csr: &Csr, owned: &Range<u32>) -> usize {
        let vertices = (owned.end - owned.start) as usize;
        let arcs =
            (csr.offsets()[owned.end as usize] - csr.offsets()[owned.start as usize]) as usize;
        match A::COMBINE {
            Combine::Min if A::WEIGHTED => 4 * (vertices + arcs) + 1024,
            Combine::Min => 2 * (vertices + arcs) + 1024,
            Combine::Sum => 2 * vertices + 1024,
        }
    }

    /// Runs `round` as the first round instead of the sweep over the owned range (under
    /// [`Start::EveryVertex`]): it must process every owned vertex once and return the
    /// vertices that became items, as [`HostRound::sweep`] does.
    pub fn with_first_round(
        mut self,
        round: impl Fn(&HostRound<'_, A>) -> Vec<u32> + Send + Sync + 'static,
    ) -> Self {
        self.first_round = Some(Box::new(round));
        self
    }

    /// The vertices this device owns.
    pub fn owned(&self) -> Range<u32> {
        self.owned.clone()
    }

    /// The device's rows of the graph.
    pub fn csr(&self) -> &DeviceCsr {
        &self.csr
    }

    /// Every vertex's value on this device (the owned ones and the halo slots).
    pub(crate) fn values(&self) -> &AtomicArray {
        &self.values
    }

    /// Under [`Combine::Sum`], the owned vertices' results, from the owned range's start.
    pub(crate) fn results(&self) -> Option<&AtomicArray> {
        self.results.as_ref()
    }

    /// Resets the values for a run from `sources` (sorted; ignored under
    /// [`Start::EveryVertex`]): each vertex's [`WorklistAlgorithm::init`], zero in the halo
    /// slots under [`Combine::Sum`], zero results. Waits for `device`'s queued work first
    /// (the device this program was uploaded to; [`HostSolver::run`](super::HostSolver::run),
    /// which holds the solver exclusively, is the only caller).
    pub(crate) fn reset(&self, device: &Device, sources: &[u32]) -> Result<(), Error> {
        device.stream().synchronize()?;
        let algorithm = &*self.algorithm;
        let owned = self.owned.clone();
        self.values
            .atomics()
            .par_iter()
            .enumerate()
            .with_min_len(4096)
            .for_each(|(v, word)| {
                let v = v as u32;
                let value = if A::COMBINE == Combine::Sum && !owned.contains(&v) {
                    A::Value::ZERO
                } else {
                    let source = A::START == Start::Sources && sources.binary_search(&v).is_ok();
                    algorithm.init(v, source)
                };
                word.store(value.to_bits(), Ordering::Relaxed);
            });
        if let Some(results) = &self.results {
            results
                .atomics()
                .par_iter()
                .for_each(|word| word.store(A::Value::ZERO.to_bits(), Ordering::Relaxed));
        }
        self.cut_arcs.take();
        // The stores are ordered before the run's kernels by rayon's join (they are done when
        // `for_each` returns) and by the channel that hands each kernel to its device's
        // executor thread.
        Ok(())
    }

    /// Runs `body` over this device's round; `None` when the rows are not in host memory
    /// (never: `upload` took a host-backend device).
    fn with_round<R>(&self, body: impl FnOnce(&HostRound<'_, A>) -> R) -> Option<R> {
        // SAFETY: the part was uploaded and synchronised before any run started and is never
        // written again.
        let rows = unsafe { self.csr.host_view() }?;
        Some(body(&HostRound {
            algorithm: &self.algorithm,
            rows,
            values: &self.values,
            results: self.results.as_ref(),
            owned: self.owned.clone(),
            cut_arcs: &self.cut_arcs,
        }))
    }
}

impl<A: WorklistAlgorithm> DeviceProgram for HostAlgorithm<A> {
    type Ops = AlgorithmSplit<A>;

    fn split_ops(&self) -> AlgorithmSplit<A> {
        AlgorithmSplit {
            algorithm: Arc::clone(&self.algorithm),
            owned: self.owned.clone(),
            values: self.values.clone(),
        }
    }

    fn expand(&self, items: &[u32]) -> Vec<u32> {
        self.with_round(|round| round.expand(items))
            .unwrap_or_default()
    }

    fn capacity_hint(&self) -> usize {
        self.capacity
    }

    fn take_cut_arcs(&self) -> Option<u64> {
        Some(self.cut_arcs.take())
    }

    fn initial_sweep_len(&self) -> u64 {
        match A::START {
            Start::Sources => 0,
            Start::EveryVertex => u64::from(self.owned.end - self.owned.start),
        }
    }

    fn expand_initial_sweep(&self) -> Vec<u32> {
        self.with_round(|round| match &self.first_round {
            Some(first) => first(round),
            None => round.sweep(),
        })
        .unwrap_or_default()
    }
}

/// The split of algorithm `A` on one device. Local items are vertex ids; packed items carry
/// the vertex's value (under [`Combine::Sum`], for another device's vertex, everything
/// accumulated for it since its last send, taken from the halo slot when the round is split:
/// however many arcs of a round reach it, it costs one item on the ring).
pub struct AlgorithmSplit<A: WorklistAlgorithm> {
    algorithm: Arc<A>,
    owned: Range<u32>,
    values: AtomicArray,
}

impl<A: WorklistAlgorithm> Clone for AlgorithmSplit<A> {
    fn clone(&self) -> Self {
        AlgorithmSplit {
            algorithm: Arc::clone(&self.algorithm),
            owned: self.owned.clone(),
            values: self.values.clone(),
        }
    }
}

impl<A: WorklistAlgorithm> std::fmt::Debug for AlgorithmSplit<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlgorithmSplit")
            .field("owned", &self.owned)
            .finish()
    }
}

impl<A: WorklistAlgorithm> AlgorithmSplit<A> {
    /// The value of `v`; a vertex outside the graph (never produced by the executor) reads as
    /// the largest word, the least urgent priority and no improvement under
    /// [`Combine::Min`].
    fn value(&self, v: u32) -> A::Value {
        self.values.load(v).unwrap_or(A::Value::from_bits(u32::MAX))
    }
}

impl<A: WorklistAlgorithm> SplitOps for AlgorithmSplit<A> {
    type Local = u32;
    type Packed = VertexValue;

    fn pack(&self, v: u32) -> VertexValue {
        let value = match A::COMBINE {
            Combine::Min => self.value(v),
            // An owned item travels nowhere; another device's takes the accumulation.
            Combine::Sum if self.owned.contains(&v) => A::Value::ZERO,
            Combine::Sum => self.values.take(v).unwrap_or(A::Value::ZERO),
        };
        VertexValue {
            vertex: v,
            value: value.to_bits(),
        }
    }

    fn unpack(&self, p: VertexValue) -> u32 {
        p.vertex
    }

    fn on_send(&self, p: &VertexValue) -> SplitFlags {
        if self.owned.contains(&p.vertex) {
            SplitFlags::KEEP
        } else if A::COMBINE == Combine::Sum && A::Value::from_bits(p.value) == A::Value::ZERO {
            // Its accumulation left with an earlier item of this round.
            SplitFlags::DROP
        } else {
            SplitFlags::PASS
        }
    }

    fn on_receive(&self, p: &VertexValue) -> SplitFlags {
        let mine = self.owned.contains(&p.vertex);
        if A::COMBINE == Combine::Sum && !mine {
            // Only the owner adds a contribution; the others pass it on.
            return SplitFlags::PASS;
        }
        let update = A::Value::from_bits(p.value);
        let Some((old, new)) = apply::<A>(&self.values, p.vertex, update) else {
            return SplitFlags::DROP;
        };
        match (mine, self.algorithm.schedules(old, new)) {
            (true, true) => SplitFlags::KEEP,
            // A halo copy that improved: the update goes on towards the owner.
            (false, _) if changes::<A>(old, new) => SplitFlags::PASS,
            _ => SplitFlags::DROP,
        }
    }

    fn get_prio(&self, v: &u32) -> u32 {
        self.algorithm.priority(self.value(*v))
    }

    fn superseded(&self, v: &u32, deferred_prio: u32) -> bool {
        // Min: the vertex improved since, and every improvement of an owned vertex queued a
        // newer copy, split after this one with the lower value.
        A::COMBINE == Combine::Min && self.get_prio(v) < deferred_prio
    }
}

/// An error when `A` reads arc weights and `csr` has none.
pub(crate) fn check_weights<A: WorklistAlgorithm>(csr: &Csr) -> Result<(), Error> {
    if A::WEIGHTED && csr.weights().is_none() {
        return Err(Error::invalid(
            "graph weights",
            "none",
            "a graph with arc weights (this algorithm reads them)",
        ));
    }
    Ok(())
}
