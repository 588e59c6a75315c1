//! The typed launch of the fused kernel ([`CudaTraversalDevice::launch_fused`]): its
//! arguments for a run alone, a bounded launch or a member of a device-driven run, and the
//! one `SAFETY` argument naming the kernel's signature.

use groute_core::Error;
use groute_core::cuda::{DevicePtr, LaunchConfig, PeerArgs};
use groute_kernels::abi::FusedParams;

use super::kernel::{FusedBounds, FusedRole, FusedShape};
use crate::traversal::cuda::CudaTraversalDevice;

impl CudaTraversalDevice {
    /// Enqueues `<algo>_fused` (or its wide build) cooperatively in `shape`, with the
    /// barrier's `(spin_ns, barrier_flags)`.
    pub(in crate::traversal) fn launch_fused(
        &self,
        shape: FusedShape,
        (spin_ns, barrier_flags): (u32, u32),
        prio_delta: u32,
        solo_max: u32,
        role: &FusedRole,
    ) -> Result<(), Error> {
        let [low0, low1] = self.low_lists()?;
        let (values, offsets, targets, weights) = self.graph_args()?;
        let alone = FusedBounds {
            send: DevicePtr::null(),
            send_capacity: 0,
            send_base: 0,
            level_budget: 0,
            send_yield: 0,
        };
        let (bounds, member) = match role {
            FusedRole::Alone => (alone, None),
            FusedRole::Bounded(bounds) => (*bounds, None),
            FusedRole::Member(member) => (
                FusedBounds {
                    send: member.send,
                    send_capacity: member.send_capacity,
                    ..alone
                },
                Some(member),
            ),
        };
        // A member polls the group's abort word (the host's time limit for every member).
        let abort = match member {
            Some(m) => m.group.abort,
            None => DevicePtr::<u32>::from_slice(&self.fused.abort.raw())?,
        };
        let params = FusedParams {
            values,
            offsets,
            targets,
            weights,
            wl_data: DevicePtr::from_slice(&self.wl.raw())?,
            wl_mask: (self.wl.len() - 1) as u32,
            gap0: 0,
            ctrl: DevicePtr::from_slice(&self.ctrl.raw())?,
            fused: DevicePtr::from_slice(&self.fused.state.raw())?,
            abort,
            owned_begin: self.owned.start,
            owned_end: self.owned.end,
            low: [low0, low1],
            low_capacity: self.low_capacity(),
            prio_delta,
            solo_max,
            spin_ns,
            barrier_flags,
            gap1: 0,
            send_data: bounds.send,
            send_capacity: bounds.send_capacity,
            send_base: bounds.send_base,
            level_budget: bounds.level_budget,
            send_yield: bounds.send_yield,
            peer: member.map_or(PeerArgs::ALONE, |m| m.group),
            inbox: member.map_or(DevicePtr::null(), |m| m.inbox),
            send_published: member.map_or(DevicePtr::null(), |m| m.send_published),
            inbox_capacity: member.map_or(0, |m| m.inbox_capacity),
            gap2: 0,
            recv_freed: member.map_or(DevicePtr::null(), |m| m.recv_freed),
        };
        // SAFETY: <algo>_fused(const FusedParams p) and its builds (GROUTE_FUSED_TRAVERSAL_ENTRY in
        // fused.cuh) take one `groute::FusedParams`, whose layout `FusedParams` mirrors (checked
        // against abi_traversal.h by groute-kernels' tests/abi.rs); its fields hold
        // (`barrier_flags` from `fused_kernel_flags`: FUSED_SOLO_SHARED only when every offset fits
        // 32 bits, the single-block frontier reading the offsets' low words of owned vertices only:
        // the heads it keeps, which are owned, and `owned_begin` for every other lane (HeadRanges
        // in traversal.cuh), inside the device's rows of the offsets, rebased to global ids). The
        // low lists are null (soft priority off: the threshold is u32::MAX and nothing is deferred;
        // low_capacity 0) or both allocated with low_capacity items (`ensure_low_lists`; the kernel
        // bounds-checks every append). CSR, values, weights, worklist and control block as in
        // `launch_expand` (the same buffers; the worklist holds the seeds at [0, k) and
        // `TraversalCtrl::wl_end` = k, the hub capacity is set); `fused` is a `FusedStateBlock`
        // zeroed except its first phase, `end` = k and the threshold; `abort` is one u32 of mapped
        // host memory, a device address of this context. The owned range is the whole graph (one
        // device), so the kernel never appends to its (empty) send buffer, unless the launch is
        // bounded (several devices): then it appends to the current outgoing buffer,
        // `send_capacity` items from position `send_base`, bounds-checking every append. A member
        // of a device-driven run (`FusedRole::Member`, `fused_peer.rs`) sends into the next
        // device's inbox, a ring of `send_capacity` items (a power of two, at most that buffer's
        // length; positions taken modulo the capacity, never more than the capacity past what the
        // receiver freed; peer access enabled by `PeerGroup::check`), reads its own inbox ring of
        // `inbox_capacity` items (likewise) only below the end the sender published, stores its
        // ends into the next device's `send_published` and the previous device's `recv_freed` (one
        // u32 of their control blocks each) and counts in the group's mailbox (`PeerGroup::args`);
        // alone or bounded, the group has size 1 and null pointers, which the kernel never touches.
        // The block is a multiple of 32 of at most 1,024 threads, run by the build whose launch
        // bounds admit it, and the grid is at most the resident maximum of that build at that block
        // (`FusedKernel::shape`); the launch is cooperative, so every block is resident and the
        // grid barrier cannot deadlock; a cluster build's grid is whole clusters
        // (`FusedKernel::shape`). Memory is kept alive below.
        unsafe {
            let function = self
                .fused
                .function(shape.block, member.is_some(), shape.cluster);
            let stream = self.stream.raw();
            let config = LaunchConfig::linear(shape.grid, shape.block);
            function.launch_cooperative(stream.as_ref(), config, (params,))?
        };
        self.keep_alive(&[])?;
        let mut memory = vec![self.fused.state.raw().memory, self.fused.abort.raw().memory];
        if let Some(m) = member {
            memory.extend(m.memory.iter().cloned());
        }
        self.cuda_stream()?.keep_alive(memory)
    }
}
