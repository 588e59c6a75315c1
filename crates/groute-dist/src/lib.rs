//! The distributed worklist across processes: one ring over the devices of every rank.
//!
//! A run spanning `R` ranks (processes, started by `mpirun`) of `D` devices each splits the
//! graph into `R x D` parts; rank `r`'s devices hold parts `r D .. (r + 1) D` and nothing of
//! the others. A rank may hold only those parts' rows on the host too
//! ([`HeldRows`](groute_graph::HeldRows), loaded from a cache by
//! [`GraphCache::load_rows`](groute_graph::GraphCache::load_rows) after partitioning from
//! its offsets alone). The ranks form one ring: within a rank the devices pass items over the
//! runtime's router as in one process, and the last device of rank `r` hands its items to the
//! first device of rank `r + 1 mod R` through the ranks' communication layer
//! ([`RankComm`]: MPI with the `mpi` feature, threads of one process in the tests). Any
//! [`WorklistAlgorithm`](groute_worklist::WorklistAlgorithm) runs this way on the host
//! backend, its items inside the ring's messages; on CUDA devices the algorithms with a CUDA
//! executor of a process's share ([`ShareSolver`](groute_worklist::ShareSolver): the min
//! traversals' for BFS, SSSP and label propagation, PageRank's own), their items crossing
//! between ranks over NCCL (feature `nccl`: one communicator per ring edge, the message
//! carrying only the item count). Results are gathered to rank 0 ([`DistSolver`]).
//!
//! | item | what it is |
//! |---|---|
//! | [`RankComm`], [`WaveCounts`] | what the ranks need from the layer between them: a ring of messages, non-blocking sums (the termination waves), gathers to rank 0 |
//! | [`LocalRanks`] | ranks as threads of one process, with seeded jitter (tests) |
//! | `MpiComm` (feature `mpi`) | the same over MPI: `MPI_Isend` / `MPI_Improbe` on the ring, `MPI_Iallreduce` for the waves |
//! | [`RankRing`] | one rank's devices on the ring spanning every rank (a [`RingTransport`](groute_worklist::RingTransport)) |
//! | `NcclPlane` (feature `nccl`) | the CUDA data plane between ranks: one two-member NCCL communicator per ring edge, `libnccl.so.2` loaded at run time, or the library `GROUTE_NCCL_LIBRARY` names |
//! | [`CommCollectives`] | the collectives of a frontier executor spanning ranks (`groute_worklist::RankCollectives`: the direction-optimizing BFS's counts and bitmaps) over a [`RankComm`], with NCCL on CUDA devices |
//! | [`DistSolver`], [`DistOutput`], [`RunTotals`] | an algorithm over every rank's devices; rank 0's gathered result |
//! | [`launched_rank`], [`launched_local_rank`] | whether an MPI launcher started this process, and its rank on its node |
//!
//! # Termination across ranks
//!
//! Within a rank, termination is the one-process protocol (`groute_worklist`'s crate docs): a
//! count of outstanding items, each step reporting what it produced and consumed in one
//! update before anything it produced is visible. Across ranks no such shared count exists;
//! the ranks run Mattern's *four-counter* method over non-blocking sums.
//!
//! **What each rank keeps.** Its counts (`groute_worklist::PriorityCounter::held`: active and
//! deferred items, as in one process, except that counts of zero make the rank *idle*
//! rather than ending its run); `s_r`, the items it has handed to the next rank; `r_r`, the
//! items it has taken from the previous rank. One thread per rank, the *progress loop*, is
//! the only one that changes `s_r` and `r_r`: it retires the items of each message it sends
//! (`s_r += k`) after the send has started, and counts the items of each message it receives
//! (`r_r += k`) before any driver can see them. A rank is *passive* when its initial items
//! are counted and its counts are zero: no item is in any of its worklists, low-priority
//! lists, outgoing buffers, packets or channels, and no re-examination token is out. A
//! passive rank becomes active again only when its progress loop delivers a received message
//! (its drivers hold nothing that could produce an item).
//!
//! **Waves.** A rank joins a wave only while passive, contributing `(s_r, r_r)` read in the
//! same instant (on the progress loop, which alone changes them and alone can make the rank
//! active); a wave is a sum over every rank, non-blocking, so an active rank keeps working
//! and joins once it is idle. Waves are numbered `1, 2, ...` identically on every rank. Let
//! wave `k` sum to `(S_k, R_k)`. **The rule:** the run is over when `R_k == S_(k+1)`.
//!
//! **Why it is never early.** Take the instant `T` between the end of wave `k` (every rank
//! has joined it) and the start of wave `k + 1` (no rank has joined it yet; a rank learns
//! wave `k`'s sum before it joins wave `k + 1`). Counters only grow, so with `s(T)` and
//! `r(T)` the sums at `T`: `R_k <= r(T)` (each rank's `r` was read before `T`) and
//! `s(T) <= S_(k+1)` (read after `T`). No item is received before it is sent, so
//! `r(T) <= s(T)`. Hence `R_k <= r(T) <= s(T) <= S_(k+1) = R_k`: all are equal. So at `T`
//! nothing is in flight between ranks (`r(T) = s(T)`), and no rank received anything
//! between its wave-`k` contribution and `T` (`r(T) = R_k`, each `r_r` monotone): every
//! rank, passive when it joined wave `k`, is still passive at `T`. A passive rank with
//! nothing in flight towards it stays passive forever, so at `T` the run was over, and every
//! rank decides so on the same wave (the sums are the same everywhere). Each rank then
//! finishes its counter and its drivers stop exactly as in one process.
//!
//! **Why it ends.** Once the work is done every rank is passive forever and the counters
//! stop changing, so two consecutive waves see the same sums with `S = R`.
//!
//! **Failures.** A rank whose drivers fail joins the next wave at once with a failure mark;
//! a wave that sums a mark ends the run on every rank ([`DistError::PeerFailed`] on the
//! others, the rank's own error on it). A failed rank keeps taking its predecessor's
//! messages so that no send waits on it. Ranks still working join once idle (bound that with
//! [`WorklistOptions::time_limit`](groute_worklist::WorklistOptions::time_limit)); a rank
//! that dies ends the whole job through the launcher (`mpirun` stops every rank).
//!
//! **Soft priority** advances within each rank, on the rank's own threshold: when a rank has
//! deferred items and nothing active, it raises its threshold and re-examines its low lists,
//! as one process does; a rank with deferred items is not passive, so the waves wait for
//! them. The ranks' thresholds need not agree: an item travelling to another rank is split
//! there under its owner's threshold, and every deferred item is worked on once its rank
//! runs out of active work.

mod collectives;
mod comm;
mod error;
mod launch;
mod local;
#[cfg(feature = "mpi")]
mod mpi_comm;
#[cfg(feature = "nccl")]
mod nccl;
mod plane;
mod progress;
mod ring;
mod solver;

pub use collectives::CommCollectives;
pub use comm::{RankComm, Reduction, WaveCounts};
pub use error::{DistError, Result};
pub use launch::{launched_local_rank, launched_rank};
pub use local::LocalRanks;
#[cfg(feature = "mpi")]
pub use mpi_comm::MpiComm;
#[cfg(feature = "nccl")]
pub use nccl::NCCL_LIBRARY_ENV;
pub use ring::RankRing;
pub use solver::{DistOutput, DistSolver, RunTotals};
