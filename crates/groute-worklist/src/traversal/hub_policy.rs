//! Which adjacency lists an expand launch hands to the hub kernel (`traversal_expand_hubs` of
//! `kernels/include/traversal.cuh`), chosen per launch from its grid.
//!
//! The expand grid is sized by the item count (one thread per item, at most the resident
//! grid), so a round of a few hundred items runs on a few blocks. When those items have long
//! lists (kron21's second level: ~700 vertices of degree 256..2047, on 3 of 132
//! multiprocessors for ~1 ms on an H200), the round is bound by those few blocks. A launch
//! smaller than the resident grid therefore lowers the hub threshold: lists of at least
//! [`SMALL_GRID_HUB_MIN_DEGREE`] arcs (a grid of at most an eighth of the resident one) or
//! one block's threads of arcs (a smaller grid otherwise) are listed and spread over
//! the whole resident grid by the hub launch that follows. A full grid keeps
//! [`HUB_MIN_DEGREE`]: its blocks already cover the device, and a tile per medium list would
//! waste most of a block.
//!
//! The hub list is sized for both: `2 * arcs / HUB_MIN_DEGREE + 64` slots for full-grid
//! launches (every hub listed twice), and one slot per item of a launch smaller than the
//! resident grid (at most `resident_grid * BLOCK` items record a hub each) when some list
//! reaches the lowered threshold. The kernels bounds-check every slot and expand a hub that
//! finds the list full themselves, so a wrong size costs time, never a result.

/// Degree from which a list is a hub in a launch of the full resident grid
/// (`groute::HUB_MIN_DEGREE`).
pub const HUB_MIN_DEGREE: u32 = 2048;
/// Degree from which a list is a hub in a launch of at most an eighth of the resident grid
/// (`groute::SMALL_GRID_HUB_MIN_DEGREE`).
pub const SMALL_GRID_HUB_MIN_DEGREE: u32 = 32;
/// Most hub slots allocated (16M slots of two words: 128 MiB).
const MAX_HUB_SLOTS: usize = 1 << 24;

/// The hub thresholds of one graph on one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HubPolicy {
    /// The longest adjacency list of the graph.
    max_degree: u64,
    /// Blocks of the expand kernel resident at once.
    resident_grid: u32,
    /// Threads per expand block (the middle threshold).
    block: u32,
    /// Slots of the hub list.
    capacity: u32,
}

impl HubPolicy {
    /// The policy of a graph of `arcs` arcs whose longest list has `max_degree` arcs, on a
    /// device where `resident_grid` blocks of `block` threads are resident at once.
    pub fn new(arcs: usize, max_degree: u64, resident_grid: u32, block: u32) -> Self {
        let full = 2 * (arcs / HUB_MIN_DEGREE as usize) + 64;
        let small = if max_degree >= u64::from(SMALL_GRID_HUB_MIN_DEGREE) {
            resident_grid as usize * block as usize
        } else {
            0
        };
        HubPolicy {
            max_degree,
            resident_grid: resident_grid.max(1),
            block: block.max(1),
            capacity: full.max(small).min(MAX_HUB_SLOTS) as u32,
        }
    }

    /// The policy of `csr` on a device where `resident_grid` blocks of `block` threads are
    /// resident at once.
    pub fn for_csr(csr: &groute_graph::Csr, resident_grid: u32, block: u32) -> Self {
        let max_degree = csr
            .offsets()
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0);
        HubPolicy::new(csr.targets().len(), max_degree, resident_grid, block)
    }

    /// The longest adjacency list of the graph (arcs).
    pub fn max_degree(&self) -> u64 {
        self.max_degree
    }

    /// Slots of the hub list (`ctrl[CTRL_HUB_CAP]`).
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The hub threshold of an expand launch of `grid` blocks.
    pub fn min_degree(&self, grid: u32) -> u32 {
        if grid >= self.resident_grid {
            HUB_MIN_DEGREE
        } else if grid.saturating_mul(8) <= self.resident_grid {
            SMALL_GRID_HUB_MIN_DEGREE
        } else {
            self.block.min(HUB_MIN_DEGREE)
        }
    }

    /// Whether a launch with hub threshold `min_degree` can list a hub (otherwise the hub
    /// launch and its counter reset are skipped: road networks never list one).
    pub fn lists_hubs(&self, min_degree: u32) -> bool {
        self.max_degree >= u64::from(min_degree)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_follow_the_grid() {
        let p = HubPolicy::new(1 << 20, 5000, 1056, 256);
        assert_eq!(p.min_degree(1056), HUB_MIN_DEGREE);
        assert_eq!(p.min_degree(5000), HUB_MIN_DEGREE);
        assert_eq!(p.min_degree(1055), 256);
        assert_eq!(p.min_degree(133), 256);
        assert_eq!(p.min_degree(132), SMALL_GRID_HUB_MIN_DEGREE);
        assert_eq!(p.min_degree(1), SMALL_GRID_HUB_MIN_DEGREE);
    }

    #[test]
    fn capacity_covers_a_small_launch_of_medium_lists() {
        let p = HubPolicy::new(1 << 20, 100, 1056, 256);
        assert_eq!(p.capacity(), 1056 * 256);
        assert!(p.lists_hubs(SMALL_GRID_HUB_MIN_DEGREE));
        assert!(!p.lists_hubs(256));
        assert!(!p.lists_hubs(HUB_MIN_DEGREE));
    }

    #[test]
    fn low_degree_graphs_list_no_hub() {
        let p = HubPolicy::new(1 << 20, 4, 1056, 256);
        assert_eq!(p.capacity() as usize, 2 * ((1 << 20) / 2048) + 64);
        for grid in [1, 100, 1056] {
            assert!(!p.lists_hubs(p.min_degree(grid)));
        }
    }

    #[test]
    fn capacity_is_bounded() {
        let p = HubPolicy::new(usize::MAX / 4, u64::MAX, u32::MAX, 1024);
        assert_eq!(p.capacity() as usize, MAX_HUB_SLOTS);
    }
}
