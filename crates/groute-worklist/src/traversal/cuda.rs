//! The CUDA [`DeviceWorker`] of the min traversals: device-resident CSR, a full-length value
//! array, the device circular worklist and rotating outgoing buffers of `kernels/include/
//! worklist.cuh`, the expand / split-receive kernels of `kernels/include/traversal.cuh`
//! (instantiated per algorithm), two low-priority buffers (soft priority: the current low list
//! and the one a re-examination refills, allocated on first use), and one 64-byte control block
//! read back once per step.

use std::collections::VecDeque;
use std::ops::Range;

use groute_core::cuda::{
    CudaFunction, CudaModule, CudaStream, DevicePtr, KernelSource, LaunchConfig,
};
use groute_core::{Buffer, Device, Endpoint, Error, Event, PendingSegment, Segment, Stream};

use super::fused::FusedKernel;
use super::fused_rounds::FusedRounds;
use super::hub_policy::HubPolicy;
use crate::driver::{DeviceWorker, Outgoing, ReceiveCounts, Reexamined, RoundCounts};
use crate::error::WorklistError;
use crate::split::VertexValue;

/// The CUDA kernels of one min traversal (see `kernels/include/traversal.cuh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraversalKernels {
    /// The translation unit that instantiates `GROUTE_TRAVERSAL_KERNELS` (`kernels/bfs/bfs.cu`).
    pub source: &'static KernelSource,
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
/// pauses expansion while all are in flight, see `DeviceWorker::outgoing_available`).
const OUTGOING_BUFFERS: usize = 4;
/// At most this many outgoing buffers per device (sends in flight plus the current one).
const MAX_OUTGOING_BUFFERS: usize = 64;
/// Words of the control block read back (`groute::TRAVERSAL_CTRL_WORDS`).
const CTRL_WORDS: usize = 16;
pub(super) const CTRL_WL_END: usize = 0;
pub(super) const CTRL_SEND_END: usize = 1;
const CTRL_WL_OVERFLOW: usize = 2;
const CTRL_SEND_OVERFLOW: usize = 3;
/// The hub list's 64-bit counter (`groute::CTRL_HUB_COUNT`, two words), reset before each
/// expand launch, and its capacity in slots (`groute::CTRL_HUB_CAP`).
const CTRL_HUB_COUNT: usize = 4;
const CTRL_HUB_CAP: usize = 6;
/// The low list's append counter, overflow word and smallest deferred priority
/// (`groute::CTRL_LOW_END`, `CTRL_LOW_OVERFLOW`, `CTRL_LOW_MIN`).
const CTRL_LOW_END: usize = 8;
const CTRL_LOW_OVERFLOW: usize = 9;
const CTRL_LOW_MIN: usize = 10;
/// A device-driven run's outgoing ring positions the next device has read, stored by it
/// (`groute::CTRL_SEND_FREED`), and its inbox end, stored by the previous device
/// (`groute::CTRL_INBOX_PUBLISHED`; `fused_peer.rs`).
pub(super) const CTRL_SEND_FREED: usize = 7;
pub(super) const CTRL_INBOX_PUBLISHED: usize = 11;

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
    pub(super) offsets: Buffer<u64>,
    pub(super) targets: Buffer<u32>,
    pub(super) weights: Option<Buffer<u32>>,
    pub(crate) values: Buffer<u32>,
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
    /// Uploads the CSR (and weights) to `device`, allocates the value array, a local worklist
    /// of `wl_capacity` items (rounded up to a power of two), `OUTGOING_BUFFERS` outgoing
    /// buffers of `send_capacity` items, and loads the kernels (NVRTC, once per process). The
    /// control block is followed by the hub list (`traversal_expand_hubs`): two words per slot,
    /// as many slots as [`HubPolicy`] sizes (every full-grid hub twice, or every item of a
    /// launch smaller than the resident grid).
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
        let module = CudaModule::load(stream.raw().as_ref(), kernels.source)?;
        let expand = module.function(kernels.expand)?;
        let expand_hubs = module.function(&format!("{}_hubs", kernels.expand))?;
        let split = module.function(kernels.split_receive)?;
        let fused = FusedKernel::new(context, device, &module, kernels.fused)?;
        let reexamine = module.function(kernels.reexamine)?;
        let resident_grid = expand.max_resident_grid(BLOCK, 0)?.max(1);
        let hubs_grid = expand_hubs.max_resident_grid(BLOCK, 0)?.max(1);
        let hubs = HubPolicy::for_csr(csr, resident_grid, BLOCK);
        let hub_capacity = hubs.capacity() as usize;
        let wl_cap = wl_capacity
            .clamp(1024, 1 << 31)
            .checked_next_power_of_two()
            .unwrap_or(1 << 31);
        let send_cap = send_capacity.clamp(1, u32::MAX as usize);
        let offsets = device.upload(csr.offsets())?;
        let targets = device.upload(csr.targets())?;
        let weights = match (weighted, csr.weights()) {
            (true, Some(w)) => Some(device.upload(w)?),
            _ => None,
        };
        let values = device.alloc::<u32>(csr.num_vertices().max(1))?;
        let wl = device.alloc::<u32>(wl_cap)?;
        let outgoing = (0..OUTGOING_BUFFERS)
            .map(|_| device.alloc::<VertexValue>(send_cap))
            .collect::<Result<Vec<_>, _>>()?;
        let ctrl = device.alloc::<u32>(CTRL_WORDS + 2 * hub_capacity)?;
        let ctrl_host = context.alloc_host::<u32>(CTRL_WORDS)?;
        stream.synchronize()?;
        Ok(CudaTraversalDevice {
            stream,
            owned,
            offsets,
            targets,
            weights,
            values,
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

    /// Soft priority's two low lists (ping-pong on re-examination), of the worklist's
    /// capacity each, allocated on first use.
    pub(super) fn ensure_low_lists(&mut self, device: &Device) -> Result<(), Error> {
        while self.low.len() < 2 {
            let buffer = device.alloc::<VertexValue>(self.wl.len())?;
            self.low.push(buffer);
        }
        Ok(())
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
        let checks = [
            (
                CTRL_WL_OVERFLOW,
                "device local worklist",
                self.wl.len(),
                WL_SETTING,
            ),
            (
                CTRL_LOW_OVERFLOW,
                "device low-priority list",
                self.low.first().map_or(0, |b| b.len()),
                WL_SETTING,
            ),
            (CTRL_SEND_OVERFLOW, send, send_capacity, SEND_SETTING),
        ];
        for (word, what, cap, setting) in checks {
            if ctrl[word] != 0 {
                return Err(capacity(what, cap, ctrl[word] as usize, setting));
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
        s.fill(&self.values, crate::traversal::UNREACHED)?;
        for &v in sources {
            let v = v as usize;
            if v < self.values.len() {
                s.fill(&self.values.slice(v..v + 1)?, 0u32)?;
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
            return Err(capacity("device local worklist", self.wl.len(), k, WL_SETTING).into());
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
            self.offsets.raw().memory,
            self.targets.raw().memory,
        ];
        if let Some(w) = &self.weights {
            mem.push(w.raw().memory);
        }
        mem.extend(self.low.iter().map(|b| b.raw().memory));
        mem.extend(extra.iter().map(|b| b.raw().memory));
        self.cuda_stream()?.keep_alive(mem)
    }

    /// The device pointers of the value array, the CSR and the weights (null when
    /// unweighted): the first four parameters of every expand kernel.
    pub(super) fn graph_args(&self) -> Result<GraphArgs, Error> {
        let weights = match &self.weights {
            Some(w) => DevicePtr::<u32>::from_slice(&w.raw())?,
            None => DevicePtr::null(),
        };
        Ok((
            DevicePtr::<u32>::from_slice(&self.values.raw())?,
            DevicePtr::<u64>::from_slice(&self.offsets.raw())?,
            DevicePtr::<u32>::from_slice(&self.targets.raw())?,
            weights,
        ))
    }

    /// The kernels' low-list arguments: the current low list, its capacity, the threshold
    /// (a null list when soft priority is off).
    fn low_args(
        &self,
        current: usize,
        threshold: u32,
    ) -> Result<(DevicePtr<VertexValue>, u32, u32), Error> {
        match self.low.get(current) {
            Some(low) if threshold != u32::MAX => Ok((
                DevicePtr::<VertexValue>::from_slice(&low.raw())?,
                low.len() as u32,
                threshold,
            )),
            _ => Ok((DevicePtr::null(), 0, u32::MAX)),
        }
    }

    /// Enqueues `<algo>_reexamine` over the first `count` items of low list `taken`, deferring
    /// the still-low ones to low list `into` (whose counter the caller reset).
    fn launch_reexamine(
        &self,
        taken: usize,
        count: u32,
        first: u32,
        into: usize,
        threshold: u32,
    ) -> Result<(), Error> {
        let config = LaunchConfig::for_elements(count as usize, BLOCK, Some(self.resident_grid));
        let (low, low_cap, threshold) = self.low_args(into, threshold)?;
        let args = (
            DevicePtr::<u32>::from_slice(&self.values.raw())?,
            DevicePtr::<VertexValue>::from_slice(&self.low[taken].raw())?,
            count,
            DevicePtr::<u32>::from_slice(&self.wl.raw())?,
            (self.wl.len() - 1) as u32,
            first,
            DevicePtr::<u32>::from_slice(&self.ctrl.raw())?,
            low,
            low_cap,
            threshold,
        );
        // SAFETY: <algo>_reexamine(const unsigned* values, const VertexValue* taken,
        // unsigned count, unsigned* wl_data, unsigned wl_mask, unsigned first, unsigned* ctrl,
        // VertexValue* low_data, unsigned low_capacity, unsigned threshold)
        // (GROUTE_TRAVERSAL_KERNELS in traversal.cuh): the tuple matches it field by field.
        // `taken` is a low list of this device holding at least `count` items (its counter as
        // last read back), each a vertex of this graph (so it indexes `values`); `low_data` is
        // the other low list, of `low_capacity` slots (the kernel bounds-checks every append);
        // worklist and control block as in `launch_expand`. All are device memory of this
        // stream's device, kept alive below until the kernel completes.
        unsafe {
            self.reexamine
                .launch(self.stream.raw().as_ref(), config, args)?
        };
        self.keep_alive(&[])
    }

    /// Enqueues `<algo>_expand` over worklist positions `[first, first + count)`, then
    /// `<algo>_expand_hubs` over the hubs it listed, appending remote output to `out` from
    /// position `send_base`.
    fn launch_expand(
        &self,
        first: u32,
        count: u32,
        out: &Buffer<VertexValue>,
        send_base: u32,
        (low, low_cap, threshold): (DevicePtr<VertexValue>, u32, u32),
    ) -> Result<(), Error> {
        let config = LaunchConfig::for_elements(count as usize, BLOCK, Some(self.resident_grid));
        let hubs_config = LaunchConfig::linear(self.hubs_grid, BLOCK);
        let hub_min_degree = self.hubs.min_degree(config.grid.0);
        let lists_hubs = self.hubs.lists_hubs(hub_min_degree);
        if lists_hubs {
            self.stream
                .fill(&self.ctrl.slice(CTRL_HUB_COUNT..CTRL_HUB_COUNT + 2)?, 0u32)?;
        }
        let (values, offsets, targets, weights) = self.graph_args()?;
        let args = (
            values,
            offsets,
            targets,
            weights,
            DevicePtr::<u32>::from_slice(&self.wl.raw())?,
            (self.wl.len() - 1) as u32,
            first,
            count,
            DevicePtr::<u32>::from_slice(&self.ctrl.raw())?,
            DevicePtr::<VertexValue>::from_slice(&out.raw())?,
            out.len() as u32,
            send_base,
            self.owned.start,
            self.owned.end,
            low,
            low_cap,
            threshold,
            hub_min_degree,
        );
        // SAFETY: <algo>_expand(unsigned* values, const unsigned long long* offsets,
        // const unsigned* targets, const unsigned* weights, unsigned* wl_data, unsigned wl_mask,
        // unsigned first, unsigned count, unsigned* ctrl, VertexValue* send_data,
        // unsigned send_capacity, unsigned send_base, unsigned owned_begin, unsigned owned_end,
        // VertexValue* low_data, unsigned low_capacity, unsigned threshold,
        // unsigned hub_min_degree)
        // (GROUTE_TRAVERSAL_KERNELS in traversal.cuh): the tuple matches it field by field;
        // `low_data` is null (soft priority off) or a low list of `low_capacity` slots (the
        // kernel bounds-checks every append).
        // `values` holds one u32 per vertex and `offsets` num_vertices + 1 entries, so every
        // vertex id in the worklist and every CSR target indexes them in bounds; `weights` is
        // null only for unweighted traversals (the kernel then never reads it) and otherwise
        // holds one weight per arc; the worklist has wl_mask + 1 slots (a power of two, the
        // kernel masks every position) and `count` <= the items in it; the outgoing buffer has
        // send_capacity slots and the kernel bounds-checks every append (overflow word);
        // `ctrl` holds CTRL_WORDS u32 and then the hub list of ctrl[CTRL_HUB_CAP] slots of two
        // u32 (the kernel bounds-checks every slot). All are device memory of this stream's
        // device, kept alive below until the kernels complete.
        unsafe {
            self.expand
                .launch(self.stream.raw().as_ref(), config, args)?
        };
        if lists_hubs {
            // SAFETY: <algo>_expand_hubs has <algo>_expand's parameters (`count` and
            // `hub_min_degree` unused) and reads
            // the hub list that the launch above wrote, in stream order; each listed hub is a
            // vertex of the worklist, so it indexes `values` and `offsets` in bounds, and its tiles
            // stay inside its adjacency list. Same buffers as above.
            unsafe {
                self.expand_hubs
                    .launch(self.stream.raw().as_ref(), hubs_config, args)?
            };
        }
        self.keep_alive(&[out])
    }

    /// Enqueues `<algo>_split_receive` over the received `packet`.
    fn launch_split(
        &self,
        packet: &Buffer<VertexValue>,
        first: u32,
        out: &Buffer<VertexValue>,
        send_base: u32,
        (low, low_cap, threshold): (DevicePtr<VertexValue>, u32, u32),
    ) -> Result<(), Error> {
        let count = u32::try_from(packet.len()).map_err(|_| {
            Error::invalid(
                "packet_size (--packet-size)",
                packet.len(),
                "at most u32::MAX items",
            )
        })?;
        let config = LaunchConfig::for_elements(count as usize, BLOCK, Some(self.resident_grid));
        let args = (
            DevicePtr::<u32>::from_slice(&self.values.raw())?,
            DevicePtr::<VertexValue>::from_slice(&packet.raw())?,
            count,
            DevicePtr::<u32>::from_slice(&self.wl.raw())?,
            (self.wl.len() - 1) as u32,
            first,
            DevicePtr::<u32>::from_slice(&self.ctrl.raw())?,
            DevicePtr::<VertexValue>::from_slice(&out.raw())?,
            out.len() as u32,
            send_base,
            self.owned.start,
            self.owned.end,
            low,
            low_cap,
            threshold,
        );
        // SAFETY: <algo>_split_receive(unsigned* values, const VertexValue* received,
        // unsigned count, unsigned* wl_data, unsigned wl_mask, unsigned first, unsigned* ctrl,
        // VertexValue* send_data, unsigned send_capacity, unsigned send_base,
        // unsigned owned_begin, unsigned owned_end, VertexValue* low_data,
        // unsigned low_capacity, unsigned threshold): the tuple matches it field by field;
        // the low list as in `launch_expand`;
        // `received` holds `count` items (the packet's length) whose vertex ids are below the
        // value array's length (every producer took them from this graph's CSR); worklist,
        // outgoing buffer and control block as in `launch_expand`. The packet stays valid
        // until the driver releases it after this step's synchronisation; the rest is kept
        // alive below.
        unsafe {
            self.split
                .launch(self.stream.raw().as_ref(), config, args)?
        };
        self.keep_alive(&[packet, out])
    }
}

pub(super) const WL_SETTING: &str = "wl_capacity (--wl-capacity)";
pub(super) const SEND_SETTING: &str = "send_capacity (--send-capacity)";

pub(super) fn capacity(what: &str, capacity: usize, needed: usize, setting: &'static str) -> Error {
    Error::CapacityExceeded {
        what: what.into(),
        capacity: capacity as u64,
        needed: needed as u64,
        setting,
    }
}

/// One run of a CUDA min traversal on one device.
pub(crate) struct CudaTraversalWorker<'a> {
    pub(super) device: &'a Device,
    pub(super) storage: &'a mut CudaTraversalDevice,
    /// First unconsumed worklist position.
    pub(super) start: u32,
    /// End of the worklist's valid range (`ctrl[CTRL_WL_END]` as last read back).
    pub(super) end: u32,
    /// Outgoing reservation counter (`ctrl[CTRL_SEND_END]` as last read back).
    pub(super) send_end: u32,
    /// Position of the current outgoing buffer's first item.
    pub(super) send_base: u32,
    /// Index of the current outgoing buffer.
    pub(super) current: usize,
    /// Outgoing buffers free for reuse.
    free: Vec<usize>,
    /// Outgoing buffers being sent, oldest first.
    in_flight: VecDeque<usize>,
    seeds: u64,
    /// Soft priority's threshold (`u32::MAX`: off, the kernels get a null low list).
    pub(super) threshold: u32,
    /// Index of the current low list in `storage.low`.
    pub(super) low_current: usize,
    /// Items in the current low list (`ctrl[CTRL_LOW_END]` as last read back).
    pub(super) low_end: u32,
    /// Smallest priority deferred since the last re-examination (`ctrl[CTRL_LOW_MIN]`).
    pub(super) low_min: u32,
    /// Rounds run as bounded fused launches (`fused_rounds.rs`), else one expand per round.
    fused_rounds: Option<FusedRounds>,
}

impl CudaTraversalWorker<'_> {
    /// The same worker with its rounds run as bounded fused launches.
    pub(crate) fn with_fused_rounds(self, rounds: FusedRounds) -> Self {
        CudaTraversalWorker {
            fused_rounds: Some(rounds),
            ..self
        }
    }

    /// Reads the control block back (one 32-byte copy, then a synchronisation) and turns an
    /// overflow into the error naming the setting to raise.
    pub(super) fn read_back(&mut self) -> Result<(), Error> {
        let s = &self.storage.stream;
        s.copy(
            &self.storage.ctrl_host,
            &self.storage.ctrl.slice(0..CTRL_WORDS)?,
        )?;
        s.synchronize()?;
        // SAFETY: the copy into the pinned host block has completed (stream synchronised) and
        // nothing else writes it.
        let words =
            unsafe { self.storage.ctrl_host.as_host_slice() }.ok_or(Error::Unsupported {
                operation: "reading the control block back",
                backend: "cuda",
            })?;
        let mut w = [0u32; CTRL_WORDS];
        w.copy_from_slice(&words[..CTRL_WORDS]);
        self.storage.overflow_error(
            &w,
            "device ring send buffer",
            self.storage.outgoing[0].len(),
        )?;
        self.end = w[CTRL_WL_END];
        self.send_end = w[CTRL_SEND_END];
        self.low_end = w[CTRL_LOW_END];
        self.low_min = w[CTRL_LOW_MIN];
        Ok(())
    }

    fn low_args(&self) -> Result<(DevicePtr<VertexValue>, u32, u32), Error> {
        self.storage.low_args(self.low_current, self.threshold)
    }

    /// The smallest deferred priority to report (0, "unknown", when none was recorded).
    pub(super) fn deferred_min(&self, deferred: u64) -> u32 {
        if deferred == 0 || self.low_min == u32::MAX {
            0
        } else {
            self.low_min
        }
    }
}

impl DeviceWorker for CudaTraversalWorker<'_> {
    type Packed = VertexValue;

    fn initial_items(&self) -> u64 {
        self.seeds
    }

    fn split_receive(
        &mut self,
        packets: Vec<PendingSegment<VertexValue>>,
    ) -> Result<ReceiveCounts, WorklistError> {
        let (old_end, old_send, old_low) = (self.end, self.send_end, self.low_end);
        let mut received = 0u64;
        let out = &self.storage.outgoing[self.current];
        let low = self.low_args()?;
        for p in &packets {
            received += p.segment().len() as u64;
            self.storage.stream.wait(p.ready())?;
            self.storage
                .launch_split(p.segment().data(), self.start, out, self.send_base, low)?;
        }
        self.read_back()?;
        // Synchronised: the split kernels no longer read the packets.
        for p in packets {
            p.release(Event::ready());
        }
        Ok(ReceiveCounts {
            received,
            kept: u64::from(self.end.wrapping_sub(old_end)),
            passed: u64::from(self.send_end.wrapping_sub(old_send)),
            deferred: u64::from(self.low_end - old_low),
            deferred_min_prio: self.deferred_min(u64::from(self.low_end - old_low)),
        })
    }

    fn local_len(&self) -> usize {
        self.end.wrapping_sub(self.start) as usize
    }

    fn expand_round(&mut self, max_batch: usize) -> Result<RoundCounts, WorklistError> {
        if let Some(rounds) = self.fused_rounds {
            return self.fused_round(&rounds);
        }
        let count = self.local_len().min(max_batch) as u32;
        if count == 0 {
            return Ok(RoundCounts::default());
        }
        let (old_end, old_send, old_low) = (self.end, self.send_end, self.low_end);
        let out = &self.storage.outgoing[self.current];
        let low = self.low_args()?;
        self.storage
            .launch_expand(self.start, count, out, self.send_base, low)?;
        self.read_back()?;
        self.start = self.start.wrapping_add(count);
        let kept = u64::from(self.end.wrapping_sub(old_end));
        let sent = u64::from(self.send_end.wrapping_sub(old_send));
        Ok(RoundCounts {
            consumed: u64::from(count),
            processed: u64::from(count),
            produced: kept + sent,
            kept,
            sent,
            deferred: u64::from(self.low_end - old_low),
            deferred_min_prio: self.deferred_min(u64::from(self.low_end - old_low)),
        })
    }

    fn outgoing_len(&self) -> usize {
        self.send_end.wrapping_sub(self.send_base) as usize
    }

    fn take_outgoing(&mut self) -> Result<Option<Outgoing<VertexValue>>, WorklistError> {
        let len = self.outgoing_len();
        if len == 0 {
            return Ok(None);
        }
        let data = self.storage.outgoing[self.current].slice(0..len)?;
        let ready = self.storage.stream.record()?;
        self.in_flight.push_back(self.current);
        self.current = match self.free.pop() {
            Some(i) => i,
            None => {
                // Every buffer is still being copied: the driver does not send then
                // (`outgoing_available`), but a new buffer is taken rather than waiting.
                let n = self.storage.outgoing.len();
                if n >= MAX_OUTGOING_BUFFERS {
                    return Err(capacity(
                        "device ring send buffers in flight",
                        n,
                        n + 1,
                        "packet_size (--packet-size) and ring_buffers",
                    )
                    .into());
                }
                let cap = self.storage.outgoing[0].len();
                self.storage
                    .outgoing
                    .push(self.device.alloc::<VertexValue>(cap)?);
                n
            }
        };
        self.send_base = self.send_end;
        Ok(Some((
            Segment::new(data, Endpoint::Device(self.device.id())),
            ready,
        )))
    }

    fn reuses_outgoing(&self) -> bool {
        true
    }

    fn set_threshold(&mut self, threshold: u32) -> Result<(), WorklistError> {
        if threshold != u32::MAX {
            self.storage.ensure_low_lists(self.device)?;
        }
        self.threshold = threshold;
        Ok(())
    }

    fn reexamine(&mut self) -> Result<Reexamined, WorklistError> {
        let taken = self.low_end;
        if taken == 0 || self.storage.low.len() < 2 {
            return Ok(Reexamined::default());
        }
        let old_end = self.end;
        let from = self.low_current;
        self.low_current = 1 - from;
        let s = &self.storage.stream;
        s.fill(
            &self.storage.ctrl.slice(CTRL_LOW_END..CTRL_LOW_END + 1)?,
            0u32,
        )?;
        s.fill(
            &self.storage.ctrl.slice(CTRL_LOW_MIN..CTRL_LOW_MIN + 1)?,
            u32::MAX,
        )?;
        self.storage
            .launch_reexamine(from, taken, self.start, self.low_current, self.threshold)?;
        self.read_back()?;
        let still_low = u64::from(self.low_end);
        Ok(Reexamined {
            taken: u64::from(taken),
            moved: u64::from(self.end.wrapping_sub(old_end)),
            still_low,
            still_low_min_prio: self.deferred_min(still_low),
        })
    }

    fn outgoing_available(&self) -> bool {
        !self.free.is_empty()
    }

    fn reclaim(&mut self, done: Event) -> Result<(), WorklistError> {
        if let Some(i) = self.in_flight.pop_front() {
            self.storage.stream.wait(&done)?;
            self.free.push(i);
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), WorklistError> {
        Ok(self.storage.stream.synchronize()?)
    }
}
