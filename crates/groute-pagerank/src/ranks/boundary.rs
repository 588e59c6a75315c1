//! The boundary of a process's range: its vertices with arcs to other processes' vertices,
//! whose shares alone the others' gathers read ([`boundary_of`]), and the pack and unpack of
//! their shares on either backend ([`pack`], [`unpack`]).

use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

use groute_core::{Buffer, Error, Stream};
use groute_graph::Csr;
use rayon::prelude::*;

use crate::cuda::boundary_launch::{Direction, WordIndex, launch_words};

/// Rows per task.
const ROWS_PER_TASK: usize = 1 << 14;

/// The vertices of `owned` with an out-arc to a vertex outside it, ascending: another
/// process gathers over that arc, so it needs the vertex's share.
pub(super) fn boundary_of(csr: &Csr, owned: &Range<u32>) -> Result<Vec<u32>, Error> {
    let leaves = |v: u32| csr.neighbors(v).iter().any(|w| !owned.contains(w));
    let blocks: Vec<Range<u32>> = owned
        .clone()
        .step_by(ROWS_PER_TASK)
        .map(|s| s..s.saturating_add(ROWS_PER_TASK as u32).min(owned.end))
        .collect();
    let counts: Vec<usize> = blocks
        .par_iter()
        .map(|b| b.clone().filter(|&v| leaves(v)).count())
        .collect();
    let total: usize = counts.iter().sum();
    let mut boundary = Vec::new();
    boundary
        .try_reserve_exact(total)
        .map_err(|_| Error::OutOfMemory {
            bytes: total.saturating_mul(4),
            location: "host memory (the boundary vertices of this process's rows)".into(),
            source: None,
        })?;
    boundary.par_extend(
        blocks
            .into_par_iter()
            .flat_map_iter(move |b| b.filter(move |&v| leaves(v))),
    );
    Ok(boundary)
}

/// Enqueues `dst[i] = src[index[i]]` for every entry of `index` on `stream`.
pub(super) fn pack(
    stream: &Stream,
    index: &WordIndex,
    src: &Buffer<u32>,
    dst: &Buffer<u32>,
) -> Result<(), Error> {
    through_index(stream, Direction::Pack, index, src, dst)
}

/// Enqueues `dst[index[i]] = src[i]` for every entry of `index` on `stream`.
pub(super) fn unpack(
    stream: &Stream,
    index: &WordIndex,
    src: &Buffer<u32>,
    dst: &Buffer<u32>,
) -> Result<(), Error> {
    through_index(stream, Direction::Unpack, index, src, dst)
}

/// Enqueues the copy of every entry of `index` on `stream`, the way `direction` says, on
/// either backend.
fn through_index(
    stream: &Stream,
    direction: Direction,
    index: &WordIndex,
    src: &Buffer<u32>,
    dst: &Buffer<u32>,
) -> Result<(), Error> {
    if !stream.is_host() {
        return launch_words(stream, direction, index, src, dst);
    }
    let (indexed, packed) = match direction {
        Direction::Pack => (src, dst),
        Direction::Unpack => (dst, src),
    };
    on_host(
        stream,
        index,
        indexed,
        packed,
        move |entries, indexed, packed| {
            packed.par_iter().zip(entries).for_each(|(p, e)| {
                let slot = &indexed[e.load(Ordering::Relaxed) as usize];
                match direction {
                    Direction::Pack => p.store(slot.load(Ordering::Relaxed), Ordering::Relaxed),
                    Direction::Unpack => slot.store(p.load(Ordering::Relaxed), Ordering::Relaxed),
                }
            });
        },
    )
}

/// Enqueues `kernel(entries, indexed, packed)` on a host stream, `indexed` holding at least
/// the index's bound words and `packed` exactly one word per entry.
fn on_host(
    stream: &Stream,
    index: &WordIndex,
    indexed: &Buffer<u32>,
    packed: &Buffer<u32>,
    kernel: impl FnOnce(&[AtomicU32], &[AtomicU32], &[AtomicU32]) + Send + 'static,
) -> Result<(), Error> {
    index.check("boundary exchange: the indexed array", indexed)?;
    let packed = packed.slice(..index.len())?;
    let (entries, indexed) = (index.entries().slice(..index.len())?, indexed.clone());
    let unsupported = || Error::Unsupported {
        operation: "host kernels on memory the host cannot address",
        backend: "this",
    };
    for b in [&entries, &indexed, &packed] {
        b.host_atomic_u32().ok_or_else(unsupported)?;
    }
    stream.launch_host(move || {
        if let (Some(e), Some(i), Some(p)) = (
            entries.host_atomic_u32(),
            indexed.host_atomic_u32(),
            packed.host_atomic_u32(),
        ) {
            kernel(e, i, p);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use groute_graph::{CsrBuilder, EdgeList};

    #[test]
    fn the_boundary_is_the_owned_vertices_with_arcs_leaving_the_range() {
        // 0 -> 1, 1 -> 4, 2 -> 3, 3 -> 0, 4 -> 2; owned 1..4.
        let pairs = [(0, 1), (1, 4), (2, 3), (3, 0), (4, 2)];
        let csr = CsrBuilder::new(5)
            .build(&EdgeList::from_pairs(&pairs))
            .unwrap();
        assert_eq!(boundary_of(&csr, &(1..4)).unwrap(), vec![1, 3]);
        assert_eq!(boundary_of(&csr, &(0..5)).unwrap(), Vec::<u32>::new());
        assert_eq!(boundary_of(&csr, &(4..5)).unwrap(), vec![4]);
        assert_eq!(boundary_of(&csr, &(2..2)).unwrap(), Vec::<u32>::new());
    }
}
