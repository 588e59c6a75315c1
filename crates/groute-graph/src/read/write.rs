//! Text writers: rows are formatted in parallel batches and written in order.

use std::io::Write;

use rayon::prelude::*;

use crate::graph::Graph;
use crate::par::balanced_ranges;

/// Appends the decimal form of `v`.
#[inline]
fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Formats every arc `(v, k)` accepted by `keep` with `line`, in row order.
fn write_arcs(
    g: &Graph,
    out: &mut impl Write,
    keep: impl Fn(u32, u32) -> bool + Sync,
    line: impl Fn(&mut Vec<u8>, u32, u32, Option<u32>) + Sync,
) -> std::io::Result<()> {
    let csr = &g.csr;
    // About 1M arcs per range, a batch of ranges formatted in parallel at a time.
    let parts = (csr.num_edges() as usize / (1 << 20)).max(1);
    let ranges = balanced_ranges(csr.offsets(), parts);
    let batch = rayon::current_num_threads() * 2;
    for group in ranges.chunks(batch) {
        let bufs: Vec<Vec<u8>> = group
            .par_iter()
            .map(|r| {
                let mut b = Vec::new();
                for v in r.clone() {
                    let v = v as u32;
                    let ws = csr.edge_weights(v);
                    for (k, &t) in csr.neighbors(v).iter().enumerate() {
                        if keep(v, t) {
                            line(&mut b, v, t, ws.map(|w| w[k]));
                        }
                    }
                }
                b
            })
            .collect();
        for b in bufs {
            out.write_all(&b)?;
        }
    }
    Ok(())
}

/// Matrix Market: `symmetric` (lower triangle) when the graph is symmetric including weights,
/// `general` otherwise; `integer` when weighted, else `pattern`; ids `internal + 1`.
pub(crate) fn write_mtx(g: &Graph, out: &mut impl Write) -> std::io::Result<()> {
    let csr = &g.csr;
    let sym = g.symmetric && csr.is_symmetric();
    let field = if csr.is_weighted() {
        "integer"
    } else {
        "pattern"
    };
    let shape = if sym { "symmetric" } else { "general" };
    let lower = |v: u32, t: u32| !sym || t <= v;
    let nnz: u64 = if sym {
        (0..csr.num_vertices() as u32)
            .into_par_iter()
            .map(|v| csr.neighbors(v).iter().filter(|&&t| t <= v).count() as u64)
            .sum()
    } else {
        csr.num_edges()
    };
    writeln!(out, "%%MatrixMarket matrix coordinate {field} {shape}")?;
    write_banner(out, "%", g)?;
    writeln!(out, "{} {} {}", csr.num_vertices(), csr.num_vertices(), nnz)?;
    write_arcs(g, out, lower, |b, v, t, w| {
        put_u64(b, u64::from(v) + 1);
        b.push(b' ');
        put_u64(b, u64::from(t) + 1);
        if let Some(w) = w {
            b.push(b' ');
            put_u64(b, u64::from(w));
        }
        b.push(b'\n');
    })
}

/// The comment line (starting with `comment`) that names the graph and the writer; the name
/// kept on one line.
fn write_banner(out: &mut impl Write, comment: &str, g: &Graph) -> std::io::Result<()> {
    writeln!(
        out,
        "{comment} {} (written by groute-graph)",
        g.name.replace(['\n', '\r'], " ")
    )
}

/// DIMACS 9: every arc as `a u v w` (weight 1 when unweighted); ids `internal + 1`.
pub(crate) fn write_dimacs(g: &Graph, out: &mut impl Write) -> std::io::Result<()> {
    let csr = &g.csr;
    write_banner(out, "c", g)?;
    writeln!(out, "p sp {} {}", csr.num_vertices(), csr.num_edges())?;
    write_arcs(
        g,
        out,
        |_, _| true,
        |b, v, t, w| {
            b.extend_from_slice(b"a ");
            put_u64(b, u64::from(v) + 1);
            b.push(b' ');
            put_u64(b, u64::from(t) + 1);
            b.push(b' ');
            put_u64(b, u64::from(w.unwrap_or(1)));
            b.push(b'\n');
        },
    )
}

/// SNAP: `u<TAB>v[<TAB>w]` with the graph's external ids.
pub(crate) fn write_snap(g: &Graph, out: &mut impl Write) -> std::io::Result<()> {
    let csr = &g.csr;
    write_banner(out, "#", g)?;
    writeln!(
        out,
        "# Nodes: {} Edges: {}",
        csr.num_vertices(),
        csr.num_edges()
    )?;
    write_arcs(
        g,
        out,
        |_, _| true,
        |b, v, t, w| {
            put_u64(b, g.ids.external_id(v));
            b.push(b'\t');
            put_u64(b, g.ids.external_id(t));
            if let Some(w) = w {
                b.push(b'\t');
                put_u64(b, u64::from(w));
            }
            b.push(b'\n');
        },
    )
}
