//! [`HostPart`]: one host-backend device's kernels of a multi-device run, closures on its
//! stream (rayon inside) over its own buffers, the rows of its owned vertices of the CSRs
//! included (read through [`DeviceCsr::host_view`], which panics on a row it does not hold).

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use groute_core::{Buffer, Context, Device, DeviceId, Error, Stream};
use groute_graph::Csr;
use groute_worklist::{DeviceCsr, HostCsrRows};
use rayon::prelude::*;

use super::part::{Part, PartCounts, bitmap_words, check_list_fits, words_of};
use crate::UNREACHED;
use crate::direction::readback::{COUNTERS, EXAMINED, FRONTIER, IN_ARCS, OUT_ARCS, read_counters};

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
    counters: Buffer<u64>,
    counters_host: Buffer<u64>,
    bitmap: Buffer<u32>,
    /// A list of push finds that outgrew its capacity this run, as `capacity << 32 | finds`
    /// (0: none; it cannot happen; reported by `check_worklist`).
    list_overflow: Arc<AtomicU64>,
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
            counters: device.alloc::<u64>(COUNTERS)?,
            counters_host: context.alloc_host::<u64>(COUNTERS)?,
            bitmap: device.alloc::<u32>(n.div_ceil(32).max(1))?,
            list_overflow: Arc::new(AtomicU64::new(0)),
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

    /// Enqueues giving level `mark` to every unvisited vertex that `vertices` reads from the
    /// received `packet` (valid in stream order: the stream waited for it, and nothing writes
    /// it before the release event the caller records after this kernel), counting the owned
    /// ones.
    fn apply_vertices(
        &self,
        packet: &Buffer<u32>,
        mark: u32,
        vertices: impl FnOnce(&[u32]) -> Vec<usize> + Send + 'static,
    ) -> Result<(), Error> {
        host_view(packet.host_ptr())?;
        let packet = packet.clone();
        let (push, pull, owned) = (self.push.clone(), self.pull.clone(), self.owned.clone());
        self.enqueue(move |levels, counters| {
            // SAFETY: as the caller says, nothing writes the packet while the slice lives.
            let Some(words) = (unsafe { packet.as_host_slice() }) else {
                return;
            };
            let Some((push, pull)) = both_rows(&push, &pull) else {
                return;
            };
            let applied: Vec<u32> = vertices(words)
                .into_par_iter()
                .filter(|&v| {
                    levels.get(v).is_some_and(|l| {
                        l.compare_exchange(UNREACHED, mark, Ordering::Relaxed, Ordering::Relaxed)
                            .is_ok()
                    })
                })
                .filter_map(|v| u32::try_from(v).ok().filter(|v| owned.contains(v)))
                .collect();
            count(counters, &applied, (&push, &pull));
        })
    }
}

/// Adds `finds` (owned vertices of the next frontier) and their out- and in-degrees (rows of
/// `push` and `pull`) to `counters`.
fn count(
    counters: &[AtomicU64],
    finds: &[u32],
    (push, pull): (&HostCsrRows<'_>, &HostCsrRows<'_>),
) {
    let out: u64 = finds.iter().map(|&v| push.degree(v) as u64).sum();
    let inn: u64 = finds.iter().map(|&v| pull.degree(v) as u64).sum();
    counters[FRONTIER].fetch_add(finds.len() as u64, Ordering::Relaxed);
    counters[OUT_ARCS].fetch_add(out, Ordering::Relaxed);
    counters[IN_ARCS].fetch_add(inn, Ordering::Relaxed);
}

/// The vertices of `owned` at level `level`.
fn at_level(levels: &[AtomicU32], owned: Range<u32>, level: u32) -> Vec<u32> {
    owned
        .into_par_iter()
        .filter(|&v| levels[v as usize].load(Ordering::Relaxed) == level)
        .collect()
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
        s.fill(&self.counters, 0u64)?;
        self.list_overflow.store(0, Ordering::Relaxed);
        let (push, pull, owned) = (self.push.clone(), self.pull.clone(), self.owned.clone());
        self.enqueue(move |_, counters| {
            if let Some(rows) = both_rows(&push, &pull)
                && owned.contains(&source)
            {
                count(counters, &[source], (&rows.0, &rows.1));
            }
        })
    }

    fn push(&self, level: u32, _frontier: u32) -> Result<(), Error> {
        let (push, owned) = (self.push.clone(), self.owned.clone());
        self.enqueue(move |levels, _| {
            let Some(push) = rows(&push) else {
                return;
            };
            at_level(levels, owned, level).par_iter().for_each(|&v| {
                for &u in push.row(v).0 {
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

    fn pull(&self, level: u32, write_bitmap: bool) -> Result<(), Error> {
        let (push, pull, owned) = (self.push.clone(), self.pull.clone(), self.owned.clone());
        let words = words_of(&owned, bitmap_words(&self.bitmap)?);
        self.enqueue(move |levels, counters| {
            let Some((push, pull)) = both_rows(&push, &pull) else {
                return;
            };
            let (arcs, finds) = owned
                .into_par_iter()
                .with_min_len(256)
                .filter(|&v| levels[v as usize].load(Ordering::Relaxed) == UNREACHED)
                .map(|v| {
                    let mut arcs = 0u64;
                    for &u in pull.row(v).0 {
                        arcs += 1;
                        if levels[u as usize].load(Ordering::Relaxed) == level {
                            levels[v as usize].store(level + 1, Ordering::Relaxed);
                            return (arcs, Some(v));
                        }
                    }
                    (arcs, None)
                })
                .fold(
                    || (0u64, Vec::new()),
                    |(total, mut finds), (arcs, found)| {
                        finds.extend(found);
                        (total + arcs, finds)
                    },
                )
                .reduce(
                    || (0u64, Vec::new()),
                    |(a, mut finds), (b, more)| {
                        finds.extend(more);
                        (a + b, finds)
                    },
                );
            counters[EXAMINED].fetch_add(arcs, Ordering::Relaxed);
            count(counters, &finds, (&push, &pull));
        })?;
        if write_bitmap {
            self.mark_bitmap(level + 1, words)?;
        }
        Ok(())
    }

    fn count_push_finds(&self, mark: u32, _frontier: u32, write_bitmap: bool) -> Result<(), Error> {
        let (push, pull, owned) = (self.push.clone(), self.pull.clone(), self.owned.clone());
        self.enqueue(move |levels, counters| {
            if let Some((push, pull)) = both_rows(&push, &pull) {
                // No other device's discoveries are applied yet: the owned vertices at `mark`
                // are this push's.
                count(counters, &at_level(levels, owned, mark), (&push, &pull));
            }
        })?;
        if write_bitmap {
            self.mark_bitmap(mark, 0..bitmap_words(&self.bitmap)?)?;
        }
        Ok(())
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
        self.apply_vertices(packet, mark, move |words| {
            words
                .par_iter()
                .enumerate()
                .flat_map_iter(|(i, &bits)| {
                    let first = (word_offset as usize + i) * 32;
                    (0..32usize)
                        .filter(move |b| bits >> b & 1 == 1)
                        .map(move |b| first + b)
                })
                .collect()
        })
    }

    fn list_push_finds(&self, mark: u32, _frontier: u32, cap: u32) -> Result<(), Error> {
        let (bitmap, overflow) = (self.bitmap.clone(), self.list_overflow.clone());
        check_list_fits(cap, bitmap.len(), "a list of push finds in the bitmap sent")?;
        self.enqueue(move |levels, _| {
            let Some(out) = bitmap.host_atomic_u32() else {
                return;
            };
            // No other device's discoveries are applied yet: the vertices at `mark` are this
            // push's.
            let n = levels.len() as u32;
            let finds = at_level(levels, 0..n, mark);
            let count = u32::try_from(finds.len()).unwrap_or(u32::MAX);
            if count > cap {
                overflow.store(u64::from(cap) << 32 | u64::from(count), Ordering::Relaxed);
            }
            out[0].store(count, Ordering::Relaxed);
            for (slot, &v) in out[1..].iter().zip(finds.iter().take(cap as usize)) {
                slot.store(v, Ordering::Relaxed);
            }
        })
    }

    fn apply_list(&self, list: &Buffer<u32>, cap: u32, mark: u32) -> Result<(), Error> {
        check_list_fits(cap, list.len(), "a received list of push finds")?;
        self.apply_vertices(list, mark, move |words| {
            let listed = words[0].min(cap) as usize;
            words[1..=listed].iter().map(|&v| v as usize).collect()
        })
    }

    fn read_counts(&self) -> Result<PartCounts, Error> {
        let counters = read_counters(self.stream(), (&self.counters, &self.counters_host))?;
        Ok(PartCounts::from_counters(&counters))
    }

    fn check_worklist(&self) -> Result<(), Error> {
        // No worklist: the host steps find their frontiers in the levels.
        self.stream.synchronize()?;
        match self.list_overflow.load(Ordering::Relaxed) {
            0 => Ok(()),
            overflow => Err(Error::CapacityExceeded {
                what: "direction-optimizing BFS list of push finds".into(),
                capacity: overflow >> 32,
                needed: overflow & u64::from(u32::MAX),
                setting: "none (a bug: please report it)",
            }),
        }
    }

    fn levels(&self) -> Result<Vec<u32>, Error> {
        let n = self.n;
        self.context
            .device(self.id)?
            .download(&self.levels.slice(0..n)?)
    }
}
