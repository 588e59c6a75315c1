//! The two forms of a sweep round ([`SweepMode`]) and the host-side topology the pull form
//! needs: the in-CSR (the transpose of a directed graph) and each device's cut arcs.

use std::ops::Range;

use groute_graph::Csr;

/// How a sweep round (a round over the whole owned range) moves the residuals
/// ([`crate::PageRankTuning::sweep`], `--sweep`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SweepMode {
    /// Each taken vertex adds its share to every out-neighbour with an atomic that returns
    /// the old value (the crossing test), scheduling the heads on the way. Needs no in-CSR
    /// (no transpose of a directed graph on the device).
    Push,
    /// Two passes without atomics on local arcs: take every residual above the floor into a
    /// share array (pushing only along cut arcs, to other devices' vertices), then gather
    /// each owned vertex's in-neighbours' shares (crate docs, "Pull sweeps"). CUDA and the
    /// host backend's first sweep; worklist rounds stay push rounds. The default: without the
    /// atomics it runs much faster than a push sweep on sparse and dense graphs alike.
    #[default]
    Pull,
}

groute_core::choice_names! {
    /// The flag value (`push`, `pull`).
    SweepMode, "sweep mode" {
        Push => "push",
        Pull => "pull",
    }
}

/// One device's cut arcs: the arcs of its owned vertices whose heads it does not own, compact
/// (only the vertices that have any, so a pass over them costs what the cut costs): cut vertex
/// `i` is `vertices[i]` and its cut arcs' heads are `targets[offsets[i]..offsets[i + 1]]`.
/// The mirror of `CutLists` (`kernels/include/pagerank_push.cuh`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CutArcs {
    /// The owned vertices with a cut arc, ascending.
    pub(crate) vertices: Vec<u32>,
    /// `vertices.len() + 1` offsets into `targets`.
    pub(crate) offsets: Vec<u64>,
    /// The heads, vertex by vertex.
    pub(crate) targets: Vec<u32>,
}

impl CutArcs {
    /// The cut arcs of `owned` in `csr`, `None` when there is none.
    pub(crate) fn of(csr: &Csr, owned: &Range<u32>) -> Option<CutArcs> {
        let mut vertices = Vec::new();
        let mut offsets = vec![0u64];
        let mut targets = Vec::new();
        for v in owned.clone() {
            let before = targets.len();
            targets.extend(
                csr.neighbors(v)
                    .iter()
                    .copied()
                    .filter(|w| !owned.contains(w)),
            );
            if targets.len() > before {
                vertices.push(v);
                offsets.push(targets.len() as u64);
            }
        }
        (!vertices.is_empty()).then_some(CutArcs {
            vertices,
            offsets,
            targets,
        })
    }

    /// The most cut arcs of one vertex.
    pub(crate) fn max_degree(&self) -> u64 {
        self.offsets
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0)
    }

    /// Cut vertex `i` (`i < vertices.len()`) and its cut arcs' heads.
    pub(crate) fn list(&self, i: usize) -> (u32, &[u32]) {
        let (begin, end) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        (self.vertices[i], &self.targets[begin..end])
    }
}

/// In-degree from which the pull sweep's gather sums a vertex's in-list over the whole grid
/// in tiles of this many arcs (`pagerank_pull_hub_tiles`), not by one block.
pub const PULL_HUB_DEGREE: u64 = 2048;

/// One device's pull hubs: the owned vertices of in-degree at least [`PULL_HUB_DEGREE`] and
/// the tiles of their in-lists, three words each: hub index, first arc, end arc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PullHubs {
    /// The hubs.
    pub(crate) vertices: Vec<u32>,
    /// `3 * tiles` words.
    pub(crate) tiles: Vec<u64>,
}

impl PullHubs {
    /// The hubs of `owned` in the in-CSR `in_offsets`, `None` when there is none.
    pub(crate) fn of(in_offsets: &[u64], owned: &Range<u32>) -> Option<PullHubs> {
        let mut vertices = Vec::new();
        let mut tiles = Vec::new();
        for v in owned.clone() {
            let (begin, end) = (in_offsets[v as usize], in_offsets[v as usize + 1]);
            if end - begin < PULL_HUB_DEGREE {
                continue;
            }
            let hub = vertices.len() as u64;
            vertices.push(v);
            for first in (begin..end).step_by(PULL_HUB_DEGREE as usize) {
                tiles.extend([hub, first, end.min(first + PULL_HUB_DEGREE)]);
            }
        }
        (!vertices.is_empty()).then_some(PullHubs { vertices, tiles })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use groute_graph::{CsrBuilder, EdgeList};

    #[test]
    fn sweep_modes_parse_and_print() {
        for m in [SweepMode::Push, SweepMode::Pull] {
            assert_eq!(m.name().parse::<SweepMode>(), Ok(m));
        }
        let e = "gather".parse::<SweepMode>().unwrap_err();
        assert!(e.to_string().contains("push, pull"), "{e}");
    }

    #[test]
    fn cut_arcs_keep_only_arcs_leaving_the_owned_range() {
        // 0 -> 1, 0 -> 3, 1 -> 2, 2 -> 0, 3 -> 1; device owns 1..3.
        let pairs = [(0, 1), (0, 3), (1, 2), (2, 0), (3, 1)];
        let csr = CsrBuilder::new(4)
            .build(&EdgeList::from_pairs(&pairs))
            .unwrap();
        let cut = CutArcs::of(&csr, &(1..3)).expect("2 -> 0 leaves the range");
        assert_eq!(cut.vertices, vec![2]);
        assert_eq!(cut.offsets, vec![0, 1]);
        assert_eq!(cut.targets, vec![0]);
        assert_eq!(cut.max_degree(), 1);
        assert_eq!(cut.list(0), (2, &[0u32][..]));
        assert_eq!(CutArcs::of(&csr, &(0..4)), None);
        // Device owning 0..2: 0 -> 3 leaves (0 -> 1 does not), 1 -> 2 leaves.
        let cut = CutArcs::of(&csr, &(0..2)).expect("two cut vertices");
        assert_eq!(cut.vertices, vec![0, 1]);
        assert_eq!(cut.offsets, vec![0, 1, 2]);
        assert_eq!(cut.targets, vec![3, 2]);
    }

    #[test]
    fn pull_hubs_tile_the_in_lists_of_high_in_degree() {
        let d = PULL_HUB_DEGREE;
        // In-degrees 1, 2d + 1, d - 1, d over vertices 0..4.
        let offsets = [0, 1, 2 * d + 2, 3 * d + 1, 4 * d + 1];
        let hubs = PullHubs::of(&offsets, &(0..4)).expect("two hubs");
        assert_eq!(hubs.vertices, vec![1, 3]);
        let (b, h) = (1, 3 * d + 1);
        let expected = [
            [0, b, b + d],
            [0, b + d, b + 2 * d],
            [0, b + 2 * d, b + 2 * d + 1],
            [1, h, h + d],
        ];
        assert_eq!(hubs.tiles, expected.concat());
        assert_eq!(PullHubs::of(&offsets, &(2..3)), None);
    }
}
