//! How a link moves a packet: the copy engines (DMA) or a copy kernel on the SMs.

use std::collections::HashSet;

use crate::backend::BackendKind;
use crate::context::Context;
use crate::error::{Error, Result};

/// How a link's copies between devices are made ([`crate::LinkConfig::with_copy_method`],
/// also [`crate::Stream::copy_with`]).
///
/// - [`CopyMethod::Dma`] (the default): the copy engines (`cuMemcpyPeerAsync` /
///   `cuMemcpyAsync`). Each copy has a fixed cost in the engines, so a train of packet-sized
///   peer copies tops out well below one large copy's bandwidth, whatever the number of
///   streams.
/// - [`CopyMethod::Kernel`]: a copy kernel (`kernels/runtime/peer_copy.cu`) on the issuing stream's
///   device reads the source and stores 16-byte vectors straight into the destination (over
///   NVLink for a peer), `blocks` blocks of [`crate::cuda::PEER_COPY_BLOCK`] threads per copy
///   (fewer for a copy too short to give every thread a full round). It runs on the same copy
///   stream a DMA copy would, so stream order, events and buffer reuse are unchanged.
///
///   It needs SMs of the issuing device: it shares them with that device's kernels while it
///   runs, and it cannot start while a kernel that fills every multiprocessor (a persistent
///   or fused kernel) runs there. So a kernel that waits on the device for data coming
///   through a kernel-method link issued by its own device would wait forever; such links
///   must keep [`CopyMethod::Dma`] (the copy engines need no SMs).
///
/// The kernel is used only where it can be: on the CUDA backend, for a copy from device memory
/// to device memory that the issuing device can address (the same physical device, or a
/// peer with peer access enabled). Everything else keeps the DMA path: copies to or from the
/// host, device pairs without peer access (staged through host memory), and every copy on
/// the host backend.
///
/// The SMs pay no fixed cost per copy, so on several copy streams (and with
/// [`crate::LinkConfig::bulk`]'s receive buffers) the kernel moves large messages in packets
/// nearly as fast as one raw copy of the whole message, faster than the engines. A launch costs
/// more than a copy-engine submission, so small messages are faster through DMA and keep it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CopyMethod {
    /// The copy engines (`cuMemcpyPeerAsync`).
    #[default]
    Dma,
    /// A copy kernel of `blocks` blocks per copy (1 to [`CopyMethod::MAX_KERNEL_BLOCKS`]).
    Kernel {
        /// Blocks per copy (each of [`crate::cuda::PEER_COPY_BLOCK`] threads). With `k` copy
        /// streams up to `k` copies run at once, so `k x blocks` blocks share the device.
        blocks: u32,
    },
}

impl CopyMethod {
    /// Blocks per copy of [`CopyMethod::kernel`]: 64 blocks of 512 threads keep 2 MiB in
    /// flight (4 vectors of 16 bytes per thread), and two copy streams' kernels together
    /// take about one block per multiprocessor of a large data-centre GPU.
    pub const DEFAULT_KERNEL_BLOCKS: u32 = 64;

    /// The most blocks one kernel copy may use.
    pub const MAX_KERNEL_BLOCKS: u32 = 4096;

    /// The copy kernel with [`CopyMethod::DEFAULT_KERNEL_BLOCKS`] blocks per copy.
    pub fn kernel() -> Self {
        CopyMethod::Kernel {
            blocks: Self::DEFAULT_KERNEL_BLOCKS,
        }
    }

    /// Checks that a kernel copy's `blocks` is 1 to [`CopyMethod::MAX_KERNEL_BLOCKS`].
    pub fn validate(&self) -> Result<()> {
        match *self {
            CopyMethod::Dma => Ok(()),
            CopyMethod::Kernel { blocks } if (1..=Self::MAX_KERNEL_BLOCKS).contains(&blocks) => {
                Ok(())
            }
            CopyMethod::Kernel { blocks } => Err(Error::invalid(
                "copy_method blocks",
                blocks,
                format!(
                    "a kernel copy uses 1 to {} blocks (CopyMethod::Kernel {{ blocks }}, or CopyMethod::kernel() for {})",
                    Self::MAX_KERNEL_BLOCKS,
                    Self::DEFAULT_KERNEL_BLOCKS
                ),
            )),
        }
    }
}

/// Loads the copy kernel on every physical device of `ctx` when `method` is
/// [`CopyMethod::Kernel`] and the backend is CUDA (compiled once per process, loaded once per
/// device), so that no packet loads it while other kernels run. Called when a link output is
/// built: the devices that will issue its copies are not all known then (a router's sources),
/// and loading the small module everywhere once is cheap.
pub(crate) fn load_copy_kernel(ctx: &Context, method: CopyMethod) -> Result<()> {
    if method == CopyMethod::Dma || ctx.backend_kind() != BackendKind::Cuda {
        return Ok(());
    }
    let mut loaded = HashSet::new();
    for device in ctx.devices() {
        if loaded.insert(device.physical()) {
            crate::cuda::load_peer_copy(device.stream().raw().as_ref())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_out_of_range_are_refused_naming_the_setting() {
        for blocks in [0, CopyMethod::MAX_KERNEL_BLOCKS + 1] {
            let err = CopyMethod::Kernel { blocks }.validate().unwrap_err();
            assert!(matches!(err, Error::InvalidSetting { .. }), "{err}");
            assert!(err.to_string().contains("copy_method blocks"), "{err}");
        }
        for ok in [
            CopyMethod::Dma,
            CopyMethod::kernel(),
            CopyMethod::Kernel { blocks: 1 },
            CopyMethod::Kernel {
                blocks: CopyMethod::MAX_KERNEL_BLOCKS,
            },
        ] {
            assert!(ok.validate().is_ok(), "{ok:?}");
        }
    }
}
