//! Road-like graphs: a 2D grid whose edges survive with probability `p`.
//!
//! Vertex `y * width + x` sits at `(x, y)` moved by up to `jitter` grid steps in each axis; each
//! grid edge is kept with probability `p`, in both directions, weighted
//! `max(1, round(unit * distance))`. Below about `p = 0.64` the surviving grid is sparse enough
//! that shortest hop paths wind, so the hop diameter grows well beyond `width + height`, like a
//! road network's. Every random choice is a hash of `(seed, vertex or edge)`, so the graph does
//! not depend on the thread count.
//!
//! [`RoadOrder`] picks how the cells are numbered. Row order puts a cell's left and right
//! neighbours next to it in memory but its upper and lower ones a row away, so a traversal's
//! wave, which crosses rows, touches a new cache line at almost every vertex. The Hilbert order
//! numbers the cells along a Hilbert curve: any run of ids covers a compact patch of the grid,
//! so a wave's neighbouring vertices share lines whatever its direction. The random choices
//! are made on the row-order ids, so both orders give the same graph up to renumbering.
//! The order changes little for the fused traversals, whose levels are bound by latency rather
//! than by the lines they touch.

use std::fmt;
use std::str::FromStr;

use rayon::prelude::*;

use super::{GenSpec, Generator};
use crate::alloc::try_zeroed;
use crate::csr::Csr;
use crate::error::GraphError;
use crate::graph::Graph;
use crate::par::{SharedSlice, try_prefix_sum};
use crate::progress::Progress;
use crate::rng::mix64;

const EDGE_SALT: u64 = 0x6564_6765;
const X_SALT: u64 = 0x7878_7878;
const Y_SALT: u64 = 0x7979_7979;

/// How a road grid's cells are numbered (`order=` in a `road` spec).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RoadOrder {
    /// Cell `(x, y)` is vertex `y * width + x` (`order=rows`, the default).
    #[default]
    Rows,
    /// Cells are numbered in the order a Hilbert curve over the smallest enclosing
    /// power-of-two square visits them (`order=hilbert`); cell `(0, 0)` stays vertex 0.
    Hilbert,
}

impl RoadOrder {
    /// The accepted spellings, for error messages.
    pub const NAMES: &'static str = "rows, hilbert";
}

impl FromStr for RoadOrder {
    type Err = ();

    fn from_str(s: &str) -> Result<RoadOrder, ()> {
        match s.to_ascii_lowercase().as_str() {
            "rows" | "row" => Ok(RoadOrder::Rows),
            "hilbert" => Ok(RoadOrder::Hilbert),
            _ => Err(()),
        }
    }
}

impl fmt::Display for RoadOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RoadOrder::Rows => "rows",
            RoadOrder::Hilbert => "hilbert",
        })
    }
}

/// Position of `(x, y)` along the Hilbert curve over the `2^bits x 2^bits` square (`bits <= 32`).
fn hilbert_index(bits: u32, mut x: u64, mut y: u64) -> u64 {
    let mut d = 0u64;
    let mut s = (1u64 << bits) >> 1;
    while s > 0 {
        let rx = u64::from(x & s != 0);
        let ry = u64::from(y & s != 0);
        d += s * s * ((3 * rx) ^ ry);
        // Rotate the quadrant so that the sub-curve starts where the parent curve enters it.
        if ry == 0 {
            if rx == 1 {
                x = !x;
                y = !y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        s >>= 1;
    }
    d
}

/// `(vertex_of, id_of)` of a renumbered grid, `None` for row order.
type Renumbering = Option<(Vec<u32>, Vec<u32>)>;

/// The renumbering of a `w x h` grid in row order: `(vertex_of, id_of)`, where `vertex_of[new]`
/// is a cell's row-order id and `id_of[row-order id]` its new id. `None` for row order; arrays
/// are allocated fallibly.
fn renumbering(order: RoadOrder, w: u64, h: u64) -> Result<Renumbering, GraphError> {
    match order {
        RoadOrder::Rows => Ok(None),
        RoadOrder::Hilbert => {
            let n = (w * h) as usize;
            let bits = 64 - (w.max(h) - 1).leading_zeros();
            let mut keyed = try_zeroed::<(u64, u32)>(n, "the grid's Hilbert keys")?;
            keyed
                .par_iter_mut()
                .enumerate()
                .with_min_len(1 << 12)
                .for_each(|(v, k)| {
                    let v = v as u64;
                    *k = (hilbert_index(bits, v % w, v / w), v as u32);
                });
            keyed.par_sort_unstable();
            let mut vertex_of = try_zeroed::<u32>(n, "the grid's Hilbert order")?;
            vertex_of
                .par_iter_mut()
                .zip(keyed.par_iter())
                .for_each(|(o, &(_, v))| *o = v);
            drop(keyed);
            let mut id_of = try_zeroed::<u32>(n, "the grid's Hilbert ids")?;
            {
                let ids = SharedSlice::new(&mut id_of);
                vertex_of
                    .par_iter()
                    .enumerate()
                    .with_min_len(1 << 12)
                    .for_each(|(new, &v)| {
                        // SAFETY: `vertex_of` is a permutation of 0..n, so each slot is written once.
                        unsafe { ids.write(v as usize, new as u32) }
                    });
            }
            Ok(Some((vertex_of, id_of)))
        }
    }
}

pub(crate) fn generate(spec: &GenSpec, progress: &dyn Progress) -> Result<Graph, GraphError> {
    let Generator::Road {
        width,
        height,
        p,
        jitter,
        unit,
        order,
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
    let renumbered = renumbering(order, w, h)?;
    // Row-order cell of vertex `u`, and new id of row-order cell `v`.
    let cell = |u: u64| match &renumbered {
        Some((vertex_of, _)) => u64::from(vertex_of[u as usize]),
        None => u,
    };
    let id = |v: u32| match &renumbered {
        Some((_, id_of)) => id_of[v as usize],
        None => v,
    };
    let mut degrees = try_zeroed::<u8>(n as usize, "the grid's degrees (1 byte per vertex)")?;
    degrees
        .par_iter_mut()
        .enumerate()
        .with_min_len(1 << 12)
        .for_each(|(u, d)| *d = neighbours(cell(u as u64), &mut [0; 4]) as u8);
    progress.advance(n);
    let offsets = try_prefix_sum(
        degrees.iter().map(|&d| u64::from(d)),
        n as usize,
        "the grid's CSR offsets (8 bytes per vertex)",
    )?;
    drop(degrees);
    let m = offsets[n as usize] as usize;
    let mut targets = try_zeroed::<u32>(m, "the grid's CSR targets (4 bytes per arc)")?;
    let mut weights = try_zeroed::<u32>(m, "the grid's CSR weights (4 bytes per arc)")?;
    {
        let tw = SharedSlice::new(&mut targets);
        let ww = SharedSlice::new(&mut weights);
        (0..n as usize)
            .into_par_iter()
            .with_min_len(1 << 12)
            .for_each(|u| {
                let v = cell(u as u64);
                let mut nb = [0u32; 4];
                let k = neighbours(v, &mut nb);
                let mut row = [(0u32, 0u32); 4];
                for (slot, &t) in row.iter_mut().zip(&nb[..k]) {
                    let (a, b) = if v < u64::from(t) {
                        (v, u64::from(t))
                    } else {
                        (u64::from(t), v)
                    };
                    *slot = (id(t), weight(a, b));
                }
                // Rows list their neighbours in increasing id order, in either numbering.
                row[..k].sort_unstable();
                let start = offsets[u] as usize;
                for (i, &(t, wt)) in row[..k].iter().enumerate() {
                    // SAFETY: row u owns positions offsets[u]..offsets[u + 1], which has exactly
                    // `k` entries (the same `neighbours` computed its degree), and rows are disjoint.
                    unsafe {
                        tw.write(start + i, t);
                        ww.write(start + i, wt);
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

    #[test]
    fn hilbert_curve_visits_every_cell_by_unit_steps() {
        for bits in 0..=5u32 {
            let side = 1u64 << bits;
            let mut at = vec![None; (side * side) as usize];
            for y in 0..side {
                for x in 0..side {
                    let d = hilbert_index(bits, x, y) as usize;
                    assert!(at[d].is_none(), "index {d} given twice at side {side}");
                    at[d] = Some((x, y));
                }
            }
            let cells: Vec<(u64, u64)> = at.into_iter().map(Option::unwrap).collect();
            assert_eq!(cells[0], (0, 0));
            for pair in cells.windows(2) {
                let ((ax, ay), (bx, by)) = (pair[0], pair[1]);
                assert_eq!(
                    ax.abs_diff(bx) + ay.abs_diff(by),
                    1,
                    "{pair:?} at side {side}"
                );
            }
        }
    }

    /// The Hilbert-numbered grid is the row-numbered one renumbered: same arcs, same weights.
    fn assert_same_graph_renumbered(rows_spec: &str, w: u64, h: u64) {
        let rows = generate(&rows_spec.parse().unwrap(), &NoProgress).unwrap();
        let spec: GenSpec = format!("{rows_spec},order=hilbert").parse().unwrap();
        let hilbert = generate(&spec, &NoProgress).unwrap();
        assert!(hilbert.csr.rows_sorted());
        let (vertex_of, id_of) = renumbering(RoadOrder::Hilbert, w, h).unwrap().unwrap();
        assert_eq!(vertex_of[0], 0, "cell (0, 0) must stay vertex 0");
        assert_eq!(hilbert.num_edges(), rows.num_edges());
        let (rw, hw) = (rows.csr.weights().unwrap(), hilbert.csr.weights().unwrap());
        for u in 0..hilbert.num_vertices() as u32 {
            let v = vertex_of[u as usize];
            assert_eq!(id_of[v as usize], u);
            let mut expected: Vec<(u32, u32)> = rows
                .csr
                .neighbors(v)
                .iter()
                .zip(&rw[rows.csr.offsets()[v as usize] as usize..])
                .map(|(&t, &wt)| (id_of[t as usize], wt))
                .collect();
            expected.sort_unstable();
            let start = hilbert.csr.offsets()[u as usize] as usize;
            let got: Vec<(u32, u32)> = hilbert
                .csr
                .neighbors(u)
                .iter()
                .zip(&hw[start..])
                .map(|(&t, &wt)| (t, wt))
                .collect();
            assert_eq!(got, expected, "vertex {u} (row-order cell {v})");
        }
    }

    #[test]
    fn hilbert_order_renumbers_the_same_graph() {
        assert_same_graph_renumbered("road:side=64,p=0.6,seed=4", 64, 64);
        // Neither square nor a power of two: the curve runs over the enclosing 8 x 8 square.
        assert_same_graph_renumbered("road:w=7,h=3,p=0.8,seed=2", 7, 3);
        assert_same_graph_renumbered("road:w=1,h=5,p=1", 1, 5);
    }

    #[test]
    fn hilbert_order_keeps_neighbours_close_in_id() {
        // Share of arcs whose ends are fewer than 32 ids apart (one cache line of 4-byte
        // values): the horizontal half in row order, most arcs in Hilbert order.
        let near = |spec: &str| {
            let g = generate(&spec.parse().unwrap(), &NoProgress).unwrap();
            let close = (0..g.num_vertices() as u32)
                .flat_map(|u| g.csr.neighbors(u).iter().map(move |&t| u.abs_diff(t)))
                .filter(|&d| d < 32)
                .count();
            close as f64 / g.num_edges() as f64
        };
        let rows = near("road:side=256,p=0.6");
        let hilbert = near("road:side=256,p=0.6,order=hilbert");
        assert!(rows < 0.55, "{rows}");
        assert!(hilbert > 0.8, "{hilbert} against {rows}");
    }
}
