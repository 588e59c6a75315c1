//! SNAP edge lists.
//!
//! `#` comment lines, then one arc per line: `<u> <v>` or `<u> <v> <weight>`, separated by tabs
//! or spaces; every line has the same number of columns. Ids are non-negative integers written
//! as the file likes: they need not be contiguous. The vertices of the graph are the ids that
//! occur in some arc, numbered internally in increasing id order; when they are exactly
//! `0..=max` the numbering is the identity.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::error::{GraphError, ParseProblem};
use crate::graph::{Graph, VertexIds};
use crate::read::text::{
    ChunkArcs, Cursor, Symmetry, TextFile, concat, field_u64, parse_chunks, parse_weight,
};

struct SnapChunk {
    arcs: ChunkArcs<u64>,
    /// Column count of the first arc line and its offset.
    first: Option<(u32, usize)>,
}

pub(crate) fn read(file: TextFile<'_>) -> Result<Graph, GraphError> {
    let (data, opts, progress) = (file.data, file.opts, file.progress);
    let chunks = parse_chunks(data, 0, progress, |chunk, base| {
        let mut out = SnapChunk {
            arcs: ChunkArcs::default(),
            first: None,
        };
        let mut c = Cursor::new(chunk);
        while !c.done() {
            let line = base + c.i;
            if c.at_eol() || c.peek() == Some(b'#') || c.peek() == Some(b'%') {
                c.skip_line();
                continue;
            }
            let u = field_u64(&mut c, 1, 2).map_err(|p| (line, p))?;
            let v = field_u64(&mut c, 2, 2).map_err(|p| (line, p))?;
            let w = c.next_token();
            let cols = if w.is_some() { 3 } else { 2 };
            if !c.at_eol() {
                return Err((line, ParseProblem::ExtraField { max: 3 }));
            }
            c.end_line();
            match out.first {
                None => out.first = Some((cols, line)),
                Some((k, _)) if k != cols => return Err((line, columns_problem(k, cols))),
                Some(_) => {}
            }
            out.arcs.src.push(u);
            out.arcs.dst.push(v);
            if let Some(tok) = w
                && !opts.ignore_weights
            {
                out.arcs
                    .w
                    .push(parse_weight(tok, false, 3).map_err(|p| (line, p))?);
            }
        }
        Ok(out)
    })
    .map_err(|(off, p)| file.error(off, p))?;
    let mut cols = None;
    for ch in &chunks {
        if let Some((k, at)) = ch.first {
            match cols {
                None => cols = Some(k),
                Some(c) if c != k => {
                    return Err(file.error(at, columns_problem(c, k)));
                }
                Some(_) => {}
            }
        }
    }
    let weighted = cols == Some(3) && !opts.ignore_weights;
    let (src, dst, w) = concat(chunks.into_iter().map(|c| c.arcs).collect(), weighted)?;
    progress.stage("numbering vertices", 0);
    let (ids, n, src, dst) = compact_ids(src, dst)?;
    file.graph(n, (src, dst, w), ids, Symmetry::Directed)
}

fn columns_problem(expected: u32, found: u32) -> ParseProblem {
    if found < expected {
        ParseProblem::MissingField { expected, found }
    } else {
        ParseProblem::ExtraField { max: expected }
    }
}

type Compacted = (VertexIds, usize, Vec<u32>, Vec<u32>);

/// Numbers the ids that occur, in increasing order.
pub(crate) fn compact_ids(src: Vec<u64>, dst: Vec<u64>) -> Result<Compacted, GraphError> {
    let max = src.par_iter().chain(dst.par_iter()).copied().max();
    let Some(max) = max else {
        return Ok((VertexIds::offset(0), 0, Vec::new(), Vec::new()));
    };
    let too_many = |count: u64| GraphError::TooLarge {
        what: "distinct vertex ids",
        value: count,
        limit: u64::from(u32::MAX),
    };
    let arcs = src.len() as u64;
    if max < (64 * arcs).max(1 << 26) {
        // Presence bitmap, then ranks.
        let words = (max / 64 + 1) as usize;
        let bits: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
        src.par_iter()
            .chain(dst.par_iter())
            .with_min_len(1 << 14)
            .for_each(|&x| {
                bits[(x / 64) as usize].fetch_or(1 << (x % 64), Ordering::Relaxed);
            });
        let bits: Vec<u64> = bits.into_iter().map(AtomicU64::into_inner).collect();
        let mut rank = Vec::with_capacity(words);
        let mut acc = 0u64;
        for b in &bits {
            rank.push(acc);
            acc += u64::from(b.count_ones());
        }
        let distinct = acc;
        if distinct > u64::from(u32::MAX) {
            return Err(too_many(distinct));
        }
        if distinct == max + 1 {
            let to32 = |v: Vec<u64>| v.into_par_iter().map(|x| x as u32).collect();
            return Ok((
                VertexIds::offset(0),
                distinct as usize,
                to32(src),
                to32(dst),
            ));
        }
        let map = |v: Vec<u64>| -> Vec<u32> {
            v.into_par_iter()
                .map(|x| {
                    let (w, b) = ((x / 64) as usize, x % 64);
                    (rank[w] + u64::from((bits[w] & ((1u64 << b) - 1)).count_ones())) as u32
                })
                .collect()
        };
        let (s, d) = (map(src), map(dst));
        let ext: Vec<u64> = (0..words)
            .into_par_iter()
            .flat_map_iter(|w| {
                let word = bits[w];
                (0..64)
                    .filter(move |b| word & (1 << b) != 0)
                    .map(move |b| w as u64 * 64 + b)
            })
            .collect();
        let ids = VertexIds::from_table(0, ext).ok_or(too_many(distinct))?;
        Ok((ids, distinct as usize, s, d))
    } else {
        let mut all: Vec<u64> = src.par_iter().chain(dst.par_iter()).copied().collect();
        all.par_sort_unstable();
        all.dedup();
        if all.len() as u64 > u64::from(u32::MAX) {
            return Err(too_many(all.len() as u64));
        }
        let map = |v: Vec<u64>| -> Vec<u32> {
            v.into_par_iter()
                .map(|x| all.binary_search(&x).unwrap_or(0) as u32)
                .collect()
        };
        let (s, d) = (map(src), map(dst));
        let n = all.len();
        let ids = VertexIds::from_table(0, all).ok_or(too_many(n as u64))?;
        Ok((ids, n, s, d))
    }
}
