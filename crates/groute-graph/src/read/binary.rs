//! Binary formats: Galois `.gr` version 1 and the groute cache (`.grc`).
//!
//! ## Galois `.gr` (version 1), little-endian
//! ```text
//! u64 version = 1, u64 edge_data_size (0 or 4), u64 n, u64 m,
//! u64 out_end[n]        (end offset of each vertex's arcs),
//! u32 dst[m], u32 pad if m is odd,
//! u32 edge_data[m]      (when edge_data_size = 4)
//! ```
//!
//! ## groute cache `.grc`, little-endian, sections 64-byte aligned
//! ```text
//! 0   b"GROUTEG1"        magic
//! 8   u32 0x01020304     byte-order mark
//! 12  u32 1              version
//! 16  u64 flags          1 weighted, 2 symmetric, 4 id table, 8 id order table
//! 24  u64 n, 32 u64 m, 40 u64 id base, 48 u64 name length
//! 56  u64 start of: offsets[n+1] u64, targets[m] u32, weights[m] u32, ids[n] u64,
//!     id order[n] u32, name (UTF-8); 0 for an absent section
//! 104..128 reserved (zero)
//! ```
//! Loading a cache maps the file and uses the arrays in place: no parsing, one parallel scan to
//! check the CSR invariants so a damaged file is an error, not an out-of-bounds access later.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use crate::alloc::try_zeroed;
use crate::csr::{Csr, Invalid};
use crate::error::{BinaryProblem, GraphError};
use crate::graph::{Graph, VertexIds};

pub(super) const MAGIC: &[u8; 8] = b"GROUTEG1";
pub(super) const BOM: u32 = 0x0102_0304;
pub(super) const HEADER: usize = 128;
const ALIGN: u64 = 64;

pub(super) fn bin(path: &Path, offset: u64, problem: BinaryProblem) -> GraphError {
    GraphError::Binary {
        path: path.to_path_buf(),
        offset,
        problem,
    }
}

pub(super) fn u64_at(data: &[u8], off: usize) -> Option<u64> {
    data.get(off..off + 8).map(|b| {
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        u64::from_le_bytes(a)
    })
}

pub(super) fn invalid_to_error(
    path: &Path,
    e: Invalid,
    offsets_at: u64,
    targets_at: u64,
    n: u64,
) -> GraphError {
    match e {
        Invalid::Offsets(v) => bin(
            path,
            offsets_at + 8 * v,
            BinaryProblem::BadOffsets { vertex: v },
        ),
        Invalid::Target { edge, target } => bin(
            path,
            targets_at + 4 * edge,
            BinaryProblem::TargetOutOfRange {
                edge,
                target,
                num_vertices: n,
            },
        ),
        Invalid::Weights(_) | Invalid::TooManyVertices(_) => bin(
            path,
            16,
            BinaryProblem::BadField {
                field: "num_nodes",
                value: n,
            },
        ),
    }
}

pub(super) fn map(path: &Path, populate: bool) -> Result<Arc<memmap2::Mmap>, GraphError> {
    let file = std::fs::File::open(path).map_err(|e| GraphError::io(path, e))?;
    let mut options = memmap2::MmapOptions::new();
    if populate {
        options.populate();
    }
    // SAFETY: the map is read-only. As documented on `load_graph` and `GraphCache`, a cache
    // file must not be truncated or modified while a graph loaded from it is alive; this is
    // the usual condition of memory-mapped input (a violation can fault, as with any
    // mmap-based reader).
    let m = unsafe { options.map(&file) }.map_err(|e| GraphError::io(path, e))?;
    Ok(Arc::new(m))
}

/// Reads a Galois `.gr` version 1 file (arrays copied, so the file may change afterwards).
pub(crate) fn read_galois(path: &Path, data: &[u8]) -> Result<Graph, GraphError> {
    if cfg!(target_endian = "big") {
        return Err(bin(path, 0, BinaryProblem::Endianness));
    }
    let len = data.len() as u64;
    let trunc = |needed: u64| bin(path, len, BinaryProblem::Truncated { needed, len });
    let hdr = |i: usize| u64_at(data, 8 * i).ok_or(trunc(32));
    let version = hdr(0)?;
    match version {
        1 => {}
        2 => {
            return Err(bin(
                path,
                0,
                BinaryProblem::BadMagic("Galois .gr version 2 (64-bit ids) is not supported"),
            ));
        }
        _ => {
            return Err(bin(
                path,
                0,
                BinaryProblem::BadMagic("not a Galois .gr version 1 file"),
            ));
        }
    }
    let esize = hdr(1)?;
    if esize != 0 && esize != 4 {
        return Err(bin(
            path,
            8,
            BinaryProblem::BadField {
                field: "edge data size",
                value: esize,
            },
        ));
    }
    let n = hdr(2)?;
    let m = hdr(3)?;
    if n > u64::from(u32::MAX) {
        return Err(bin(
            path,
            16,
            BinaryProblem::BadField {
                field: "num_nodes",
                value: n,
            },
        ));
    }
    let idx_at = 32u64;
    let dst_at = n.checked_mul(8).and_then(|b| b.checked_add(idx_at));
    let data_at = dst_at
        .and_then(|d| m.checked_mul(4).and_then(|b| d.checked_add(b)))
        .map(|e| e + 4 * (m % 2));
    let end = data_at.and_then(|d| m.checked_mul(esize).and_then(|b| d.checked_add(b)));
    let (Some(dst_at), Some(data_at), Some(end)) = (dst_at, data_at, end) else {
        return Err(bin(
            path,
            24,
            BinaryProblem::BadField {
                field: "num_edges",
                value: m,
            },
        ));
    };
    if end > len {
        return Err(trunc(end));
    }
    if end < len {
        return Err(bin(
            path,
            end,
            BinaryProblem::TrailingBytes {
                expected: end,
                extra: len - end,
            },
        ));
    }
    let (n, m) = (n as usize, m as usize);
    let mut offsets = try_zeroed::<u64>(n + 1, "the CSR offsets (8 bytes per vertex)")?;
    offsets[1..]
        .par_chunks_mut(1 << 16)
        .enumerate()
        .for_each(|(k, out)| {
            let base = idx_at as usize + (k << 16) * 8;
            for (i, o) in out.iter_mut().enumerate() {
                *o = u64_at(data, base + 8 * i).unwrap_or(u64::MAX);
            }
        });
    let read_u32s = |at: usize, what| -> Result<Vec<u32>, GraphError> {
        let bytes = &data[at..at + 4 * m];
        let mut v = try_zeroed::<u32>(m, what)?;
        v.par_chunks_mut(1 << 16)
            .zip(bytes.par_chunks(4 << 16))
            .for_each(|(o, b)| {
                for (x, c) in o.iter_mut().zip(b.chunks_exact(4)) {
                    *x = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                }
            });
        Ok(v)
    };
    let targets = read_u32s(dst_at as usize, "the CSR targets (4 bytes per arc)")?;
    let weights = match esize {
        4 => Some(read_u32s(
            data_at as usize,
            "the CSR weights (4 bytes per arc)",
        )?),
        _ => None,
    };
    let csr = Csr::checked(offsets.into(), targets.into(), weights.map(Into::into))
        .map_err(|e| invalid_to_error(path, e, idx_at - 8, dst_at, n as u64))?;
    Ok(Graph {
        csr,
        ids: VertexIds::offset(0),
        name: super::display_name(path),
        symmetric: false,
    })
}

/// Writes a Galois `.gr` version 1 file.
pub(crate) fn write_galois(g: &Graph, out: &mut impl Write) -> std::io::Result<()> {
    let csr = &g.csr;
    let esize: u64 = if csr.is_weighted() { 4 } else { 0 };
    for v in [1u64, esize, csr.num_vertices() as u64, csr.num_edges()] {
        out.write_all(&v.to_le_bytes())?;
    }
    write_le(out, &csr.offsets()[1..])?;
    write_le(out, csr.targets())?;
    if csr.num_edges() % 2 == 1 {
        out.write_all(&[0u8; 4])?;
    }
    if let Some(w) = csr.weights() {
        write_le(out, w)?;
    }
    Ok(())
}

fn write_le<T: bytemuck::Pod>(out: &mut impl Write, v: &[T]) -> std::io::Result<()> {
    // The crate refuses to run binary I/O on big-endian machines (checked by callers), so the
    // native bytes are the little-endian bytes.
    for c in v.chunks(1 << 20) {
        out.write_all(bytemuck::cast_slice(c))?;
    }
    Ok(())
}

/// Writes a section at `*pos` and pads to the next section boundary.
fn put<T: bytemuck::Pod>(out: &mut impl Write, pos: &mut u64, v: &[T]) -> std::io::Result<()> {
    write_le(out, v)?;
    *pos += std::mem::size_of_val(v) as u64;
    let next = pos.div_ceil(ALIGN) * ALIGN;
    let zeros = [0u8; ALIGN as usize];
    out.write_all(&zeros[..(next - *pos) as usize])?;
    *pos = next;
    Ok(())
}

/// Writes the groute cache format.
pub(crate) fn write_cache(g: &Graph, out: &mut impl Write) -> std::io::Result<()> {
    let csr = &g.csr;
    let n = csr.num_vertices() as u64;
    let m = csr.num_edges();
    let table = g.ids.table();
    let mut flags = 0u64;
    if csr.is_weighted() {
        flags |= 1;
    }
    if g.symmetric {
        flags |= 2;
    }
    if let Some(t) = table {
        flags |= 4;
        if t.by_ext.is_some() {
            flags |= 8;
        }
    }
    // Section layout.
    let align = |x: u64| x.div_ceil(ALIGN) * ALIGN;
    let offsets_at = HEADER as u64;
    let targets_at = align(offsets_at + 8 * (n + 1));
    let mut next = align(targets_at + 4 * m);
    let weights_at = if csr.is_weighted() {
        let at = next;
        next = align(at + 4 * m);
        at
    } else {
        0
    };
    let (ids_at, order_at) = match table {
        Some(t) => {
            let ids_at = next;
            next = align(ids_at + 8 * n);
            let order_at = if t.by_ext.is_some() {
                let at = next;
                next = align(at + 4 * n);
                at
            } else {
                0
            };
            (ids_at, order_at)
        }
        None => (0, 0),
    };
    let name_at = next;
    let mut h = Vec::with_capacity(HEADER);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&BOM.to_le_bytes());
    h.extend_from_slice(&1u32.to_le_bytes());
    for v in [
        flags,
        n,
        m,
        g.ids.base(),
        g.name.len() as u64,
        offsets_at,
        targets_at,
        weights_at,
        ids_at,
        order_at,
        name_at,
    ] {
        h.extend_from_slice(&v.to_le_bytes());
    }
    h.resize(HEADER, 0);
    out.write_all(&h)?;
    let mut pos = HEADER as u64;
    put(out, &mut pos, csr.offsets())?;
    put(out, &mut pos, csr.targets())?;
    if let Some(w) = csr.weights() {
        put(out, &mut pos, w)?;
    }
    if let Some(t) = table {
        put(out, &mut pos, &t.ext)?;
        if let Some(b) = &t.by_ext {
            put(out, &mut pos, b)?;
        }
    }
    out.write_all(g.name.as_bytes())?;
    Ok(())
}
