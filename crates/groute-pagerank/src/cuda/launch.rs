//! Typed launch wrappers of `kernels/pagerank/pagerank.cu` (the CUDA mirror of the host
//! kernels), their `#[repr(C)]` argument structs and the control block's layout; the table
//! of wrappers and kernels, and how they check and keep memory, are in the docs of
//! [`crate::cuda`], which re-exports the public items.

use std::ops::Range;
use std::sync::Arc;

use groute_core::Error;
use groute_core::backend::{RawMemory, RawSlice, RawStream};
use groute_core::cuda::{CudaModule, CudaStream, DevicePtr, KernelArg, KernelSource, LaunchConfig};
use groute_worklist::{CsrPtrs, DeviceCsr};

/// Threads per block of every PageRank kernel (a multiple of 32).
pub const PAGERANK_BLOCK: u32 = 256;

/// `kernels/pagerank/pagerank.cu` (embedded by groute-kernels, whose list the CI compile check
/// iterates over).
pub const PAGERANK_SOURCE: KernelSource = groute_kernels::pagerank::PAGERANK;

/// Mirror of `PageRankOps` in `kernels/pagerank/pagerank.cu`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PageRankArgs {
    /// First owned vertex.
    pub owned_begin: u32,
    /// One past the last owned vertex.
    pub owned_end: u32,
    /// Full-length `f32` residual / halo accumulation.
    pub residual: DevicePtr<f32>,
    /// `f32` ranks of the owned range.
    pub rank: DevicePtr<f32>,
    /// Damping factor.
    pub alpha: f32,
    /// Scheduling threshold.
    pub epsilon: f32,
}

const _: () = assert!(std::mem::size_of::<PageRankArgs>() == 32);
const _: () = assert!(std::mem::offset_of!(PageRankArgs, residual) == 8);
const _: () = assert!(std::mem::offset_of!(PageRankArgs, rank) == 16);
const _: () = assert!(std::mem::offset_of!(PageRankArgs, alpha) == 24);
const _: () = assert!(std::mem::offset_of!(PageRankArgs, epsilon) == 28);

// SAFETY: `#[repr(C)]` with the field types, order and offsets of `PageRankOps` (asserted
// above); the kernel reads no padding.
unsafe impl KernelArg for PageRankArgs {}

/// Mirror of `groute::DeviceWorklist` in `kernels/include/worklist.cuh`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DeviceWorklistArgs {
    /// Slots (`mask + 1` u32s, a power of two).
    pub data: DevicePtr<u32>,
    /// Capacity - 1.
    pub mask: u32,
    /// First position still unconsumed (the round's own items included).
    pub first: u32,
    /// The control block (`CTRL_WORDS` u32s; `CTRL_WL_END`, `CTRL_WL_OVERFLOW` are the
    /// worklist's).
    pub ctrl: DevicePtr<u32>,
}

const _: () = assert!(std::mem::size_of::<DeviceWorklistArgs>() == 24);
const _: () = assert!(std::mem::offset_of!(DeviceWorklistArgs, mask) == 8);
const _: () = assert!(std::mem::offset_of!(DeviceWorklistArgs, first) == 12);
const _: () = assert!(std::mem::offset_of!(DeviceWorklistArgs, ctrl) == 16);

/// Words of PageRank's control block before the hub slots (`CTRL_HUB_SLOTS` in
/// `kernels/pagerank/pagerank.cu`; the first `groute::CTRL_WORDS` are the worklist's).
pub const CTRL_WORDS: usize = 16;
/// Control word counting the vertices a sweep pushed (`CTRL_PUSHED`).
pub const CTRL_PUSHED: usize = 7;
/// First of the two control words of the hub list's 64-bit counter (`CTRL_HUB_COUNTER`;
/// zeroed by the host before each sweep or expand).
pub const CTRL_HUB_COUNTER: usize = 8;
/// First of the two control words of the 64-bit count of the out-arcs of the vertices a
/// pull sweep's take took (`CTRL_TAKEN_ARCS`).
pub const CTRL_TAKEN_ARCS: usize = 12;
/// u32 words per hub slot (`groute::HubList::SLOT_WORDS`).
pub const HUB_SLOT_WORDS: usize = 4;
/// Degree from which a vertex is pushed as a hub (`groute::HubList::MIN_DEGREE`).
pub const HUB_MIN_DEGREE: u64 = 2048;

// SAFETY: `#[repr(C)]` with the field types, order and offsets of `groute::DeviceWorklist`
// (asserted above); it has no padding.
unsafe impl KernelArg for DeviceWorklistArgs {}

/// A device's graph and PageRank arrays.
#[derive(Clone, Debug)]
pub struct PageRankBuffers {
    /// The owned rows of the CSR (`owned`): the kernels index them by global vertex and arc
    /// ids through [`DeviceCsr::device_ptrs`].
    pub csr: DeviceCsr,
    /// Vertices of the whole graph.
    pub num_vertices: usize,
    /// `num_vertices` f32 residuals (full length).
    pub residual: RawSlice,
    /// f32 ranks of the owned range.
    pub rank: RawSlice,
    /// The owned range.
    pub owned: Range<u32>,
    /// Damping factor.
    pub alpha: f32,
    /// Scheduling threshold.
    pub epsilon: f32,
}

/// The device worklist: its slots, the first unconsumed position and the control block.
#[derive(Clone, Debug)]
pub struct DeviceWorklistBuffers {
    /// Slots (u32s; a power of two of them).
    pub data: RawSlice,
    /// First position still unconsumed (appends never overwrite from here on).
    pub first: u32,
    /// The control block: [`CTRL_WORDS`] u32s, then `hub_capacity` slots of
    /// [`HUB_SLOT_WORDS`] u32s.
    pub ctrl: RawSlice,
    /// Slots of the hub list (0: none; every hub is then pushed by its block).
    pub hub_capacity: u32,
}

/// An append target: `capacity` elements, a u32 count and a u32 overflow word.
#[derive(Clone, Debug)]
pub struct AppendBuffers {
    /// The elements.
    pub data: RawSlice,
    /// One u32: the number appended.
    pub count: RawSlice,
    /// One u32: the size needed when it overflowed (0: none).
    pub overflow: RawSlice,
}

/// Mirror of `AppendBuffer<T>` in `kernels/include/pagerank_push.cuh`: a bounded list on the
/// device, its append count and its overflow word, passed to a kernel as one parameter.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct AppendArgs<T> {
    /// The elements.
    pub(crate) data: DevicePtr<T>,
    /// Elements `data` holds.
    pub(crate) capacity: u32,
    /// Not used (the padding before the next pointer, named).
    pub(crate) unused: u32,
    /// One u32: the number appended.
    pub(crate) count: DevicePtr<u32>,
    /// One u32: the size needed when it overflowed (0: none).
    pub(crate) overflow: DevicePtr<u32>,
}

const _: () = assert!(std::mem::size_of::<AppendArgs<u32>>() == 32);
const _: () = assert!(std::mem::offset_of!(AppendArgs<u32>, capacity) == 8);
const _: () = assert!(std::mem::offset_of!(AppendArgs<u32>, count) == 16);
const _: () = assert!(std::mem::offset_of!(AppendArgs<u32>, overflow) == 24);
const _: () = assert!(std::mem::size_of::<AppendArgs<crate::VertexResidual>>() == 32);

// SAFETY: `#[repr(C)]` with the field types, order and offsets of `AppendBuffer<T>` for any
// element type (asserted above: a device pointer's size does not depend on it); no padding.
unsafe impl<T: Copy> KernelArg for AppendArgs<T> {}

pub(super) fn too_many(what: &'static str, n: usize) -> Error {
    Error::invalid(what, n, "at most u32::MAX elements per launch")
}

pub(super) fn elements<T>(what: &'static str, s: &RawSlice) -> Result<u32, Error> {
    let n = s.len / std::mem::size_of::<T>();
    u32::try_from(n).map_err(|_| too_many(what, n))
}

/// `s` as an array of one `f32` per vertex of `pr`'s graph: an error naming `what` where it
/// is shorter.
pub(super) fn per_vertex_f32(
    what: &'static str,
    s: &RawSlice,
    pr: &PageRankBuffers,
) -> Result<DevicePtr<f32>, Error> {
    if s.len / 4 < pr.num_vertices {
        return Err(Error::LengthMismatch {
            operation: what,
            dst: s.len / 4,
            src: pr.num_vertices,
        });
    }
    DevicePtr::from_slice(s)
}

fn word(what: &'static str, s: &RawSlice) -> Result<DevicePtr<u32>, Error> {
    if s.len < 4 {
        return Err(Error::invalid(what, s.len, "at least one u32 (4 bytes)"));
    }
    DevicePtr::from_slice(s)
}

impl PageRankBuffers {
    pub(super) fn args(&self) -> Result<PageRankArgs, Error> {
        let n = self.num_vertices;
        if n == 0 || self.residual.len / 4 < n {
            return Err(Error::LengthMismatch {
                operation: "pagerank residual (one f32 per vertex)",
                dst: self.residual.len / 4,
                src: n,
            });
        }
        // A gather or take of one vertex range (the sweeps' rounds by vertex ranges) passes
        // a part of the rows: the kernels read the rows of `owned` only.
        let rows = self.csr.rows();
        if self.owned.start < rows.start || self.owned.end > rows.end {
            return Err(Error::invalid(
                "pagerank device CSR rows",
                format_args!("{rows:?}"),
                format!("holding the owned range {:?}", self.owned),
            ));
        }
        let local = (self.owned.end.saturating_sub(self.owned.start)) as usize;
        if self.owned.end as usize > n || self.rank.len / 4 < local {
            return Err(Error::LengthMismatch {
                operation: "pagerank rank (one f32 per owned vertex)",
                dst: self.rank.len / 4,
                src: local,
            });
        }
        Ok(PageRankArgs {
            owned_begin: self.owned.start,
            owned_end: self.owned.end,
            residual: DevicePtr::from_slice(&self.residual)?,
            rank: DevicePtr::from_slice(&self.rank)?,
            alpha: self.alpha,
            epsilon: self.epsilon,
        })
    }

    /// The owned rows' offsets and targets, rebased to global ids.
    pub(super) fn csr_ptrs(&self) -> Result<CsrPtrs, Error> {
        self.csr.device_ptrs()
    }

    pub(super) fn memory(&self) -> Vec<Arc<dyn RawMemory>> {
        let mut memory = csr_memory(&self.csr);
        memory.extend([&self.residual, &self.rank].map(|s| s.memory.clone()));
        memory
    }
}

/// The buffers of a device's CSR rows (to keep alive while a kernel reads them).
pub(super) fn csr_memory(csr: &DeviceCsr) -> Vec<Arc<dyn RawMemory>> {
    let (offsets, targets, weights) = csr.buffers();
    let mut memory = vec![offsets.raw().memory, targets.raw().memory];
    memory.extend(weights.map(|w| w.raw().memory));
    memory
}

impl DeviceWorklistBuffers {
    pub(super) fn args(&self) -> Result<DeviceWorklistArgs, Error> {
        let capacity = elements::<u32>("worklist capacity", &self.data)?;
        if !capacity.is_power_of_two() {
            return Err(Error::invalid(
                "wl_capacity (--wl-capacity)",
                capacity,
                "a power of two on the CUDA backend",
            ));
        }
        let words = CTRL_WORDS as u64 + HUB_SLOT_WORDS as u64 * u64::from(self.hub_capacity);
        if (self.ctrl.len as u64) < words * 4 {
            return Err(Error::invalid(
                "worklist control block",
                self.ctrl.len,
                "at least CTRL_WORDS u32s plus HUB_SLOT_WORDS per hub slot",
            ));
        }
        Ok(DeviceWorklistArgs {
            data: DevicePtr::from_slice(&self.data)?,
            mask: capacity - 1,
            first: self.first,
            ctrl: DevicePtr::from_slice(&self.ctrl)?,
        })
    }

    pub(super) fn memory(&self) -> Vec<Arc<dyn RawMemory>> {
        vec![self.data.memory.clone(), self.ctrl.memory.clone()]
    }
}

impl AppendBuffers {
    pub(super) fn args<T>(&self, what: &'static str) -> Result<AppendArgs<T>, Error> {
        Ok(AppendArgs {
            data: DevicePtr::from_slice(&self.data)?,
            capacity: elements::<T>(what, &self.data)?,
            unused: 0,
            count: word("append count", &self.count)?,
            overflow: word("append overflow", &self.overflow)?,
        })
    }

    pub(super) fn memory(&self) -> Vec<Arc<dyn RawMemory>> {
        [&self.data, &self.count, &self.overflow]
            .iter()
            .map(|s| s.memory.clone())
            .collect()
    }
}

pub(super) fn config(
    stream: &dyn RawStream,
    kernel: &str,
    n: usize,
) -> Result<(groute_core::cuda::CudaFunction, LaunchConfig), Error> {
    let f = CudaModule::load(stream, &PAGERANK_SOURCE)?.function(kernel)?;
    let resident = f.max_resident_grid(PAGERANK_BLOCK, 0)?.max(1);
    Ok((
        f,
        LaunchConfig::for_elements(n.max(1), PAGERANK_BLOCK, Some(resident)),
    ))
}

pub(super) fn keep(stream: &dyn RawStream, memory: Vec<Arc<dyn RawMemory>>) -> Result<(), Error> {
    CudaStream::from_raw(stream)?.keep_alive(memory)
}

/// Keeps what a kernel reads and writes alive until it completes: the PageRank arrays `pr`,
/// the worklist `wl`, and `more` (a push kernel's remote list, a pull pass's buffers, a push
/// round's shares).
pub(super) fn keep_memory(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    wl: &DeviceWorklistBuffers,
    more: impl IntoIterator<Item = Arc<dyn RawMemory>>,
) -> Result<(), Error> {
    let mut memory = pr.memory();
    memory.extend(wl.memory());
    memory.extend(more);
    keep(stream, memory)
}

/// Enqueues a round over the owned range, as a range, on `stream`: pushes every owned vertex
/// whose residual exceeds `floor` (0 for the first round; epsilon for a round that replaces
/// every pending item) and adds their number to control word [`CTRL_PUSHED`]. Owned vertices
/// that cross epsilon are appended to `wl`, remote vertices whose halo slot was empty are
/// appended to `remote` (u32 vertex ids), hubs are listed for [`launch_push_hubs`].
pub fn launch_sweep(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    wl: &DeviceWorklistBuffers,
    floor: f32,
    remote: &AppendBuffers,
) -> Result<(), Error> {
    if floor.is_nan() || floor < 0.0 {
        return Err(Error::invalid("sweep floor", floor, "a residual >= 0"));
    }
    let ops = pr.args()?;
    let (f, cfg) = config(stream, "pagerank_sweep", pr.owned.len())?;
    let csr = pr.csr_ptrs()?;
    let args = (
        ops,
        csr.offsets,
        csr.targets,
        wl.args()?,
        floor,
        wl.hub_capacity,
        remote.args::<u32>("remote list")?,
    );
    // SAFETY: pagerank_sweep(PageRankOps ops, const unsigned long long* offsets, const
    // unsigned* targets, DeviceWorklist wl, float floor, unsigned hub_capacity,
    // AppendBuffer<unsigned> remote_list): the tuple matches it field by field (struct
    // layouts asserted above);
    // the owned range lies inside the residual, the CSR part holds the owned rows and
    // their arcs, its pointers rebased so that the kernel's global vertex and arc ids of the
    // owned rows land inside it, and the rank holds the owned range (checked by `args`); the control block holds CTRL_WORDS words and `hub_capacity` hub
    // slots (checked by `wl.args`); appends past a capacity only record the overflow; all
    // memory is device-addressable (`from_slice`) and kept alive below until the kernel
    // completes.
    unsafe { f.launch(stream, cfg, args)? };
    keep_memory(stream, pr, wl, remote.memory())
}

/// Enqueues a round over worklist positions `[first, first + count)` on `stream`; outputs as
/// in [`launch_sweep`].
pub fn launch_expand(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    wl: &DeviceWorklistBuffers,
    first: u32,
    count: u32,
    remote: &AppendBuffers,
) -> Result<(), Error> {
    let ops = pr.args()?;
    let wla = wl.args()?;
    if u64::from(count) > u64::from(wla.mask) + 1 {
        return Err(Error::invalid(
            "expand count",
            count,
            "at most the worklist capacity",
        ));
    }
    let (f, cfg) = config(stream, "pagerank_expand", count as usize)?;
    let csr = pr.csr_ptrs()?;
    let args = (
        ops,
        csr.offsets,
        csr.targets,
        wla,
        first,
        count,
        wl.hub_capacity,
        remote.args::<u32>("remote list")?,
    );
    // SAFETY: pagerank_expand(PageRankOps ops, const unsigned long long* offsets, const
    // unsigned* targets, DeviceWorklist wl, unsigned first, unsigned count, unsigned
    // hub_capacity, AppendBuffer<unsigned> remote_list): the tuple matches it field by field; worklist positions are taken
    // modulo its capacity and hold owned vertex ids written by this crate's kernels (the
    // kernel reads each item's row without checking ownership: every append is of an owned
    // vertex, the push's of owned heads and the receive's of the items it owns, so the rows
    // read are the device's); sizes as in `launch_sweep`; memory kept alive below.
    unsafe { f.launch(stream, cfg, args)? };
    keep_memory(stream, pr, wl, remote.memory())
}

/// Enqueues, after a [`launch_sweep`] or [`launch_expand`] on the same `stream`, the push of
/// the hubs it listed: their arcs in tiles over the whole resident grid; outputs as in
/// [`launch_sweep`].
pub fn launch_push_hubs(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    wl: &DeviceWorklistBuffers,
    remote: &AppendBuffers,
) -> Result<(), Error> {
    let csr = pr.csr_ptrs()?;
    enqueue_push_hubs(stream, pr, csr.offsets, csr.targets, wl, remote)
}

/// `pagerank_push_hubs` over the lists `offsets`/`targets`: the owned rows of the CSR (rebased
/// pointers; the hubs recorded by vertex id) or a pull sweep's cut lists (recorded by their
/// index there). The caller keeps the lists' memory alive.
pub(crate) fn enqueue_push_hubs(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    offsets: DevicePtr<u64>,
    targets: DevicePtr<u32>,
    wl: &DeviceWorklistBuffers,
    remote: &AppendBuffers,
) -> Result<(), Error> {
    let ops = pr.args()?;
    let f = CudaModule::load(stream, &PAGERANK_SOURCE)?.function("pagerank_push_hubs")?;
    let grid = f.max_resident_grid(PAGERANK_BLOCK, 0)?.max(1);
    let args = (
        ops,
        offsets,
        targets,
        wl.args()?,
        wl.hub_capacity,
        remote.args::<u32>("remote list")?,
    );
    // SAFETY: pagerank_push_hubs(PageRankOps ops, const unsigned long long* offsets, const
    // unsigned* targets, DeviceWorklist wl, unsigned hub_capacity, AppendBuffer<unsigned>
    // remote_list): the tuple matches it; the kernel reads at most `hub_capacity` slots, which the control block
    // holds (checked by `wl.args`), written in stream order by the round before: indices of
    // `offsets` rows (the owned vertices of the CSR part, by global id through its rebased
    // pointers, or the cut lists' indices), whose arcs lie inside `targets` and lead to
    // vertex ids < n (built at upload); sizes as in `launch_sweep`;
    // memory kept alive below (the caller keeps `offsets` and `targets`).
    unsafe { f.launch(stream, LaunchConfig::linear(grid, PAGERANK_BLOCK), args)? };
    keep_memory(stream, pr, wl, remote.memory())
}

/// Enqueues merge-before-send on `stream`, after a round's kernels: for each vertex of
/// `remote` (the round's remote list, its length in the u32 `remote.count`, read on the
/// device), takes its halo accumulation into a `VertexResidual` of `send`. Needs no read-back
/// of the count first; a list that overflowed (its overflow word, checked after the round)
/// is packed up to its capacity and the run fails naming the setting.
pub fn launch_pack_remote(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    remote: &AppendBuffers,
    send: &AppendBuffers,
) -> Result<(), Error> {
    let ops = pr.args()?;
    let list = remote.args::<u32>("remote list")?;
    // Grid-stride over the count: one resident grid covers any list.
    let (f, cfg) = config(stream, "pagerank_pack_remote", list.capacity as usize)?;
    let args = (
        ops,
        list,
        send.args::<crate::VertexResidual>("send buffer")?,
    );
    // SAFETY: pagerank_pack_remote(PageRankOps ops, AppendBuffer<unsigned> remote,
    // AppendBuffer<VertexResidual> send): the tuple matches it (AppendArgs mirrors
    // AppendBuffer, asserted above); the kernel reads at most `remote.capacity` entries of
    // the list (its length), vertex ids < n written by the round
    // kernels from the CSR's arcs; VertexResidual is 8 bytes, vertex first, as in the kernel; appends
    // past the send capacity only record the overflow; memory kept alive below.
    unsafe { f.launch(stream, cfg, args)? };
    let mut memory = pr.memory();
    memory.extend(remote.memory());
    memory.extend(send.memory());
    keep(stream, memory)
}

/// Enqueues SplitReceive over `count` received `VertexResidual`s on `stream` (the
/// high-priority stream): kept vertices are appended to `wl`, passed items to `send`, and
/// `dropped` (one u32) counts the rest.
pub fn launch_split_receive(
    stream: &dyn RawStream,
    pr: &PageRankBuffers,
    received: &RawSlice,
    count: u32,
    wl: &DeviceWorklistBuffers,
    send: &AppendBuffers,
    dropped: &RawSlice,
) -> Result<(), Error> {
    let ops = pr.args()?;
    if (count as usize) * 8 > received.len {
        return Err(Error::LengthMismatch {
            operation: "pagerank_split_receive (count within the packet)",
            dst: received.len / 8,
            src: count as usize,
        });
    }
    let (f, cfg) = config(stream, "pagerank_split_receive", count as usize)?;
    let args = (
        ops,
        DevicePtr::<crate::VertexResidual>::from_slice(received)?,
        count,
        wl.args()?,
        send.args::<crate::VertexResidual>("send buffer")?,
        word("dropped count", dropped)?,
    );
    // SAFETY: pagerank_split_receive(PageRankOps ops, const VertexResidual* received, unsigned
    // count, DeviceWorklist wl, AppendBuffer<VertexResidual> send, unsigned* dropped): the
    // tuple matches it; the
    // packet holds `count` items (checked); the kernel indexes the residual only for vertices
    // it owns; memory kept alive below.
    unsafe { f.launch(stream, cfg, args)? };
    let mut memory = pr.memory();
    memory.push(received.memory.clone());
    memory.extend(wl.memory());
    memory.extend(send.memory());
    memory.push(dropped.memory.clone());
    keep(stream, memory)
}
