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
use crate::graph::{Graph, IdTable, VertexIds};
use crate::storage::Storage;

const MAGIC: &[u8; 8] = b"GROUTEG1";
const BOM: u32 = 0x0102_0304;
const HEADER: usize = 128;
const ALIGN: u64 = 64;

fn bin(path: &Path, offset: u64, problem: BinaryProblem) -> GraphError {
    GraphError::Binary {
        path: path.to_path_buf(),
        offset,
        problem,
    }
}

fn u64_at(data: &[u8], off: usize) -> Option<u64> {
    data.get(off..off + 8).map(|b| {
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        u64::from_le_bytes(a)
    })
}

fn invalid_to_error(
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

fn map(path: &Path) -> Result<Arc<memmap2::Mmap>, GraphError> {
    let file = std::fs::File::open(path).map_err(|e| GraphError::io(path, e))?;
    // SAFETY: the map is read-only. As documented on `load_graph`, a cache file must not be
    // truncated or modified while a graph loaded from it is alive; this is the usual condition
    // of memory-mapped input (a violation can fault, as with any mmap-based reader).
    let m = unsafe { memmap2::MmapOptions::new().populate().map(&file) }
        .map_err(|e| GraphError::io(path, e))?;
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

/// Loads a groute cache by mapping it.
pub(crate) fn read_cache(path: &Path) -> Result<Graph, GraphError> {
    if cfg!(target_endian = "big") {
        return Err(bin(path, 8, BinaryProblem::Endianness));
    }
    let map = map(path)?;
    let data: &[u8] = &map;
    let len = data.len() as u64;
    if data.len() < HEADER {
        return Err(bin(
            path,
            len,
            BinaryProblem::Truncated {
                needed: HEADER as u64,
                len,
            },
        ));
    }
    if &data[..8] != MAGIC {
        return Err(bin(
            path,
            0,
            BinaryProblem::BadMagic("not a groute cache (.grc) file"),
        ));
    }
    let bom = u32::from_le_bytes([data[8], data[9], data[10], data[11]]);
    if bom != BOM {
        return Err(bin(path, 8, BinaryProblem::Endianness));
    }
    let version = u32::from_le_bytes([data[12], data[13], data[14], data[15]]);
    if version != 1 {
        return Err(bin(
            path,
            12,
            BinaryProblem::BadField {
                field: "version",
                value: u64::from(version),
            },
        ));
    }
    let f = |i: usize| u64_at(data, 16 + 8 * i).unwrap_or(0);
    let (flags, n, m, base, name_len) = (f(0), f(1), f(2), f(3), f(4));
    let (offsets_at, targets_at, weights_at, ids_at, order_at, name_at) =
        (f(5), f(6), f(7), f(8), f(9), f(10));
    if n > u64::from(u32::MAX) {
        return Err(bin(
            path,
            24,
            BinaryProblem::BadField {
                field: "n",
                value: n,
            },
        ));
    }
    if m > len {
        return Err(bin(
            path,
            32,
            BinaryProblem::BadField {
                field: "m",
                value: m,
            },
        ));
    }
    let section = |at: u64, count: u64, size: u64, field: &'static str| -> Result<(), GraphError> {
        let end = count.checked_mul(size).and_then(|b| b.checked_add(at));
        match end {
            Some(end) if end <= len && at % 8 == 0 => Ok(()),
            Some(end) if at % 8 == 0 => {
                Err(bin(path, at, BinaryProblem::Truncated { needed: end, len }))
            }
            _ => Err(bin(path, 56, BinaryProblem::BadField { field, value: at })),
        }
    };
    section(offsets_at, n + 1, 8, "offsets start")?;
    section(targets_at, m, 4, "targets start")?;
    let weighted = flags & 1 != 0;
    if weighted {
        section(weights_at, m, 4, "weights start")?;
    }
    let has_table = flags & 4 != 0;
    let has_order = flags & 8 != 0;
    if has_table {
        section(ids_at, n, 8, "ids start")?;
        if has_order {
            section(order_at, n, 4, "id order start")?;
        }
    }
    section(name_at, name_len, 1, "name start")?;
    let bad_layout = |field| bin(path, 56, BinaryProblem::BadField { field, value: 0 });
    let (nu, mu) = (n as usize, m as usize);
    let offsets = Storage::<u64>::mapped(map.clone(), offsets_at as usize, nu + 1)
        .ok_or(bad_layout("offsets start"))?;
    let targets = Storage::<u32>::mapped(map.clone(), targets_at as usize, mu)
        .ok_or(bad_layout("targets start"))?;
    let weights = if weighted {
        Some(
            Storage::<u32>::mapped(map.clone(), weights_at as usize, mu)
                .ok_or(bad_layout("weights start"))?,
        )
    } else {
        None
    };
    let table = if has_table {
        let ext = Storage::<u64>::mapped(map.clone(), ids_at as usize, nu)
            .ok_or(bad_layout("ids start"))?;
        let by_ext = if has_order {
            let o = Storage::<u32>::mapped(map.clone(), order_at as usize, nu)
                .ok_or(bad_layout("id order start"))?;
            if let Some(i) = o.par_iter().position_any(|&v| u64::from(v) >= n) {
                return Err(bin(
                    path,
                    order_at + 4 * i as u64,
                    BinaryProblem::BadField {
                        field: "id order entry",
                        value: u64::from(o[i]),
                    },
                ));
            }
            Some(o)
        } else {
            None
        };
        // `internal_id` searches the ids in their order: it must be strictly increasing.
        let unsorted = match &by_ext {
            None => ext.par_windows(2).position_first(|w| w[0] >= w[1]),
            Some(o) => o
                .par_windows(2)
                .position_first(|w| ext[w[0] as usize] >= ext[w[1] as usize]),
        };
        if let Some(i) = unsorted {
            let (at, size) = if has_order {
                (order_at, 4)
            } else {
                (ids_at, 8)
            };
            return Err(bin(
                path,
                at + size * (i as u64 + 1),
                BinaryProblem::UnsortedIds {
                    entry: i as u64 + 1,
                },
            ));
        }
        Some(IdTable { ext, by_ext })
    } else {
        // Offset ids run from `base` to `base + n - 1`, which must not wrap.
        if n > 0 && base.checked_add(n - 1).is_none() {
            return Err(bin(
                path,
                40,
                BinaryProblem::BadField {
                    field: "id base",
                    value: base,
                },
            ));
        }
        None
    };
    let name = String::from_utf8_lossy(&data[name_at as usize..(name_at + name_len) as usize])
        .into_owned();
    let csr = Csr::checked(offsets, targets, weights)
        .map_err(|e| invalid_to_error(path, e, offsets_at, targets_at, n))?;
    Ok(Graph {
        csr,
        ids: VertexIds::from_parts(base, table),
        name,
        symmetric: flags & 2 != 0,
    })
}
