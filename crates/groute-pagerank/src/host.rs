//! Host kernels of PageRank (the host backend's "device code"): the push of one vertex, the
//! first sweep over a range and a worklist round, parallelised with rayon.
//!
//! Floating-point atomics are `AtomicU32` words holding `f32` bits, added to with a
//! compare-and-swap loop (CUDA: `atomicAdd(float*)`).

use std::ops::Range;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use groute_core::{Buffer, Error};
use groute_worklist::HostCsrRows;
use rayon::prelude::*;

use crate::split::crosses;

/// An `f32` array on one device, viewed as atomics by the host kernels (the buffer holds the
/// bits as `u32`).
#[derive(Clone)]
pub(crate) struct ResidualArray {
    buffer: Buffer<u32>,
    ptr: NonNull<AtomicU32>,
    len: usize,
}

// SAFETY: the pointer targets the atomics of `buffer`, which this struct keeps alive; atomics
// may be shared between threads.
unsafe impl Send for ResidualArray {}
// SAFETY: as above: only atomic accesses go through the pointer.
unsafe impl Sync for ResidualArray {}

impl ResidualArray {
    /// Views `buffer` (host-backend memory) as `f32` atomics.
    pub(crate) fn new(buffer: Buffer<u32>) -> Result<Self, Error> {
        let view = buffer.host_atomic_u32().ok_or(Error::Unsupported {
            operation: "host PageRank kernels on device memory",
            backend: "cuda",
        })?;
        let len = view.len();
        let ptr = NonNull::from(view).cast::<AtomicU32>();
        Ok(ResidualArray { buffer, ptr, len })
    }

    /// The underlying buffer.
    pub(crate) fn buffer(&self) -> &Buffer<u32> {
        &self.buffer
    }

    fn atomics(&self) -> &[AtomicU32] {
        // SAFETY: `ptr`/`len` came from `buffer.host_atomic_u32()`, and `self.buffer` keeps the
        // allocation alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Adds `x` to element `i`; returns the value before (`None` when out of range).
    pub(crate) fn add(&self, i: u32, x: f32) -> Option<f32> {
        let a = self.atomics().get(i as usize)?;
        let old = a
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |bits| {
                Some((f32::from_bits(bits) + x).to_bits())
            })
            .unwrap_or_else(|bits| bits);
        Some(f32::from_bits(old))
    }

    /// Takes element `i`, leaving 0 (0 when out of range).
    pub(crate) fn take(&self, i: u32) -> f32 {
        self.atomics()
            .get(i as usize)
            .map_or(0.0, |a| f32::from_bits(a.swap(0, Ordering::AcqRel)))
    }
}

/// Everything the push kernel of one device reads and writes.
pub(crate) struct PushKernel<'a> {
    /// The device's rows of the CSR (its owned vertices'), by global ids.
    pub rows: HostCsrRows<'a>,
    /// Full-length residual (owned vertices) and halo accumulation (the others).
    pub residual: &'a ResidualArray,
    /// Ranks of the owned vertices, indexed by `v - owned.start`.
    pub rank: &'a ResidualArray,
    /// The owned range.
    pub owned: Range<u32>,
    /// Damping factor.
    pub alpha: f32,
    /// Scheduling threshold.
    pub epsilon: f32,
}

impl PushKernel<'_> {
    /// Pushes vertex `v`: `rank += res`, each out-neighbour gets `alpha * res / outdeg`,
    /// `res = 0`. Appends to `out` each owned neighbour whose residual crossed epsilon and
    /// each remote neighbour whose halo accumulation was empty (its one item this round).
    pub(crate) fn push(&self, v: u32, out: &mut Vec<u32>) {
        let rho = self.residual.take(v);
        if rho <= 0.0 || !self.owned.contains(&v) {
            return;
        }
        self.rank.add(v - self.owned.start, rho);
        let (targets, _) = self.rows.row(v);
        if targets.is_empty() {
            return; // dangling: its mass leaves the system (unnormalised PageRank)
        }
        let share = self.alpha * rho / targets.len() as f32;
        if share <= 0.0 {
            return;
        }
        for &w in targets {
            let Some(old) = self.residual.add(w, share) else {
                continue;
            };
            let schedule = if self.owned.contains(&w) {
                crosses(old, share, self.epsilon)
            } else {
                old == 0.0
            };
            if schedule {
                out.push(w);
            }
        }
    }

    /// The first round: pushes every owned vertex, as a range (no worklist of them).
    pub(crate) fn sweep(&self) -> Vec<u32> {
        let owned = self.owned.clone();
        collect(owned.into_par_iter(), |v, out| self.push(v, out))
    }

    /// A worklist round over `items`.
    pub(crate) fn expand(&self, items: &[u32]) -> Vec<u32> {
        collect(items.par_iter().copied(), |v, out| self.push(v, out))
    }
}

pub(crate) fn collect<I>(items: I, push: impl Fn(u32, &mut Vec<u32>) + Sync) -> Vec<u32>
where
    I: IndexedParallelIterator<Item = u32>,
{
    items
        .with_min_len(256)
        .fold(Vec::new, |mut out, v| {
            push(v, &mut out);
            out
        })
        .reduce(Vec::new, |mut a, b| {
            a.extend(b);
            a
        })
}
