//! Small parallel building blocks shared by the builder, readers and partitioner.

use std::ops::Range;

/// A raw pointer to a slice that several threads write at disjoint indices.
///
/// Used where each index is claimed exactly once (by an atomic cursor or by a disjoint range), so
/// writes never race. Every use names the claim in its `SAFETY` comment.
pub(crate) struct SharedSlice<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: `SharedSlice` only hands out writes through `write`, whose contract requires that no
// two threads write the same index and nobody reads the slice meanwhile; `T: Send` values may then
// be written from any thread.
unsafe impl<T: Send> Sync for SharedSlice<T> {}
// SAFETY: as above; the pointer itself may move between threads.
unsafe impl<T: Send> Send for SharedSlice<T> {}

impl<T> SharedSlice<T> {
    pub(crate) fn new(slice: &mut [T]) -> Self {
        SharedSlice {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
        }
    }

    /// Writes `value` at `index`.
    ///
    /// # Safety
    /// `index < len`, and no other thread writes or reads `index` while the slice is shared.
    #[inline]
    pub(crate) unsafe fn write(&self, index: usize, value: T) {
        debug_assert!(index < self.len);
        // SAFETY: the caller guarantees `index` is in bounds and exclusively ours.
        unsafe { self.ptr.add(index).write(value) }
    }
}

/// The first vertex `v` of `from..n` whose prefix cost `offsets[v] + v` (arcs and vertices
/// before it) reaches `goal`; `n` when none does. The cost grows with `v` (CSR `offsets`).
pub(crate) fn first_cost_reaching(offsets: &[u64], from: usize, n: usize, goal: u64) -> usize {
    let mut lo = from;
    let mut hi = n;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if offsets[mid] + mid as u64 >= goal {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// Splits the vertex range `0..n` into at most `parts` contiguous ranges of about equal
/// `vertices + edges` cost, using the CSR `offsets` (length `n + 1`).
pub(crate) fn balanced_ranges(offsets: &[u64], parts: usize) -> Vec<Range<usize>> {
    let n = offsets.len().saturating_sub(1);
    let parts = parts.max(1);
    let total = offsets.last().copied().unwrap_or(0) + n as u64;
    let mut out = Vec::with_capacity(parts);
    let mut start = 0usize;
    for p in 1..=parts {
        let end = if p == parts {
            n
        } else {
            let goal = (u128::from(total) * p as u128 / parts as u128) as u64;
            first_cost_reaching(offsets, start, n, goal)
        };
        if end > start {
            out.push(start..end);
            start = end;
        }
    }
    if out.is_empty() {
        out.push(0..n);
    }
    out
}

/// Chunk count for parallel loops: a few per thread so work balances.
pub(crate) fn chunk_count() -> usize {
    rayon::current_num_threads() * 8
}

/// Splits `data` (indexed by edge) into the mutable pieces belonging to the vertex `ranges`.
pub(crate) fn split_rows_mut<'a, T>(
    mut data: &'a mut [T],
    offsets: &[u64],
    ranges: &[Range<usize>],
) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(ranges.len());
    let mut consumed = 0u64;
    for r in ranges {
        let len = (offsets[r.end] - offsets[r.start]) as usize;
        let skip = (offsets[r.start] - consumed) as usize;
        let rest = std::mem::take(&mut data);
        let (_, rest) = rest.split_at_mut(skip);
        let (piece, rest) = rest.split_at_mut(len);
        out.push(piece);
        data = rest;
        consumed = offsets[r.end];
    }
    out
}

/// [`prefix_sum`] into a fallibly allocated vector (`what` names it in the error).
pub(crate) fn try_prefix_sum(
    counts: impl IntoIterator<Item = u64>,
    len: usize,
    what: &'static str,
) -> Result<Vec<u64>, crate::GraphError> {
    let mut out = crate::alloc::try_with_capacity(len.saturating_add(1), what)?;
    let mut acc = 0u64;
    out.push(0);
    for c in counts {
        acc += c;
        out.push(acc);
    }
    Ok(out)
}

/// Exclusive prefix sum of `counts` into a vector of length `counts.len() + 1`.
pub(crate) fn prefix_sum(counts: impl IntoIterator<Item = u64>, len: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(len + 1);
    let mut acc = 0u64;
    out.push(0);
    for c in counts {
        acc += c;
        out.push(acc);
    }
    out
}
