//! The split operations of PageRank: `(vertex, residual)` items and where they go.
//!
//! Local items are vertex ids (a vertex of mine whose residual exceeds epsilon). Items for a
//! vertex of another device carry the residual this device has *accumulated* for it since
//! its last send: remote contributions are added (atomically) into the device's halo slot of
//! the vertex, the first contribution of a round produces the item, and [`SplitOps::pack`]
//! takes the whole accumulation (swap with zero) when the round is split. So however many
//! arcs of a round point at a remote vertex, it costs one item on the ring.

use std::ops::Range;

use bytemuck::{Pod, Zeroable};
use groute_worklist::{SplitFlags, SplitOps};

use crate::host::ResidualArray;

/// A vertex and residual mass pushed to it: the packed item of PageRank. Mirrors
/// `struct VertexResidual` in `kernels/pagerank/pagerank.cu` (8 bytes, vertex first).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default, Pod, Zeroable)]
pub struct VertexResidual {
    /// The vertex (partitioned numbering).
    pub vertex: u32,
    /// Residual mass for it (0 for an item that stays on its owner).
    pub residual: f32,
}

const _: () = assert!(std::mem::size_of::<VertexResidual>() == 8);
const _: () = assert!(std::mem::align_of::<VertexResidual>() == 4);

/// PageRank's split on one device: it owns `owned`; `residual` is full length (the residual
/// of owned vertices, the not-yet-sent accumulation for the others).
#[derive(Clone)]
pub struct PageRankSplitOps {
    pub(crate) owned: Range<u32>,
    pub(crate) residual: ResidualArray,
    pub(crate) epsilon: f32,
}

impl std::fmt::Debug for PageRankSplitOps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageRankSplitOps")
            .field("owned", &self.owned)
            .field("epsilon", &self.epsilon)
            .finish()
    }
}

impl PageRankSplitOps {
    /// Whether `v` is owned by this device.
    pub fn mine(&self, v: u32) -> bool {
        self.owned.contains(&v)
    }
}

/// Whether adding to a residual of `old` made it cross `epsilon` (the vertex must be
/// scheduled: it was at or below the threshold, so it was not already pending).
pub(crate) fn crosses(old: f32, added: f32, epsilon: f32) -> bool {
    old <= epsilon && old + added > epsilon
}

impl SplitOps for PageRankSplitOps {
    type Local = u32;
    type Packed = VertexResidual;

    fn pack(&self, v: u32) -> VertexResidual {
        let residual = if self.mine(v) {
            0.0
        } else {
            // Merge before send: everything accumulated for `v` since the last send.
            self.residual.take(v)
        };
        VertexResidual {
            vertex: v,
            residual,
        }
    }

    fn unpack(&self, p: VertexResidual) -> u32 {
        p.vertex
    }

    fn on_send(&self, p: &VertexResidual) -> SplitFlags {
        if self.mine(p.vertex) {
            SplitFlags::KEEP
        } else if p.residual > 0.0 {
            SplitFlags::PASS
        } else {
            SplitFlags::DROP
        }
    }

    fn on_receive(&self, p: &VertexResidual) -> SplitFlags {
        if !self.mine(p.vertex) {
            return SplitFlags::PASS;
        }
        // The owner applies the contribution whatever its size; it schedules the vertex only
        // when the sum crosses epsilon, otherwise the mass waits in the residual.
        match self.residual.add(p.vertex, p.residual) {
            Some(old) if crosses(old, p.residual, self.epsilon) => SplitFlags::KEEP,
            _ => SplitFlags::DROP,
        }
    }

    fn get_prio(&self, _v: &u32) -> u32 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossing_is_counted_once() {
        assert!(crosses(0.0, 0.02, 0.01));
        assert!(crosses(0.01, 0.001, 0.01));
        assert!(!crosses(0.02, 0.5, 0.01));
        assert!(!crosses(0.0, 0.005, 0.01));
    }
}
