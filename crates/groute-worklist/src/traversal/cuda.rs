//! The CUDA [`DeviceWorker`](crate::DeviceWorker) of the min traversals: device-resident CSR, a full-length value
//! array, the device circular worklist and rotating outgoing buffers of `kernels/include/
//! worklist.cuh`, the expand / split-receive kernels of `kernels/include/traversal.cuh`
//! (instantiated per algorithm), two low-priority buffers (soft priority: the current low list
//! and the one a re-examination refills, allocated on first use), and one 64-byte control block
//! read back once per step.
//!
//! This file holds the device's storage ([`CudaTraversalDevice`]); beside it, `cuda/launch.rs`
//! the typed launches of the per-round kernels and `cuda/worker.rs` one run's
//! [`CudaTraversalWorker`].

mod launch;
mod worker;

use std::collections::VecDeque;
use std::ops::Range;

use groute_core::cuda::{CudaFunction, CudaModule, CudaStream, DevicePtr, KernelSource};
use groute_core::{Buffer, Device, Error, Stream};
use groute_kernels::abi::{TraversalCtrl, words_of};
use groute_kernels::abi_word;

use super::fused::FusedKernel;
use super::hub_policy::HubPolicy;
use crate::error::WorklistError;
use crate::part::DeviceCsr;
use crate::split::VertexValue;

pub(crate) use worker::CudaTraversalWorker;

/// The CUDA kernels of one min traversal (see `kernels/include/traversal.cuh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraversalKernels {
    /// The translation unit that instantiates `GROUTE_TRAVERSAL_KERNELS`, the kernels of one
    /// launch per round (`kernels/bfs/bfs.cu`).
    pub source: &'static KernelSource,
    /// The translation unit that instantiates `GROUTE_FUSED_TRAVERSAL_KERNEL`, the fused
    /// persistent kernel's builds (`kernels/bfs/bfs_fused.cu`): a program of its own, by far
    /// the longer to compile, compiled beside [`TraversalKernels::source`] on a first run.
    pub fused_source: &'static KernelSource,
    /// The expand kernel's name (`"bfs_expand"`).
    pub expand: &'static str,
    /// The split-receive kernel's name (`"bfs_split_receive"`).
    pub split_receive: &'static str,
    /// The fused persistent kernel's name (`"bfs_fused"`, `kernels/include/fused.cuh`).
    pub fused: &'static str,
    /// The soft-priority re-examination kernel's name (`"bfs_reexamine"`).
    pub reexamine: &'static str,
}

/// Threads per block of both kernels.
pub(super) const BLOCK: u32 = 256;
/// Outgoing buffers per device: the current one plus up to three sends in flight (the driver
/// pauses expansion while all are in flight, see `DeviceWorker::outgoing_available`). Only
/// the first is allocated with the device; the others when a send finds every buffer in
/// flight, so a ring whose copies keep up (and a device-driven run, which uses the first
/// buffer as its inbox and sends from none) holds one.
pub(super) const OUTGOING_BUFFERS: usize = 4;
/// Worklist slots per slot of each soft-priority low list: a deferred item is 8 bytes against
/// the worklist's 4, so the two lists together hold twice the worklist's bytes.
const WL_SLOTS_PER_LOW_SLOT: usize = 2;
/// Words of the control block ([`TraversalCtrl`]), read back after a round; the hub slots
/// follow them in the same buffer.
const CTRL_WORDS: usize = words_of::<TraversalCtrl>();
/// The control block's words by field (`groute::CTRL_*` of `kernels/include/abi_traversal.h`).
pub(super) const CTRL_WL_END: usize = abi_word!(TraversalCtrl, wl_end);
pub(super) const CTRL_SEND_END: usize = abi_word!(TraversalCtrl, send_end);
const CTRL_WL_OVERFLOW: usize = abi_word!(TraversalCtrl, wl_overflow);
const CTRL_SEND_OVERFLOW: usize = abi_word!(TraversalCtrl, send_overflow);
/// The hub list's 64-bit counter (two words), reset before each expand launch, and its
/// capacity in slots.
const CTRL_HUB_COUNT: usize = abi_word!(TraversalCtrl, hub_counts);
const CTRL_HUB_CAP: usize = abi_word!(TraversalCtrl, hub_capacity);
/// The low list's append counter, overflow word and smallest deferred priority.
const CTRL_LOW_END: usize = abi_word!(TraversalCtrl, low_end);
const CTRL_LOW_OVERFLOW: usize = abi_word!(TraversalCtrl, low_overflow);
const CTRL_LOW_MIN: usize = abi_word!(TraversalCtrl, low_min);
/// A device-driven run's outgoing ring positions the next device has read, stored by it, and
/// its inbox end, stored by the previous device (`fused_peer.rs`).
pub(super) const CTRL_SEND_FREED: usize = abi_word!(TraversalCtrl, send_freed);
pub(super) const CTRL_INBOX_PUBLISHED: usize = abi_word!(TraversalCtrl, inbox_published);
/// A device-driven run's batches of sends published to the next device (`fused_peer.rs`).
pub(super) const CTRL_SEND_BATCHES: usize = abi_word!(TraversalCtrl, send_batches);

/// `values`, `offsets`, `targets`, `weights` kernel arguments.
pub(super) type GraphArgs = (
    DevicePtr<u32>,
    DevicePtr<u64>,
    DevicePtr<u32>,
    DevicePtr<u32>,
);

/// One device's storage for a CUDA min traversal, kept across runs (allocated once).
pub(crate) struct CudaTraversalDevice {
    pub(super) stream: Stream,
    pub(super) owned: Range<u32>,
    /// The owned rows of the CSR (and their weights when weighted).
    pub(super) csr: DeviceCsr,
    /// Arcs of the CSR the part was uploaded from (the whole graph, or a process's rows of it):
    /// every arc id the kernels index by is below it.
    pub(super) graph_arcs: usize,
    pub(crate) values: Buffer<u32>,
    /// Every vertex's value before a run, for algorithms started from every vertex
    /// ([`Start::EveryVertex`](crate::Start::EveryVertex)); `None`: `UNREACHED`, the
    /// sources 0.
    initial: Option<Buffer<u32>>,
    pub(super) wl: Buffer<u32>,
    pub(super) outgoing: Vec<Buffer<VertexValue>>,
    pub(super) ctrl: Buffer<u32>,
    ctrl_host: Buffer<u32>,
    expand: CudaFunction,
    expand_hubs: CudaFunction,
    split: CudaFunction,
    reexamine: CudaFunction,
    /// Soft priority's two low lists (empty until a run sets a threshold below `u32::MAX`).
    low: Vec<Buffer<VertexValue>>,
    resident_grid: u32,
    hubs_grid: u32,
    /// Each launch's hub threshold and the hub list's size (`hub_policy.rs`).
    pub(super) hubs: HubPolicy,
    /// The fused persistent kernel (one-device runs, `fused.rs`).
    pub(super) fused: FusedKernel,
}

impl CudaTraversalDevice {
    /// Uploads the owned rows of the CSR (and weights) to `device` ([`DeviceCsr`]), allocates
    /// the value array, a local worklist of `wl_capacity` items (rounded up to a power of
    /// two), the first outgoing buffer of `send_capacity` items (up to `OUTGOING_BUFFERS` are
    /// allocated as sends need them), and loads the kernels (NVRTC, once per process). The
    /// control block is followed by the hub list (`traversal_expand_hubs`): two words per slot,
    /// as many slots as [`HubPolicy`] sizes from the owned rows (every full-grid hub twice,
    /// or twice the lists a launch smaller than the resident grid can list).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        context: &groute_core::Context,
        device: &Device,
        kernels: &TraversalKernels,
        csr: &groute_graph::Csr,
        weighted: bool,
        owned: Range<u32>,
        wl_capacity: usize,
        send_capacity: usize,
    ) -> Result<Self, WorklistError> {
        let stream = device.stream().clone();
        let [module, fused_module] = CudaModule::load_all(
            stream.raw().as_ref(),
            [kernels.source, kernels.fused_source],
        )?;
        let expand = module.function(kernels.expand)?;
        let expand_hubs = module.function(&format!("{}_hubs", kernels.expand))?;
        let split = module.function(kernels.split_receive)?;
        let fused = FusedKernel::new(context, device, &fused_module, kernels.fused)?;
        let reexamine = module.function(kernels.reexamine)?;
        let resident_grid = expand.max_resident_grid(BLOCK, 0)?.max(1);
        let hubs_grid = expand_hubs.max_resident_grid(BLOCK, 0)?.max(1);
        let hubs = HubPolicy::for_rows(csr, owned.clone(), resident_grid, BLOCK);
        let hub_capacity = hubs.capacity() as usize;
        let wl_cap = wl_capacity
            .clamp(1024, 1 << 31)
            .checked_next_power_of_two()
            .unwrap_or(1 << 31);
        let send_cap = send_capacity.clamp(1, u32::MAX as usize);
        let part = DeviceCsr::upload(device, csr, owned.clone(), weighted)?;
        let values = device.alloc::<u32>(csr.num_vertices().max(1))?;
        let wl = device.alloc::<u32>(wl_cap)?;
        let outgoing = vec![device.alloc::<VertexValue>(send_cap)?];
        let ctrl = device.alloc::<u32>(CTRL_WORDS + 2 * hub_capacity)?;
        let ctrl_host = context.alloc_host::<u32>(CTRL_WORDS)?;
        stream.synchronize()?;
        Ok(CudaTraversalDevice {
            stream,
            owned,
            csr: part,
            graph_arcs: csr.targets().len(),
            values,
            initial: None,
            wl,
            outgoing,
            ctrl,
            ctrl_host,
            expand,
            expand_hubs,
            split,
            reexamine,
            low: Vec::new(),
            resident_grid,
            hubs_grid,
            hubs,
            fused,
        })
    }

    /// Sets every vertex's value before a run to `initial` (the whole graph's, uploaded once)
    /// instead of `UNREACHED` with the sources at 0.
    pub(super) fn set_initial_values(&mut self, initial: Buffer<u32>) -> Result<(), Error> {
        Error::check_same_length("initial values", self.values.len(), initial.len())?;
        self.initial = Some(initial);
        Ok(())
    }

    /// Soft priority's two low lists (ping-pong on re-examination), allocated on first use,
    /// of a [`WL_SLOTS_PER_LOW_SLOT`]th of the worklist's capacity each. A list that
    /// overflows reports the worklist's setting, and growing the worklist grows them.
    pub(super) fn ensure_low_lists(&mut self, device: &Device) -> Result<(), Error> {
        while self.low.len() < 2 {
            let slots = (self.wl.len() / WL_SLOTS_PER_LOW_SLOT).max(1024);
            let buffer = device.alloc::<VertexValue>(slots)?;
            self.low.push(buffer);
        }
        Ok(())
    }

    /// Items each low list holds (0 when not allocated).
    pub(super) fn low_capacity(&self) -> u32 {
        self.low.first().map_or(0, |l| l.len() as u32)
    }

    /// The device pointers of the two low lists (null when not allocated).
    pub(super) fn low_lists(&self) -> Result<[DevicePtr<VertexValue>; 2], Error> {
        match &self.low[..] {
            [a, b] => Ok([
                DevicePtr::<VertexValue>::from_slice(&a.raw())?,
                DevicePtr::<VertexValue>::from_slice(&b.raw())?,
            ]),
            _ => Ok([DevicePtr::null(), DevicePtr::null()]),
        }
    }

    /// The error naming the setting to raise when the control block `ctrl` (its words up to
    /// the low list's overflow word) records an overflow; `send` names the outgoing buffer of
    /// `send_capacity` items.
    pub(super) fn overflow_error(
        &self,
        ctrl: &[u32],
        send: &str,
        send_capacity: usize,
    ) -> Result<(), Error> {
        // (word, what overflowed, the setting's capacity, items of the setting per item the
        // word counts, the setting): a low list's need is scaled to the worklist's setting.
        let checks = [
            (
                CTRL_WL_OVERFLOW,
                "device local worklist",
                self.wl.len(),
                1,
                WL_SETTING,
            ),
            (
                CTRL_LOW_OVERFLOW,
                "device low-priority lists (a part of the local worklist each)",
                self.wl.len(),
                WL_SLOTS_PER_LOW_SLOT,
                WL_SETTING,
            ),
            (CTRL_SEND_OVERFLOW, send, send_capacity, 1, SEND_SETTING),
        ];
        for (word, what, cap, scale, setting) in checks {
            if ctrl[word] != 0 {
                let needed = (ctrl[word] as usize).saturating_mul(scale);
                return Err(Error::capacity_exceeded(what, cap, needed, setting));
            }
        }
        Ok(())
    }

    /// A worker for one run: values reset (`sources` at 0), `seeds` in the local worklist.
    pub(crate) fn worker<'a>(
        &'a mut self,
        device: &'a Device,
        sources: &[u32],
        seeds: &[u32],
    ) -> Result<CudaTraversalWorker<'a>, WorklistError> {
        self.reset_run(device, sources, seeds)?;
        let k = seeds.len();
        let free = (1..self.outgoing.len()).rev().collect();
        Ok(CudaTraversalWorker {
            device,
            storage: self,
            start: 0,
            end: k as u32,
            send_end: 0,
            send_base: 0,
            current: 0,
            free,
            in_flight: VecDeque::new(),
            seeds: k as u64,
            threshold: u32::MAX,
            low_current: 0,
            low_end: 0,
            low_min: u32::MAX,
            fused_rounds: None,
        })
    }

    /// Replaces the local worklist (and the soft-priority low lists, which follow its size)
    /// by one of at least `needed` items and twice the current one, a power of two of at most
    /// 2^31 items; `false` when it is that large already. The contents are not kept: a run
    /// that overflowed starts again.
    pub(super) fn grow_worklist(&mut self, device: &Device, needed: usize) -> Result<bool, Error> {
        let Some(grown) = grown_capacity(self.wl.len(), needed, 1 << 31) else {
            return Ok(false);
        };
        self.stream.synchronize()?;
        self.low.clear();
        self.wl = device.alloc::<u32>(grown)?;
        Ok(true)
    }

    /// Replaces the outgoing buffers (a device-driven run's inbox ring among them) by one of
    /// at least `needed` items and twice the current size, at most `u32::MAX` items (a power
    /// of two when it is an inbox ring); `false` when they are that large already.
    pub(super) fn grow_outgoing(&mut self, device: &Device, needed: usize) -> Result<bool, Error> {
        let current = self.outgoing.first().map_or(0, |b| b.len());
        let Some(grown) = grown_capacity(current, needed, 1 << 31) else {
            return Ok(false);
        };
        self.stream.synchronize()?;
        // The first buffer only (the next run adds the others as its sends need them), so the
        // larger size does not take four buffers' memory at once. The others go first, so
        // that the larger one fits beside the old first one; the old first one goes once the
        // larger one is there (a device that cannot hold it keeps its buffers).
        self.outgoing.truncate(1);
        let larger = device.alloc::<VertexValue>(grown)?;
        self.outgoing = vec![larger];
        Ok(true)
    }

    /// This device's inbox in a device-driven run (`fused_peer.rs`): its first outgoing
    /// buffer, which such runs use for nothing else.
    pub(super) fn inbox(&self) -> Result<&Buffer<VertexValue>, Error> {
        self.outgoing.first().ok_or(Error::Unsupported {
            operation: "a device-driven run on a device without outgoing buffers",
            backend: "cuda",
        })
    }

    /// Resets the storage for one run (synchronised): values (`sources` at 0), the control
    /// block, `seeds` at worklist positions `[0, k)`.
    pub(super) fn reset_run(
        &self,
        device: &Device,
        sources: &[u32],
        seeds: &[u32],
    ) -> Result<(), WorklistError> {
        let s = &self.stream;
        match &self.initial {
            Some(initial) => s.copy(&self.values, initial)?,
            None => {
                s.fill(&self.values, crate::traversal::UNREACHED)?;
                for &v in sources {
                    let v = v as usize;
                    if v < self.values.len() {
                        s.fill(&self.values.slice(v..v + 1)?, 0u32)?;
                    }
                }
            }
        }
        s.fill(&self.ctrl, 0u32)?;
        s.fill(&self.ctrl.slice(CTRL_LOW_MIN..CTRL_LOW_MIN + 1)?, u32::MAX)?;
        s.fill(
            &self.ctrl.slice(CTRL_HUB_CAP..CTRL_HUB_CAP + 1)?,
            self.hubs.capacity(),
        )?;
        let k = seeds.len();
        if k > self.wl.len() {
            return Err(Error::capacity_exceeded(
                "device local worklist",
                self.wl.len(),
                k,
                WL_SETTING,
            )
            .into());
        }
        if k > 0 {
            let staged = device.upload(seeds)?;
            s.copy(&self.wl.slice(0..k)?, &staged)?;
            s.fill(&self.ctrl.slice(CTRL_WL_END..CTRL_WL_END + 1)?, k as u32)?;
        }
        s.synchronize()?;
        Ok(())
    }

    pub(super) fn cuda_stream(&self) -> Result<&CudaStream, Error> {
        CudaStream::from_raw(self.stream.raw().as_ref())
    }

    pub(super) fn keep_alive(&self, extra: &[&Buffer<VertexValue>]) -> Result<(), Error> {
        let mut mem = vec![
            self.values.raw().memory,
            self.wl.raw().memory,
            self.ctrl.raw().memory,
        ];
        let (offsets, targets, weights) = self.csr.buffers();
        mem.push(offsets.raw().memory);
        mem.push(targets.raw().memory);
        if let Some(w) = weights {
            mem.push(w.raw().memory);
        }
        mem.extend(self.low.iter().map(|b| b.raw().memory));
        mem.extend(extra.iter().map(|b| b.raw().memory));
        self.cuda_stream()?.keep_alive(mem)
    }

    /// The device pointers of the value array, the owned rows of the CSR and their weights
    /// (null when unweighted), rebased to global ids ([`DeviceCsr::device_ptrs`]): the first
    /// four parameters of every expand kernel.
    pub(super) fn graph_args(&self) -> Result<GraphArgs, Error> {
        let csr = self.csr.device_ptrs()?;
        Ok((
            DevicePtr::<u32>::from_slice(&self.values.raw())?,
            csr.offsets,
            csr.targets,
            csr.weights,
        ))
    }
}

pub(super) const WL_SETTING: &str = "wl_capacity (--wl-capacity)";
pub(super) const SEND_SETTING: &str = "send_capacity (--send-capacity)";

/// The capacity a buffer of `current` items grows to when it needed `needed`: the larger of
/// the two doubled, rounded up to a power of two, at most `max`; `None` when `current` is
/// `max` already.
pub(super) fn grown_capacity(current: usize, needed: usize, max: usize) -> Option<usize> {
    if current >= max {
        return None;
    }
    let want = needed.max(current).max(1).saturating_mul(2);
    Some(want.checked_next_power_of_two().unwrap_or(max).min(max))
}

#[cfg(test)]
mod tests {
    use super::grown_capacity;

    #[test]
    fn capacities_grow_to_a_power_of_two_at_least_doubled_and_stop_at_the_maximum() {
        assert_eq!(grown_capacity(1024, 10, 1 << 31), Some(2048));
        assert_eq!(grown_capacity(1024, 5000, 1 << 31), Some(16384));
        assert_eq!(grown_capacity(3000, 3001, 1 << 31), Some(8192));
        assert_eq!(grown_capacity(0, 0, 1 << 31), Some(2));
        assert_eq!(grown_capacity(1 << 30, 1 << 30, 1 << 31), Some(1 << 31));
        assert_eq!(grown_capacity(1 << 30, usize::MAX, 1 << 31), Some(1 << 31));
        assert_eq!(grown_capacity(1 << 31, 1 << 32, 1 << 31), None);
    }
}
