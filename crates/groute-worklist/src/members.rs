//! Device-driven execution on the host backend: one persistent *member* per device for the
//! whole run, with no driver between rounds. The members run the protocol of the CUDA
//! device-driven traversal (`docs/device-protocol.md`, "Device-driven traversal members" and
//! "Termination of the members") with host threads and atomics in place of persistent kernels
//! and peer stores, so that every execution mode runs, and is tested, on the host backend.
//!
//! - **Members.** Member `d` is a thread of its own for the whole run (spawned fallibly). It
//!   loops: take what was published into its inbox and split it ([`SplitOps::on_receive`]),
//!   expand a batch of its local worklist ([`DeviceProgram::expand`], on rayon's threads) and
//!   split what it produced ([`SplitOps::on_send`]), publish what it passes on. Local items
//!   are expanded in the order they were kept (first in, first out), a batch at most
//!   [`WorklistOptions::max_batch`] items.
//! - **The inbox ring.** Member `d` publishes into member `d + 1 mod N`'s inbox, one batch
//!   at a time; a member that receives an item it does not own passes it on when the split
//!   says so. An inbox holding [`WorklistOptions::send_capacity`] items or more takes no new
//!   batch: the sender keeps its sends and retries (it stays counted in, see below), while
//!   every member keeps draining its own inbox, so a full inbox delays and never deadlocks.
//! - **Termination: one count** ([`MemberCount`]) of the members counted in plus the items
//!   published and not yet taken. Every member is counted in before any starts; a member
//!   adds the items it publishes before they are visible; it takes received items out of the
//!   count as it takes them (an idle member counts itself back in with the same atomic); it
//!   counts itself out only with an empty worklist, an empty low list, nothing received and
//!   its sends published. While any item exists, the count is positive (the item's member is
//!   counted in, or the item itself is counted), and once it is 0 nothing can raise it: only
//!   a counted-in member publishes. So 0 means done, and every member sees it.
//! - **Soft priority** runs per member, as on the GPU: kept items at or above the member's
//!   threshold wait in its low list; with nothing else to do, the member advances its own
//!   threshold (by at least the band, up to the band of the smallest deferred priority) and
//!   re-examines the list, dropping the items a newer copy superseded. No agreement is needed:
//!   the priority orders the work and never decides a result.
//! - **Failures.** A member that fails (a capacity exceeded, the time limit, a panicking
//!   kernel) raises the run's failure flag; the others leave at their next step and the run
//!   returns the first failure. Idle members poll with a backoff, so nothing spins a core
//!   flat out and nothing waits without checking the flag and the time limit; past the
//!   backoff they sleep between polls, longer where the members outnumber the cores.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crossbeam::utils::Backoff;
use groute_core::{Context, Error};

use crate::crowded_wait::crowded_wait;
use crate::engine::{
    DeviceProgram, DeviceStats, LocalOf, PackedOf, WorklistOptions, WorklistStats,
};
use crate::error::WorklistError;
use crate::host_worker::{SplitOut, split_batch};
use crate::member_count::MemberCount;
use crate::priority_counter::defers;
use crate::split::SplitOps;

/// The setting that bounds a member's local worklist and low list, named when they overflow.
const WL_SETTING: &str = "wl_capacity (--wl-capacity)";

/// How long an idle member sleeps between polls once its backoff has run out of spins and
/// yields, where the members are at most [`MEMBERS_PER_CORE`] per core: longer past that
/// ([`crowded_wait`]), else many virtual devices on a small host (256 on 2 cores) spend the
/// cores waking idle members, and the members with work wait for them.
const IDLE_SLEEP: Duration = Duration::from_micros(50);

/// Members per core up to which an idle one sleeps [`IDLE_SLEEP`].
const MEMBERS_PER_CORE: usize = 4;

/// Runs `programs[d]` on device `d` of `context` (host backend) as persistent members from
/// `seeds[d]` until no member holds work (the module's protocol). The statistics count every
/// item each member received, passed, dropped, deferred and published; `segments_sent` counts
/// the batches published.
pub(crate) fn run_device_driven<P: DeviceProgram>(
    context: &Context,
    programs: &[Arc<P>],
    seeds: Vec<Vec<LocalOf<P>>>,
    options: &WorklistOptions,
) -> Result<WorklistStats, WorklistError> {
    let n = context.num_devices();
    if programs.len() != n || seeds.len() != n {
        return Err(Error::invalid(
            "device-driven host run",
            format!(
                "{} programs and {} seed lists for {n} devices",
                programs.len(),
                seeds.len()
            ),
            "one program and one seed list per device",
        )
        .into());
    }
    if context.devices().iter().any(|d| !d.stream().is_host()) {
        return Err(Error::Unsupported {
            operation: "host members on a CUDA device (device-driven runs there are persistent \
                        kernels)",
            backend: "cuda",
        }
        .into());
    }
    let ring = Ring::new(n, options);
    let started = Instant::now();
    let outcomes: Vec<Result<DeviceStats, WorklistError>> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(n);
        let mut outcomes = Vec::new();
        for (d, (program, seed)) in programs.iter().zip(seeds).enumerate() {
            let ring = &ring;
            let spawned = std::thread::Builder::new()
                .name(format!("groute-member-{d}"))
                .spawn_scoped(scope, move || {
                    let run = catch_unwind(AssertUnwindSafe(|| {
                        Member::new(d, &**program, seed, ring, options)?.run()
                    }));
                    let outcome = run.unwrap_or_else(|_| {
                        Err(Error::DeviceFailed {
                            device: d,
                            reason: "a device-driven host member panicked".into(),
                        }
                        .into())
                    });
                    if outcome.is_err() {
                        ring.fail();
                    }
                    outcome
                });
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(e) => {
                    // The members already running leave at their next step.
                    ring.fail();
                    outcomes.push(Err(Error::invalid(
                        "device-driven host run",
                        format!("spawning member {d}'s thread failed: {e}"),
                        "run with fewer devices, or host-driven (Execution::HostDriven)",
                    )
                    .into()));
                    break;
                }
            }
        }
        let mut joined: Vec<_> = handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Error::DeviceFailed {
                        device: 0,
                        reason: "a device-driven host member's thread panicked".into(),
                    }
                    .into())
                })
            })
            .collect();
        joined.append(&mut outcomes);
        joined
    });
    let elapsed = started.elapsed();
    let mut devices = Vec::with_capacity(n);
    let mut first_error = None;
    for outcome in outcomes {
        match outcome {
            Ok(stats) => devices.push(stats),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let late_items = ring
        .inboxes
        .iter()
        .map(|inbox| inbox.len.load(Ordering::Acquire) as u64)
        .sum();
    Ok(WorklistStats {
        epochs: devices.iter().map(|d| d.epochs).max().unwrap_or(0),
        devices,
        elapsed,
        late_items,
        device_driven: true,
        ..WorklistStats::default()
    })
}

/// What the members share: the inboxes, the termination count, the failure flag.
struct Ring<K> {
    /// `inboxes[d]`: what member `d - 1 mod N` published to member `d`.
    inboxes: Vec<Inbox<K>>,
    /// Members counted in plus items published and not yet taken.
    count: MemberCount,
    /// Set by the first member that fails; the others leave.
    failed: AtomicBool,
    /// An inbox holding this many items takes no new batch.
    inbox_capacity: usize,
    /// The run's time limit and when it runs out.
    limit: Option<(Duration, Instant)>,
    /// An idle member's sleep between polls ([`IDLE_SLEEP`], longer on crowded cores).
    idle_sleep: Duration,
}

impl<K> Ring<K> {
    fn new(n: usize, options: &WorklistOptions) -> Self {
        Ring {
            idle_sleep: crowded_wait(
                IDLE_SLEEP,
                n,
                groute_core::sync::available_cores(),
                MEMBERS_PER_CORE,
            ),
            inboxes: (0..n).map(|_| Inbox::default()).collect(),
            count: MemberCount::new(n),
            failed: AtomicBool::new(false),
            inbox_capacity: options.send_capacity.unwrap_or(usize::MAX).max(1),
            limit: options
                .time_limit
                .map(|limit| (limit, Instant::now() + limit)),
        }
    }

    fn fail(&self) {
        self.failed.store(true, Ordering::Release);
    }

    fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }
}

/// One member's inbox: the batches published to it, not yet taken.
struct Inbox<K> {
    batches: Mutex<Vec<Vec<K>>>,
    /// Items in `batches` (read without the lock for the capacity check).
    len: AtomicUsize,
}

impl<K> Default for Inbox<K> {
    fn default() -> Self {
        Inbox {
            batches: Mutex::new(Vec::new()),
            len: AtomicUsize::new(0),
        }
    }
}

impl<K> Inbox<K> {
    fn publish(&self, batch: Vec<K>) {
        let k = batch.len();
        let mut batches = self.batches.lock().unwrap_or_else(PoisonError::into_inner);
        batches.push(batch);
        self.len.fetch_add(k, Ordering::Release);
    }

    fn take(&self) -> Vec<Vec<K>> {
        if self.len.load(Ordering::Acquire) == 0 {
            return Vec::new();
        }
        let mut batches = self.batches.lock().unwrap_or_else(PoisonError::into_inner);
        let taken = std::mem::take(&mut *batches);
        let k: usize = taken.iter().map(Vec::len).sum();
        self.len.fetch_sub(k, Ordering::Release);
        taken
    }
}

/// One device's persistent member.
struct Member<'a, P: DeviceProgram> {
    device: usize,
    program: &'a P,
    ops: P::Ops,
    ring: &'a Ring<PackedOf<P>>,
    local: VecDeque<LocalOf<P>>,
    /// Deferred items with their priority when deferred.
    low: Vec<(LocalOf<P>, u32)>,
    /// Items to publish into the next member's inbox.
    outbox: Vec<PackedOf<P>>,
    /// Kept items whose priority is not below this are deferred (`u32::MAX`: none).
    threshold: u32,
    /// The soft-priority band (0: off).
    band: u32,
    wl_capacity: usize,
    max_batch: usize,
    counted_in: bool,
    stats: DeviceStats,
}

impl<'a, P: DeviceProgram> Member<'a, P> {
    fn new(
        device: usize,
        program: &'a P,
        seed: Vec<LocalOf<P>>,
        ring: &'a Ring<PackedOf<P>>,
        options: &WorklistOptions,
    ) -> Result<Self, WorklistError> {
        let band = options.prio_delta.unwrap_or(0);
        let wl_capacity = options
            .wl_capacity
            .unwrap_or_else(|| program.capacity_hint())
            .max(1);
        if seed.len() > wl_capacity {
            return Err(overflow(wl_capacity, seed.len()).into());
        }
        Ok(Member {
            device,
            program,
            ops: program.split_ops(),
            ring,
            local: VecDeque::from(seed),
            low: Vec::new(),
            outbox: Vec::new(),
            threshold: if band == 0 { u32::MAX } else { band },
            band,
            wl_capacity,
            max_batch: options.max_batch.max(1),
            counted_in: true,
            stats: DeviceStats {
                cut_arcs_traversed: program.take_cut_arcs().map(|_| 0),
                ..DeviceStats::default()
            },
        })
    }

    /// The member's loop, until the count reaches zero or a member fails.
    fn run(mut self) -> Result<DeviceStats, WorklistError> {
        let sweep = self.program.initial_sweep_len();
        if sweep > 0 {
            let produced = self.program.expand_initial_sweep();
            self.stats.rounds += 1;
            self.stats.items_processed += sweep;
            self.count_cut_arcs();
            self.split_produced(produced)?;
        }
        let backoff = Backoff::new();
        loop {
            if self.ring.failed() {
                return Ok(self.stats);
            }
            self.check_time()?;
            let received = self.receive()?;
            let expanded = self.expand()?;
            if !expanded && received == 0 && !self.low.is_empty() {
                self.advance();
            }
            self.publish();
            if received > 0 || expanded {
                backoff.reset();
                continue;
            }
            if !self.local.is_empty() || !self.low.is_empty() || !self.outbox.is_empty() {
                // Re-examined, or a full inbox ahead: still counted in, still working.
                backoff.snooze();
                continue;
            }
            if self.ring.count.count_out(&mut self.counted_in) {
                return Ok(self.stats);
            }
            if backoff.is_completed() {
                std::thread::sleep(self.ring.idle_sleep);
            } else {
                backoff.snooze();
            }
        }
    }

    fn check_time(&self) -> Result<(), WorklistError> {
        match self.ring.limit {
            Some((limit, deadline)) if Instant::now() >= deadline => Err(WorklistError::TimedOut {
                limit,
                outstanding: self.ring.count.pending() as i64,
            }),
            _ => Ok(()),
        }
    }

    /// Takes and splits what was published to this member; how many items.
    fn receive(&mut self) -> Result<u64, WorklistError> {
        let batches = self.ring.inboxes[self.device].take();
        let k: u64 = batches.iter().map(|b| b.len() as u64).sum();
        if k == 0 {
            return Ok(0);
        }
        // Out of the count as they are taken; an idle member counts itself back in with the
        // same update.
        self.ring.count.take(k, &mut self.counted_in);
        self.stats.items_received += k;
        for batch in batches {
            let len = batch.len() as u64;
            let split = split_batch(&self.ops, batch, true, self.threshold);
            let survived = (split.keep.len() + split.low.len() + split.send.len()) as u64;
            self.stats.items_passed += split.send.len() as u64;
            self.stats.items_dropped += len.saturating_sub(survived);
            self.absorb(split)?;
        }
        Ok(k)
    }

    /// Expands a batch of the local worklist; whether there was one.
    fn expand(&mut self) -> Result<bool, WorklistError> {
        if self.local.is_empty() {
            return Ok(false);
        }
        let take = self.local.len().min(self.max_batch);
        let batch: Vec<_> = self.local.drain(..take).collect();
        let produced = self.program.expand(&batch);
        self.stats.rounds += 1;
        self.stats.items_processed += take as u64;
        self.count_cut_arcs();
        self.split_produced(produced)?;
        Ok(true)
    }

    fn count_cut_arcs(&mut self) {
        if let (Some(total), Some(cut)) = (
            self.stats.cut_arcs_traversed.as_mut(),
            self.program.take_cut_arcs(),
        ) {
            *total += cut;
        }
    }

    /// Splits what an expansion produced: kept, deferred, or to send (a remote update).
    fn split_produced(&mut self, produced: Vec<LocalOf<P>>) -> Result<(), WorklistError> {
        self.stats.items_produced += produced.len() as u64;
        let packed = produced.into_iter().map(|l| self.ops.pack(l)).collect();
        let split = split_batch(&self.ops, packed, false, self.threshold);
        self.stats.remote_updates += split.send.len() as u64;
        self.absorb(split)
    }

    /// Kept items to the back of the local worklist, deferred ones to the low list, passed
    /// ones to the outbox; the worklist and the low list together hold at most the capacity.
    fn absorb(&mut self, split: SplitOut<LocalOf<P>, PackedOf<P>>) -> Result<(), WorklistError> {
        let held = self.local.len() + self.low.len() + split.keep.len() + split.low.len();
        if held > self.wl_capacity {
            return Err(overflow(self.wl_capacity, held).into());
        }
        self.local
            .try_reserve(split.keep.len())
            .map_err(|_| out_of_memory(split.keep.len() * size_of::<LocalOf<P>>()))?;
        self.local.extend(split.keep);
        self.stats.items_deferred += split.low.len() as u64;
        self.low.extend(split.low);
        self.outbox.extend(split.send);
        Ok(())
    }

    /// With nothing else to do: raises the threshold by at least a band, up to the band of
    /// the smallest deferred priority, and re-examines the low list.
    fn advance(&mut self) {
        if self.band == 0 {
            // Nothing is deferred with priority off; never reached.
            self.local.extend(self.low.drain(..).map(|(item, _)| item));
            return;
        }
        let smallest = self.low.iter().map(|&(_, p)| p).min().unwrap_or(0);
        let band_end = (smallest / self.band)
            .saturating_add(1)
            .saturating_mul(self.band);
        self.threshold = self.threshold.saturating_add(self.band).max(band_end);
        self.stats.epochs += 1;
        let taken = std::mem::take(&mut self.low);
        for (item, deferred_prio) in taken {
            if self.ops.superseded(&item, deferred_prio) {
                self.stats.items_stale_dropped += 1;
                continue;
            }
            let prio = self.ops.get_prio(&item);
            if defers(prio, self.threshold) {
                self.low.push((item, prio));
            } else {
                self.local.push_back(item);
            }
        }
    }

    /// Publishes the outbox into the next member's inbox, unless that inbox is full.
    fn publish(&mut self) {
        if self.outbox.is_empty() {
            return;
        }
        let next = &self.ring.inboxes[(self.device + 1) % self.ring.inboxes.len()];
        if next.len.load(Ordering::Acquire) >= self.ring.inbox_capacity {
            return;
        }
        let batch = std::mem::take(&mut self.outbox);
        // Counted before it is visible to the receiver.
        self.ring.count.publish(batch.len() as u64);
        self.stats.items_sent += batch.len() as u64;
        self.stats.segments_sent += 1;
        next.publish(batch);
    }
}

fn overflow(capacity: usize, needed: usize) -> Error {
    Error::CapacityExceeded {
        what: "device-driven host member's worklist and low list".into(),
        capacity: capacity as u64,
        needed: needed as u64,
        setting: WL_SETTING,
    }
}

fn out_of_memory(bytes: usize) -> Error {
    Error::OutOfMemory {
        bytes,
        location: "the host, for the worklist of a device-driven host member (a smaller \
                   graph, more devices, or a machine with more memory)"
            .into(),
        source: None,
    }
}
