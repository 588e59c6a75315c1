//! [`HostPart`]: one host-backend device's kernels of a multi-device run, closures on its
//! stream (rayon inside) over its own buffers, the rows of its owned vertices of the CSRs
//! included (read through [`DeviceCsr::host_view`], which panics on a row it does not hold).

use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use groute_core::{Buffer, Context, Device, DeviceId, Error, Stream};
use groute_graph::Csr;
use groute_worklist::{DeviceCsr, HostCsrRows};
use rayon::prelude::*;

use super::part::{Part, PartCounts};
use crate::UNREACHED;
use crate::direction::readback::{
    COUNTERS, CTRL_WL_END, CTRL_WORDS, EXAMINED, FRONTIER, IN_ARCS, OUT_ARCS, read_back,
    read_counters,
};

/// One host device's storage.
pub(super) struct HostPart {
    context: Context,
    id: DeviceId,
    stream: Stream,
    /// Vertices of the graph.
    n: usize,
    /// The owned rows of the push CSR.
    push: DeviceCsr,
    /// The owned rows of the pull CSR (`None`: the graph is symmetric, pull over `push`).
    pull: Option<DeviceCsr>,
    owned: Range<u32>,
    levels: Buffer<u32>,
    /// The frontier at `[0, ctrl[WL_END])`.
    wl: Buffer<u32>,
    ctrl: Buffer<u32>,
    counters: Buffer<u64>,
    ctrl_host: Buffer<u32>,
    counters_host: Buffer<u64>,
    bitmap: Buffer<u32>,
}

fn host_view<T>(view: Option<T>) -> Result<T, Error> {
    view.ok_or(Error::Unsupported {
        operation: "host kernels on memory the host cannot address",
        backend: "this",
    })
}

/// The rows of a part uploaded to a host-backend device (`None` elsewhere).
fn rows(csr: &DeviceCsr) -> Option<HostCsrRows<'_>> {
    // SAFETY: a part is written once, by its upload (which waits for its copies), and never
    // again: no stream writes it while the view lives.
    unsafe { csr.host_view() }
}

/// The push and pull rows of `part`'s CSRs (the pull rows are the push rows when the graph is
/// symmetric), `None` where the host cannot address them.
fn both_rows<'a>(
    push: &'a DeviceCsr,
    pull: &'a Option<DeviceCsr>,
) -> Option<(HostCsrRows<'a>, HostCsrRows<'a>)> {
    Some((rows(push)?, rows(pull.as_ref().unwrap_or(push))?))
}

impl HostPart {
    /// Storage on `device` (a host-backend device), which owns the vertices `owned`: their
    /// rows of `push` (and of `pull`, the transpose of a directed graph) are uploaded to it.
    pub(super) fn new(
        context: &Context,
        device: &Device,
        push: &Csr,
        pull: Option<&Csr>,
        owned: Range<u32>,
    ) -> Result<Self, Error> {
        let n = push.num_vertices();
        let upload = |csr: &Csr| DeviceCsr::upload(device, csr, owned.clone(), false);
        let part = HostPart {
            context: context.clone(),
            id: device.id(),
            stream: device.stream().clone(),
            levels: device.alloc::<u32>(n.max(1))?,
            wl: device.alloc::<u32>(n.max(1))?,
            ctrl: device.alloc::<u32>(CTRL_WORDS)?,
            counters: device.alloc::<u64>(COUNTERS)?,
            ctrl_host: context.alloc_host::<u32>(CTRL_WORDS)?,
            counters_host: context.alloc_host::<u64>(COUNTERS)?,
            bitmap: device.alloc::<u32>(n.div_ceil(32).max(1))?,
            n,
            push: upload(push)?,
            pull: pull.map(upload).transpose()?,
            owned,
        };
        host_view(part.levels.host_atomic_u32())?;
        host_view(both_rows(&part.push, &part.pull))?;
        Ok(part)
    }

    /// Enqueues `kernel` over the levels (atomics) and the counters.
    fn enqueue(
        &self,
        kernel: impl FnOnce(&[AtomicU32], &[AtomicU64]) + Send + 'static,
    ) -> Result<(), Error> {
        let (levels, counters) = (self.levels.clone(), self.counters.clone());
        self.stream.launch_host(move || {
            if let (Some(l), Some(c)) = (levels.host_atomic_u32(), counters.host_atomic_u64()) {
                kernel(l, c);
            }
        })
    }
}

impl Part for HostPart {
    fn stream(&self) -> &Stream {
        &self.stream
    }

    fn bitmap(&self) -> &Buffer<u32> {
        &self.bitmap
    }

    fn reset(&self, source: u32) -> Result<(), Error> {
        let s = self.stream();
        s.fill(&self.levels, UNREACHED)?;
        let src = source as usize;
        s.fill(&self.levels.slice(src..src + 1)?, 0u32)?;
        s.fill(&self.ctrl, 0u32)?;
        s.fill(&self.counters, 0u64)
    }

    fn push(&self, level: u32, frontier: u32) -> Result<(), Error> {
        let (push, wl) = (self.push.clone(), self.wl.clone());
        self.enqueue(move |levels, _| {
            let Some(wl) = wl.host_atomic_u32() else {
                return;
            };
            let Some(push) = rows(&push) else {
                return;
            };
            // The frontier is this device's owned vertices at `level` (scan_frontier).
            wl[..frontier as usize].par_iter().for_each(|v| {
                for &u in push.row(v.load(Ordering::Relaxed)).0 {
                    let _ = levels[u as usize].compare_exchange(
                        UNREACHED,
                        level + 1,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                }
            });
        })
    }

    fn pull(&self, level: u32) -> Result<(), Error> {
        let (push, pull, owned) = (self.push.clone(), self.pull.clone(), self.owned.clone());
        self.enqueue(move |levels, counters| {
            let Some((_, pull)) = both_rows(&push, &pull) else {
                return;
            };
            let arcs: u64 = owned
                .into_par_iter()
                .with_min_len(256)
                .filter(|&v| levels[v as usize].load(Ordering::Relaxed) == UNREACHED)
                .map(|v| {
                    let mut arcs = 0u64;
                    for &u in pull.row(v).0 {
                        arcs += 1;
                        if levels[u as usize].load(Ordering::Relaxed) == level {
                            levels[v as usize].store(level + 1, Ordering::Relaxed);
                            break;
                        }
                    }
                    arcs
                })
                .sum();
            counters[EXAMINED].fetch_add(arcs, Ordering::Relaxed);
        })
    }

    fn mark_bitmap(&self, mark: u32, words: Range<u32>) -> Result<(), Error> {
        let bitmap = self.bitmap.clone();
        self.enqueue(move |levels, _| {
            let Some(bitmap) = bitmap.host_atomic_u32() else {
                return;
            };
            words.into_par_iter().for_each(|w| {
                let first = w as usize * 32;
                let bits = (0..32)
                    .filter(|b| {
                        levels
                            .get(first + b)
                            .is_some_and(|l| l.load(Ordering::Relaxed) == mark)
                    })
                    .fold(0u32, |bits, b| bits | 1 << b);
                if let Some(word) = bitmap.get(w as usize) {
                    word.store(bits, Ordering::Relaxed);
                }
            });
        })
    }

    fn apply(&self, packet: &Buffer<u32>, word_offset: u32, mark: u32) -> Result<(), Error> {
        host_view(packet.host_ptr())?;
        let packet = packet.clone();
        self.enqueue(move |levels, _| {
            // SAFETY: the stream waited for the event that makes the packet valid before this
            // kernel, and its link reuses the buffer only after the release event, recorded
            // after this kernel: nothing writes it while the slice lives.
            let Some(words) = (unsafe { packet.as_host_slice() }) else {
                return;
            };
            words.par_iter().enumerate().for_each(|(i, &bits)| {
                let first = (word_offset as usize + i) * 32;
                for b in (0..32).filter(|b| bits >> b & 1 == 1) {
                    if let Some(l) = levels.get(first + b) {
                        let _ = l.compare_exchange(
                            UNREACHED,
                            mark,
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        );
                    }
                }
            });
        })
    }

    fn scan_frontier(&self, mark: u32) -> Result<(), Error> {
        let (push, pull, owned) = (self.push.clone(), self.pull.clone(), self.owned.clone());
        let (wl, ctrl) = (self.wl.clone(), self.ctrl.clone());
        self.enqueue(move |levels, counters| {
            let (Some(wl), Some(ctrl)) = (wl.host_atomic_u32(), ctrl.host_atomic_u32()) else {
                return;
            };
            let Some((push, pull)) = both_rows(&push, &pull) else {
                return;
            };
            let frontier: Vec<u32> = owned
                .into_par_iter()
                .filter(|&v| levels[v as usize].load(Ordering::Relaxed) == mark)
                .collect();
            for (slot, &v) in wl.iter().zip(&frontier) {
                slot.store(v, Ordering::Relaxed);
            }
            let out: u64 = frontier.iter().map(|&v| push.degree(v) as u64).sum();
            let inn: u64 = frontier.iter().map(|&v| pull.degree(v) as u64).sum();
            ctrl[CTRL_WL_END].store(frontier.len() as u32, Ordering::Relaxed);
            counters[FRONTIER].fetch_add(frontier.len() as u64, Ordering::Relaxed);
            counters[OUT_ARCS].fetch_add(out, Ordering::Relaxed);
            counters[IN_ARCS].fetch_add(inn, Ordering::Relaxed);
        })
    }

    fn read_counts(&self) -> Result<PartCounts, Error> {
        let counters = read_counters(self.stream(), (&self.counters, &self.counters_host))?;
        Ok(PartCounts::from_counters(&counters))
    }

    fn check_worklist(&self) -> Result<(), Error> {
        let ctrl = (&self.ctrl, &self.ctrl_host);
        let counters = (&self.counters, &self.counters_host);
        read_back(self.stream(), ctrl, counters, self.wl.len()).map(|_| ())
    }

    fn levels(&self) -> Result<Vec<u32>, Error> {
        let n = self.n;
        self.context
            .device(self.id)?
            .download(&self.levels.slice(0..n)?)
    }
}
