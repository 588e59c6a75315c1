//! Host-backend kernels: the same hook, compress and merge as `kernels/cc/cc.cu`, as Rust
//! functions over atomics, parallelised with rayon.
//!
//! The slice functions ([`hook_edges`], [`compress`], [`merge`]) work on any `&[AtomicU32]`
//! and are what the `enqueue_*` wrappers run on a device's executor thread.
//!
//! ```
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use groute_cc::{host, Edge};
//!
//! let parent: Vec<AtomicU32> = (0..5).map(AtomicU32::new).collect();
//! host::hook_edges(&[Edge::new(4, 1), Edge::new(1, 3)], &parent);
//! host::compress(&parent);
//! let labels: Vec<u32> = parent.iter().map(|p| p.load(Ordering::Relaxed)).collect();
//! assert_eq!(labels, vec![0, 1, 2, 1, 1]);
//! ```

use std::sync::atomic::{AtomicU32, Ordering};

use std::ops::Range;

use groute_core::{Buffer, Error as CoreError, Stream};
use groute_worklist::HostCsrRows;
use rayon::prelude::*;

use crate::device_rows::{LinkPass, RowsPart, SAMPLED_ARCS};
use crate::{CcError, Edge};

/// Elements per rayon task (small tasks cost more than they balance).
const GRAIN: usize = 1 << 12;

#[inline]
fn load(parent: &[AtomicU32], v: u32) -> u32 {
    parent[v as usize].load(Ordering::Acquire)
}

/// The root of `x`'s tree, pointing every vertex passed at its grandparent (ECL-CC's
/// intermediate pointer jumping). The stores only write non-roots and replace one ancestor by
/// another, so they are safe against concurrent finds and hooks. Returns an index out of range
/// (a corrupted array) as it finds it.
#[inline]
pub fn find(x: u32, parent: &[AtomicU32]) -> u32 {
    find_from(x, load(parent, x), parent)
}

/// [`find`] from `cur`, the value of `parent[x]` the caller read.
#[inline]
fn find_from(x: u32, mut cur: u32, parent: &[AtomicU32]) -> u32 {
    let n = parent.len();
    if cur == x || cur as usize >= n {
        return cur;
    }
    let mut prev = x;
    loop {
        let next = load(parent, cur);
        if next >= cur {
            return cur;
        }
        parent[prev as usize].store(next, Ordering::Release);
        prev = cur;
        cur = next;
    }
}

/// Unites the trees of `u` and `v`: finds both roots (shortening the paths) and hooks the
/// higher root under the lower one with a compare-and-swap, climbing on from the root's new
/// parent when another thread hooked it first. Keeps `parent[x] <= x` for every `x`. Indices
/// out of range (a corrupted array, or `u`, `v` outside it) stop the climb instead of
/// panicking.
#[inline]
pub fn link(u: u32, v: u32, parent: &[AtomicU32]) {
    let n = parent.len();
    if u as usize >= n || v as usize >= n {
        return;
    }
    // Edges whose ends already point at one root, or one at the other, end after two loads.
    let (pu, pv) = (load(parent, u), load(parent, v));
    if pu == pv || pu == v || pv == u {
        return;
    }
    let mut r1 = find_from(u, pu, parent);
    let mut r2 = find_from(v, pv, parent);
    while r1 != r2 && (r1 as usize) < n && (r2 as usize) < n {
        let (high, low) = if r1 > r2 { (r1, r2) } else { (r2, r1) };
        match parent[high as usize].compare_exchange(high, low, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => break,
            Err(old) if old as usize >= n => break,
            Err(old) => {
                r1 = find(old, parent);
                r2 = low;
            }
        }
    }
}

/// `parent[v] = v` for every `v`.
pub fn init(parent: &[AtomicU32]) {
    parent
        .par_iter()
        .with_min_len(GRAIN)
        .enumerate()
        .for_each(|(v, p)| p.store(v as u32, Ordering::Relaxed));
}

/// Hooks every edge into `parent` (endpoints must be below `parent.len()`).
pub fn hook_edges(edges: &[Edge], parent: &[AtomicU32]) {
    edges.par_iter().with_min_len(GRAIN).for_each(|e| {
        if e.u != e.v {
            link(e.u, e.v, parent);
        }
    });
}

/// For every edge whose higher end is still a root, makes the lower end its parent (plain
/// stores, as `cc_first_parents`; run before [`hook_edges`] over the same edges, and alone).
/// Edges out of range are skipped.
pub fn first_parents(edges: &[Edge], parent: &[AtomicU32]) {
    edges.par_iter().with_min_len(GRAIN).for_each(|e| {
        let (low, high) = if e.u < e.v { (e.u, e.v) } else { (e.v, e.u) };
        if let Some(slot) = parent.get(high as usize)
            && low != high
            && slot.load(Ordering::Relaxed) == high
        {
            slot.store(low, Ordering::Release);
        }
    });
}

/// Pointer jumping: afterwards every vertex points at the root of its tree.
pub fn compress(parent: &[AtomicU32]) {
    compress_range(parent, 0..parent.len());
}

/// Pointer jumping over `vertices` (clamped to the array): afterwards each of them points at
/// the root of its tree.
pub fn compress_range(parent: &[AtomicU32], vertices: Range<usize>) {
    let end = vertices.end.min(parent.len());
    let start = vertices.start.min(end);
    parent[start..end]
        .par_iter()
        .with_min_len(GRAIN)
        .enumerate()
        .for_each(|(k, slot)| {
            let v = start + k;
            let mut p = slot.load(Ordering::Acquire);
            if p as usize == v || p as usize >= parent.len() {
                return;
            }
            let mut pp = load(parent, p);
            if pp == p {
                return;
            }
            while p != pp && (pp as usize) < parent.len() {
                p = pp;
                pp = load(parent, p);
            }
            slot.store(p, Ordering::Release);
        });
}

/// Merges another array's entries: `other[k]` is the parent of vertex `offset + k` there, an
/// edge `(offset + k, other[k])` to hook here.
pub fn merge(offset: u32, other: &[u32], parent: &[AtomicU32]) {
    other
        .par_iter()
        .with_min_len(GRAIN)
        .enumerate()
        .for_each(|(k, &p)| {
            if let Some(v) = offset.checked_add(k as u32)
                && p != v
            {
                link(v, p, parent);
            }
        });
}

/// Which arcs the passes after [`link_first`] leave out besides the one it linked and loops
/// (as `leaves_out` in `cc.cu`).
#[derive(Clone, Copy)]
struct LeftOut {
    /// Vertices of the graph: heads at or above it are out of range.
    n: usize,
    /// Arcs at the start of each row linked by sampling: those after arc 0 are left out.
    sampled: usize,
    /// The arcs to higher heads (a symmetric graph links them from their heads' rows).
    lower_only: bool,
}

impl LeftOut {
    /// The arcs left out in a parent array of `parent.len()` vertices.
    fn new(parent: &[AtomicU32], sampled: usize, lower_only: bool) -> Self {
        LeftOut {
            n: parent.len(),
            sampled,
            lower_only,
        }
    }

    /// Whether arc number `index` of row `u`, to `v`, is left out.
    #[inline]
    fn arc(self, u: u32, index: usize, v: u32) -> bool {
        v as usize >= self.n
            || v == u
            || (index == 0 && v < u)
            || (index > 0 && index < self.sampled)
            || (self.lower_only && v > u)
    }
}

/// Makes each row's arc 0 its parent where the head is below the row (as `cc_link_first`: no
/// find, no atomic read-modify-write; `parent` holds [`init`]'s identity); returns the arcs
/// linked.
pub fn link_first(rows: &HostCsrRows<'_>, owned: Range<u32>, parent: &[AtomicU32]) -> u64 {
    owned
        .into_par_iter()
        .with_min_len(GRAIN)
        .map(|u| match (rows.row(u).0.first(), parent.get(u as usize)) {
            (Some(&v), Some(slot)) if v < u => {
                slot.store(v, Ordering::Release);
                1
            }
            _ => 0,
        })
        .sum()
}

/// Links arc number `round` of every row of `owned` (Afforest's sampling, as
/// `cc_link_sampled`; after [`link_first`], whose arcs it leaves out); returns the arcs
/// linked.
pub fn link_sampled(
    rows: &HostCsrRows<'_>,
    owned: Range<u32>,
    round: u32,
    parent: &[AtomicU32],
) -> u64 {
    let left_out = LeftOut::new(parent, 0, false);
    owned
        .into_par_iter()
        .with_min_len(GRAIN)
        .map(|u| match rows.row(u).0.get(round as usize) {
            Some(&v) if !left_out.arc(u, round as usize, v) => {
                link(u, v, parent);
                1
            }
            _ => 0,
        })
        .sum()
}

/// Links the arcs of every row of `owned` after the first `sampled` (arc 0 too where its head
/// is above the row: neither [`link_first`] nor a sampling round of arc 1 links it), except
/// the rows of vertices in `anchor`'s tree (as `cc_link_rest` and `cc_link_tiles`; `None`:
/// every row); after [`link_first`], whose arcs it leaves out, as it leaves out the arcs to
/// higher heads with `lower_only`. Returns the arcs linked.
pub fn link_rest(
    rows: &HostCsrRows<'_>,
    owned: Range<u32>,
    (sampled, lower_only): (u32, bool),
    anchor: Option<u32>,
    parent: &[AtomicU32],
) -> u64 {
    let root = anchor
        .filter(|&a| (a as usize) < parent.len())
        .map(|a| find(a, parent));
    let left_out = LeftOut::new(parent, sampled as usize, lower_only);
    owned
        .into_par_iter()
        .with_min_len(GRAIN / 16)
        .map(|u| {
            let row = rows.row(u).0;
            let from = match row.first() {
                Some(&v) if sampled > 0 && v > u => 0,
                _ => sampled as usize,
            };
            if row.len() <= from || root.is_some_and(|r| find(u, parent) == r) {
                return 0;
            }
            let mut linked = 0;
            for (index, &v) in row.iter().enumerate().skip(from) {
                if !left_out.arc(u, index, v) {
                    link(u, v, parent);
                    linked += 1;
                }
            }
            linked
        })
        .sum()
}

/// Takes `parent[start..start + slice.len()]` into `slice` (entries past `parent` are left
/// as they are); whether any entry of `slice` changed.
pub fn take_slice(parent: &[AtomicU32], start: usize, slice: &[AtomicU32]) -> bool {
    let from = parent.get(start..).unwrap_or_default();
    from.par_iter()
        .zip(slice.par_iter())
        .with_min_len(GRAIN)
        .map(|(p, s)| {
            let p = p.load(Ordering::Acquire);
            s.swap(p, Ordering::AcqRel) != p
        })
        .reduce(|| false, |a, b| a || b)
}

/// The error of a host kernel given memory the host cannot address.
fn unaddressable() -> CcError {
    CcError::Core(CoreError::Unsupported {
        operation: "host kernels on memory the host cannot address",
        backend: "this",
    })
}

fn atomics(buffer: &Buffer<u32>) -> Result<&[AtomicU32], CcError> {
    buffer.host_atomic_u32().ok_or_else(unaddressable)
}

fn check_host<T: bytemuck::Pod>(buffer: &Buffer<T>) -> Result<(), CcError> {
    match buffer.host_ptr() {
        Some(_) => Ok(()),
        None if buffer.is_empty() => Ok(()),
        None => Err(unaddressable()),
    }
}

/// Enqueues [`init`] on `stream` (a host-backend stream).
pub fn enqueue_init(stream: &Stream, parent: &Buffer<u32>) -> Result<(), CcError> {
    enqueue_on_parent(stream, parent, init)
}

/// Enqueues `kernel` over `parent` alone on `stream` (a host-backend stream).
fn enqueue_on_parent(
    stream: &Stream,
    parent: &Buffer<u32>,
    kernel: impl FnOnce(&[AtomicU32]) + Send + 'static,
) -> Result<(), CcError> {
    atomics(parent)?;
    let parent = parent.clone();
    stream.launch_host(move || {
        if let Some(p) = parent.host_atomic_u32() {
            kernel(p);
        }
    })?;
    Ok(())
}

/// Enqueues [`first_parents`] then [`hook_edges`] over `edges` on `stream`: links every edge;
/// `edges` must be valid in stream order (wait for the packet's ready event first) and stay
/// unwritten until the kernels complete.
pub fn enqueue_link_edges(
    stream: &Stream,
    edges: &Buffer<Edge>,
    parent: &Buffer<u32>,
) -> Result<(), CcError> {
    enqueue_on_packet(stream, edges, parent, |e, p| {
        first_parents(e, p);
        hook_edges(e, p);
    })
}

/// Enqueues `kernel` over a received `packet` and `parent` on `stream` (a host-backend
/// stream); `packet` must be valid in stream order and stay unwritten until the kernel
/// completes.
fn enqueue_on_packet<T: bytemuck::Pod + Send + Sync>(
    stream: &Stream,
    packet: &Buffer<T>,
    parent: &Buffer<u32>,
    kernel: impl FnOnce(&[T], &[AtomicU32]) + Send + 'static,
) -> Result<(), CcError> {
    atomics(parent)?;
    check_host(packet)?;
    let (packet, parent) = (packet.clone(), parent.clone());
    stream.launch_host(move || {
        // SAFETY: the stream waited for the event that makes `packet` valid before this
        // kernel, and the link reuses the receive buffer only after the release event, which
        // is recorded after this kernel: nothing writes the range while the slice lives.
        let e = unsafe { packet.as_host_slice() };
        if let (Some(e), Some(p)) = (e, parent.host_atomic_u32()) {
            kernel(e, p);
        }
    })?;
    Ok(())
}

/// Enqueues one pass of linking a device's own rows on `stream` (a host-backend stream):
/// [`link_first`], [`link_sampled`] or [`link_rest`], adding the arcs linked to the part's
/// count.
pub(crate) fn enqueue_link_rows(
    stream: &Stream,
    rows: &RowsPart,
    pass: LinkPass,
    parent: &Buffer<u32>,
) -> Result<(), CcError> {
    rows.rows_within(atomics(parent)?.len())?;
    let linked = rows.linked.clone();
    linked.host_atomic_u64().ok_or_else(unaddressable)?;
    let (csr, parent) = (rows.csr.clone(), parent.clone());
    stream.launch_host(move || {
        // SAFETY: the rows are written once, by their upload, which waited for its copies;
        // nothing writes them afterwards.
        let view = unsafe { csr.host_view() };
        if let (Some(view), Some(p), Some(count)) =
            (view, parent.host_atomic_u32(), linked.host_atomic_u64())
        {
            let owned = csr.rows();
            let arcs = match pass {
                LinkPass::First => link_first(&view, owned, p),
                LinkPass::Sampled { round } => link_sampled(&view, owned, round, p),
                LinkPass::Rest { anchor } => {
                    link_rest(&view, owned, (SAMPLED_ARCS, false), anchor, p)
                }
                LinkPass::EveryArc { lower_only } => {
                    link_rest(&view, owned, (0, lower_only), None, p)
                }
            };
            count[0].fetch_add(arcs, Ordering::Relaxed);
        }
    })?;
    Ok(())
}

/// Enqueues [`compress_range`] over `vertices` on `stream`.
pub fn enqueue_compress(
    stream: &Stream,
    parent: &Buffer<u32>,
    vertices: Range<u32>,
) -> Result<(), CcError> {
    let vertices = vertices.start as usize..vertices.end as usize;
    enqueue_on_parent(stream, parent, move |p| compress_range(p, vertices))
}

/// Enqueues [`merge`] on `stream`; `other` as `edges` in [`enqueue_link_edges`].
pub fn enqueue_merge(
    stream: &Stream,
    offset: u32,
    other: &Buffer<u32>,
    parent: &Buffer<u32>,
) -> Result<(), CcError> {
    enqueue_on_packet(stream, other, parent, move |o, p| merge(offset, o, p))
}

/// Enqueues [`take_slice`] on `stream`, setting `changed[0]` to 1 when an entry changed (a
/// host-backend stream; `changed` holds at least one word).
pub fn enqueue_take_slice(
    stream: &Stream,
    (parent, start): (&Buffer<u32>, usize),
    slice: &Buffer<u32>,
    changed: &Buffer<u32>,
) -> Result<(), CcError> {
    for b in [parent, slice, changed] {
        atomics(b)?;
    }
    if changed.is_empty() {
        return Err(CcError::invalid("changed flag length", 0, "one word"));
    }
    let (parent, slice, changed) = (parent.clone(), slice.clone(), changed.clone());
    stream.launch_host(move || {
        if let (Some(p), Some(s), Some(c)) = (
            parent.host_atomic_u32(),
            slice.host_atomic_u32(),
            changed.host_atomic_u32(),
        ) && take_slice(p, start, s)
        {
            c[0].store(1, Ordering::Release);
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(parent: &[AtomicU32]) -> Vec<u32> {
        parent.iter().map(|p| p.load(Ordering::Relaxed)).collect()
    }

    #[test]
    fn hook_then_compress_gives_minimum_labels() {
        let parent: Vec<AtomicU32> = (0..8).map(|_| AtomicU32::new(0)).collect();
        init(&parent);
        hook_edges(
            &[
                Edge::new(7, 5),
                Edge::new(5, 6),
                Edge::new(3, 3),
                Edge::new(2, 4),
            ],
            &parent,
        );
        compress(&parent);
        assert_eq!(labels(&parent), vec![0, 1, 2, 3, 2, 5, 5, 5]);
    }

    #[test]
    fn merge_unites_two_forests() {
        let a: Vec<AtomicU32> = [0, 1, 1, 3, 3].into_iter().map(AtomicU32::new).collect();
        // The other side saw 2-3: (vertex, parent) entries 3 -> 2.
        merge(2, &[2, 2, 4], &a);
        compress(&a);
        assert_eq!(labels(&a), vec![0, 1, 1, 1, 1]);
    }

    #[test]
    fn compress_range_points_only_its_vertices_at_their_roots() {
        // A chain 5 -> 4 -> 3 -> 2 -> 0 and a lone root 1.
        let parent: Vec<AtomicU32> = [0, 1, 0, 2, 3, 4].into_iter().map(AtomicU32::new).collect();
        compress_range(&parent, 4..usize::MAX);
        assert_eq!(labels(&parent), vec![0, 1, 0, 2, 0, 0]);
        compress_range(&parent, 3..3);
        assert_eq!(labels(&parent)[3], 2);
        compress_range(&parent, 0..4);
        assert_eq!(labels(&parent), vec![0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn merge_links_uncompressed_forests() {
        // Each side a chain over its own vertices; the other side's entries are not roots.
        let a: Vec<AtomicU32> = [0, 0, 1, 3, 4, 5].into_iter().map(AtomicU32::new).collect();
        merge(0, &[0, 1, 2, 2, 3, 4], &a);
        compress(&a);
        assert_eq!(labels(&a), vec![0; 6]);
    }

    #[test]
    fn take_slice_reports_whether_entries_moved() {
        let parent: Vec<AtomicU32> = [0, 0, 1, 1, 4].into_iter().map(AtomicU32::new).collect();
        let slice: Vec<AtomicU32> = [0, 1, 9].into_iter().map(AtomicU32::new).collect();
        assert!(take_slice(&parent, 2, &slice));
        assert_eq!(labels(&slice), vec![1, 1, 4]);
        assert!(!take_slice(&parent, 2, &slice));
        // Past the array: nothing to take, nothing moved.
        assert!(!take_slice(&parent, 9, &slice));
    }
}
