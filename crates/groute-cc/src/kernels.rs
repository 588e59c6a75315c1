//! [`Kernels`]: the CC kernels of one device's backend behind one type (host functions on
//! the host backend's executor thread, `kernels/cc/cc.cu` on CUDA), for the dataflow run and
//! the run across processes.

use groute_core::{Buffer, Stream};

use crate::cuda::CcKernels;
use crate::device_rows::{LinkPass, RowsPart};
use crate::{CcError, Edge, host};

/// The kernels of one device's backend.
pub(crate) enum Kernels {
    Host,
    Cuda(Box<CcKernels>),
}

impl Kernels {
    pub(crate) fn for_stream(stream: &Stream) -> Result<Self, CcError> {
        Ok(if stream.is_host() {
            Kernels::Host
        } else {
            Kernels::Cuda(Box::new(CcKernels::load(stream)?))
        })
    }

    pub(crate) fn init(&self, s: &Stream, parent: &Buffer<u32>) -> Result<(), CcError> {
        match self {
            Kernels::Host => host::enqueue_init(s, parent),
            Kernels::Cuda(k) => k.init(s, parent),
        }
    }

    /// Enqueues the linking of every edge of `edges`: their lower ends made the parents of the
    /// roots they join (plain stores), then the hook.
    pub(crate) fn link_edges(
        &self,
        s: &Stream,
        edges: &Buffer<Edge>,
        parent: &Buffer<u32>,
    ) -> Result<(), CcError> {
        match self {
            Kernels::Host => host::enqueue_link_edges(s, edges, parent),
            Kernels::Cuda(k) => {
                k.first_parents(s, edges, parent)?;
                k.hook_edges(s, edges, parent)
            }
        }
    }

    /// Enqueues one pass of linking a device's own rows ([`crate::DeviceRows`]).
    pub(crate) fn link_rows(
        &self,
        s: &Stream,
        rows: &RowsPart,
        pass: LinkPass,
        parent: &Buffer<u32>,
    ) -> Result<(), CcError> {
        match self {
            Kernels::Host => host::enqueue_link_rows(s, rows, pass, parent),
            Kernels::Cuda(k) => k.link_rows(s, rows, pass, parent),
        }
    }

    /// Enqueues pointer jumping over the whole array: every vertex to its root.
    pub(crate) fn compress(&self, s: &Stream, parent: &Buffer<u32>) -> Result<(), CcError> {
        self.compress_range(s, parent, 0..u32::MAX)
    }

    /// Enqueues pointer jumping over `vertices` (clamped to the array) only.
    pub(crate) fn compress_range(
        &self,
        s: &Stream,
        parent: &Buffer<u32>,
        vertices: std::ops::Range<u32>,
    ) -> Result<(), CcError> {
        match self {
            Kernels::Host => host::enqueue_compress(s, parent, vertices),
            Kernels::Cuda(k) => k.compress(s, parent, vertices),
        }
    }

    pub(crate) fn merge(
        &self,
        s: &Stream,
        offset: usize,
        other: &Buffer<u32>,
        parent: &Buffer<u32>,
    ) -> Result<(), CcError> {
        match self {
            Kernels::Host => {
                let offset = u32::try_from(offset)
                    .map_err(|_| CcError::invalid("merge packet offset", offset, "below 2^32"))?;
                host::enqueue_merge(s, offset, other, parent)
            }
            Kernels::Cuda(k) => k.merge(s, offset, other, parent),
        }
    }

    pub(crate) fn take_slice(
        &self,
        s: &Stream,
        from: (&Buffer<u32>, usize),
        slice: &Buffer<u32>,
        changed: &Buffer<u32>,
    ) -> Result<(), CcError> {
        match self {
            Kernels::Host => host::enqueue_take_slice(s, from, slice, changed),
            Kernels::Cuda(k) => k.take_slice(s, from, slice, changed),
        }
    }
}
