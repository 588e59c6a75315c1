//! METIS graph files.
//!
//! `%` comment lines; a header `n m [fmt [ncon]]` where `m` counts undirected edges; then exactly
//! `n` lines, line `i` listing the 1-based neighbours of vertex `i` (an empty line is an isolated
//! vertex). `fmt` has up to three 0/1 digits: vertex sizes, vertex weights, edge weights; with
//! vertex weights each line starts with `ncon` of them (default 1), with edge weights each
//! neighbour is followed by its weight. Every undirected edge appears in both lists, so the file
//! has `2m` adjacency entries. Vertex sizes and weights are checked and dropped.

use crate::error::{GraphError, ParseProblem};
use crate::graph::{Graph, VertexIds};
use crate::read::text::{
    ChunkArcs, Cursor, Symmetry, TextFile, check_count, check_lines_fit, chunk_target, concat,
    field_u64, line_chunks, one_based, parse_weight, skip_comment_lines,
};

use rayon::prelude::*;

pub(crate) fn read(file: TextFile<'_>) -> Result<Graph, GraphError> {
    let (data, opts, progress) = (file.data, file.opts, file.progress);
    let err = |off: usize, p: ParseProblem| file.error(off, p);
    let mut c = Cursor::new(data);
    if !skip_comment_lines(&mut c, b'%') {
        return Err(err(
            c.i,
            ParseProblem::BadHeader("missing header `n m [fmt [ncon]]`"),
        ));
    }
    let h_at = c.i;
    let n = field_u64(&mut c, 1, 2).map_err(|p| err(h_at, p))?;
    let m = field_u64(&mut c, 2, 2).map_err(|p| err(h_at, p))?;
    let (mut vsize, mut vwgt, mut ewgt) = (false, false, false);
    if let Some(fmt) = c.next_token() {
        if fmt.len() > 3 || !fmt.iter().all(|&d| d == b'0' || d == b'1') {
            return Err(err(
                h_at,
                ParseProblem::BadHeader("fmt must be up to three 0/1 digits"),
            ));
        }
        let digit = |k: usize| fmt.len() > k && fmt[fmt.len() - 1 - k] == b'1';
        (vsize, vwgt, ewgt) = (digit(2), digit(1), digit(0));
    }
    let ncon = match c.next_u64() {
        None => u64::from(vwgt),
        Some(Ok(k)) if vwgt => k,
        Some(Ok(_)) => {
            return Err(err(
                h_at,
                ParseProblem::BadHeader("ncon given without vertex weights in fmt"),
            ));
        }
        Some(Err(_)) => return Err(err(h_at, ParseProblem::NotNumeric { field: 4 })),
    };
    if !c.at_eol() {
        return Err(err(h_at, ParseProblem::ExtraField { max: 4 }));
    }
    c.skip_line();
    opts.check_vertex_count(n)?;
    let body = c.i;
    // Every vertex has a line (at least its newline); an edge is listed twice, each time as at
    // least a digit. Loose bounds, so that a near miss is reported where it is; they also keep
    // `2 * m` far from overflowing.
    let rest = data.len() - body;
    check_lines_fit("vertex lines", n, 1, rest).map_err(|p| err(h_at, p))?;
    check_lines_fit("edges (each listed twice)", m, 2, rest).map_err(|p| err(h_at, p))?;
    let entries = 2 * m;
    // Pass 1: vertex lines per chunk.
    let chunks = line_chunks(data, body, chunk_target(data.len() - body));
    let counts: Vec<u64> = chunks
        .par_iter()
        .map(|r| {
            let mut c = Cursor::new(&data[r.clone()]);
            let mut k = 0;
            while !c.done() {
                if c.peek() != Some(b'%') {
                    k += 1;
                }
                c.skip_line();
            }
            k
        })
        .collect();
    let mut first_vertex = Vec::with_capacity(chunks.len());
    let mut acc = 0u64;
    for k in &counts {
        first_vertex.push(acc);
        acc += k;
    }
    let keep = ewgt && !opts.ignore_weights;
    let results: Vec<Result<ChunkArcs<u32>, (usize, ParseProblem)>> = chunks
        .par_iter()
        .zip(first_vertex.par_iter())
        .map(|(r, &first)| {
            let mut out = ChunkArcs::<u32>::default();
            let mut c = Cursor::new(&data[r.clone()]);
            let mut v = first;
            while !c.done() {
                let line = r.start + c.i;
                if c.peek() == Some(b'%') {
                    c.skip_line();
                    continue;
                }
                if v >= n {
                    if !c.at_eol() {
                        return Err((
                            line,
                            ParseProblem::CountMismatch {
                                what: "vertex lines",
                                declared: n,
                                found: v + 1,
                            },
                        ));
                    }
                    c.skip_line();
                    v += 1;
                    continue;
                }
                let mut field = 0u32;
                let skip = u64::from(vsize) + ncon;
                for _ in 0..skip {
                    field += 1;
                    field_u64(&mut c, field, skip as u32).map_err(|p| (line, p))?;
                }
                loop {
                    field += 1;
                    let u = match c.next_u64() {
                        None => break,
                        Some(Ok(u)) => u,
                        Some(Err(_)) => return Err((line, ParseProblem::NotNumeric { field })),
                    };
                    let u = one_based(u, n).map_err(|p| (line, p))?;
                    out.src.push(v as u32);
                    out.dst.push(u);
                    if ewgt {
                        field += 1;
                        let tok = c.next_token().ok_or((
                            line,
                            ParseProblem::MissingField {
                                expected: field,
                                found: field - 1,
                            },
                        ))?;
                        let w = parse_weight(tok, false, field).map_err(|p| (line, p))?;
                        if keep {
                            out.w.push(w);
                        }
                    }
                }
                c.end_line();
                v += 1;
            }
            progress.advance(r.len() as u64);
            Ok(out)
        })
        .collect();
    let results: Vec<ChunkArcs<u32>> = results
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(|(off, p)| err(off, p))?;
    if acc < n {
        check_count("vertex lines", n, acc).map_err(|p| err(h_at, p))?;
    }
    let arcs = concat(results, keep)?;
    check_count(
        "adjacency entries (2 x edges)",
        entries,
        arcs.0.len() as u64,
    )
    .map_err(|p| err(h_at, p))?;
    // The format requires both directions of every edge; check rather than trust it.
    file.graph(n as usize, arcs, VertexIds::offset(1), Symmetry::Checked)
}
