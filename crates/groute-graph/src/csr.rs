//! Compressed sparse row graphs and their builder.
//!
//! ```
//! use groute_graph::{CsrBuilder, EdgeList};
//!
//! let edges = EdgeList::from_pairs(&[(0, 1), (1, 2), (1, 2), (2, 2)]);
//! let g = CsrBuilder::new(3).symmetrize(true).dedup(true).remove_self_loops(true).build(&edges)?;
//! assert_eq!(g.num_edges(), 4); // 0-1, 1-0, 1-2, 2-1
//! assert_eq!(g.neighbors(1), &[0, 2]);
//! assert_eq!(g.transpose().neighbors(0), &[1]);
//! # Ok::<(), groute_graph::GraphError>(())
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::GraphError;
use crate::par::{SharedSlice, balanced_ranges, chunk_count, prefix_sum, split_rows_mut};
use crate::rng::mix64;
use crate::storage::Storage;

mod build;

pub use build::{CsrBuilder, EdgeList};

/// A directed graph in compressed sparse row form.
///
/// Invariants (checked by every constructor, relied on by every method):
/// - `offsets` has `num_vertices + 1` entries, starts at 0, never decreases, and ends at
///   `num_edges`; the out-arcs of `v` are `offsets[v]..offsets[v + 1]`;
/// - `num_vertices <= u32::MAX`, and every entry of `targets` is `< num_vertices`;
/// - `weights`, when present, has exactly `num_edges` entries, parallel to `targets`.
///
/// Graphs made by [`CsrBuilder`], [`Csr::transpose`] and the generators also have every
/// neighbour list sorted ascending (by target, then weight); graphs read from binary files keep
/// the file's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Csr {
    offsets: Storage<u64>,
    targets: Storage<u32>,
    weights: Option<Storage<u32>>,
}

/// Summary statistics of the out-degrees of a graph.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DegreeStats {
    /// Smallest out-degree.
    pub min: u64,
    /// Largest out-degree.
    pub max: u64,
    /// A vertex with the largest out-degree.
    pub argmax: u32,
    /// Mean out-degree.
    pub mean: f64,
    /// Vertices with out-degree 0.
    pub zero_out_degree: u64,
    /// Arcs `v -> v`.
    pub self_loops: u64,
}

/// Values per chunk of the parallel invariant scans: a tight loop per chunk vectorises; only a
/// bad chunk is searched again.
const CHECK_CHUNK: usize = 1 << 16;

/// Checks offsets on their own: at least one entry, the first 0, at most `u32::MAX` vertices,
/// non-decreasing, the last `arcs`.
pub(crate) fn check_offsets(o: &[u64], arcs: u64) -> Result<(), Invalid> {
    if o.is_empty() || o[0] != 0 {
        return Err(Invalid::Offsets(0));
    }
    let n = o.len() - 1;
    if n > u32::MAX as usize {
        return Err(Invalid::TooManyVertices(n as u64));
    }
    if o[n] != arcs {
        return Err(Invalid::Offsets(n as u64));
    }
    const CH: usize = CHECK_CHUNK;
    let bad_row = (0..n.div_ceil(CH)).into_par_iter().position_first(|c| {
        let end = ((c + 1) * CH).min(n);
        o[c * CH..=end]
            .windows(2)
            .fold(false, |acc, w| acc | (w[0] > w[1]))
    });
    if let Some(c) = bad_row {
        let bad = (c * CH..n).find(|&v| o[v] > o[v + 1]).unwrap_or(c * CH);
        return Err(Invalid::Offsets(bad as u64));
    }
    Ok(())
}

impl Csr {
    /// A graph from its arrays, checking every invariant listed on [`Csr`].
    pub fn from_parts(
        offsets: impl Into<Storage<u64>>,
        targets: impl Into<Storage<u32>>,
        weights: Option<Storage<u32>>,
    ) -> Result<Csr, GraphError> {
        let csr = Csr {
            offsets: offsets.into(),
            targets: targets.into(),
            weights,
        };
        csr.check()?;
        Ok(csr)
    }

    /// Checks every invariant listed on [`Csr`] again, naming the first one that fails.
    ///
    /// Every constructor already checks them, so this fails only if a constructor is wrong: the
    /// fuzz targets and the reader tests call it on every graph a reader returns.
    ///
    /// ```
    /// use groute_graph::{CsrBuilder, EdgeList};
    ///
    /// let g = CsrBuilder::new(3).build(&EdgeList::from_pairs(&[(0, 1), (2, 0)]))?;
    /// g.check()?;
    /// # Ok::<(), groute_graph::GraphError>(())
    /// ```
    pub fn check(&self) -> Result<(), GraphError> {
        let csr = self;
        csr.validate().map_err(|e| match e {
            Invalid::Offsets(v) => GraphError::VertexOutOfRange {
                index: v,
                vertex: v,
                num_vertices: csr.offsets.len().saturating_sub(1) as u64,
            },
            Invalid::Target { edge, target } => GraphError::VertexOutOfRange {
                index: edge,
                vertex: target,
                num_vertices: csr.num_vertices() as u64,
            },
            Invalid::Weights(got) => GraphError::WeightCount {
                got,
                edges: csr.targets.len() as u64,
            },
            Invalid::TooManyVertices(n) => GraphError::TooLarge {
                what: "vertex count",
                value: n,
                limit: u64::from(u32::MAX),
            },
        })
    }

    /// Builds without checking; for internal constructors that establish the invariants.
    pub(crate) fn from_parts_trusted(
        offsets: Storage<u64>,
        targets: Storage<u32>,
        weights: Option<Storage<u32>>,
    ) -> Csr {
        let csr = Csr {
            offsets,
            targets,
            weights,
        };
        debug_assert!(csr.validate().is_ok());
        csr
    }

    /// Builds and checks, reporting the raw invariant violation.
    pub(crate) fn checked(
        offsets: Storage<u64>,
        targets: Storage<u32>,
        weights: Option<Storage<u32>>,
    ) -> Result<Csr, Invalid> {
        check_offsets(&offsets, targets.len() as u64)?;
        Self::with_checked_offsets(offsets, targets, weights)
    }

    pub(crate) fn validate(&self) -> Result<(), Invalid> {
        check_offsets(&self.offsets, self.targets.len() as u64)?;
        self.validate_arcs()
    }

    /// The invariants past the offsets (checked already): every target below `n`, one
    /// weight per arc.
    pub(crate) fn validate_arcs(&self) -> Result<(), Invalid> {
        let n = self.offsets.len().saturating_sub(1);
        const CH: usize = CHECK_CHUNK;
        let t = &self.targets[..];
        let limit = n as u64;
        let bad_chunk = t.par_chunks(CH).position_first(|c| {
            c.iter()
                .fold(false, |acc, &x| acc | (u64::from(x) >= limit))
        });
        if let Some(c) = bad_chunk {
            let bad = c * CH
                + t[c * CH..]
                    .iter()
                    .position(|&x| u64::from(x) >= limit)
                    .unwrap_or(0);
            return Err(Invalid::Target {
                edge: bad as u64,
                target: u64::from(t[bad]),
            });
        }
        if let Some(w) = &self.weights
            && w.len() != t.len()
        {
            return Err(Invalid::Weights(w.len() as u64));
        }
        Ok(())
    }

    /// Builds from offsets already checked ([`check_offsets`] against `targets.len()`) and
    /// checks the arcs.
    pub(crate) fn with_checked_offsets(
        offsets: Storage<u64>,
        targets: Storage<u32>,
        weights: Option<Storage<u32>>,
    ) -> Result<Csr, Invalid> {
        let csr = Csr {
            offsets,
            targets,
            weights,
        };
        debug_assert!(check_offsets(&csr.offsets, csr.targets.len() as u64).is_ok());
        csr.validate_arcs()?;
        Ok(csr)
    }

    /// Number of vertices.
    #[inline]
    pub fn num_vertices(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of directed arcs.
    #[inline]
    pub fn num_edges(&self) -> u64 {
        self.targets.len() as u64
    }

    /// Edge offsets, `num_vertices() + 1` long.
    #[inline]
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// Arc targets, `num_edges()` long.
    #[inline]
    pub fn targets(&self) -> &[u32] {
        &self.targets
    }

    /// Arc weights, parallel to [`Csr::targets`], if the graph has them.
    #[inline]
    pub fn weights(&self) -> Option<&[u32]> {
        self.weights.as_deref()
    }

    /// Whether the graph has arc weights.
    #[inline]
    pub fn is_weighted(&self) -> bool {
        self.weights.is_some()
    }

    /// The out-neighbours of `v`. Panics if `v >= num_vertices()`.
    #[inline]
    pub fn neighbors(&self, v: u32) -> &[u32] {
        let r = self.edge_range(v);
        &self.targets[r]
    }

    /// The weights of the out-arcs of `v`, parallel to [`Csr::neighbors`].
    #[inline]
    pub fn edge_weights(&self, v: u32) -> Option<&[u32]> {
        let r = self.edge_range(v);
        self.weights.as_ref().map(|w| &w[r])
    }

    /// The arc indices of the out-arcs of `v`.
    #[inline]
    pub fn edge_range(&self, v: u32) -> std::ops::Range<usize> {
        let v = v as usize;
        self.offsets[v] as usize..self.offsets[v + 1] as usize
    }

    /// Out-degree of `v`.
    #[inline]
    pub fn out_degree(&self, v: u32) -> u64 {
        let v = v as usize;
        self.offsets[v + 1] - self.offsets[v]
    }

    /// Whether the arrays live in a memory-mapped cache file.
    pub fn is_mapped(&self) -> bool {
        self.targets.is_mapped()
    }

    /// Decomposes into `(offsets, targets, weights)`.
    pub fn into_parts(self) -> (Storage<u64>, Storage<u32>, Option<Storage<u32>>) {
        (self.offsets, self.targets, self.weights)
    }

    /// The same graph with `weights` (one per arc) attached, replacing any it had.
    pub fn with_weights(self, weights: Vec<u32>) -> Result<Csr, GraphError> {
        if weights.len() as u64 != self.num_edges() {
            return Err(GraphError::WeightCount {
                got: weights.len() as u64,
                edges: self.num_edges(),
            });
        }
        Ok(Csr {
            weights: Some(weights.into()),
            ..self
        })
    }

    /// The same graph without weights.
    pub fn without_weights(self) -> Csr {
        Csr {
            weights: None,
            ..self
        }
    }

    /// The same graph with deterministic pseudo-random weights, uniform in `min..=max`.
    ///
    /// The weight of an arc depends only on `seed` and the unordered pair of its endpoints, so a
    /// symmetric graph gets symmetric weights, and the result does not depend on arc order or on
    /// the number of threads.
    pub fn with_uniform_weights(self, min: u32, max: u32, seed: u64) -> Result<Csr, GraphError> {
        if min > max {
            return Err(GraphError::EmptyWeightRange { min, max });
        }
        let span = u64::from(max - min) + 1;
        let n = self.num_vertices();
        let mut w = vec![0u32; self.targets.len()];
        let ranges = balanced_ranges(&self.offsets, chunk_count());
        let pieces = split_rows_mut(&mut w, &self.offsets, &ranges);
        pieces
            .into_par_iter()
            .zip(ranges.par_iter())
            .for_each(|(piece, r)| {
                let base = self.offsets[r.start] as usize;
                for v in r.clone() {
                    let (a, b) = (self.offsets[v] as usize, self.offsets[v + 1] as usize);
                    for e in a..b {
                        let t = self.targets[e] as u64;
                        let (lo, hi) = if (v as u64) < t {
                            (v as u64, t)
                        } else {
                            (t, v as u64)
                        };
                        let h = mix64(seed ^ mix64(lo.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ hi));
                        piece[e - base] = min + ((u128::from(h) * u128::from(span)) >> 64) as u32;
                    }
                }
            });
        let _ = n;
        Ok(Csr {
            weights: Some(w.into()),
            ..self
        })
    }

    /// The reverse graph: an arc `u -> v` for every arc `v -> u`, weights carried along, each
    /// neighbour list sorted.
    pub fn transpose(&self) -> Csr {
        let n = self.num_vertices();
        let counts: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
        self.targets
            .par_iter()
            .with_min_len(1 << 14)
            .for_each(|&t| {
                counts[t as usize].fetch_add(1, Ordering::Relaxed);
            });
        let offsets = prefix_sum(counts.iter().map(|c| c.load(Ordering::Relaxed)), n);
        for (c, &o) in counts.iter().zip(&offsets) {
            c.store(o, Ordering::Relaxed);
        }
        let m = self.targets.len();
        let mut targets = vec![0u32; m];
        let mut weights = self.weights.as_ref().map(|_| vec![0u32; m]);
        {
            let tw = SharedSlice::new(&mut targets);
            let ww = weights.as_mut().map(|w| SharedSlice::new(w));
            let ranges = balanced_ranges(&self.offsets, chunk_count());
            ranges.par_iter().for_each(|r| {
                for v in r.clone() {
                    for e in self.offsets[v] as usize..self.offsets[v + 1] as usize {
                        let t = self.targets[e] as usize;
                        let pos = counts[t].fetch_add(1, Ordering::Relaxed) as usize;
                        // SAFETY: `pos` comes from a fetch_add on the cursor of row `t`, which
                        // runs from offsets[t] to offsets[t + 1] exactly once per arc into `t`;
                        // so every position in 0..m is claimed by exactly one writer.
                        unsafe { tw.write(pos, v as u32) };
                        if let (Some(ww), Some(w)) = (&ww, &self.weights) {
                            // SAFETY: same claimed position as above.
                            unsafe { ww.write(pos, w[e]) };
                        }
                    }
                }
            });
        }
        sort_rows(&offsets, &mut targets, weights.as_deref_mut());
        Csr::from_parts_trusted(offsets.into(), targets.into(), weights.map(Into::into))
    }

    /// The same graph with every neighbour list sorted ascending (by target, then weight).
    pub fn sorted(self) -> Csr {
        if self.rows_sorted() {
            return self;
        }
        let offsets = self.offsets;
        let mut targets = self.targets.into_vec();
        let mut weights = self.weights.map(Storage::into_vec);
        sort_rows(&offsets, &mut targets, weights.as_deref_mut());
        Csr::from_parts_trusted(offsets, targets.into(), weights.map(Into::into))
    }

    /// Whether every neighbour list is sorted ascending by target (ties by weight).
    pub fn rows_sorted(&self) -> bool {
        let ranges = balanced_ranges(&self.offsets, chunk_count());
        ranges.par_iter().all(|r| {
            r.clone().all(|v| {
                let (a, b) = (self.offsets[v] as usize, self.offsets[v + 1] as usize);
                let t = &self.targets[a..b];
                match &self.weights {
                    None => t.windows(2).all(|p| p[0] <= p[1]),
                    Some(w) => {
                        let w = &w[a..b];
                        (1..t.len()).all(|i| (t[i - 1], w[i - 1]) <= (t[i], w[i]))
                    }
                }
            })
        })
    }

    /// Whether for every arc `u -> v` (with weight `w`) there is an arc `v -> u` (with the same
    /// weight), counting multiplicities.
    pub fn is_symmetric(&self) -> bool {
        self.transpose_unless_symmetric().is_none()
    }

    /// The transpose ([`Csr::transpose`]), or `None` when it equals this graph (symmetric,
    /// as [`Csr::is_symmetric`] decides): what a pull over in-arcs needs, with one transpose
    /// built, not two.
    pub fn transpose_unless_symmetric(&self) -> Option<Csr> {
        let t = self.transpose();
        let symmetric = if self.rows_sorted() {
            t == *self
        } else {
            t == self.clone().sorted()
        };
        (!symmetric).then_some(t)
    }

    /// This graph with every arc taken both ways, once (an arc present both ways is not
    /// doubled), and no weights: the graph whose connected components are this one's weakly
    /// connected components.
    pub fn symmetrized(&self) -> Result<Csr, GraphError> {
        let pairs: Vec<(u32, u32)> = (0..self.num_vertices() as u32)
            .flat_map(|v| self.neighbors(v).iter().map(move |&u| (v, u)))
            .collect();
        crate::CsrBuilder::new(self.num_vertices())
            .symmetrize(true)
            .dedup(true)
            .build(&crate::EdgeList::from_pairs(&pairs))
    }

    /// Out-degree statistics and the self-loop count.
    pub fn degree_stats(&self) -> DegreeStats {
        let n = self.num_vertices();
        if n == 0 {
            return DegreeStats {
                min: 0,
                max: 0,
                argmax: 0,
                mean: 0.0,
                zero_out_degree: 0,
                self_loops: 0,
            };
        }
        let o = &self.offsets;
        let (min, (max, argmax), zero, loops) = (0..n)
            .into_par_iter()
            .with_min_len(1 << 12)
            .map(|v| {
                let d = o[v + 1] - o[v];
                let loops = self.targets[o[v] as usize..o[v + 1] as usize]
                    .iter()
                    .filter(|&&t| t as usize == v)
                    .count() as u64;
                (d, (d, std::cmp::Reverse(v)), u64::from(d == 0), loops)
            })
            .reduce(
                || (u64::MAX, (0, std::cmp::Reverse(usize::MAX)), 0, 0),
                |a, b| (a.0.min(b.0), a.1.max(b.1), a.2 + b.2, a.3 + b.3),
            );
        DegreeStats {
            min,
            max,
            argmax: argmax.0 as u32,
            mean: self.num_edges() as f64 / n as f64,
            zero_out_degree: zero,
            self_loops: loops,
        }
    }
}

pub(crate) enum Invalid {
    Offsets(u64),
    Target { edge: u64, target: u64 },
    Weights(u64),
    TooManyVertices(u64),
}

/// Sorts every row of `targets` (and `weights` alongside) in parallel.
pub(crate) fn sort_rows(offsets: &[u64], targets: &mut [u32], weights: Option<&mut [u32]>) {
    fill_sorted_rows(offsets, targets, weights, |_, _, _| {});
}

/// Writes every row `v` of `targets` (and of `weights` alongside) with `fill(v, targets of
/// v, weights of v)` and sorts it by target, then weight: in parallel pieces balanced by
/// arcs, each row sorted while it is still in the cache that its writes brought it to.
pub(crate) fn fill_sorted_rows<F>(
    offsets: &[u64],
    targets: &mut [u32],
    weights: Option<&mut [u32]>,
    fill: F,
) where
    F: Fn(usize, &mut [u32], Option<&mut [u32]>) + Sync,
{
    let ranges = balanced_ranges(offsets, chunk_count());
    let tp = split_rows_mut(targets, offsets, &ranges);
    let row = |r: &std::ops::Range<usize>, v: usize| {
        let base = offsets[r.start];
        (offsets[v] - base) as usize..(offsets[v + 1] - base) as usize
    };
    match weights {
        None => tp
            .into_par_iter()
            .zip(ranges.par_iter())
            .for_each(|(t, r)| {
                for v in r.clone() {
                    let t = &mut t[row(r, v)];
                    fill(v, t, None);
                    t.sort_unstable();
                }
            }),
        Some(w) => {
            let wp = split_rows_mut(w, offsets, &ranges);
            tp.into_par_iter()
                .zip(wp)
                .zip(ranges.par_iter())
                .for_each(|((t, w), r)| {
                    let mut keys: Vec<u64> = Vec::new();
                    for v in r.clone() {
                        let (t, w) = (&mut t[row(r, v)], &mut w[row(r, v)]);
                        fill(v, t, Some(w));
                        keys.clear();
                        keys.extend(
                            t.iter()
                                .zip(w.iter())
                                .map(|(&t, &w)| (u64::from(t) << 32) | u64::from(w)),
                        );
                        keys.sort_unstable();
                        for ((t, w), k) in t.iter_mut().zip(w.iter_mut()).zip(&keys) {
                            *t = (k >> 32) as u32;
                            *w = *k as u32;
                        }
                    }
                });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_counts_and_sorts() {
        let e = EdgeList::from_pairs(&[(2, 0), (0, 2), (0, 1), (0, 1), (1, 1)]);
        let g = CsrBuilder::new(3).build(&e).unwrap();
        assert_eq!(g.offsets(), &[0, 3, 4, 5]);
        assert_eq!(g.neighbors(0), &[1, 1, 2]);
        let g = CsrBuilder::new(3)
            .dedup(true)
            .remove_self_loops(true)
            .build(&e)
            .unwrap();
        assert_eq!(g.offsets(), &[0, 2, 2, 3]);
        assert_eq!(g.neighbors(0), &[1, 2]);
    }

    #[test]
    fn symmetrized_takes_every_arc_both_ways_without_weights() {
        // 0 -> 1 <- 2 (and 2 -> 1 again), 1 -> 0 already both ways, weighted, and an isolated
        // 3: one weak component {0, 1, 2}, each arc once.
        let e = EdgeList::from_triples(&[(0, 1, 5), (1, 0, 5), (2, 1, 3), (2, 1, 4)]);
        let g = CsrBuilder::new(4).build(&e).unwrap();
        assert!(!g.is_symmetric());
        let s = g.symmetrized().unwrap();
        assert!(s.is_symmetric());
        assert!(!s.is_weighted());
        assert_eq!(s.neighbors(0), &[1]);
        assert_eq!(s.neighbors(1), &[0, 2]);
        assert_eq!(s.neighbors(2), &[1]);
        assert!(s.neighbors(3).is_empty());
    }

    #[test]
    fn symmetrize_keeps_one_self_loop_and_lightest_duplicate() {
        let e = EdgeList::from_triples(&[(0, 1, 5), (1, 0, 3), (1, 1, 7)]);
        let g = CsrBuilder::new(2)
            .symmetrize(true)
            .dedup(true)
            .build(&e)
            .unwrap();
        assert_eq!(g.neighbors(0), &[1]);
        assert_eq!(g.edge_weights(0).unwrap(), &[3]);
        assert_eq!(g.neighbors(1), &[0, 1]);
        assert_eq!(g.edge_weights(1).unwrap(), &[3, 7]);
        assert!(g.is_symmetric());
    }

    #[test]
    fn out_of_range_vertex_is_an_error() {
        let e = EdgeList::from_pairs(&[(0, 1), (0, 3)]);
        let err = CsrBuilder::new(3).build(&e).unwrap_err();
        assert!(matches!(
            err,
            GraphError::VertexOutOfRange {
                index: 1,
                vertex: 3,
                ..
            }
        ));
    }

    #[test]
    fn transpose_reverses_weighted_arcs() {
        let e = EdgeList::from_triples(&[(0, 1, 4), (0, 2, 5), (2, 1, 6)]);
        let g = CsrBuilder::new(3).build(&e).unwrap();
        let t = g.transpose();
        assert_eq!(t.neighbors(1), &[0, 2]);
        assert_eq!(t.edge_weights(1).unwrap(), &[4, 6]);
        assert_eq!(t.transpose(), g);
        assert!(!g.is_symmetric());
    }

    #[test]
    fn from_parts_rejects_broken_invariants() {
        assert!(Csr::from_parts(vec![0u64, 2, 1], vec![0u32, 1], None).is_err());
        assert!(Csr::from_parts(vec![0u64, 1], vec![3u32], None).is_err());
        assert!(Csr::from_parts(vec![0u64, 1], vec![0u32], Some(vec![1u32, 2].into())).is_err());
        assert!(Csr::from_parts(vec![0u64, 1], vec![0u32], None).is_ok());
    }

    #[test]
    fn uniform_weights_are_symmetric_and_in_range() {
        let e = EdgeList::from_pairs(&[(0, 1), (1, 2), (2, 3), (3, 0)]);
        let g = CsrBuilder::new(4).symmetrize(true).build(&e).unwrap();
        let g = g.with_uniform_weights(10, 20, 7).unwrap();
        assert!(g.is_symmetric());
        assert!(g.weights().unwrap().iter().all(|&w| (10..=20).contains(&w)));
        assert!(g.clone().with_uniform_weights(5, 4, 1).is_err());
    }

    #[test]
    fn degree_stats_counts_loops_and_isolated() {
        let e = EdgeList::from_pairs(&[(0, 0), (0, 1), (0, 2)]);
        let g = CsrBuilder::new(4).build(&e).unwrap();
        let s = g.degree_stats();
        assert_eq!(
            (s.min, s.max, s.argmax, s.zero_out_degree, s.self_loops),
            (0, 3, 0, 3, 1)
        );
    }
}
