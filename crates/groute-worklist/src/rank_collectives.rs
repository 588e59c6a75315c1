//! [`RankCollectives`]: the collectives a frontier executor needs from the other processes
//! of a run spanning several (the `groute-dist` crate's ranks), on this process's device 0.
//!
//! A level-synchronous executor (direction-optimizing BFS) spanning processes takes a level
//! step on every process's devices, then needs every process to see every other's
//! discoveries and the level's counts summed over all of them, before the next step. Both
//! are collectives: [`RankCollectives::sum`] of a few host words, and
//! [`RankCollectives::all_gather`] of one device buffer per process (a bitmap), enqueued on a
//! stream so that the host does not wait for the data.

use std::ops::Range;

use groute_core::{Buffer, Error, Stream};
use groute_graph::Partition;

use crate::error::WorklistError;

/// Collectives over every process of a run, on this process's device 0 (CUDA: NCCL; host
/// backend: through the processes' all-reduce). Every process calls each one, in the same
/// order; each call may block until every process has made it.
pub trait RankCollectives {
    /// This process's rank.
    fn rank(&self) -> usize;

    /// Processes in the run.
    fn ranks(&self) -> usize;

    /// Blocking: the sum over every process of `words`, word by word (every process gives as
    /// many).
    fn sum(&mut self, words: &[u64]) -> Result<Vec<u64>, WorklistError>;

    /// Every process's `mine` into `all`, process `r`'s at words `r * mine.len()..`, in rank
    /// order: enqueued on `stream` (a stream of the device holding both buffers, this
    /// process's device 0) after the work enqueued there before, and complete for the work
    /// enqueued after. `all` holds `ranks() * mine.len()` words; every process gives as many.
    /// A process whose own part fails before the exchange (its stream) still takes part
    /// where the transport allows (the host path gives zeros) and returns the error; the
    /// caller tells the others in its next sum.
    fn all_gather(
        &mut self,
        mine: &Buffer<u32>,
        all: &Buffer<u32>,
        stream: &Stream,
    ) -> Result<(), WorklistError>;
}

/// The collectives of a run that is one process (rank 0 of 1): a sum returns its words and
/// a gather copies this process's part into place. It lets an executor written over
/// [`RankCollectives`] run inside one process (the PageRank sweeps of one process's devices).
#[derive(Clone, Copy, Debug, Default)]
pub struct OneProcess;

impl RankCollectives for OneProcess {
    fn rank(&self) -> usize {
        0
    }

    fn ranks(&self) -> usize {
        1
    }

    fn sum(&mut self, words: &[u64]) -> Result<Vec<u64>, WorklistError> {
        Ok(words.to_vec())
    }

    fn all_gather(
        &mut self,
        mine: &Buffer<u32>,
        all: &Buffer<u32>,
        stream: &Stream,
    ) -> Result<(), WorklistError> {
        // One part: `all` is `mine`'s length (the copy checks it).
        Ok(stream.copy(all, mine)?)
    }
}

/// The first agreement of a run spanning processes, before any process allocates for it:
/// sums `counts` over the processes along with whether this one failed its own checks
/// (`failed`) and its `shape`, named words that every process must give alike (devices per
/// process, vertices, a digest of the partition). `run` names the run in errors (`"the BFS
/// across processes"`).
///
/// An error when any process failed (this one's own error is the caller's to return first).
/// Otherwise the summed counts and this process's verdict on the shape: an error when its
/// shape is not the mean over the processes (some process's differs). Processes can reach
/// different verdicts (only those away from the mean see it), so the caller folds the
/// verdict into its next agreement ([`all_ready`]), where every process learns of it.
pub fn sum_with_shape(
    collectives: &mut dyn RankCollectives,
    failed: bool,
    counts: &[u64],
    shape: &[(&str, u64)],
    run: &str,
) -> Result<(Vec<u64>, Result<(), Error>), WorklistError> {
    let mut words = Vec::with_capacity(1 + counts.len() + shape.len());
    words.push(u64::from(failed));
    words.extend_from_slice(counts);
    words.extend(shape.iter().map(|&(_, w)| w));
    let sum = collectives.sum(&words)?;
    if sum[0] > 0 {
        return Err(peers_failed(run, sum[0], collectives).into());
    }
    let ranks = collectives.ranks() as u64;
    let shape_sums = &sum[1 + counts.len()..];
    let same = shape
        .iter()
        .zip(shape_sums)
        .all(|(&(_, w), &s)| w.checked_mul(ranks) == Some(s));
    let verdict = if same {
        Ok(())
    } else {
        let here: Vec<String> = shape
            .iter()
            .map(|(name, w)| format!("{name} {w}"))
            .collect();
        Err(Error::invalid(
            "processes",
            format!("{} here", here.join(", ")),
            format!(
                "the same {} on every process of {run}",
                shape
                    .iter()
                    .map(|&(name, _)| name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ))
    };
    Ok((sum[1..1 + counts.len()].to_vec(), verdict))
}

/// The shape ([`sum_with_shape`]) that every process of a run over `partition` gives alike:
/// its `devices` per process, the graph's `num_vertices`, and the partition's parts and
/// digest.
pub fn partition_shape(
    devices: usize,
    num_vertices: usize,
    partition: &Partition,
) -> [(&'static str, u64); 4] {
    [
        ("devices per process", devices as u64),
        ("vertices", num_vertices as u64),
        ("parts", partition.num_parts() as u64),
        ("partition digest", u64::from(partition.digest())),
    ]
}

/// The vertices each of `ranks` processes owns, in rank order, where process `r`'s `devices`
/// hold parts `r * devices..(r + 1) * devices` of `partition`.
pub fn process_ranges(partition: &Partition, devices: usize, ranks: usize) -> Vec<Range<u32>> {
    (0..ranks)
        .map(|r| partition.range_of_parts(r * devices..(r + 1) * devices))
        .collect()
}

/// The last agreement before a run spanning processes: every process tells whether it
/// failed (its uploads and allocations, or an earlier verdict); an error on every process
/// when any did (this one's own error is the caller's to return first).
pub fn all_ready(
    collectives: &mut dyn RankCollectives,
    failed: bool,
    run: &str,
) -> Result<(), WorklistError> {
    let failures = collectives.sum(&[u64::from(failed)])?[0];
    if failures > 0 {
        return Err(peers_failed(run, failures, collectives).into());
    }
    Ok(())
}

/// The error of a process whose peers failed a step that every process of `run` takes
/// together.
pub fn peers_failed(run: &str, failed: u64, collectives: &dyn RankCollectives) -> Error {
    Error::Disconnected(format!(
        "{run}, on process {} of {}: {failed} processes failed a step every process takes \
         together (they print why)",
        collectives.rank(),
        collectives.ranks()
    ))
}
