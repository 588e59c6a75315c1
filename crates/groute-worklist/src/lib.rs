//! # groute-worklist: the distributed worklist
//!
//! All-to-all work distribution over one ring of devices, a local worklist per device, and
//! termination detection (Ben-Nun et al., ACM TOPC 2020, sections 4.3-4.5).
//!
//! | construct | what it is |
//! |---|---|
//! | [`WorklistAlgorithm`], [`Combine`], [`Start`], [`AtomicValue`] | **the one interface of an algorithm**: a value per vertex, its initial value, where a run starts, `relax` along an arc, how updates combine (min or sum), when an update schedules a vertex, the priority of an item, the default band of soft priority ([`algorithm`]) |
//! | [`BandQuery`], [`GraphShape`] | what an algorithm's default band is given: the graph's size and arc weights, and how the run executes |
//! | [`algorithm::HostSolver`], [`algorithm::HostAlgorithm`] | the host backend's executor of any [`WorklistAlgorithm`] |
//! | [`SplitOps`], [`SplitFlags`] | the application's routing: `pack`, `unpack`, `on_send`, `on_receive` (keep / pass / duplicate / drop), `get_prio` |
//! | [`VertexValue`] | the packed item of label-correcting traversals: a vertex and a proposed value |
//! | [`local_worklist`] ([`WorklistProducer`], [`WorklistConsumer`]) | bounded multi-producer single-consumer circular buffer with prepend; overflow is an error, never a loss |
//! | [`TerminationCounter`] | the global count of outstanding items (protocol below) |
//! | [`PriorityCounter`], [`StepCounts`], [`StepOutcome`], [`defers`] | soft priority: the active and deferred counts, the epoch and its threshold (protocol below); the drivers use it for termination too |
//! | [`RingTransport`], [`RouterRing`] | device `d` sends to `d + 1 mod N` over the runtime's [`Router`](groute_core::router::Router) with the `Ring` policy |
//! | [`DeviceWorker`], [`run_workers`], [`ReceiveCounts`], [`RoundCounts`], [`Reexamined`] | the control plane, written once: one driver per device runs receive-split, expand, send, count over any backend's worker |
//! | [`DeviceProgram`], [`run`], [`WorklistOptions`], [`WorklistStats`] | the host engine and its interface, which the host executor implements (engine tests implement it directly) |
//! | [`SharedRun`], [`run_workers_shared`], [`run_shared`], [`PriorityCounter::held`] | one process's share of a ring spanning processes: counts of zero make the process idle, and the caller (the `groute-dist` crate's termination waves) ends the run |
//! | [`ShareSolver`], [`ShareOutput`] | the one interface of an executor of such a share, whatever the algorithm and backend ([`algorithm::HostSolver`], [`traversal::MinTraversalSolver`], PageRank's CUDA share) |
//! | [`RankCollectives`] | the collectives a frontier executor spanning processes needs: a sum of host words, an all-gather of one device buffer per process |
//! | [`DeviceParts`] | which parts of a partition a context's devices hold (every part, or one process's share), checked where a solver is made |
//! | [`traversal`] | the executors of min-combined algorithms, CUDA forms included (BFS, SSSP) |
//! | [`testing`] | test bodies written once for every traversal from one source (BFS, SSSP): [`testing::TraversalUnderTest`] says what differs |
//!
//! ## One device's loop
//!
//! ```text
//!  ring in --> SplitReceive (high-priority stream) --+--> local worklist --> expand round
//!                   |  on_receive: KEEP / PASS / DROP                          |
//!                   +-- PASS ----------------------> outgoing <-- PASS --- on_send (KEEP: prepend locally)
//!                                                        |
//!                                            one segment per round --> ring out (to d + 1)
//! ```
//!
//! 1. Drain the packets that arrived (waiting up to `idle_wait` only when idle): the split
//!    kernel applies `on_receive` to each item; kept items are pushed to the local worklist,
//!    passed ones appended to the outgoing buffer, dropped ones retired.
//! 2. Pop a batch (up to `max_batch`) and run one expand round; apply `on_send` to every
//!    produced item: kept ones are *prepended* to the local worklist (worked on next),
//!    passed ones appended to the outgoing buffer.
//! 3. Report the round to the termination counter (one atomic update).
//! 4. Send the outgoing buffer (remote and passed items together) as one segment; the
//!    transport packetizes it.
//!
//! ## Termination: the counting protocol
//!
//! One global signed count `C` of outstanding items, shared by every driver.
//!
//! - **Accounting rule.** Every step of a driver *consumes* some items and *produces* some:
//!   an expand round consumes its batch and produces its kept and sent items; a receive
//!   split consumes the received items and produces the kept and passed copies (a duplicate
//!   is two copies, a drop none). After the step has completed, the driver adds
//!   `produced - consumed` to `C` in **one** atomic update ([`TerminationCounter::report`]),
//!   and only **after** that update does any produced item become visible to a consumer on
//!   another device (it is sent after the update) or to a later step of its own (which runs
//!   on the same driver thread, after the update). The seeds are added before any driver
//!   starts, with one token item per device that runs an initial sweep
//!   ([`DeviceProgram::initial_sweep_len`]); the sweep consumes its token.
//! - **Invariant.** At every instant, `C` equals the number of items that have been
//!   reported as produced and not yet reported as consumed. Every item that exists (in a
//!   local worklist, in a batch being expanded, in an outgoing buffer, in flight on the ring,
//!   in a packet being split) was reported before anyone could see it, and is reported as
//!   consumed only in the same atomic update that reports everything it produced. Passing an
//!   item on changes nothing (it is consumed and produced once).
//! - **Why zero cannot come early.** Suppose `C` reaches 0 while some item `x` still exists.
//!   `x` is visible to some consumer, so `x` was reported as produced; it has not been
//!   reported as consumed (its consumer reports in the update that ends its step, and then
//!   `x` no longer exists). So `x` contributes 1 to `C`, and `C >= 1`: contradiction. Hence
//!   `C == 0` means no item exists anywhere, and since items are only produced by consuming
//!   items, none ever will: the update that reaches zero ends the run, exactly once.
//! - **Ending.** The driver whose update returned zero shuts the ring down; every other
//!   driver sees the done flag (or the closed ring) within `idle_wait` and exits. Any error
//!   aborts the run the same way, and the root error is returned. The counter records any
//!   item seen after the end ([`WorklistStats::late_items`]); the tests run many jittered
//!   schedules and assert it stays 0.
//!
//! ## Capacities
//!
//! A local worklist or an outgoing buffer that would overflow fails the run with
//! [`groute_core::Error::CapacityExceeded`] naming the setting to raise
//! (`wl_capacity (--wl-capacity)`, `send_capacity (--send-capacity)`; without
//! `--send-capacity` the worklist capacity bounds the sends too, and the error says so);
//! nothing is dropped. A capacity the host cannot allocate is
//! [`groute_core::Error::OutOfMemory`] naming the setting, not an abort.
//!
//! ## Progress
//!
//! An item that its owner keeps is passed on at most `devices - 2` times. The drivers count the
//! items sent onto the ring and passed on; more passes than that allows (or any send on one
//! device) means the split keeps items nowhere, and the run ends with
//! [`WorklistError::NoProgress`] instead of circling forever.
//!
//! ## Backends
//!
//! The driver ([`run_workers`]) never looks at the backend: a [`DeviceWorker`] owns each
//! device's storage and kernels. The host backend's worker runs a [`DeviceProgram`]'s Rust
//! closures on the device's executor streams (jitter shakes the schedule): for an algorithm,
//! the host executor's ([`algorithm::HostAlgorithm`]); the CUDA worker of
//! the min traversals ([`traversal`]) keeps the CSR, a full-length value array, a device
//! circular worklist (`kernels/include/worklist.cuh`) and rotating outgoing buffers in device
//! memory, runs NVRTC kernels, and reads one small counter block back per step.
//!
//! On one CUDA device the min traversals run **fused** by default
//! ([`traversal::FusedMode`], `--fused` / `--no-fused`): the whole round loop is one
//! cooperative persistent kernel whose rounds are separated by a grid-wide barrier, with no
//! driver, launch or read-back per round (`max_batch` does not apply: a round is the whole
//! worklist). Small batches run in a single-block mode (one block, levels separated by
//! `__syncthreads()`, no grid barrier: `fused_tuning.solo_max`), and soft priority runs inside the
//! kernel (the epochs below, with the threshold advanced by the barrier that finds the
//! worklist empty). Its block size (`fused_tuning.block`), how its blocks wait at the barrier
//! (`fused_tuning.barrier`: sleep between polls, acquire/release or fenced ordering, polling the
//! generation or the tagged release record), whether low-degree lists skip the filtering
//! load (`fused_tuning.direct_min`, or in the single-block mode only: `fused_tuning.solo_direct_min`) and
//! whether the single-block mode keeps its next level's items in shared memory
//! (`fused_tuning.solo_shared`, on by default) are tuning knobs that never change a result. The default launch
//! shape follows the graph's density: a sparse graph (many small levels) gets one block of
//! 1,024 threads per multiprocessor and the single-block mode, a dense one every resident
//! block of 256 threads and no single-block mode (`traversal::FUSED_SPARSE_MAX_AVERAGE_DEGREE`);
//! `examples/fused_barrier.rs` times the barrier alone. On several devices over sparse graphs
//! (and with `--fused`) the fused kernel runs device-driven where every pair of GPUs has peer
//! access (`traversal/fused_peer.rs`: one persistent kernel per device, items stored into the
//! next device's inbox, termination counted on the devices; `--fused-driver`), else under the
//! worker and driver above as one bounded launch of up to `fused_tuning.round_levels` levels per round
//! (`traversal/fused_rounds.rs`); dense graphs run one launch per level.
//!
//! ## Soft priority: the epoch protocol
//!
//! With [`WorklistOptions::prio_delta`] set, every kept item (produced by an expand round or
//! received) is split once more by its priority ([`SplitOps::get_prio`]; for the min
//! traversals, the vertex's current value: level or distance): below the current
//! *threshold* `T` it enters the local worklist, otherwise ([`defers`]) the device's
//! *low-priority list*. Remote items travel with their value and are split by their owner on
//! receipt. When no device has anything but deferred work left, the threshold advances and
//! every device re-examines its low list. The drivers share one [`PriorityCounter`]: under
//! one lock, two counts and an epoch.
//!
//! - `active`: items reported as produced and not consumed that are *not* deferred (in
//!   worklists, batches, outgoing buffers, on the ring, being split), plus re-examination
//!   tokens. Exactly the single count `C` above when priority is off.
//! - `deferred`: items in some device's low list.
//! - `epoch` and its threshold `T` (`prio_delta` at epoch 0; `u32::MAX`, which defers
//!   nothing, when priority is off).
//!
//! **Update rule.** A driver step reports `(produced, consumed, deferred_added,
//! deferred_taken)` in ONE update ([`PriorityCounter::report`]), after the step and before
//! anything it produced is visible elsewhere (the accounting rule above, unchanged). An item
//! the step defers is a consumed active item plus a deferred one, so it moves from `active`
//! to `deferred` in that same update. If the update brings `active` to 0:
//!
//! - with `deferred == 0`, the run is over ([`StepOutcome::Ended`]), exactly as before;
//! - otherwise the updater *advances*: `epoch += 1`, `T` rises by at least `prio_delta` and
//!   up to the end of the band holding the smallest priority deferred since the previous
//!   advance (each deferral reports its minimum; no empty epochs), and `active` is set to
//!   `N` *tokens*, one per device ([`StepOutcome::Advanced`]).
//!
//! **Re-examination.** At the top of its loop each driver compares the global epoch with the
//! one it has seen. On a new epoch it reads the threshold, takes its whole low list and
//! re-splits it ([`DeviceWorker::reexamine`]): items now below `T` move to the local worklist
//! (`produced`), the rest go back (`deferred_added`), stale ones (a newer copy of the vertex
//! was queued since) are dropped; it reports `(produced = moved, consumed = 1 token,
//! deferred_taken = all taken, deferred_added = still low)` in one update.
//!
//! **Why `active + deferred == 0` cannot come early.** The invariant of the single count
//! holds for the sum: every item in a low list was reported as deferred before it could be
//! re-examined (it is re-examined only by later steps of the same driver), every other item
//! as active before anyone could see it, and a token is an active item held by its device
//! until that device's re-examination. A step that defers, moves or drops items retires
//! exactly what it took in the update that reports what it made. So the argument above
//! applies to `active + deferred`: it is 0 only when no item, deferred or not, exists.
//!
//! **Why an advance cannot run twice before every device has re-examined.** An advance sets
//! `active = N`, one token per device, and a device consumes its token only in the update of
//! its re-examination, at most one per epoch it sees. `active` counts the unconsumed tokens,
//! so it cannot return to 0, and no further advance can happen, until all `N` devices have
//! re-examined under the new threshold. Hence each driver sees every epoch, one at a time.
//!
//! **Stale thresholds are safe.** A driver splits with the threshold of the last epoch it
//! has seen. After an advance it may run a step with the old, lower threshold: it only
//! defers more, every deferred item is counted, and since that driver has not consumed its
//! token yet, `active >= 1` until it re-examines, which covers those items too. Nothing is
//! lost and nothing ends early; the worst case is an item re-examined one epoch late. The
//! jump target is only a hint: any threshold above the previous one is correct, and each
//! advance makes progress (the smallest deferred item, as reported, falls below the new
//! threshold; at `u32::MAX` nothing is deferred).
//!
//! **Idle drivers.** The ring cannot wake a driver waiting for a packet, so with soft
//! priority on an idle driver waits at most 100 us before checking the epoch again (longer
//! where a process's drivers outnumber its cores several times, never past `idle_wait`).
//!
//! The host worker keeps the low list as a `Vec` of (vertex, value at deferral); the CUDA
//! worker of the traversals keeps it as a device buffer with its own append counter and
//! overflow word in the control block, re-examined by a kernel. Workers that never defer
//! (PageRank) ignore the threshold, and with priority off the counter behaves exactly like
//! [`TerminationCounter`] (which stays available to callers that want the single count).

pub mod algorithm;
mod band;
mod crowded_wait;
mod device_parts;
mod driver;
mod engine;
mod error;
mod host_worker;
mod local;
mod member_count;
mod members;
mod part;
mod priority_counter;
mod rank_collectives;
mod ring;
mod share;
mod split;
mod sync;
mod termination;
pub mod testing;
pub mod traversal;
mod traversal_error;

pub use algorithm::{AtomicValue, Combine, Start, WorklistAlgorithm};
pub use band::{BandQuery, GraphShape};
pub use device_parts::DeviceParts;
pub use driver::{
    DeviceWorker, MAX_OUTGOING_BUFFERS, Outgoing, ReceiveCounts, Reexamined, RoundCounts,
    SharedRun, check_another_outgoing_buffer, run_workers, run_workers_on, run_workers_shared,
};
pub use engine::{
    DeviceProgram, DeviceStats, LocalOf, PackedOf, WorklistOptions, WorklistStats, run, run_shared,
};
pub use error::WorklistError;
pub use local::{WorklistConsumer, WorklistProducer, local_worklist};
pub use member_count::MemberCount;
pub use part::{CsrPtrs, DeviceCsr, HostCsrRows};
pub use priority_counter::{PriorityCounter, PriorityEpoch, StepCounts, StepOutcome, defers};
pub use rank_collectives::{
    OneProcess, RankCollectives, all_ready, partition_shape, peers_failed, process_ranges,
    sum_with_shape,
};
pub use ring::{RingTransport, RouterRing};
pub use share::{ShareOutput, ShareSolver, ShareValue};
pub use split::{SplitFlags, SplitOps, VertexValue};
pub use termination::TerminationCounter;
pub use traversal_error::{TraversalError, TraversalName};
