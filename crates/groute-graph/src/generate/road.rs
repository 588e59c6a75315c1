//! Road-like graphs: a 2D grid whose edges survive with probability `p`.
//!
//! Vertex `y * width + x` sits at `(x, y)` moved by up to `jitter` grid steps in each axis; each
//! grid edge is kept with probability `p`, in both directions, weighted
//! `max(1, round(unit * distance))`. Below about `p = 0.64` the surviving grid is sparse enough
//! that shortest hop paths wind, so the hop diameter grows well beyond `width + height`, like a
//! road network's. Every random choice is a hash of `(seed, vertex or edge)`, so the graph does
//! not depend on the thread count.

use rayon::prelude::*;

use super::{GenSpec, Generator};
use crate::csr::Csr;
use crate::error::GraphError;
use crate::graph::Graph;
use crate::par::{SharedSlice, prefix_sum};
use crate::progress::Progress;
use crate::rng::mix64;

const EDGE_SALT: u64 = 0x6564_6765;
const X_SALT: u64 = 0x7878_7878;
const Y_SALT: u64 = 0x7979_7979;

pub(crate) fn generate(spec: &GenSpec, progress: &dyn Progress) -> Result<Graph, GraphError> {
    let Generator::Road {
        width,
        height,
        p,
        jitter,
        unit,
    } = spec.generator
    else {
        return Err(GraphError::TooLarge {
            what: "road generator",
            value: 0,
            limit: 0,
        });
    };
    let (w, h) = (width as u64, height as u64);
    let n = w * h;
    if n > u64::from(u32::MAX) {
        return Err(GraphError::TooLarge {
            what: "vertex count",
            value: n,
            limit: u64::from(u32::MAX),
        });
    }
    let seed = spec.seed;
    let threshold = (p * 2f64.powi(64)).min(u64::MAX as f64) as u64;
    let always = p >= 1.0;
    // Edge kind 0: (v, v + 1); kind 1: (v, v + width).
    let kept =
        |v: u64, kind: u64| always || mix64(seed ^ mix64((v << 1 | kind) ^ EDGE_SALT)) < threshold;
    let unit01 = |x: u64| (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    let coord = |v: u64| {
        let jx = (unit01(mix64(seed ^ mix64(v ^ X_SALT))) * 2.0 - 1.0) * jitter;
        let jy = (unit01(mix64(seed ^ mix64(v ^ Y_SALT))) * 2.0 - 1.0) * jitter;
        ((v % w) as f64 + jx, (v / w) as f64 + jy)
    };
    let weight = |a: u64, b: u64| {
        let (pa, pb) = (coord(a), coord(b));
        let d = ((pa.0 - pb.0).powi(2) + (pa.1 - pb.1).powi(2)).sqrt();
        ((d * f64::from(unit)).round() as u32).max(1)
    };
    // Neighbours of v in increasing id order: up, left, right, down.
    let neighbours = |v: u64, out: &mut [u32; 4]| -> usize {
        let (x, y) = (v % w, v / w);
        let mut k = 0;
        if y > 0 && kept(v - w, 1) {
            out[k] = (v - w) as u32;
            k += 1;
        }
        if x > 0 && kept(v - 1, 0) {
            out[k] = (v - 1) as u32;
            k += 1;
        }
        if x + 1 < w && kept(v, 0) {
            out[k] = (v + 1) as u32;
            k += 1;
        }
        if y + 1 < h && kept(v, 1) {
            out[k] = (v + w) as u32;
            k += 1;
        }
        k
    };
    progress.stage("generating grid", 2 * n);
    let degrees: Vec<u64> = (0..n as usize)
        .into_par_iter()
        .with_min_len(1 << 12)
        .map(|v| neighbours(v as u64, &mut [0; 4]) as u64)
        .collect();
    progress.advance(n);
    let offsets = prefix_sum(degrees.iter().copied(), n as usize);
    drop(degrees);
    let m = offsets[n as usize] as usize;
    let mut targets = vec![0u32; m];
    let mut weights = vec![0u32; m];
    {
        let tw = SharedSlice::new(&mut targets);
        let ww = SharedSlice::new(&mut weights);
        (0..n as usize)
            .into_par_iter()
            .with_min_len(1 << 12)
            .for_each(|v| {
                let v = v as u64;
                let mut nb = [0u32; 4];
                let k = neighbours(v, &mut nb);
                let start = offsets[v as usize] as usize;
                for (i, &t) in nb[..k].iter().enumerate() {
                    let (a, b) = if v < u64::from(t) {
                        (v, u64::from(t))
                    } else {
                        (u64::from(t), v)
                    };
                    // SAFETY: row v owns positions offsets[v]..offsets[v + 1], which has exactly
                    // `k` entries (the same `neighbours` computed its degree), and rows are disjoint.
                    unsafe {
                        tw.write(start + i, t);
                        ww.write(start + i, weight(a, b));
                    }
                }
            });
    }
    progress.advance(n);
    let csr = Csr::from_parts_trusted(offsets.into(), targets.into(), Some(weights.into()));
    Ok(Graph::new(csr, String::new(), true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    fn bfs_depth(g: &Csr, s: u32) -> (u32, usize) {
        let mut level = vec![u32::MAX; g.num_vertices()];
        let mut frontier = vec![s];
        level[s as usize] = 0;
        let mut depth = 0;
        let mut seen = 1;
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &u in &frontier {
                for &v in g.neighbors(u) {
                    if level[v as usize] == u32::MAX {
                        level[v as usize] = depth + 1;
                        next.push(v);
                    }
                }
            }
            if !next.is_empty() {
                depth += 1;
            }
            seen += next.len();
            frontier = next;
        }
        (depth, seen)
    }

    #[test]
    fn road_is_symmetric_weighted_and_deep() {
        let spec: GenSpec = "road:side=64,p=0.6,seed=4".parse().unwrap();
        let g = generate(&spec, &NoProgress).unwrap();
        assert_eq!(g.num_vertices(), 4096);
        assert!(g.csr.is_symmetric());
        let expected = 2.0 * 2.0 * 63.0 * 64.0 * 0.6;
        let m = g.num_edges() as f64;
        assert!((m - expected).abs() < 0.05 * expected, "{m} vs {expected}");
        let w = g.csr.weights().unwrap();
        assert!(w.iter().all(|&x| (400..=1700).contains(&x)));
        // Hop depth from a well-connected corner region exceeds the grid's Manhattan radius.
        let start = (0..64).find(|&v| g.csr.out_degree(v) > 0).unwrap();
        let (depth, seen) = bfs_depth(&g.csr, start);
        assert!(seen > 2000, "{seen}");
        assert!(depth > 126, "{depth}");
    }

    #[test]
    fn full_grid_has_all_edges() {
        let spec: GenSpec = "road:w=5,h=3,p=1,jitter=0".parse().unwrap();
        let g = generate(&spec, &NoProgress).unwrap();
        assert_eq!(g.num_edges(), 2 * (4 * 3 + 5 * 2));
        assert!(g.csr.weights().unwrap().iter().all(|&x| x == 1000));
        assert_eq!(g.csr.neighbors(6), &[1, 5, 7, 11]);
    }
}
