//! # groute-worklist: the distributed worklist
//!
//! All-to-all work distribution over one ring of devices, a local worklist per device, and
//! termination detection (Ben-Nun et al., ACM TOPC 2020, sections 4.3-4.5).
//!
//! | construct | what it is |
//! |---|---|
//! | [`SplitOps`], [`SplitFlags`] | the application's routing: `pack`, `unpack`, `on_send`, `on_receive` (keep / pass / duplicate / drop), `get_prio` |
//! | [`VertexValue`] | the packed item of label-correcting traversals: a vertex and a proposed value |
//! | [`local_worklist`] ([`WorklistProducer`], [`WorklistConsumer`]) | bounded multi-producer single-consumer circular buffer with prepend; overflow is an error, never a loss |
//! | [`TerminationCounter`] | the global count of outstanding items (protocol below) |
//! | [`RingTransport`], [`RouterRing`] | device `d` sends to `d + 1 mod N` over the runtime's [`Router`](groute_core::router::Router) with the `Ring` policy |
//! | [`DeviceWorker`], [`run_workers`], [`ReceiveCounts`], [`RoundCounts`] | the control plane, written once: one driver per device runs receive-split, expand, send, count over any backend's worker |
//! | [`DeviceProgram`], [`run`], [`WorklistOptions`], [`WorklistStats`] | host-kernel programs (the host backend's worker) |
//! | [`traversal`] | the generic min-label traversal (BFS, SSSP plug in their `relax`) |
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
//! (`wl_capacity (--wl-capacity)`, `send_capacity (--send-capacity)`); nothing is dropped.
//!
//! ## Backends
//!
//! The driver ([`run_workers`]) never looks at the backend: a [`DeviceWorker`] owns each
//! device's storage and kernels. The host backend's worker runs a [`DeviceProgram`]'s Rust
//! closures on the device's executor streams (jitter shakes the schedule); the CUDA worker of
//! the min traversals ([`traversal`]) keeps the CSR, a full-length value array, a device
//! circular worklist (`kernels/include/worklist.cuh`) and rotating outgoing buffers in device
//! memory, runs NVRTC kernels, and reads one small counter block back per step.
//!
//! ## Next: soft priority (designed, not built)
//!
//! `get_prio` splits produced and received items into the current high-priority band
//! (`prio < threshold`) and a deferred low-priority list per device. A device with no
//! high-priority work left reports "idle at threshold `t`" through a second counter of items
//! *below the threshold*, kept with the same accounting rule; when that count is zero and no
//! device is mid-step (an epoch word advanced by compare-and-swap), the threshold advances by
//! `prio_delta` and each device re-splits its deferred list. Deferred items stay counted in
//! `C`, so termination is unchanged.

mod driver;
mod engine;
mod error;
mod host_worker;
mod local;
mod ring;
mod split;
mod termination;
pub mod traversal;

pub use driver::{DeviceWorker, Outgoing, ReceiveCounts, RoundCounts, run_workers, run_workers_on};
pub use engine::{
    DeviceProgram, DeviceStats, LocalOf, PackedOf, WorklistOptions, WorklistStats, run,
};
pub use error::WorklistError;
pub use local::{WorklistConsumer, WorklistProducer, local_worklist};
pub use ring::{RingTransport, RouterRing};
pub use split::{SplitFlags, SplitOps, VertexValue};
pub use termination::TerminationCounter;
