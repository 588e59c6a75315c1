//! [`FusedMember`]: one device of a device-driven run: the one-device storage of
//! `direction/cuda.rs` (the device's rows of the CSR, levels, worklist, control block) plus
//! the fused kernel's inbox, barrier and state blocks, and its launch.
//!
//! Rows: a member holds the rows of the vertices it owns (every row on one device). On several
//! devices the kernel also sums the degrees of vertices it does not own (the global counts of
//! a sparse push, `append_owned` and `apply_lists` in
//! `kernels/include/direction_fused_run.cuh`): it then gets the whole offset arrays (`n + 1`
//! u64 each, values global), which index the rebased arcs of the owned rows alike; it expands
//! and pulls only owned rows.

use std::ops::Range;

use groute_core::cuda::{
    CudaFunction, CudaModule, DevicePtr, LaunchConfig, PEER_POSTBOX_WORDS, PeerGroup, member_grid,
};
use groute_core::{Buffer, Context, Device, Error};
use groute_graph::Csr;
use groute_kernels::KernelSource;
use groute_kernels::abi::{
    DirectionParams, DirectionStateBlock, FusedStateBlock, GridBarrierWords, read_block, words_of,
};
use groute_kernels::bfs::{BFS, DIRECTION, DIRECTION_FUSED, DIRECTION_FUSED_SEVERAL};
use groute_worklist::CsrPtrs;

use super::trace::TRACE_WORDS;
use crate::BfsError;
use crate::direction::SwitchRule;
use crate::direction::cuda::CudaDirection;
use crate::direction::pull_bits::PullBits;
use crate::direction::readback::{CTRL_WL_END, read_back};

/// Threads per block of the fused kernel (`groute::DO_BLOCK`).
const BLOCK: u32 = 256;
/// u32 words of the grid barrier's block: at least a [`GridBarrierWords`]; the fused
/// traversal's state block size, kept.
const BARRIER_WORDS: usize = words_of::<FusedStateBlock>();
const _: () = assert!(BARRIER_WORDS >= words_of::<GridBarrierWords>());
/// u64 words of the state block ([`DirectionStateBlock`]).
const STATE_WORDS: usize = std::mem::size_of::<DirectionStateBlock>() / 8;

/// The program holding the builds of a run on `devices` members
/// (`kernels/include/direction_fused.cuh`): the one-device builds, or those for several.
fn kernel_source(devices: usize) -> &'static KernelSource {
    if devices > 1 {
        &DIRECTION_FUSED_SEVERAL
    } else {
        &DIRECTION_FUSED
    }
}

/// The entry point of [`kernel_source`] a run on `devices` members launches:
/// `bfs_direction_fused_one` for one member (no peer steps compiled in),
/// `bfs_direction_fused_several` for several; their `_bits` builds where the pulls read
/// frontier `bitmaps` (and pull lists; the others hold none of that code).
fn kernel_name(devices: usize, bitmaps: bool) -> &'static str {
    match (devices > 1, bitmaps) {
        (false, false) => "bfs_direction_fused_one",
        (true, false) => "bfs_direction_fused_several",
        (false, true) => "bfs_direction_fused_one_bits",
        (true, true) => "bfs_direction_fused_several_bits",
    }
}

/// The run's source and the out-arc heads of the member that owns it (by global arc id),
/// which every member of a run on several reads at level 0 (`expand_source` in
/// `kernels/include/direction_fused_run.cuh`).
#[derive(Clone, Copy, Debug)]
pub(super) struct SourceRow {
    /// The source (the partitioned graph's numbering).
    pub(super) vertex: u32,
    /// The owner's [`FusedMember::push_targets`].
    pub(super) targets: DevicePtr<u32>,
}

/// One device's storage and kernel.
pub(super) struct FusedMember {
    pub(super) dir: CudaDirection,
    owned: Range<u32>,
    /// Several devices, owned rows only: the whole offset arrays of the push CSR and of the
    /// pull CSR of a directed graph (`None`: symmetric), for the degrees of any vertex (see
    /// the module docs). `None` where the rows are every vertex or on one device.
    whole_offsets: Option<(Buffer<u64>, Option<Buffer<u64>>)>,
    /// Bitmap words received from the other devices: one slot of `ceil(n / 32)` words each.
    inbox: Buffer<u32>,
    /// The address of every device's inbox, by rank (on this device).
    inboxes: Option<Buffer<u64>>,
    /// The other devices' values of the posted exchanges (`kernels/include/peer_post.cuh`).
    postbox: Buffer<u64>,
    /// The address of every device's postbox, by rank (on this device).
    postboxes: Option<Buffer<u64>>,
    barrier: Buffer<u32>,
    state: Buffer<u64>,
    /// The per-phase trace (`kernels/include/direction_trace.cuh`), passed only when asked.
    trace: Buffer<u64>,
    /// The bitmaps of the frontier that the pulls read and the lists they scan (the owned
    /// vertices with in-arcs, and those a pull left unreached), or `None`: the pulls read
    /// the levels of the in-neighbours of every owned vertex.
    pull_bits: Option<PullBits>,
    /// The kernel build, chosen for a group of `members` ([`kernel_name`]).
    kernel: CudaFunction,
    /// The run's member count the kernel build was chosen for.
    members: usize,
    grid: u32,
}

impl FusedMember {
    /// Uploads the rows of the vertices `owned` of the graph (`push`, and `pull` when it is a
    /// distinct transpose) to `device`, which owns `owned` in a run on `devices` devices and
    /// shares its GPU with `sharing` members of the run (itself included; 1: the GPU is its
    /// own), and loads the kernel build for `devices` members, launched on its share of the
    /// GPU; its pulls read frontier bitmaps where `bitmaps`.
    pub(super) fn new(
        context: &Context,
        device: &Device,
        (push, pull): (&Csr, Option<&Csr>),
        (owned, devices, sharing): (Range<u32>, usize, usize),
        bitmaps: bool,
    ) -> Result<Self, BfsError> {
        let n = push.num_vertices();
        let all = 0..u32::try_from(n)
            .map_err(|_| Error::invalid("graph", n, "at most u32::MAX vertices"))?;
        let whole_offsets = if owned != all && devices > 1 {
            let pull = pull.map(|p| device.upload_graph(p.offsets())).transpose()?;
            Some((device.upload_graph(push.offsets())?, pull))
        } else {
            None
        };
        // Pushes append every head they improve, owned or not, and pushes that send lists
        // never rewind: each vertex is first set at most once on this device, and each vertex whose
        // row the device holds joins at most one frontier besides. So n plus the rows held
        // (2n on one device).
        let slots = n + (owned.end - owned.start) as usize;
        // The fused kernel's program beside those of the steps that CudaDirection::new loads
        // (found loaded there): a first run waits for the longest compilation, not the sum.
        let [module, _, _] = CudaModule::load_all(
            device.stream().raw().as_ref(),
            [kernel_source(devices), &BFS, &DIRECTION],
        )?;
        let dir = CudaDirection::new(context, device, (push, pull), owned.clone(), slots)?;
        let kernel = module.function(kernel_name(devices, bitmaps))?;
        let grid = member_grid(
            &kernel,
            "device-driven BFS grid",
            BLOCK,
            sharing,
            "--do-driver per-device",
        )?;
        let words = n.div_ceil(32).max(1);
        Ok(FusedMember {
            // Two halves (levels alternate between them) of a slot per other device, then the
            // discovery bitmap of a dense push (the kernel's `marks`).
            inbox: device.alloc::<u32>(2 * words * devices.saturating_sub(1).max(1) + words)?,
            inboxes: None,
            postbox: device.alloc::<u64>(PEER_POSTBOX_WORDS)?,
            postboxes: None,
            barrier: device.alloc::<u32>(BARRIER_WORDS)?,
            state: device.alloc::<u64>(STATE_WORDS)?,
            trace: device.alloc::<u64>(TRACE_WORDS)?,
            // Written before any read (the bitmaps by the kernel's list_front, the listed
            // pulls and apply_pulled; a warp's list entries below its count, which the first
            // pull of a run writes at the start of the lists): no reset.
            pull_bits: bitmaps
                .then(|| {
                    let offsets = pull.unwrap_or(push).offsets();
                    let threads = grid as usize * BLOCK as usize;
                    PullBits::new(device, offsets, &owned, (words, threads))
                })
                .transpose()?,
            dir,
            owned,
            whole_offsets,
            kernel,
            members: devices,
            grid,
        })
    }

    /// The inbox the other devices store into.
    pub(super) fn inbox(&self) -> &Buffer<u32> {
        &self.inbox
    }

    /// The postbox the other devices post their exchange values into.
    pub(super) fn postbox(&self) -> &Buffer<u64> {
        &self.postbox
    }

    /// Sets the tables of every device's inbox and postbox (rank order), on this device.
    pub(super) fn set_peer_tables(&mut self, inboxes: Buffer<u64>, postboxes: Buffer<u64>) {
        self.inboxes = Some(inboxes);
        self.postboxes = Some(postboxes);
    }

    /// Enqueues the reset of a run from `source`: levels, control block, inbox, barrier and
    /// state (and the trace when `traced`). The source is the worklist's first item on the
    /// member that owns it, where the kernel starts from it (no pass over the levels).
    pub(super) fn reset(&self, source: u32, traced: bool) -> Result<(), Error> {
        self.dir.reset(source)?;
        let s = &self.dir.stream;
        if self.owned.contains(&source) {
            s.fill(&self.dir.wl.slice(0..1)?, source)?;
            s.fill(&self.dir.ctrl.slice(CTRL_WL_END..CTRL_WL_END + 1)?, 1u32)?;
        }
        s.fill(&self.inbox, 0u32)?;
        s.fill(&self.postbox, 0u64)?;
        s.fill(&self.barrier, 0u32)?;
        if traced {
            s.fill(&self.trace, 0u64)?;
        }
        s.fill(&self.state, 0u64)
    }

    /// The tables of every device's inbox and postbox (set_peer_tables); an error naming
    /// member `rank` when they were never set (a bug).
    fn peer_tables(&self, rank: usize) -> Result<(&Buffer<u64>, &Buffer<u64>), Error> {
        match (&self.inboxes, &self.postboxes) {
            (Some(inboxes), Some(postboxes)) => Ok((inboxes, postboxes)),
            _ => Err(Error::invalid(
                "fused BFS member",
                rank,
                "peer tables (a bug: set_peer_tables)",
            )),
        }
    }

    /// Whether this member owns `vertex`.
    pub(super) fn owns(&self, vertex: u32) -> bool {
        self.owned.contains(&vertex)
    }

    /// The out-arc heads of the rows this member holds, by global arc id (what the other
    /// members read of the source's row, [`SourceRow`]).
    pub(super) fn push_targets(&self) -> Result<DevicePtr<u32>, Error> {
        Ok(self.dir.push_ptrs()?.targets)
    }

    /// Enqueues the kernel of member `rank` (cooperative) with `in_arcs` arcs in the pull
    /// CSR, the run's `source` and the switching rule `rule`, traced when `traced`; then call
    /// [`FusedMember::keep_alive`].
    pub(super) fn launch(
        &self,
        group: &PeerGroup,
        rank: usize,
        (in_arcs, source): (u64, SourceRow),
        (rule, traced): (&SwitchRule, bool),
    ) -> Result<(), Error> {
        if group.size() != self.members {
            // `bfs_direction_fused_several` takes its group for one of several members.
            return Err(Error::invalid(
                "fused BFS group size",
                group.size(),
                format!(
                    "member {rank}'s kernel build was chosen for {} members (a bug)",
                    self.members
                ),
            ));
        }
        let d = &self.dir;
        let (table, posts) = self.peer_tables(rank)?;
        let (push, pull) = self.csr_ptrs()?;
        let params = DirectionParams {
            levels: DevicePtr::from_slice(&d.levels.raw())?,
            push_offsets: push.offsets,
            push_targets: push.targets,
            pull_offsets: pull.offsets,
            pull_sources: pull.targets,
            n: d.n,
            owned_begin: self.owned.start.min(d.n),
            owned_end: self.owned.end.min(d.n),
            source: source.vertex,
            wl_data: DevicePtr::from_slice(&d.wl.raw())?,
            wl_mask: (d.wl.len() - 1) as u32,
            gap1: 0,
            ctrl: DevicePtr::from_slice(&d.ctrl.raw())?,
            barrier: DevicePtr::from_slice(&self.barrier.raw())?,
            state: DevicePtr::from_slice(&self.state.raw())?,
            inboxes: DevicePtr::from_slice(&table.raw())?,
            in_arcs,
            alpha: rule.alpha,
            beta: rule.beta,
            gamma: rule.gamma,
            group: group.args(rank)?,
            trace_words: if traced {
                DevicePtr::from_slice(&self.trace.raw())?
            } else {
                DevicePtr::null()
            },
            postboxes: DevicePtr::from_slice(&posts.raw())?,
            source_targets: source.targets,
            front_bits: PullBits::ptr(&self.pull_bits, PullBits::both)?,
            pull_lists: PullBits::ptr(&self.pull_bits, PullBits::lists)?,
            pull_list_words: self
                .pull_bits
                .as_ref()
                .map_or(0, |p| p.lists().len() as u64),
            pullable: PullBits::ptr(&self.pull_bits, PullBits::pullable)?,
            pullable_count: self.pull_bits.as_ref().map_or(0, PullBits::pullable_count),
        };
        // SAFETY: every entry point of kernels/include/direction_fused.cuh
        // (`bfs_direction_fused_one`, `_several` and their `_bits` twins, kernel_name) takes one
        // `groute::DirectionParams`, whose layout `DirectionParams` mirrors (checked against
        // abi_direction.h by groute-kernels' tests/abi.rs); its fields hold: `levels` holds n u32;
        // the offset arrays index by global vertex id and the targets and sources by global arc id
        // (csr_ptrs): the offsets of every vertex (whole arrays, or one device's rows, which are
        // every vertex), the arcs of this device's rows, which are all the kernel reads: it expands
        // and pulls only owned vertices; the sources and targets are vertices below n; the owned
        // range is clamped to n; the worklist has wl_mask + 1 >= 2n slots (a power of two; the
        // frontier plus one step's appends, each vertex once per run) and every append is
        // bounds-checked; `ctrl` holds the control block and the hub list of ctrl[CTRL_HUB_CAP]
        // slots (set by the reset); `barrier` BARRIER_WORDS u32 and `state` a DirectionStateBlock,
        // zeroed by the reset; `table` (this device's memory) holds the address of every member's
        // inbox of (2 * (size - 1) + 1) * ceil(n / 32) u32 (the halves, then the discovery bitmap,
        // which only its owner touches), reachable from this device (PeerGroup::new_sharing checked
        // peer access between every pair of distinct GPUs; members on one GPU share its memory),
        // and the kernel stores only words below that; on several members, `source` is below n and
        // `source.targets` is the push targets of the member that owns it (SourceRow: its rows hold
        // the source's arcs, by global arc id), reachable from this device as the inboxes are, and
        // read only at the source's arcs (offsets from the whole offset arrays); `group.args` is
        // this member's PeerGroup (its mailbox and abort word outlive the run); the trace is null
        // or TRACE_WORDS u64 (the kernel stores only below TRACE_HEADER + TRACE_ROWS *
        // TRACE_SLOTS); `posts` (this device's memory) holds the address of every member's postbox
        // of POST_WORDS u64, reachable from this device, and the kernel stores only into the slots
        // below POST_WORDS; `front_bits`, `pull_lists` and `pullable` are all null or two bitmaps
        // of ceil(n / 32) u32 (indexed below 2 * words), the pull lists of `pull_list_words` u32
        // and `pullable_count` owned vertices (the kernel uses the lists only where its grid's
        // regions of ceil(pullable_count / warps) fit below pull_list_words: PullLists::fit; a
        // warp reads only its slice of `pullable` and keeps at most what it read in its region).
        // The launch is cooperative with a grid of at most the resident maximum at BLOCK threads,
        // so the grid barrier cannot deadlock. The caller keeps the memory alive (keep_alive) once
        // every member is launched.
        unsafe {
            self.kernel.launch_cooperative(
                d.stream.raw().as_ref(),
                LaunchConfig::linear(self.grid, BLOCK),
                (params,),
            )
        }
    }

    /// Keeps every buffer the launched kernel uses alive until it completes (an event on the
    /// member's stream). Called after every member's launch, so that no member's launch
    /// waits behind another's bookkeeping (the members meet at their first exchange).
    pub(super) fn keep_alive(&self, group: &PeerGroup, rank: usize) -> Result<(), Error> {
        let d = &self.dir;
        let (table, posts) = self.peer_tables(rank)?;
        d.keep_alive_with(&[&self.inbox, &self.barrier])?;
        let mut memory = group.memory();
        if let Some((push, pull)) = &self.whole_offsets {
            memory.push(push.raw().memory);
            memory.extend(pull.iter().map(|p| p.raw().memory));
        }
        memory.extend([
            self.state.raw().memory,
            table.raw().memory,
            self.trace.raw().memory,
            posts.raw().memory,
            self.postbox.raw().memory,
        ]);
        if let Some(p) = &self.pull_bits {
            memory.extend(p.buffers().map(|b| b.raw().memory));
        }
        d.cuda_stream()?.keep_alive(memory)
    }

    /// The kernel's push and pull CSR pointers, by global ids: the rows' rebased pointers,
    /// with the whole offset arrays in place of the rows' offsets where the member holds them.
    fn csr_ptrs(&self) -> Result<(CsrPtrs, CsrPtrs), Error> {
        let d = &self.dir;
        let (mut push, mut pull) = (d.push_ptrs()?, d.pull_ptrs()?);
        if let Some((push_offsets, pull_offsets)) = &self.whole_offsets {
            push.offsets = DevicePtr::<u64>::from_slice(&push_offsets.raw())?;
            pull.offsets = match pull_offsets {
                Some(p) => DevicePtr::<u64>::from_slice(&p.raw())?,
                None => push.offsets,
            };
        }
        Ok((push, pull))
    }

    /// Waits for the stream and reads the state block.
    pub(super) fn read_state(&self, device: &Device) -> Result<DirectionStateBlock, Error> {
        let words = device.download(&self.state)?;
        read_block(&words).ok_or_else(|| {
            Error::invalid(
                "direction BFS state block",
                words.len(),
                format!("{STATE_WORDS} u64 words"),
            )
        })
    }

    /// Waits for the stream and reads the trace buffer.
    pub(super) fn read_trace(&self, device: &Device) -> Result<Vec<u64>, Error> {
        device.download(&self.trace)
    }

    /// Waits for the stream and fails if the worklist overflowed (it cannot: n plus the rows
    /// held, see `new`).
    pub(super) fn check_worklist(&self) -> Result<(), Error> {
        let d = &self.dir;
        let ctrl = (&d.ctrl, &d.ctrl_host);
        read_back(&d.stream, ctrl, (&d.counters, &d.counters_host), d.wl.len()).map(|_| ())
    }

    /// The level array (after the stream is idle).
    pub(super) fn levels(&self, device: &Device) -> Result<Vec<u32>, Error> {
        device.download(&self.dir.levels.slice(0..self.dir.n as usize)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arguments after the name of the kernel's `GROUTE_DIRECTION_FUSED_ENTRY(name, ...)`
    /// (where it starts a line, so never in a comment), each with its whitespace trimmed.
    fn entry_arguments(source: &str, name: &str) -> Vec<String> {
        let call = format!("GROUTE_DIRECTION_FUSED_ENTRY({name},");
        let line = source
            .lines()
            .find(|l| l.starts_with(&call))
            .unwrap_or_else(|| panic!("`{call}` does not start a line of the kernel"));
        let args = &line[call.len()..];
        let args = &args[..args.rfind(')').expect("the entry's closing parenthesis")];
        args.split(',').map(|a| a.trim().to_string()).collect()
    }

    /// The build `kernel_name` picks for each member count and bitmaps choice exists in the
    /// program `kernel_source` picks, compiled for them: its `SEVERAL` and `BITMAPS`
    /// arguments, read from the program's source as NVRTC compiles it.
    #[test]
    fn each_member_count_runs_the_build_compiled_for_it() {
        for (devices, several) in [(1, "false"), (2, "true"), (8, "true")] {
            let source = kernel_source(devices).source;
            for (bitmaps, bits) in [(false, "false"), (true, "true")] {
                let name = kernel_name(devices, bitmaps);
                assert_eq!(
                    entry_arguments(source, name)[..2],
                    [several, bits],
                    "{devices} members, bitmaps {bitmaps}: {name}"
                );
            }
        }
    }
}
