//! [`EdgeList`] and [`CsrBuilder`]: a [`Csr`] from a list of arcs, by a parallel two-pass radix
//! sort, with the sorted rows deduplicated in place.

use std::ops::Range;

use rayon::prelude::*;

use super::{Csr, sort_rows};
use crate::GraphError;
use crate::alloc::try_zeroed;
use crate::par::{SharedSlice, balanced_ranges, chunk_count, split_rows_mut, try_prefix_sum};

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
        let mut wp = split_weight_rows(weights.as_mut(), &offsets, &ranges);
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
        let mut wp = split_weight_rows(weights.as_mut(), &offsets, &ranges);
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

/// The rows `ranges` of `weights` (parallel to the targets of `offsets`) split as
/// [`split_rows_mut`] splits the targets; all `None` when there are no weights.
fn split_weight_rows<'a>(
    weights: Option<&'a mut Vec<u32>>,
    offsets: &[u64],
    ranges: &[Range<usize>],
) -> Vec<Option<&'a mut [u32]>> {
    match weights {
        Some(w) => split_rows_mut(w, offsets, ranges)
            .into_iter()
            .map(Some)
            .collect(),
        None => ranges.iter().map(|_| None).collect(),
    }
}
