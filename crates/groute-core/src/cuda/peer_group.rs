//! Device-driven runs on several GPUs ([`PeerGroup`]): one persistent kernel per device, the
//! devices storing straight into each other's memory and synchronising through a mailbox in
//! device 0's memory (`kernels/include/peer_group.cuh`: `peer_allreduce_sum`, an all-reduce of
//! a few u64 per device that is also a barrier; its header says why it is race-free). The host
//! only launches the members and reads their results at the end.
//!
//! Requirements ([`PeerGroup::check`]): the CUDA backend, distinct physical GPUs (two persistent
//! kernels on one GPU need not be resident at once, so one could wait for the other forever)
//! and peer access between every pair (groute-core enables it where the hardware allows, e.g.
//! over NVLink). Algorithms fall back to their host-driven mode where it does not hold.
//!
//! **Members sharing a GPU** ([`GpuSharing::Split`], [`PeerGroup::check_sharing`]): a caller
//! that sizes each member's grid to its share of the GPU ([`PeerGroup::members_on_gpu`]) may
//! place several members on one GPU (virtual devices, e.g. two devices of a context on one
//! GPU). That runs the whole device-driven protocol, crossings included, on fewer GPUs than
//! members. Each member has a fraction of a GPU and its peer stores stay in that GPU's
//! memory, so it is no faster than one member; but it is faster than host-driven rounds on
//! the same members, so the algorithms' automatic choices take it
//! ([`PeerGroup::auto_device_driven`]). CUDA does not promise that kernels of one
//! GPU run at once even when they fit; the start gate below cancels and retries a start whose
//! members are not all running, and the group's timeout ends the retries with an error, so
//! such a run never hangs. Clusters of separately launched grids do not always pack a GPU
//! fully: two members whose clusters would together fill nearly every multiprocessor may never
//! start together, while one cluster fewer each lets them ([`member_share`] keeps that spare).
//!
//! A member that fails to launch sets the abort word ([`PeerGroup::set_abort`]) so the others
//! leave their wait; a member that waits longer than the timeout gives up and marks the mailbox
//! failed so the others leave at once. Nothing hangs: every wait is bounded.
//!
//! **Every member running, or none** (the start gate of `peer_group.cuh`): a member kernel
//! counts itself in as it starts, and its first exchange completes only once every member has.
//! A member whose peers have not all started within [`PEER_START_WINDOW`] of reaching that
//! exchange cancels the start, and every member stops at its first exchange with
//! [`PEER_CANCELLED`]; [`PeerGroup::start_cancelled`] then tells the host to reset every
//! member's state and launch them all again ([`PeerGroup::run_started`] does the loop). What a
//! member did before its first exchange is discarded by that reset. Without it, a member
//! waiting for a peer that has not started can keep that peer from starting at all: its kernel
//! keeps its GPU busy, and a driver call of another host thread that waits for that GPU (a
//! free, a module load, a synchronous copy) can hold the host's launch of the peer behind it
//! until the exchange timeout (device-driven runs in parallel threads of one process fail
//! that way where the same runs one at a time pass).
//!
//! **One run at a time per process** ([`PeerGroup::begin_run`]). Two device-driven runs on the
//! same GPUs at once can deadlock: run A's member fills GPU 0 and waits for its member on
//! GPU 1, which cannot start because run B's member fills GPU 1 waiting for its own member on
//! GPU 0 (tests run in parallel threads, for one). Every run therefore holds a process-wide
//! lock from its reset to the end of its last member; runs of different processes on the same
//! GPUs are not ordered, and end with a timeout error at worst.
//!
//! **Nor beside other multi-device work of the process** ([`PeerGroup::share_gpus`]). A
//! host-driven run on several GPUs makes one device's stream wait for another device's work
//! (cross-device events): while a member fills GPU 0, that work waits behind it, and the
//! member that should start on GPU 1 can wait behind the cross-device wait (a hardware queue
//! shared by both streams, or the context synchronisation of a lazily loaded kernel), so the
//! member on GPU 0 waits for it until the group's timeout (tests whose threads run
//! host-driven and device-driven runs at once fail that way). Such work
//! holds the shared side of the same lock ([`PeerGroup::share_gpus`]), device-driven runs the
//! exclusive side. Holders of the shared side: `groute_worklist::run_workers_on` on several CUDA
//! devices (every host-driven worklist run) and the algorithm crates' other host-driven
//! multi-device drivers. Other multi-device work (links a program drives itself, algorithms
//! that do not take it) does not take it: a program that runs such work beside a device-driven
//! run takes it itself.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use super::launch::DevicePtr;
use crate::backend::{BackendKind, RawMemory};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::memory::Buffer;

mod probe;

pub use probe::{PeerProbe, peer_group_probe, peer_start_gate_probe};

/// Devices a group may hold (`groute::PEER_MAX_DEVICES`).
pub const PEER_MAX_DEVICES: usize = 8;
/// Values one device contributes to one exchange (`groute::PEER_MAX_VALUES`).
pub const PEER_MAX_VALUES: usize = 8;
/// Words (u64) of the mailbox (`groute::PEER_MAILBOX_WORDS`).
pub const PEER_MAILBOX_WORDS: usize = 32 + 2 * PEER_MAX_DEVICES * PEER_MAX_VALUES;
/// Words (u64) of a postbox (`groute::POST_WORDS`, `kernels/include/peer_post.cuh`): two
/// parities of one 128-byte slot per sender.
pub const PEER_POSTBOX_WORDS: usize = 2 * PEER_MAX_DEVICES * 16;

/// Whether the members of a device-driven run may share a physical GPU (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GpuSharing {
    /// Every member on its own GPU (the requirement of [`PeerGroup::check`]).
    #[default]
    Distinct,
    /// Members may share a GPU, each launched on its share of it
    /// ([`PeerGroup::members_on_gpu`] members per GPU).
    Split,
}

/// Of `max` blocks (or clusters) of a kernel resident at once on one GPU, the most that one of
/// `members` members sharing the GPU ([`GpuSharing::Split`]) may launch so that all of them
/// are resident together: `max` for a GPU of its own, else one less than an equal share (a
/// spare: clusters of separate grids do not always pack a GPU fully, module docs). 0 when
/// the share holds none.
pub fn member_share(max: u32, members: usize) -> u32 {
    match u32::try_from(members) {
        Ok(0 | 1) => max,
        Ok(k) => (max / k).saturating_sub(1),
        Err(_) => 0,
    }
}

/// The cooperative grid of a member's persistent kernel `function` in blocks of `block`
/// threads: [`member_share`] of its blocks resident at once on the GPU, which `members`
/// members of the run share (1: a GPU of its own). When the share holds no block, an error on
/// `setting` (the grid it sizes, e.g. "fused kernel grid") naming the kernel, `fallback`
/// (the option that runs without it, e.g. a host-driven mode) and, on a shared GPU, fewer
/// devices.
pub fn member_grid(
    function: &super::CudaFunction,
    setting: &'static str,
    block: u32,
    members: usize,
    fallback: &str,
) -> Result<u32> {
    let grid = member_share(function.max_resident_grid(block, 0)?, members);
    if grid > 0 {
        return Ok(grid);
    }
    let kernel = function.name();
    let fix = if members > 1 {
        format!(
            "needs at least one resident block of {kernel} ({block} threads) on this member's \
             share of its GPU (1/{members}); use {fallback}, or fewer devices"
        )
    } else {
        format!("needs at least one resident block of {kernel} ({block} threads); use {fallback}")
    };
    Err(Error::invalid(setting, "0 blocks", fix))
}

/// How the members of a device-driven run exchange values (the all-reduce that is also their
/// barrier).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PeerExchange {
    /// `peer_allreduce_sum` (`peer_group.cuh`): an arrival atomic on device 0's mailbox,
    /// polled over the link by the other devices.
    #[default]
    Mailbox,
    /// `peer_post_allreduce_sum` (`peer_post.cuh`): values and a tag posted into every
    /// peer's postbox ([`PEER_POSTBOX_WORDS`] in its memory), each device polling its own.
    Posted,
}

/// How long a member waits at its first exchange for the others to start before it cancels
/// the start (`groute::PEER_START_WINDOW_NS`; see the module docs).
pub const PEER_START_WINDOW: Duration = Duration::from_millis(10);

/// The start word of the mailbox (`groute::PEER_START`) and its verdict bits.
const PEER_START: usize = 8;
const PEER_START_CANCELLED: u64 = 1 << 63;

/// How often [`PeerGroup::wait_members`] polls the members' events while a time limit runs.
const PEER_WAIT_POLL: Duration = Duration::from_micros(20);

/// `groute::PeerStatus`: what a member's exchange returned.
pub const PEER_OK: u32 = 0;
/// The host's abort word or another member's failure ended the wait.
pub const PEER_ABORTED: u32 = 1;
/// A peer did not arrive within the timeout.
pub const PEER_TIMED_OUT: u32 = 2;
/// The start gate was cancelled (a member did not start in time): the host starts the run
/// again ([`PeerGroup::run_started`]).
pub const PEER_CANCELLED: u32 = 3;

/// The kernel parameter `groute::PeerGroup` (one by-value parameter, `kernels/include/abi.h`):
/// the mailbox, the abort word, this member's rank, the group's size and the timeout.
pub use groute_kernels::abi::PeerGroup as PeerArgs;

/// The cross-device mailbox and abort word of a context's devices (see the module docs).
pub struct PeerGroup {
    context: Context,
    mailbox: Buffer<u64>,
    abort: Buffer<u32>,
    timeout: Duration,
}

impl std::fmt::Debug for PeerGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerGroup")
            .field("devices", &self.context.num_devices())
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl PeerGroup {
    /// Why `context` cannot run a device-driven multi-device kernel, or `Ok` when it can:
    /// [`PeerGroup::check_sharing`] with every member on its own GPU.
    pub fn check(context: &Context) -> Result<()> {
        Self::check_sharing(context, GpuSharing::Distinct)
    }

    /// Why `context` cannot run a device-driven multi-device kernel whose members share GPUs
    /// as `sharing` allows, or `Ok` when it can.
    pub fn check_sharing(context: &Context, sharing: GpuSharing) -> Result<()> {
        let unsupported = |reason: String| Err(Error::PeerGroupUnsupported { reason });
        if context.backend_kind() != BackendKind::Cuda {
            return unsupported("the CUDA backend (this context runs on the host backend)".into());
        }
        let devices = context.devices();
        if devices.len() > PEER_MAX_DEVICES {
            return unsupported(format!(
                "at most {PEER_MAX_DEVICES} devices (the context has {})",
                devices.len()
            ));
        }
        for (i, a) in devices.iter().enumerate() {
            for b in &devices[i + 1..] {
                if a.physical() == b.physical() {
                    if sharing == GpuSharing::Split {
                        continue;
                    }
                    return unsupported(format!(
                        "distinct physical GPUs (devices {} and {} share GPU {:?}; two persistent kernels on one GPU need not run at once)",
                        a.id().0,
                        b.id().0,
                        a.physical()
                    ));
                }
                let backend = context.backend();
                if !backend.can_access_peer(a.physical(), b.physical())
                    || !backend.can_access_peer(b.physical(), a.physical())
                {
                    return unsupported(format!(
                        "peer access between every pair of GPUs (devices {} and {} have none)",
                        a.id().0,
                        b.id().0
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether [`PeerGroup::check`] passes (for modes that fall back when it does not).
    pub fn supported(context: &Context) -> bool {
        Self::check(context).is_ok()
    }

    /// Whether an algorithm's automatic driver choice runs `context`'s devices device-driven:
    /// [`PeerGroup::check_sharing`] with [`GpuSharing::Split`] passes (one device, distinct
    /// GPUs with peer access, or members sharing GPUs, each on its share). Members sharing a
    /// GPU are not promised to run at once, but the start gate retries a start that finds
    /// them not all running and ends in an error at the group's timeout, never a hang (module
    /// docs); the algorithms' docs give the measurements behind the choice.
    pub fn auto_device_driven(context: &Context) -> bool {
        Self::check_sharing(context, GpuSharing::Split).is_ok()
    }

    /// Members of the group on the GPU of member `member` (itself included; 1 where it has
    /// its GPU to itself, 0 for no such member): a member's share of its GPU is this fraction
    /// of the blocks resident at once (see the module docs).
    pub fn members_on_gpu(&self, member: usize) -> usize {
        let devices = self.context.devices();
        devices.get(member).map_or(0, |own| {
            devices
                .iter()
                .filter(|d| d.physical() == own.physical())
                .count()
        })
    }

    /// The mailbox (on device 0) and the abort word for `context`'s devices; errors as
    /// [`PeerGroup::check`].
    pub fn new(context: &Context) -> Result<PeerGroup> {
        Self::new_sharing(context, GpuSharing::Distinct)
    }

    /// [`PeerGroup::new`] for members that may share GPUs as `sharing` allows; errors as
    /// [`PeerGroup::check_sharing`]. The caller sizes each member's grid to its share
    /// ([`PeerGroup::members_on_gpu`]).
    pub fn new_sharing(context: &Context, sharing: GpuSharing) -> Result<PeerGroup> {
        Self::check_sharing(context, sharing)?;
        let group = PeerGroup {
            context: context.clone(),
            mailbox: context.devices()[0].alloc::<u64>(PEER_MAILBOX_WORDS)?,
            abort: context.alloc_mapped::<u32>(1)?,
            timeout: context.stall_timeout().unwrap_or(Duration::MAX),
        };
        group.reset()?;
        Ok(group)
    }

    /// Members (the context's devices).
    pub fn size(&self) -> usize {
        self.context.num_devices()
    }

    /// Starts a run: waits for any other device-driven run of this process to end (see the
    /// module docs), then zeroes the mailbox and clears the abort word. Hold the returned guard
    /// until every member of the run has completed.
    pub fn begin_run(&self) -> Result<PeerRun> {
        // A run that panicked left no kernel behind it (its members were waited for or never
        // launched), so a poisoned lock is still a valid one.
        let guard = GPU_RUNS
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.reset()?;
        Ok(PeerRun { _guard: guard })
    }

    /// The shared side of the run lock (see the module docs): hold it across other work of
    /// this process that spans several GPUs and makes one wait for another (a host-driven run
    /// on several devices), so that no device-driven run starts beside it. Never take it while
    /// holding a [`PeerRun`] or another `GpuShare` of the same thread.
    pub fn share_gpus() -> GpuShare {
        GpuShare {
            _guard: GPU_RUNS
                .read()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        }
    }

    /// Zeroes the mailbox and clears the abort word; returns once done. [`PeerGroup::begin_run`]
    /// calls it; call it directly only with no member kernel of any group running.
    pub fn reset(&self) -> Result<()> {
        let stream = self.context.devices()[0].stream();
        stream.fill(&self.mailbox, 0u64)?;
        stream.synchronize()?;
        self.set_abort(0)
    }

    /// Sets the abort word: members waiting at an exchange leave it (status
    /// [`PEER_ABORTED`]) within a few microseconds.
    pub fn set_abort(&self, value: u32) -> Result<()> {
        let word = self.abort.host_atomic_u32().ok_or(Error::Unsupported {
            operation: "writing the peer group's abort word from the host",
            backend: "cuda",
        })?;
        word[0].store(value, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// After a member's launch failed: sets the abort word, so that the members already
    /// launched leave at their exchange 0 (the start gate) or next exchange, and waits for each
    /// of them (`launched`: an event recorded after each one's kernel).
    pub fn abandon_launch(&self, launched: &[&Event]) -> Result<()> {
        self.set_abort(1)?;
        for event in launched {
            event.wait()?;
        }
        Ok(())
    }

    /// Whether the abort word is set.
    fn abort_set(&self) -> bool {
        self.abort
            .host_atomic_u32()
            .is_some_and(|word| word[0].load(std::sync::atomic::Ordering::SeqCst) != 0)
    }

    /// Waits until every member's `done` event completed. Past `time_limit` (counted from
    /// `started`) it sets the abort word, so the members leave at their next exchange or abort
    /// poll, and still waits for all of them. Returns whether it set the word.
    pub fn wait_members(
        &self,
        done: &[&Event],
        time_limit: Option<Duration>,
        started: Instant,
    ) -> Result<bool> {
        let Some(limit) = time_limit else {
            for event in done {
                event.wait()?;
            }
            return Ok(false);
        };
        loop {
            // The limit first: a run not seen complete within it is stopped, however soon it
            // completes after (a zero limit always stops it, whatever the host's timing).
            if started.elapsed() > limit {
                self.set_abort(1)?;
                for event in done {
                    event.wait()?;
                }
                return Ok(true);
            }
            let mut complete = true;
            for event in done {
                complete &= event.is_complete()?;
            }
            if complete {
                return Ok(false);
            }
            std::thread::sleep(PEER_WAIT_POLL);
        }
    }

    /// Whether the last run's start was cancelled (a member did not start within
    /// [`PEER_START_WINDOW`]: every member left before doing anything). Call it once every
    /// member completed; then [`PeerGroup::reset`] and launch them all again.
    pub fn start_cancelled(&self) -> Result<bool> {
        if self.size() <= 1 {
            return Ok(false);
        }
        let start = self.mailbox.slice(PEER_START..PEER_START + 1)?;
        let word = self.context.devices()[0].download(&start)?;
        Ok(word.first().is_some_and(|w| w & PEER_START_CANCELLED != 0))
    }

    /// One device-driven run through the start gate: `prepare` (zero the members' state),
    /// `launch` (every member, returning once they all completed, with whatever the caller
    /// reads from them), again while the start was cancelled ([`PeerGroup::start_cancelled`];
    /// the mailbox and abort word are reset before each new attempt, unless the abort word was
    /// set: the host asked the members to stop, the caller reports it). Gives up with
    /// [`Error::PeerExchangeFailed`] once the group's timeout has passed without a start.
    /// Returns `launch`'s last result and the attempts made. Call it holding
    /// [`PeerGroup::begin_run`]'s guard.
    pub fn run_started<T, E: From<Error>>(
        &self,
        mut prepare: impl FnMut() -> std::result::Result<(), E>,
        mut launch: impl FnMut() -> std::result::Result<T, E>,
    ) -> std::result::Result<(T, u32), E> {
        let first = Instant::now();
        let mut attempts = 0u32;
        loop {
            if attempts > 0 {
                self.reset()?;
            }
            prepare()?;
            attempts += 1;
            let out = launch()?;
            // A start cancelled because the host asked the members to stop (a time limit) is
            // the caller's to report, not to retry.
            if self.abort_set() || !self.start_cancelled()? {
                return Ok((out, attempts));
            }
            if first.elapsed() > self.timeout {
                let shared = (0..self.size()).any(|d| self.members_on_gpu(d) > 1);
                let hint = if shared {
                    "; members share a GPU, and other work on it can keep them from running \
                     at once: run them alone on it, give fewer devices, or run the algorithm \
                     host-driven (--execution host-driven)"
                } else {
                    ""
                };
                return Err(Error::PeerExchangeFailed {
                    device: 0,
                    reason: "the members did not all start within the group's timeout",
                    progress: format!(" ({attempts} starts cancelled{hint})"),
                }
                .into());
            }
        }
    }

    /// The abort word (mapped host memory), for kernels that also poll it elsewhere.
    pub fn abort_word(&self) -> &Buffer<u32> {
        &self.abort
    }

    /// The longest wait at one exchange ([`PeerGroup::set_timeout`]).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sets the longest wait at one exchange (default: the context's stall timeout,
    /// [`crate::ContextBuilder::stall_timeout`]).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The kernel parameter of member `rank`.
    pub fn args(&self, rank: usize) -> Result<PeerArgs> {
        if rank >= self.size() {
            return Err(Error::NoSuchDevice {
                device: rank,
                count: self.size(),
            });
        }
        Ok(PeerArgs {
            mailbox: DevicePtr::from_slice(&self.mailbox.raw())?,
            abort: DevicePtr::from_slice(&self.abort.raw())?,
            rank: rank as u32,
            size: self.size() as u32,
            timeout_ns: u64::try_from(self.timeout.as_nanos()).unwrap_or(u64::MAX),
        })
    }

    /// The memory a member's launch must keep alive (mailbox and abort word).
    pub fn memory(&self) -> Vec<Arc<dyn RawMemory>> {
        vec![self.mailbox.raw().memory, self.abort.raw().memory]
    }

    /// A buffer on device `device` holding the device addresses of `buffers` (one per member,
    /// in rank order): the `T* const* peers` parameter of kernels that store into their
    /// peers' buffers.
    pub fn peer_table<T: bytemuck::Pod>(
        &self,
        device: usize,
        buffers: &[&Buffer<T>],
    ) -> Result<Buffer<u64>> {
        if buffers.len() != self.size() {
            return Err(Error::LengthMismatch {
                operation: "PeerGroup::peer_table (one buffer per device)",
                dst: self.size(),
                src: buffers.len(),
            });
        }
        let addrs = buffers
            .iter()
            .map(|b| {
                b.device_ptr().ok_or(Error::Unsupported {
                    operation: "a peer table of memory that is not device-addressable",
                    backend: "cuda",
                })
            })
            .collect::<Result<Vec<u64>>>()?;
        self.context.device(crate::DeviceId(device))?.upload(&addrs)
    }

    /// The error for member `device`'s non-OK exchange status.
    pub fn failure(device: usize, status: u32) -> Error {
        let reason = match status {
            PEER_TIMED_OUT => "a peer did not arrive within the group's timeout",
            PEER_ABORTED => "the host or another device stopped the run",
            PEER_CANCELLED => "the run's start was cancelled (a member did not start in time)",
            _ => "an unknown status",
        };
        Error::PeerExchangeFailed {
            device,
            reason,
            progress: String::new(),
        }
    }
}

/// The process-wide run lock: device-driven runs take it exclusively, other multi-GPU work
/// shared (module docs).
static GPU_RUNS: RwLock<()> = RwLock::new(());

/// A device-driven run in progress ([`PeerGroup::begin_run`]): while it lives, no other run of
/// this process starts, nor any work holding a [`GpuShare`].
#[must_use = "the run lock is released when this guard is dropped"]
pub struct PeerRun {
    _guard: RwLockWriteGuard<'static, ()>,
}

/// Multi-GPU work in progress beside which no device-driven run starts
/// ([`PeerGroup::share_gpus`]).
#[must_use = "the shared run lock is released when this guard is dropped"]
pub struct GpuShare {
    _guard: RwLockReadGuard<'static, ()>,
}

impl std::fmt::Debug for GpuShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GpuShare")
    }
}

impl std::fmt::Debug for PeerRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PeerRun")
    }
}
