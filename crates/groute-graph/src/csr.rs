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
use crate::alloc::try_zeroed;
use crate::par::{
    SharedSlice, balanced_ranges, chunk_count, prefix_sum, split_rows_mut, try_prefix_sum,
};
use crate::rng::mix64;
use crate::storage::Storage;

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
        let csr = Csr {
            offsets,
            targets,
            weights,
        };
        csr.validate()?;
        Ok(csr)
    }

    pub(crate) fn validate(&self) -> Result<(), Invalid> {
        let o = &self.offsets[..];
        if o.is_empty() || o[0] != 0 {
            return Err(Invalid::Offsets(0));
        }
        let n = o.len() - 1;
        if n > u32::MAX as usize {
            return Err(Invalid::TooManyVertices(n as u64));
        }
        let m = self.targets.len() as u64;
        if o[n] != m {
            return Err(Invalid::Offsets(n as u64));
        }
        // Chunked scans: a tight loop per chunk vectorises; only a bad chunk is searched again.
        const CH: usize = 1 << 16;
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
        let t = self.transpose();
        if self.rows_sorted() {
            t == *self
        } else {
            t == self.clone().sorted()
        }
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
    let ranges = balanced_ranges(offsets, chunk_count());
    let tp = split_rows_mut(targets, offsets, &ranges);
    match weights {
        None => tp
            .into_par_iter()
            .zip(ranges.par_iter())
            .for_each(|(t, r)| {
                let base = offsets[r.start];
                for v in r.clone() {
                    let a = (offsets[v] - base) as usize;
                    let b = (offsets[v + 1] - base) as usize;
                    t[a..b].sort_unstable();
                }
            }),
        Some(w) => {
            let wp = split_rows_mut(w, offsets, &ranges);
            tp.into_par_iter()
                .zip(wp)
                .zip(ranges.par_iter())
                .for_each(|((t, w), r)| {
                    let base = offsets[r.start];
                    let mut keys: Vec<u64> = Vec::new();
                    for v in r.clone() {
                        let a = (offsets[v] - base) as usize;
                        let b = (offsets[v + 1] - base) as usize;
                        keys.clear();
                        keys.extend((a..b).map(|i| (u64::from(t[i]) << 32) | u64::from(w[i])));
                        keys.sort_unstable();
                        for (i, k) in (a..b).zip(&keys) {
                            t[i] = (k >> 32) as u32;
                            w[i] = *k as u32;
                        }
                    }
                });
        }
    }
}

/// A list of arcs `src[i] -> dst[i]` with optional weights, the input of [`CsrBuilder`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdgeList {
    /// Sources.
    pub src: Vec<u32>,
    /// Targets, parallel to `src`.
    pub dst: Vec<u32>,
    /// Weights, parallel to `src`, if any.
    pub weights: Option<Vec<u32>>,
}

impl EdgeList {
    /// An unweighted edge list from pairs.
    pub fn from_pairs(pairs: &[(u32, u32)]) -> EdgeList {
        EdgeList {
            src: pairs.iter().map(|p| p.0).collect(),
            dst: pairs.iter().map(|p| p.1).collect(),
            weights: None,
        }
    }

    /// A weighted edge list from triples `(src, dst, weight)`.
    pub fn from_triples(triples: &[(u32, u32, u32)]) -> EdgeList {
        EdgeList {
            src: triples.iter().map(|p| p.0).collect(),
            dst: triples.iter().map(|p| p.1).collect(),
            weights: Some(triples.iter().map(|p| p.2).collect()),
        }
    }

    /// Number of arcs.
    pub fn len(&self) -> usize {
        self.src.len()
    }

    /// Whether there are no arcs.
    pub fn is_empty(&self) -> bool {
        self.src.is_empty()
    }
}

/// Builds a [`Csr`] from an [`EdgeList`] with a parallel counting sort.
///
/// Options: [`symmetrize`](CsrBuilder::symmetrize) adds `v -> u` for every `u -> v` (a self-loop
/// stays one arc); [`dedup`](CsrBuilder::dedup) keeps one arc per `(u, v)` pair, the one with the
/// smallest weight; [`remove_self_loops`](CsrBuilder::remove_self_loops) drops `v -> v`. Neighbour
/// lists come out sorted, so the result does not depend on the number of threads.
#[derive(Clone, Debug)]
pub struct CsrBuilder {
    num_vertices: usize,
    symmetrize: bool,
    dedup: bool,
    remove_self_loops: bool,
}

impl CsrBuilder {
    /// A builder for a graph of `num_vertices` vertices, with every option off.
    pub fn new(num_vertices: usize) -> CsrBuilder {
        CsrBuilder {
            num_vertices,
            symmetrize: false,
            dedup: false,
            remove_self_loops: false,
        }
    }

    /// Adds the reverse of every arc.
    pub fn symmetrize(mut self, on: bool) -> Self {
        self.symmetrize = on;
        self
    }

    /// Keeps one arc per ordered pair (the lightest).
    pub fn dedup(mut self, on: bool) -> Self {
        self.dedup = on;
        self
    }

    /// Drops arcs `v -> v`.
    pub fn remove_self_loops(mut self, on: bool) -> Self {
        self.remove_self_loops = on;
        self
    }

    /// Builds the graph. Fails if an id is `>= num_vertices`, if there are more than
    /// `u32::MAX` vertices, or if the weights are not one per arc.
    pub fn build(&self, edges: &EdgeList) -> Result<Csr, GraphError> {
        let n = self.num_vertices;
        if n > u32::MAX as usize {
            return Err(GraphError::TooLarge {
                what: "vertex count",
                value: n as u64,
                limit: u64::from(u32::MAX),
            });
        }
        let len = edges.src.len();
        if edges.dst.len() != len {
            return Err(GraphError::WeightCount {
                got: edges.dst.len() as u64,
                edges: len as u64,
            });
        }
        if let Some(w) = &edges.weights
            && w.len() != len
        {
            return Err(GraphError::WeightCount {
                got: w.len() as u64,
                edges: len as u64,
            });
        }
        const CH: usize = 1 << 16;
        let limit = n as u64;
        let out_of_range = |x: &[u32]| {
            x.iter()
                .fold(false, |acc, &v| acc | (u64::from(v) >= limit))
        };
        let bad_chunk = edges
            .src
            .par_chunks(CH)
            .zip(edges.dst.par_chunks(CH))
            .position_first(|(s, d)| out_of_range(s) | out_of_range(d));
        if let Some(c) = bad_chunk {
            let i = (c * CH..len)
                .find(|&i| edges.src[i] as usize >= n || edges.dst[i] as usize >= n)
                .unwrap_or(c * CH);
            let bad = if edges.src[i] as usize >= n {
                edges.src[i]
            } else {
                edges.dst[i]
            };
            return Err(GraphError::VertexOutOfRange {
                index: i as u64,
                vertex: u64::from(bad),
                num_vertices: n as u64,
            });
        }
        let (offsets, mut targets, mut weights) =
            bucket_sort(n, edges, self.symmetrize, self.remove_self_loops)?;
        sort_rows(&offsets, &mut targets, weights.as_deref_mut());
        if self.dedup {
            return dedup_sorted(offsets, targets, weights);
        }
        Ok(Csr::from_parts_trusted(
            offsets.into(),
            targets.into(),
            weights.map(Into::into),
        ))
    }
}

/// Offsets, targets and (optional) weights of a CSR under construction.
type Rows = (Vec<u64>, Vec<u32>, Option<Vec<u32>>);

/// Groups the arcs of `edges` (reversed copies added when `sym`, self-loops dropped when
/// `noloop`) by source: a two-pass radix sort. Pass 1 scatters arcs into about a thousand buckets
/// of consecutive sources (stable, per-chunk histograms); pass 2 counting-sorts each bucket into
/// its rows, which are contiguous and small enough to stay in cache. Returns offsets, targets and
/// weights with rows in input order (not yet sorted). Every array sized by `n` or the arc count
/// is allocated fallibly.
fn bucket_sort(n: usize, edges: &EdgeList, sym: bool, noloop: bool) -> Result<Rows, GraphError> {
    let len = edges.src.len();
    let bits = usize::BITS - n.saturating_sub(1).leading_zeros();
    let shift = bits.saturating_sub(10);
    let buckets = (n >> shift) + 1;
    let chunk = len.div_ceil(chunk_count()).max(1 << 12);
    let chunks: Vec<std::ops::Range<usize>> = (0..len)
        .step_by(chunk)
        .map(|s| s..(s + chunk).min(len))
        .collect();
    // Visits the arcs edge `i` stands for.
    let arcs_of = |i: usize, f: &mut dyn FnMut(u32, u32)| {
        let (s, d) = (edges.src[i], edges.dst[i]);
        if s == d {
            if !noloop {
                f(s, d);
            }
        } else {
            f(s, d);
            if sym {
                f(d, s);
            }
        }
    };
    // Pass 1a: per-chunk bucket histograms.
    let hist: Vec<Vec<u64>> = chunks
        .par_iter()
        .map(|r| {
            let mut h = vec![0u64; buckets];
            for i in r.clone() {
                arcs_of(i, &mut |s, _| h[(s >> shift) as usize] += 1);
            }
            h
        })
        .collect();
    // Bucket-major positions: bucket b, chunk c starts at pos[c][b].
    let mut pos = vec![vec![0u64; buckets]; chunks.len()];
    let mut bucket_start = Vec::with_capacity(buckets + 1);
    let mut acc = 0u64;
    for b in 0..buckets {
        bucket_start.push(acc);
        for c in 0..chunks.len() {
            pos[c][b] = acc;
            acc += hist[c][b];
        }
    }
    bucket_start.push(acc);
    let m = acc as usize;
    // Pass 1b: stable scatter into buckets.
    let mut tmp = try_zeroed::<u64>(m, "the arcs bucketed by source")?;
    let mut tmp_w = match edges.weights {
        Some(_) => Some(try_zeroed::<u32>(m, "the weights bucketed by source")?),
        None => None,
    };
    {
        let tw = SharedSlice::new(&mut tmp);
        let ww = tmp_w.as_mut().map(|w| SharedSlice::new(w));
        chunks
            .par_iter()
            .zip(pos.into_par_iter())
            .for_each(|(r, mut p)| {
                for i in r.clone() {
                    let w = edges.weights.as_ref().map(|w| w[i]);
                    arcs_of(i, &mut |s, d| {
                        let slot = &mut p[(s >> shift) as usize];
                        // SAFETY: chunk c owns positions pos[c][b]..pos[c][b] + hist[c][b] of
                        // bucket b (disjoint across chunks and buckets by the prefix sum above) and
                        // writes exactly hist[c][b] arcs there, counted by the same `arcs_of`.
                        unsafe { tw.write(*slot as usize, (u64::from(s) << 32) | u64::from(d)) };
                        if let (Some(ww), Some(w)) = (&ww, w) {
                            // SAFETY: same position as above.
                            unsafe { ww.write(*slot as usize, w) };
                        }
                        *slot += 1;
                    });
                }
            });
    }
    // Pass 2a: degrees, bucket by bucket.
    let mut degrees = try_zeroed::<u64>(n, "the out-degrees (8 bytes per vertex)")?;
    let ranges: Vec<std::ops::Range<usize>> = (0..buckets)
        .map(|b| (b << shift).min(n)..((b + 1) << shift).min(n))
        .collect();
    split_by_vertex_ranges(&mut degrees, &ranges)
        .into_par_iter()
        .enumerate()
        .for_each(|(b, d)| {
            let base = b << shift;
            for &a in &tmp[bucket_start[b] as usize..bucket_start[b + 1] as usize] {
                d[(a >> 32) as usize - base] += 1;
            }
        });
    let offsets = try_prefix_sum(
        degrees.iter().copied(),
        n,
        "the CSR offsets (8 bytes per vertex)",
    )?;
    drop(degrees);
    // Pass 2b: counting sort inside each bucket; bucket b fills exactly its own range.
    let mut targets = try_zeroed::<u32>(m, "the CSR targets (4 bytes per arc)")?;
    let mut weights = match tmp_w {
        Some(_) => Some(try_zeroed::<u32>(m, "the CSR weights (4 bytes per arc)")?),
        None => None,
    };
    {
        let tp = split_rows_mut(&mut targets, &offsets, &ranges);
        let mut wp: Vec<Option<&mut [u32]>> = match weights.as_mut() {
            Some(w) => split_rows_mut(w, &offsets, &ranges)
                .into_iter()
                .map(Some)
                .collect(),
            None => ranges.iter().map(|_| None).collect(),
        };
        tp.into_par_iter()
            .zip(wp.par_iter_mut())
            .enumerate()
            .for_each(|(b, (t, w))| {
                let r = &ranges[b];
                let base = offsets[r.start];
                let mut cursor: Vec<u64> =
                    offsets[r.start..r.end].iter().map(|o| o - base).collect();
                let (lo, hi) = (bucket_start[b] as usize, bucket_start[b + 1] as usize);
                for (k, &a) in tmp[lo..hi].iter().enumerate() {
                    let c = &mut cursor[(a >> 32) as usize - r.start];
                    t[*c as usize] = a as u32;
                    if let (Some(w), Some(tw)) = (w.as_deref_mut(), &tmp_w) {
                        w[*c as usize] = tw[lo + k];
                    }
                    *c += 1;
                }
            });
    }
    Ok((offsets, targets, weights))
}

/// Removes repeated targets from sorted rows, keeping the first (lightest) arc of each.
pub(crate) fn dedup_sorted(
    offsets: Vec<u64>,
    mut targets: Vec<u32>,
    mut weights: Option<Vec<u32>>,
) -> Result<Csr, GraphError> {
    let n = offsets.len() - 1;
    let ranges = balanced_ranges(&offsets, chunk_count());
    // Compact each chunk in place, recording the new degree of each row.
    let mut degrees = try_zeroed::<u64>(n, "the deduplicated out-degrees")?;
    {
        let tp = split_rows_mut(&mut targets, &offsets, &ranges);
        let mut wp: Vec<Option<&mut [u32]>> = match weights.as_mut() {
            Some(w) => split_rows_mut(w, &offsets, &ranges)
                .into_iter()
                .map(Some)
                .collect(),
            None => ranges.iter().map(|_| None).collect(),
        };
        let dp = split_by_vertex_ranges(&mut degrees, &ranges);
        tp.into_par_iter()
            .zip(wp.par_iter_mut())
            .zip(dp)
            .zip(ranges.par_iter())
            .for_each(|(((t, w), d), r)| {
                let base = offsets[r.start];
                let mut out = 0usize;
                for (k, v) in r.clone().enumerate() {
                    let a = (offsets[v] - base) as usize;
                    let b = (offsets[v + 1] - base) as usize;
                    let start = out;
                    for i in a..b {
                        if out > start && t[out - 1] == t[i] {
                            continue;
                        }
                        t[out] = t[i];
                        if let Some(w) = w.as_deref_mut() {
                            w[out] = w[i];
                        }
                        out += 1;
                    }
                    d[k] = (out - start) as u64;
                }
            });
    }
    let new_offsets = try_prefix_sum(degrees.iter().copied(), n, "the deduplicated offsets")?;
    drop(degrees);
    let m = new_offsets[n] as usize;
    if m == targets.len() {
        return Ok(Csr::from_parts_trusted(
            offsets.into(),
            targets.into(),
            weights.map(Into::into),
        ));
    }
    let gather = |src: &[u32], what| -> Result<Vec<u32>, GraphError> {
        let mut out = try_zeroed::<u32>(m, what)?;
        let op = split_rows_mut(&mut out, &new_offsets, &ranges);
        op.into_par_iter()
            .zip(ranges.par_iter())
            .for_each(|(o, r)| {
                let from = offsets[r.start] as usize;
                let len = o.len();
                o.copy_from_slice(&src[from..from + len]);
            });
        Ok(out)
    };
    let t = gather(&targets, "the deduplicated targets")?;
    drop(targets);
    let w = match weights.as_deref() {
        Some(w) => Some(gather(w, "the deduplicated weights")?),
        None => None,
    };
    Ok(Csr::from_parts_trusted(
        new_offsets.into(),
        t.into(),
        w.map(Into::into),
    ))
}

/// Splits a per-vertex array into the pieces of the vertex `ranges` (which tile `0..n`).
pub(crate) fn split_by_vertex_ranges<'a, T>(
    mut data: &'a mut [T],
    ranges: &[std::ops::Range<usize>],
) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let rest = std::mem::take(&mut data);
        let (piece, rest) = rest.split_at_mut(r.len());
        out.push(piece);
        data = rest;
    }
    out
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
