//! Matrix Market coordinate files.
//!
//! `%%MatrixMarket matrix coordinate <pattern|integer|real> <general|symmetric>`, comment lines
//! starting with `%`, a size line `rows cols entries`, then one `row col [value]` line per entry,
//! 1-based. Entry `(i, j)` is the arc `i -> j`; a symmetric file yields both `i -> j` and `j -> i`
//! (a diagonal entry once). Values become weights, rounded to the nearest integer when real.

use crate::error::{GraphError, ParseProblem};
use crate::graph::{Graph, VertexIds};
use crate::read::text::{
    ChunkArcs, Cursor, Symmetry, TextFile, check_count, check_lines_fit, concat, field_u64,
    one_based, parse_chunks, parse_weight, skip_comment_lines,
};

pub(crate) fn read(file: TextFile<'_>) -> Result<Graph, GraphError> {
    let (data, opts, progress) = (file.data, file.opts, file.progress);
    let err = |off: usize, p: ParseProblem| file.error(off, p);
    let mut c = Cursor::new(data);
    // Banner.
    let banner_at = c.i;
    let mut toks = Vec::with_capacity(5);
    while let Some(t) = c.next_token() {
        toks.push(t.to_ascii_lowercase());
    }
    c.skip_line();
    if toks.first().map(|t| t.as_slice()) != Some(b"%%matrixmarket") {
        return Err(err(
            banner_at,
            ParseProblem::BadHeader("first line must start with %%MatrixMarket"),
        ));
    }
    if toks.len() != 5 {
        return Err(err(
            banner_at,
            ParseProblem::BadHeader("banner needs: matrix coordinate <field> <symmetry>"),
        ));
    }
    if toks[1] != b"matrix" {
        return Err(err(
            banner_at,
            ParseProblem::Unsupported("objects other than `matrix`"),
        ));
    }
    if toks[2] != b"coordinate" {
        return Err(err(
            banner_at,
            ParseProblem::Unsupported("dense `array` matrices"),
        ));
    }
    let (has_value, real) = match toks[3].as_slice() {
        b"pattern" => (false, false),
        b"integer" => (true, false),
        b"real" | b"double" => (true, true),
        b"complex" => return Err(err(banner_at, ParseProblem::Unsupported("complex values"))),
        _ => {
            return Err(err(
                banner_at,
                ParseProblem::BadHeader("unknown field type"),
            ));
        }
    };
    let symmetric = match toks[4].as_slice() {
        b"general" => false,
        b"symmetric" => true,
        b"skew-symmetric" | b"hermitian" => {
            return Err(err(
                banner_at,
                ParseProblem::Unsupported("skew-symmetric and hermitian matrices"),
            ));
        }
        _ => return Err(err(banner_at, ParseProblem::BadHeader("unknown symmetry"))),
    };
    // Comments, then the size line.
    if !skip_comment_lines(&mut c, b'%') {
        return Err(err(c.i, ParseProblem::BadHeader("missing size line")));
    }
    let size_at = c.i;
    let rows = field_u64(&mut c, 1, 3).map_err(|p| err(size_at, p))?;
    let cols = field_u64(&mut c, 2, 3).map_err(|p| err(size_at, p))?;
    let nnz = field_u64(&mut c, 3, 3).map_err(|p| err(size_at, p))?;
    if !c.at_eol() {
        return Err(err(size_at, ParseProblem::ExtraField { max: 3 }));
    }
    c.skip_line();
    if rows != cols {
        return Err(err(
            size_at,
            ParseProblem::Unsupported("non-square matrix (a graph needs rows == cols)"),
        ));
    }
    let n = rows;
    opts.check_vertex_count(n)?;
    // A line is at least a character and its newline (a loose bound: a malformed short line
    // is then reported where it is).
    check_lines_fit("entries", nnz, 2, data.len() - c.i).map_err(|p| err(size_at, p))?;
    let keep = has_value && !opts.ignore_weights;
    let max_fields = if has_value { 3 } else { 2 };
    let chunks = parse_chunks(data, c.i, progress, |chunk, base| {
        let mut out = ChunkArcs::<u32>::default();
        let mut c = Cursor::new(chunk);
        while !c.done() {
            let line = base + c.i;
            if c.at_eol() || c.peek() == Some(b'%') {
                c.skip_line();
                continue;
            }
            let mut ids = [0u32; 2];
            for (k, id) in ids.iter_mut().enumerate() {
                let v = field_u64(&mut c, k as u32 + 1, max_fields).map_err(|p| (line, p))?;
                *id = one_based(v, n).map_err(|p| (line, p))?;
            }
            if has_value {
                let tok = c.next_token().ok_or((
                    line,
                    ParseProblem::MissingField {
                        expected: 3,
                        found: 2,
                    },
                ))?;
                if keep {
                    out.w
                        .push(parse_weight(tok, real, 3).map_err(|p| (line, p))?);
                }
            }
            if !c.at_eol() {
                return Err((line, ParseProblem::ExtraField { max: max_fields }));
            }
            c.end_line();
            out.src.push(ids[0]);
            out.dst.push(ids[1]);
        }
        Ok(out)
    })
    .map_err(|(off, p)| err(off, p))?;
    let arcs = concat(chunks, keep)?;
    check_count("entries", nnz, arcs.0.len() as u64).map_err(|p| err(size_at, p))?;
    let symmetry = if symmetric {
        Symmetry::Symmetrized
    } else {
        Symmetry::Directed
    };
    file.graph(n as usize, arcs, VertexIds::offset(1), symmetry)
}
