//! DIMACS 9th challenge shortest-path files (`.gr` text).
//!
//! `c` comment lines, one problem line `p sp <n> <m>`, then `m` arc lines `a <u> <v> <w>`,
//! 1-based ids, non-negative integer weights.

use crate::error::{GraphError, ParseProblem};
use crate::graph::{Graph, VertexIds};
use crate::read::text::{
    ChunkArcs, Cursor, Symmetry, TextFile, check_count, check_lines_fit, concat, field_u64,
    one_based, parse_chunks, parse_weight,
};

pub(crate) fn read(file: TextFile<'_>) -> Result<Graph, GraphError> {
    let (data, opts, progress) = (file.data, file.opts, file.progress);
    let err = |off: usize, p: ParseProblem| file.error(off, p);
    let mut c = Cursor::new(data);
    let (p_at, n, m) = loop {
        if c.done() {
            return Err(err(
                c.i,
                ParseProblem::BadHeader("missing problem line `p sp <n> <m>`"),
            ));
        }
        let at = c.i;
        if c.at_eol() {
            c.skip_line();
            continue;
        }
        match c.peek() {
            Some(b'c') => c.skip_line(),
            Some(b'p') => {
                c.i += 1;
                if c.next_token() != Some(b"sp") {
                    return Err(err(
                        at,
                        ParseProblem::BadHeader("problem line must be `p sp <n> <m>`"),
                    ));
                }
                let n = field_u64(&mut c, 3, 4).map_err(|p| err(at, p))?;
                let m = field_u64(&mut c, 4, 4).map_err(|p| err(at, p))?;
                if !c.at_eol() {
                    return Err(err(at, ParseProblem::ExtraField { max: 4 }));
                }
                c.skip_line();
                break (at, n, m);
            }
            _ => {
                return Err(err(
                    at,
                    ParseProblem::UnexpectedLine("expected `c` or `p` before the arcs"),
                ));
            }
        }
    };
    opts.check_vertex_count(n)?;
    // A line is at least a character and its newline (a loose bound: a malformed short line
    // is then reported where it is).
    check_lines_fit("arcs", m, 2, data.len() - c.i).map_err(|p| err(p_at, p))?;
    let keep = !opts.ignore_weights;
    let chunks = parse_chunks(data, c.i, progress, |chunk, base| {
        let mut out = ChunkArcs::<u32>::default();
        let mut c = Cursor::new(chunk);
        while !c.done() {
            let line = base + c.i;
            if c.at_eol() {
                c.skip_line();
                continue;
            }
            match c.peek() {
                Some(b'a') => c.i += 1,
                Some(b'c') => {
                    c.skip_line();
                    continue;
                }
                Some(b'p') => {
                    return Err((line, ParseProblem::UnexpectedLine("second problem line")));
                }
                _ => {
                    return Err((
                        line,
                        ParseProblem::UnexpectedLine("expected `a <u> <v> <w>`"),
                    ));
                }
            }
            let mut ids = [0u32; 2];
            for (k, id) in ids.iter_mut().enumerate() {
                let v = field_u64(&mut c, k as u32 + 2, 4).map_err(|p| (line, p))?;
                *id = one_based(v, n).map_err(|p| (line, p))?;
            }
            let tok = c.next_token().ok_or((
                line,
                ParseProblem::MissingField {
                    expected: 4,
                    found: 3,
                },
            ))?;
            let w = parse_weight(tok, false, 4).map_err(|p| (line, p))?;
            if !c.at_eol() {
                return Err((line, ParseProblem::ExtraField { max: 4 }));
            }
            c.end_line();
            out.src.push(ids[0]);
            out.dst.push(ids[1]);
            if keep {
                out.w.push(w);
            }
        }
        Ok(out)
    })
    .map_err(|(off, p)| err(off, p))?;
    let arcs = concat(chunks, keep)?;
    check_count("arcs", m, arcs.0.len() as u64).map_err(|p| err(p_at, p))?;
    file.graph(n as usize, arcs, VertexIds::offset(1), Symmetry::Directed)
}
