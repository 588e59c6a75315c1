//! Which adjacency lists an expand launch hands to the hub kernel (`traversal_expand_hubs` of
//! `kernels/include/traversal.cuh`), chosen per launch from its grid.
//!
//! The expand grid is sized by the item count (one thread per item, at most the resident
//! grid), so a round of a few hundred items runs on a few blocks. When those items have long
//! lists (a Kronecker graph's second level: a few hundred vertices of degree in the hundreds
//! to thousands, on a few of the device's multiprocessors), the round is bound by those few
//! blocks. A launch
//! smaller than the resident grid therefore lowers the hub threshold: lists of at least
//! [`SMALL_GRID_HUB_MIN_DEGREE`] arcs (a grid of at most an eighth of the resident one) or
//! one block's threads of arcs (a smaller grid otherwise) are listed and spread over
//! the whole resident grid by the hub launch that follows. A full grid keeps
//! [`HUB_MIN_DEGREE`]: its blocks already cover the device, and a tile per medium list would
//! waste most of a block.
//!
//! The fused kernel's grid phases list lists of [`FUSED_HUB_MIN_DEGREE`] arcs or more
//! (SSSP's builds; BFS's keep [`HUB_MIN_DEGREE`]: `groute::fused_hub_min_degree` in
//! `kernels/include/fused.cuh` says why).
//!
//! The hub list is sized for all of them: `2 * arcs / FUSED_HUB_MIN_DEGREE + 64` slots for
//! full-grid launches and the fused kernel (every hub listed twice), and for a launch
//! smaller than the resident grid one slot per item that can be listed: at most `resident_grid * BLOCK` items, and at most twice
//! the device's lists of [`SMALL_GRID_HUB_MIN_DEGREE`] arcs or more (a list is in a launch
//! about once; twice covers some duplicates, and an improvement storm that queues more only
//! finds the list full), plus 64. The
//! kernels bounds-check every slot and expand a hub that finds the list full themselves, so
//! a wrong size costs time, never a result.

/// Degree from which a list is a hub in a launch of the full resident grid
/// (`groute::HUB_MIN_DEGREE`).
pub const HUB_MIN_DEGREE: u32 = 2048;
/// Degree from which a list is a hub in the fused kernel's grid phases of SSSP, half
/// [`HUB_MIN_DEGREE`] (`groute::fused_hub_min_degree`, a test checks the rule).
pub const FUSED_HUB_MIN_DEGREE: u32 = HUB_MIN_DEGREE / 2;
/// Degree from which a list is a hub in a launch of at most an eighth of the resident grid
/// (`groute::SMALL_GRID_HUB_MIN_DEGREE`).
pub const SMALL_GRID_HUB_MIN_DEGREE: u32 = 32;
/// Most hub slots allocated (16M slots of two words: 128 MiB).
const MAX_HUB_SLOTS: usize = 1 << 24;

/// The hub thresholds of one graph (or one device's part of it) on one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HubPolicy {
    /// The longest adjacency list of the graph (or the device's part of it).
    max_degree: u64,
    /// Blocks of the expand kernel resident at once.
    resident_grid: u32,
    /// Threads per expand block (the middle threshold).
    block: u32,
    /// Slots of the hub list.
    capacity: u32,
}

impl HubPolicy {
    /// The policy of a graph (or part) of `arcs` arcs whose longest list has `max_degree`
    /// arcs and `medium_lists` lists have [`SMALL_GRID_HUB_MIN_DEGREE`] arcs or more, on a
    /// device where `resident_grid` blocks of `block` threads are resident at once.
    pub fn new(
        arcs: usize,
        max_degree: u64,
        medium_lists: usize,
        resident_grid: u32,
        block: u32,
    ) -> Self {
        let full = 2 * (arcs / FUSED_HUB_MIN_DEGREE as usize) + 64;
        let small = if max_degree >= u64::from(SMALL_GRID_HUB_MIN_DEGREE) {
            (resident_grid as usize * block as usize)
                .min(medium_lists.saturating_mul(2).saturating_add(64))
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

    /// The policy of the rows `rows` of `csr` (the lists a device expands), on a device where
    /// `resident_grid` blocks of `block` threads are resident at once; rows outside the graph
    /// count as none.
    pub fn for_rows(
        csr: &groute_graph::Csr,
        rows: std::ops::Range<u32>,
        resident_grid: u32,
        block: u32,
    ) -> Self {
        let offsets = csr
            .offsets()
            .get(rows.start as usize..=rows.end as usize)
            .unwrap_or(&[]);
        let (mut max_degree, mut medium_lists) = (0, 0);
        for w in offsets.windows(2) {
            let degree = w[1] - w[0];
            max_degree = max_degree.max(degree);
            medium_lists += usize::from(degree >= u64::from(SMALL_GRID_HUB_MIN_DEGREE));
        }
        let arcs = match (offsets.first(), offsets.last()) {
            (Some(first), Some(last)) => (last - first) as usize,
            _ => 0,
        };
        HubPolicy::new(arcs, max_degree, medium_lists, resident_grid, block)
    }

    /// The longest adjacency list of the graph or part the policy was made for (arcs).
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

    /// The device header's text of `name` (`kernels/include/`).
    fn header(name: &str) -> &'static str {
        groute_kernels::HEADERS
            .iter()
            .find(|h| h.name == name)
            .unwrap_or_else(|| panic!("no header {name}"))
            .source
    }

    #[test]
    fn the_hub_degrees_mirror_the_kernels() {
        let traversal = header("traversal.cuh");
        for line in [
            format!("HUB_MIN_DEGREE = {HUB_MIN_DEGREE},"),
            format!("SMALL_GRID_HUB_MIN_DEGREE = {SMALL_GRID_HUB_MIN_DEGREE},"),
        ] {
            assert!(traversal.contains(&line), "traversal.cuh lacks `{line}`");
        }
        let fused = header("fused.cuh");
        let rule = "return WEIGHTED ? HUB_MIN_DEGREE / 2u : HUB_MIN_DEGREE;";
        assert!(fused.contains(rule), "fused.cuh lacks `{rule}`");
    }

    #[test]
    fn thresholds_follow_the_grid() {
        let p = HubPolicy::new(1 << 20, 5000, 1 << 20, 1056, 256);
        assert_eq!(p.min_degree(1056), HUB_MIN_DEGREE);
        assert_eq!(p.min_degree(5000), HUB_MIN_DEGREE);
        assert_eq!(p.min_degree(1055), 256);
        assert_eq!(p.min_degree(133), 256);
        assert_eq!(p.min_degree(132), SMALL_GRID_HUB_MIN_DEGREE);
        assert_eq!(p.min_degree(1), SMALL_GRID_HUB_MIN_DEGREE);
    }

    #[test]
    fn capacity_covers_a_small_launch_of_medium_lists() {
        let p = HubPolicy::new(1 << 20, 100, 1 << 20, 1056, 256);
        assert_eq!(p.capacity(), 1056 * 256);
        assert!(p.lists_hubs(SMALL_GRID_HUB_MIN_DEGREE));
        assert!(!p.lists_hubs(256));
        assert!(!p.lists_hubs(HUB_MIN_DEGREE));
    }

    #[test]
    fn low_degree_graphs_list_no_hub() {
        let p = HubPolicy::new(1 << 20, 4, 0, 1056, 256);
        assert_eq!(
            p.capacity() as usize,
            2 * ((1 << 20) / FUSED_HUB_MIN_DEGREE as usize) + 64
        );
        for grid in [1, 100, 1056] {
            assert!(!p.lists_hubs(p.min_degree(grid)));
        }
    }

    #[test]
    fn a_part_with_few_medium_lists_gets_few_small_launch_slots() {
        let p = HubPolicy::new(1 << 16, 100, 1000, 1056, 256);
        assert_eq!(p.capacity(), 2 * 1000 + 64);
        // Rows: 0 -> {1, 2}, 3 -> {4}; vertices 1, 2, 4 and 5 have no arcs.
        let csr =
            groute_graph::Csr::from_parts(vec![0u64, 2, 2, 2, 3, 3, 3], vec![1u32, 2, 4], None)
                .expect("a valid CSR");
        let p = HubPolicy::for_rows(&csr, 1..4, 1056, 256);
        assert_eq!(p.max_degree(), 1);
        assert_eq!(p.capacity(), 64);
        let outside = HubPolicy::for_rows(&csr, 4..9, 1056, 256);
        assert_eq!(outside.max_degree(), 0);
    }

    #[test]
    fn capacity_is_bounded() {
        let p = HubPolicy::new(usize::MAX / 4, u64::MAX, usize::MAX, u32::MAX, 1024);
        assert_eq!(p.capacity() as usize, MAX_HUB_SLOTS);
    }
}
