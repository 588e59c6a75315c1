//! Sequential union-find: the oracle of the tests.

use groute_graph::Csr;

/// Component labels of `csr` (weakly connected: arc directions are ignored): `labels[v]` is the
/// smallest vertex id of `v`'s component.
///
/// Union-find with path halving; unions point the larger root at the smaller one, so every
/// root is the minimum of its set.
pub fn cc_reference(csr: &Csr) -> Vec<u32> {
    let n = csr.num_vertices();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            let grand = parent[parent[x as usize] as usize];
            parent[x as usize] = grand;
            x = grand;
        }
        x
    }
    let offsets = csr.offsets();
    let targets = csr.targets();
    for u in 0..n {
        for &v in &targets[offsets[u] as usize..offsets[u + 1] as usize] {
            let ru = find(&mut parent, u as u32);
            let rv = find(&mut parent, v);
            if ru != rv {
                let (lo, hi) = if ru < rv { (ru, rv) } else { (rv, ru) };
                parent[hi as usize] = lo;
            }
        }
    }
    (0..n as u32).map(|v| find(&mut parent, v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component_stats;
    use groute_graph::{CsrBuilder, EdgeList};

    #[test]
    fn labels_are_component_minima() {
        let e = EdgeList::from_pairs(&[(4, 2), (2, 5), (1, 3), (6, 6)]);
        let csr = CsrBuilder::new(7).build(&e).unwrap();
        assert_eq!(cc_reference(&csr), vec![0, 1, 2, 1, 2, 2, 6]);
        assert_eq!(component_stats(&cc_reference(&csr)), (4, 3));
    }
}
