//! The generic label-correcting traversal shared by BFS and SSSP.
//!
//! Each device holds the whole CSR (simplest; a later version can keep only its own rows)
//! and a **full-length** value array. Local items are vertex ids; remote items are
//! [`VertexValue`] pairs. An expand round relaxes every out-arc of its items with
//! `fetch_min` on the device's value array, which is also the halo filter: an update to a
//! vertex of another device is sent only if it improves what this device already knows of
//! that vertex. On receipt, the owner applies the update with `fetch_min` and keeps the
//! vertex only if it improved; a device that is not the owner updates its halo copy and
//! passes the item on only if it improved.
//!
//! An algorithm supplies only [`MinTraversal::relax`] (and, on CUDA, its kernels): BFS is
//! `value + 1`, SSSP `value + weight`.

use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use groute_core::{Buffer, Context, Device, Error};
use groute_graph::{Csr, Partition};
use rayon::prelude::*;

use crate::engine::{DeviceProgram, WorklistOptions, WorklistStats, run};
use crate::error::WorklistError;
use crate::split::{SplitFlags, SplitOps, VertexValue};

/// The value of a vertex not reached (yet).
pub const UNREACHED: u32 = u32::MAX;

/// A monotone min-label traversal: values only decrease, `relax` proposes a neighbour's value.
pub trait MinTraversal: Send + Sync + 'static {
    /// Whether the traversal reads arc weights.
    const WEIGHTED: bool;
    /// The value proposed for the head of an arc of weight `weight` (1 when unweighted) whose
    /// tail has value `value` (never [`UNREACHED`]); saturate rather than wrap.
    fn relax(value: u32, weight: u32) -> u32;
}

/// A full-length `u32` value array on one device, viewed as atomics by host kernels.
#[derive(Clone)]
struct ValueArray {
    buffer: Buffer<u32>,
    ptr: NonNull<AtomicU32>,
    len: usize,
}

// SAFETY: the pointer targets the atomics of `buffer`, which this struct keeps alive; atomics
// may be shared between threads.
unsafe impl Send for ValueArray {}
// SAFETY: as above: only atomic accesses go through the pointer.
unsafe impl Sync for ValueArray {}

impl ValueArray {
    fn new(buffer: Buffer<u32>) -> Result<Self, Error> {
        let view = buffer.host_atomic_u32().ok_or(Error::Unsupported {
            operation: "host traversal kernels on device memory",
            backend: "cuda",
        })?;
        let len = view.len();
        let ptr = NonNull::from(view).cast::<AtomicU32>();
        Ok(ValueArray { buffer, ptr, len })
    }

    fn atomics(&self) -> &[AtomicU32] {
        // SAFETY: `ptr`/`len` came from `buffer.host_atomic_u32()`, and `self.buffer` keeps the
        // allocation alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

/// The split operations of a min traversal on one device.
#[derive(Clone)]
pub struct MinSplitOps {
    owned: Range<u32>,
    values: ValueArray,
}

impl std::fmt::Debug for MinSplitOps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MinSplitOps")
            .field("owned", &self.owned)
            .finish()
    }
}

impl MinSplitOps {
    fn improve(&self, p: &VertexValue) -> bool {
        match self.values.atomics().get(p.vertex as usize) {
            Some(a) => a.fetch_min(p.value, Ordering::AcqRel) > p.value,
            None => false,
        }
    }
}

impl SplitOps for MinSplitOps {
    type Local = u32;
    type Packed = VertexValue;

    fn pack(&self, v: u32) -> VertexValue {
        let value = self
            .values
            .atomics()
            .get(v as usize)
            .map_or(UNREACHED, |a| a.load(Ordering::Acquire));
        VertexValue { vertex: v, value }
    }

    fn unpack(&self, p: VertexValue) -> u32 {
        p.vertex
    }

    fn on_send(&self, p: &VertexValue) -> SplitFlags {
        if self.owned.contains(&p.vertex) {
            SplitFlags::KEEP
        } else {
            SplitFlags::PASS
        }
    }

    fn on_receive(&self, p: &VertexValue) -> SplitFlags {
        match (self.improve(p), self.owned.contains(&p.vertex)) {
            (true, true) => SplitFlags::KEEP,
            (true, false) => SplitFlags::PASS,
            (false, _) => SplitFlags::DROP,
        }
    }

    fn get_prio(&self, v: &u32) -> u32 {
        self.pack(*v).value
    }
}

/// One device's share of a min traversal (host backend).
struct MinProgram<A> {
    offsets: Buffer<u64>,
    targets: Buffer<u32>,
    weights: Option<Buffer<u32>>,
    ops: MinSplitOps,
    capacity: usize,
    _algo: std::marker::PhantomData<fn() -> A>,
}

impl<A: MinTraversal> DeviceProgram for MinProgram<A> {
    type Ops = MinSplitOps;

    fn split_ops(&self) -> MinSplitOps {
        self.ops.clone()
    }

    fn expand(&self, items: &[u32]) -> Vec<u32> {
        // SAFETY: the CSR buffers were uploaded and synchronised before the run started and
        // are never written again.
        let (offsets, targets, weights) = unsafe {
            (
                self.offsets.as_host_slice().unwrap_or(&[]),
                self.targets.as_host_slice().unwrap_or(&[]),
                self.weights.as_ref().and_then(|w| w.as_host_slice()),
            )
        };
        let values = self.ops.values.atomics();
        items
            .par_iter()
            .with_min_len(64)
            .fold(Vec::new, |mut out, &v| {
                let vi = v as usize;
                let value = match values.get(vi) {
                    Some(a) => a.load(Ordering::Acquire),
                    None => return out,
                };
                if value == UNREACHED || vi + 1 >= offsets.len() {
                    return out;
                }
                for e in offsets[vi] as usize..offsets[vi + 1] as usize {
                    let u = targets[e];
                    let w = weights.map_or(1, |w| w[e]);
                    let cand = A::relax(value, w);
                    if let Some(a) = values.get(u as usize) {
                        if a.fetch_min(cand, Ordering::AcqRel) > cand {
                            out.push(u);
                        }
                    }
                }
                out
            })
            .reduce(Vec::new, |mut a, b| {
                a.extend(b);
                a
            })
    }

    fn capacity_hint(&self) -> usize {
        self.capacity
    }
}

/// The result of a min traversal.
#[derive(Clone, Debug)]
pub struct TraversalOutput {
    /// One value per vertex, in the partitioned numbering ([`UNREACHED`] where unreached).
    pub values: Vec<u32>,
    /// Worklist counters.
    pub stats: WorklistStats,
}

/// Runs a min traversal of `csr` (already renumbered so that device `d` owns
/// `partition.range(d)`) from `sources` (partitioned ids, value 0) on every device of
/// `context`.
pub fn solve_min_traversal<A: MinTraversal>(
    context: &Context,
    csr: &Csr,
    partition: &Partition,
    sources: &[u32],
    options: &WorklistOptions,
) -> Result<TraversalOutput, WorklistError> {
    let n = csr.num_vertices();
    let devices = context.num_devices();
    if partition.num_parts() != devices || partition.num_vertices() != n {
        return Err(Error::invalid(
            "partition",
            format!(
                "{} parts over {} vertices",
                partition.num_parts(),
                partition.num_vertices()
            ),
            format!("partition the graph of {n} vertices into {devices} parts, one per device"),
        )
        .into());
    }
    if A::WEIGHTED && csr.weights().is_none() {
        return Err(
            Error::invalid("graph weights", "none", "this traversal needs arc weights").into(),
        );
    }
    let mut init = vec![UNREACHED; n];
    for &s in sources {
        if let Some(x) = init.get_mut(s as usize) {
            *x = 0;
        }
    }
    let mut programs = Vec::with_capacity(devices);
    let mut seeds = vec![Vec::new(); devices];
    for &s in sources {
        if (s as usize) < n {
            seeds[partition.owner(s)].push(s);
        }
    }
    for (d, device) in context.devices().iter().enumerate() {
        programs.push(Arc::new(upload_program::<A>(
            device,
            csr,
            partition.range(d),
            &init,
        )?));
    }
    let stats = run(context, &programs, seeds, options)?;
    let mut values = vec![UNREACHED; n];
    for (d, device) in context.devices().iter().enumerate() {
        let r = partition.range(d);
        let part = programs[d]
            .ops
            .values
            .buffer
            .slice(r.start as usize..r.end as usize)?;
        let got = device.download(&part)?;
        values[r.start as usize..r.end as usize].copy_from_slice(&got);
    }
    Ok(TraversalOutput { values, stats })
}

fn upload_program<A: MinTraversal>(
    device: &Device,
    csr: &Csr,
    owned: Range<u32>,
    init: &[u32],
) -> Result<MinProgram<A>, Error> {
    let offsets = device.upload(csr.offsets())?;
    let targets = device.upload(csr.targets())?;
    let weights = match (A::WEIGHTED, csr.weights()) {
        (true, Some(w)) => Some(device.upload(w)?),
        _ => None,
    };
    let values = device.upload(init)?;
    device.stream().synchronize()?;
    let local_vertices = (owned.end - owned.start) as usize;
    let local_arcs =
        (csr.offsets()[owned.end as usize] - csr.offsets()[owned.start as usize]) as usize;
    Ok(MinProgram {
        offsets,
        targets,
        weights,
        ops: MinSplitOps {
            owned,
            values: ValueArray::new(values)?,
        },
        capacity: 2 * (local_vertices + local_arcs) + 1024,
        _algo: std::marker::PhantomData,
    })
}
