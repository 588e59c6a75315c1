//! The typed launches of the per-round kernels of a min traversal on one device
//! (`kernels/include/traversal.cuh`): expand, split-receive and the soft-priority
//! re-examination, each with the one `SAFETY` argument naming its kernel's signature.

use groute_core::cuda::{DevicePtr, LaunchConfig};
use groute_core::{Buffer, Error};

use super::{BLOCK, CTRL_HUB_COUNT, CudaTraversalDevice};
use crate::split::VertexValue;

impl CudaTraversalDevice {
    /// The kernels' low-list arguments: the current low list, its capacity, the threshold
    /// (a null list when soft priority is off).
    pub(super) fn low_args(
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
    pub(super) fn launch_reexamine(
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
    pub(super) fn launch_expand(
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
        // `values` holds one u32 per vertex, so every vertex id in the worklist and every CSR
        // target indexes it in bounds; `offsets`, `targets` and `weights` are the owned rows,
        // rebased to global ids (`DeviceCsr::device_ptrs`), and the kernel reads the row of
        // worklist items only, which are owned (seeds split by owner, appends of owned heads,
        // kept receipts); `weights` is null only for unweighted traversals (the kernel then
        // never reads it) and otherwise holds one weight per owned arc; the worklist has wl_mask + 1 slots (a power of two, the
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
            // the hub list that the launch above wrote, in stream order; each listed hub is an
            // owned vertex of the worklist, so it indexes `values` and `offsets` in bounds, and its tiles
            // stay inside its adjacency list. Same buffers as above.
            unsafe {
                self.expand_hubs
                    .launch(self.stream.raw().as_ref(), hubs_config, args)?
            };
        }
        self.keep_alive(&[out])
    }

    /// Enqueues `<algo>_split_receive` over the received `packet`.
    pub(super) fn launch_split(
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
