//! The sequential reference: a plain queue BFS, the oracle of the tests.

use std::collections::VecDeque;

use groute_graph::Csr;

use crate::UNREACHED;

/// Levels of every vertex of `csr` from `source` (`UNREACHED` where unreachable); an
/// out-of-range source reaches nothing.
///
/// ```
/// use groute_graph::{Csr, CsrBuilder, EdgeList};
/// let csr = CsrBuilder::new(4).build(&EdgeList::from_pairs(&[(0, 1), (1, 2)]))?;
/// assert_eq!(groute_bfs::bfs_reference(&csr, 0), [0, 1, 2, u32::MAX]);
/// # Ok::<(), groute_graph::GraphError>(())
/// ```
pub fn bfs_reference(csr: &Csr, source: u32) -> Vec<u32> {
    let n = csr.num_vertices();
    let mut levels = vec![UNREACHED; n];
    if (source as usize) >= n {
        return levels;
    }
    let mut queue = VecDeque::new();
    levels[source as usize] = 0;
    queue.push_back(source);
    while let Some(v) = queue.pop_front() {
        let next = levels[v as usize] + 1;
        for &u in csr.neighbors(v) {
            if levels[u as usize] == UNREACHED {
                levels[u as usize] = next;
                queue.push_back(u);
            }
        }
    }
    levels
}
