//! The host backend's passes of a round of [`super::PageRankRanks`], the mirrors of
//! `pagerank_pull_take`, `pagerank_pull_gather`, `pagerank_push_taken` and `pagerank_absorb`
//! (`kernels/pagerank/pagerank.cu`) over the same arrays (`f32` values as `u32` bits), run on
//! the device's executor thread with rayon. The counts land in the same control words as the
//! kernels': the vertices taken in `CTRL_PUSHED` and their out-arcs in `CTRL_TAKEN_ARCS`,
//! those that crossed epsilon (or, after an absorb, are above it) in the worklist's end.

use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

use groute_core::{Buffer, Error, Stream};
use groute_worklist::{DeviceCsr, HostCsrRows};
use rayon::prelude::*;

use super::sweeps::CTRL_CROSSED;
use crate::cuda::{CTRL_PUSHED, CTRL_TAKEN_ARCS};

/// Vertices per rayon task.
const GRAIN: usize = 1 << 10;

/// A device's arrays, as the host passes take them.
pub(super) struct SweepArrays {
    pub(super) owned: Range<u32>,
    pub(super) residual: Buffer<u32>,
    pub(super) rank: Buffer<u32>,
    pub(super) share: Buffer<u32>,
    pub(super) ctrl: Buffer<u32>,
    pub(super) alpha: f32,
    pub(super) epsilon: f32,
}

/// The owned vertices, in parallel ([`GRAIN`] per task at least).
fn par_owned(owned: &Range<u32>) -> impl ParallelIterator<Item = u32> {
    owned.clone().into_par_iter().with_min_len(GRAIN)
}

/// The atomic host views of a device's residual, share and control words.
type Views<'a> = (&'a [AtomicU32], &'a [AtomicU32], &'a [AtomicU32]);

impl SweepArrays {
    /// The host views of the residual, the share array and the control words (an error
    /// where the host cannot address them).
    fn residual_share_ctrl(&self) -> Result<Views<'_>, Error> {
        Ok((view(&self.residual)?, view(&self.share)?, view(&self.ctrl)?))
    }
}

/// The atomic host view of `buffer` (host-backend memory).
fn view(buffer: &Buffer<u32>) -> Result<&[AtomicU32], Error> {
    buffer.host_atomic_u32().ok_or(Error::Unsupported {
        operation: "host kernels on memory the host cannot address",
        backend: "this",
    })
}

fn load(word: &AtomicU32) -> f32 {
    f32::from_bits(word.load(Ordering::Relaxed))
}

fn store(word: &AtomicU32, value: f32) {
    word.store(value.to_bits(), Ordering::Relaxed);
}

/// Enqueues the take on `stream` (a host-backend stream): every owned residual above
/// `floor` moved into its rank, `share[v] = alpha * rho / outdeg(v)` (0 for a vertex not
/// taken, or dangling), the vertices taken added to `CTRL_PUSHED`.
pub(super) fn enqueue_take(
    stream: &Stream,
    arrays: SweepArrays,
    out_rows: &DeviceCsr,
    floor: f32,
) -> Result<(), Error> {
    for b in [&arrays.residual, &arrays.rank, &arrays.share, &arrays.ctrl] {
        view(b)?;
    }
    let out_rows = out_rows.clone();
    stream.launch_host(move || {
        let SweepArrays {
            owned,
            residual,
            rank,
            share,
            ctrl,
            alpha,
            ..
        } = &arrays;
        let (Ok(residual), Ok(rank), Ok(share), Ok(ctrl)) =
            (view(residual), view(rank), view(share), view(ctrl))
        else {
            return; // checked above
        };
        // SAFETY: the rows were uploaded (and the upload waited for) before any run; nothing
        // writes them again.
        let Some(rows) = (unsafe { out_rows.host_view() }) else {
            return;
        };
        let start = owned.start;
        let (taken, arcs): (u32, u64) = par_owned(owned)
            .map(|v| {
                let (res, out) = (&residual[v as usize], &share[v as usize]);
                let rho = load(res);
                // NaN compares false: never taken, as in the kernel.
                if !(rho > floor && rho > 0.0) {
                    store(out, 0.0);
                    return (0, 0);
                }
                store(res, 0.0);
                let r = &rank[(v - start) as usize];
                store(r, load(r) + rho);
                let degree = rows.degree(v);
                // A dangling vertex's mass leaves the system (unnormalised PageRank).
                store(
                    out,
                    if degree == 0 {
                        0.0
                    } else {
                        alpha * rho / degree as f32
                    },
                );
                (1, degree as u64)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        ctrl[CTRL_PUSHED].fetch_add(taken, Ordering::Relaxed);
        // Added to the 64-bit count, as the kernel does (a round by vertex ranges takes
        // several times); the stream runs one pass at a time, the only writer.
        let (lo, hi) = (&ctrl[CTRL_TAKEN_ARCS], &ctrl[CTRL_TAKEN_ARCS + 1]);
        let before =
            u64::from(lo.load(Ordering::Relaxed)) | u64::from(hi.load(Ordering::Relaxed)) << 32;
        let after = before.wrapping_add(arcs);
        lo.store(after as u32, Ordering::Relaxed);
        hi.store((after >> 32) as u32, Ordering::Relaxed);
    })
}

/// Enqueues the gather on `stream` (a host-backend stream): every owned vertex adds its
/// in-neighbours' shares (over `in_rows`, the owned rows of the in-CSR) to its residual; the
/// vertices that cross epsilon added to the worklist's end word.
pub(super) fn enqueue_gather(
    stream: &Stream,
    arrays: SweepArrays,
    in_rows: &DeviceCsr,
) -> Result<(), Error> {
    launch_over_rows(
        stream,
        arrays,
        in_rows,
        |arrays, (residual, share, ctrl), rows| {
            let epsilon = arrays.epsilon;
            let crossed: u32 = par_owned(&arrays.owned)
                .map(|v| {
                    let sum: f32 = rows
                        .row(v)
                        .0
                        .iter()
                        .map(|&u| load(&share[u as usize]))
                        .sum();
                    if sum.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                        return 0;
                    }
                    let res = &residual[v as usize];
                    let old = load(res);
                    let now = old + sum;
                    store(res, now);
                    u32::from(old <= epsilon && now > epsilon)
                })
                .sum();
            ctrl[CTRL_CROSSED].fetch_add(crossed, Ordering::Relaxed);
        },
    )
}

/// Enqueues `pass(arrays, their host views, rows' host view)` on `stream` (a host-backend
/// stream), the views checked before it is enqueued.
fn launch_over_rows<F>(
    stream: &Stream,
    arrays: SweepArrays,
    rows: &DeviceCsr,
    pass: F,
) -> Result<(), Error>
where
    F: FnOnce(&SweepArrays, Views<'_>, HostCsrRows<'_>) + Send + 'static,
{
    arrays.residual_share_ctrl()?;
    let rows = rows.clone();
    stream.launch_host(move || {
        let Ok(views) = arrays.residual_share_ctrl() else {
            return; // checked above
        };
        // SAFETY: as in `enqueue_take`.
        let Some(host_rows) = (unsafe { rows.host_view() }) else {
            return;
        };
        pass(&arrays, views, host_rows);
    })
}

/// Adds `x` to the `f32` in `word` (a compare-and-swap loop: several vertices may push to one
/// head at once).
fn add(word: &AtomicU32, x: f32) {
    let _ = word.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
        Some((f32::from_bits(bits) + x).to_bits())
    });
}

/// Enqueues a push round's pushes on `stream` (a host-backend stream), after the take and
/// the zeroing of the slots of other devices' vertices: every owned vertex with a share above
/// 0 (those the take took) adds it to the residual of every head of its out-arcs.
pub(super) fn enqueue_push(
    stream: &Stream,
    arrays: SweepArrays,
    out_rows: &DeviceCsr,
) -> Result<(), Error> {
    launch_over_rows(
        stream,
        arrays,
        out_rows,
        |arrays, (residual, share, _), rows| {
            par_owned(&arrays.owned).for_each(|v| {
                let s = load(&share[v as usize]);
                if s > 0.0 {
                    for &w in rows.row(v).0 {
                        add(&residual[w as usize], s);
                    }
                }
            });
        },
    )
}

/// Enqueues a push round's absorb on `stream` (a host-backend stream): where `incoming`,
/// every owned vertex adds its entry of the share array (a peer's slots of the owned
/// vertices, copied there) to its residual; where `collect`, the owned vertices above
/// epsilon are added to the worklist's end word.
pub(super) fn enqueue_absorb(
    stream: &Stream,
    arrays: SweepArrays,
    incoming: bool,
    collect: bool,
) -> Result<(), Error> {
    arrays.residual_share_ctrl()?;
    stream.launch_host(move || {
        let Ok((residual, share, ctrl)) = arrays.residual_share_ctrl() else {
            return; // checked above
        };
        let epsilon = arrays.epsilon;
        let above: u32 = par_owned(&arrays.owned)
            .map(|v| {
                let res = &residual[v as usize];
                let mut now = load(res);
                if incoming {
                    let x = load(&share[v as usize]);
                    if x > 0.0 {
                        now += x;
                        store(res, now);
                    }
                }
                u32::from(collect && now > epsilon)
            })
            .sum();
        ctrl[CTRL_CROSSED].fetch_add(above, Ordering::Relaxed);
    })
}
