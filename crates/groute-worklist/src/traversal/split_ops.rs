//! A min traversal's split operations on one device ([`MinSplitOps`]) and the full-length
//! value array they apply updates to ([`ValueArray`]), viewed as atomics by host kernels.

use std::ops::Range;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use groute_core::{Buffer, Error};

use super::UNREACHED;
use crate::split::{SplitFlags, SplitOps, VertexValue};

/// A full-length `u32` value array on one device, viewed as atomics by host kernels.
#[derive(Clone)]
pub(super) struct ValueArray {
    pub(super) buffer: Buffer<u32>,
    ptr: NonNull<AtomicU32>,
    len: usize,
}

// SAFETY: the pointer targets the atomics of `buffer`, which this struct keeps alive; atomics
// may be shared between threads.
unsafe impl Send for ValueArray {}
// SAFETY: as above: only atomic accesses go through the pointer.
unsafe impl Sync for ValueArray {}

impl ValueArray {
    pub(super) fn new(buffer: Buffer<u32>) -> Result<Self, Error> {
        let view = buffer.host_atomic_u32().ok_or(Error::Unsupported {
            operation: "host traversal kernels on device memory",
            backend: "cuda",
        })?;
        let len = view.len();
        let ptr = NonNull::from(view).cast::<AtomicU32>();
        Ok(ValueArray { buffer, ptr, len })
    }

    pub(super) fn atomics(&self) -> &[AtomicU32] {
        // SAFETY: `ptr`/`len` came from `buffer.host_atomic_u32()`, and `self.buffer` keeps the
        // allocation alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

/// The split operations of a min traversal on one device.
#[derive(Clone)]
pub struct MinSplitOps {
    pub(super) owned: Range<u32>,
    pub(super) values: ValueArray,
}

impl std::fmt::Debug for MinSplitOps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MinSplitOps")
            .field("owned", &self.owned)
            .finish()
    }
}

impl MinSplitOps {
    fn improve(&self, p: &VertexValue) -> bool {
        match self.values.atomics().get(p.vertex as usize) {
            Some(a) => a.fetch_min(p.value, Ordering::AcqRel) > p.value,
            None => false,
        }
    }
}

impl SplitOps for MinSplitOps {
    type Local = u32;
    type Packed = VertexValue;

    fn pack(&self, v: u32) -> VertexValue {
        let value = self
            .values
            .atomics()
            .get(v as usize)
            .map_or(UNREACHED, |a| a.load(Ordering::Acquire));
        VertexValue { vertex: v, value }
    }

    fn unpack(&self, p: VertexValue) -> u32 {
        p.vertex
    }

    fn on_send(&self, p: &VertexValue) -> SplitFlags {
        if self.owned.contains(&p.vertex) {
            SplitFlags::KEEP
        } else {
            SplitFlags::PASS
        }
    }

    fn on_receive(&self, p: &VertexValue) -> SplitFlags {
        match (self.improve(p), self.owned.contains(&p.vertex)) {
            (true, true) => SplitFlags::KEEP,
            (true, false) => SplitFlags::PASS,
            (false, _) => SplitFlags::DROP,
        }
    }

    fn get_prio(&self, v: &u32) -> u32 {
        self.pack(*v).value
    }

    fn superseded(&self, v: &u32, deferred_prio: u32) -> bool {
        // The copy queued by the improvement was split after it, with the lower value.
        self.get_prio(v) < deferred_prio
    }
}
