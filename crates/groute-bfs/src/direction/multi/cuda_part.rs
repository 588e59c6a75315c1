//! [`CudaPart`]: one CUDA device's kernels of a multi-device run: the one-device storage and
//! push launch of `direction/cuda.rs` plus the kernels of `kernels/bfs/bfs_direction.cu`
//! that count each level's frontier as it is found (`bfs_pull_count`, `bfs_push_finds`,
//! `bfs_apply_bitmap`; `bfs_frontier_count` for the source), write the bitmap to send
//! (`bfs_push_finds`, `bfs_level_bitmap`) and list the frontier before a push step
//! (`bfs_frontier_list`).

use std::ops::Range;

use groute_core::cuda::{CudaFunction, CudaModule, DevicePtr, KernelArgs, LaunchConfig};
use groute_core::{Buffer, Context, Device, DeviceId, Error, Stream};
use groute_graph::Csr;
use groute_kernels::bfs::DIRECTION;

use super::part::{Part, PartCounts, bitmap_words, words_of};
use crate::BfsError;
use crate::direction::cuda::{BLOCK, CudaDirection};
use crate::direction::readback::{CTRL_WL_END, read_back, read_counters};

/// One CUDA device's storage and kernels.
pub(super) struct CudaPart {
    context: Context,
    id: DeviceId,
    dir: CudaDirection,
    owned: Range<u32>,
    bitmap: Buffer<u32>,
    kernels: PartKernels,
    grid: u32,
}

/// The kernels a part launches besides the push step's.
struct PartKernels {
    pull_count: CudaFunction,
    push_finds: CudaFunction,
    level_bitmap: CudaFunction,
    apply_bitmap: CudaFunction,
    frontier_count: CudaFunction,
    frontier_list: CudaFunction,
}

impl CudaPart {
    /// Uploads the rows of the vertices `owned`, which `device` owns, of the graph (`push`,
    /// and `pull` when it is a distinct transpose) to `device`.
    pub(super) fn new(
        context: &Context,
        device: &Device,
        push: &Csr,
        pull: Option<&Csr>,
        owned: Range<u32>,
    ) -> Result<Self, BfsError> {
        let n = push.num_vertices();
        // The frontier (owned vertices, at most n) plus what one push step appends behind it
        // (each vertex at most once per run): 2n slots never wrap.
        let dir = CudaDirection::new(context, device, (push, pull), owned.clone(), 2 * n)?;
        let module = CudaModule::load(dir.stream.raw().as_ref(), &DIRECTION)?;
        let kernels = PartKernels {
            pull_count: module.function("bfs_pull_count")?,
            push_finds: module.function("bfs_push_finds")?,
            level_bitmap: module.function("bfs_level_bitmap")?,
            apply_bitmap: module.function("bfs_apply_bitmap")?,
            frontier_count: module.function("bfs_frontier_count")?,
            frontier_list: module.function("bfs_frontier_list")?,
        };
        let grid = kernels
            .pull_count
            .max_resident_grid(BLOCK, 0)?
            .min(kernels.apply_bitmap.max_resident_grid(BLOCK, 0)?)
            .max(1);
        let bitmap = device.alloc::<u32>(n.div_ceil(32).max(1))?;
        Ok(CudaPart {
            context: context.clone(),
            id: device.id(),
            dir,
            owned,
            bitmap,
            kernels,
            grid,
        })
    }

    /// Launches `f` over `elements` threads (at most a resident grid) and keeps the storage,
    /// the bitmap and `extra` alive until it completes.
    ///
    /// # Safety
    ///
    /// `args` must match `f`'s parameters, and every pointer in it must be device memory of
    /// this device that the kernel accesses in bounds: the storage, the bitmap or `extra`.
    unsafe fn launch<A: KernelArgs>(
        &self,
        f: &CudaFunction,
        elements: usize,
        args: A,
        extra: Option<&Buffer<u32>>,
    ) -> Result<(), Error> {
        let config = LaunchConfig::for_elements(elements, BLOCK, Some(self.grid));
        // SAFETY: forwarded to the caller.
        unsafe { f.launch(self.dir.stream.raw().as_ref(), config, args)? };
        match extra {
            Some(extra) => self.dir.keep_alive_with(&[&self.bitmap, extra]),
            None => self.dir.keep_alive_with(&[&self.bitmap]),
        }
    }

    /// The owned range as the kernels take it (end clamped to n) and its length.
    fn owned_span(&self) -> (u32, u32, usize) {
        let end = self.owned.end.min(self.dir.n);
        let begin = self.owned.start.min(end);
        (begin, end, (end - begin) as usize)
    }

    /// Lists the owned vertices at `level` (the frontier, `frontier` of them) in the
    /// worklist from position 0.
    fn list_frontier(&self, level: u32, frontier: u32) -> Result<(), Error> {
        let d = &self.dir;
        d.stream
            .fill(&d.ctrl.slice(CTRL_WL_END..CTRL_WL_END + 1)?, 0u32)?;
        if frontier == 0 {
            return Ok(());
        }
        let (begin, end, span) = self.owned_span();
        let args = (
            DevicePtr::<u32>::from_slice(&d.levels.raw())?,
            begin,
            end,
            level,
            DevicePtr::<u32>::from_slice(&d.wl.raw())?,
            (d.wl.len() - 1) as u32,
            DevicePtr::<u32>::from_slice(&d.ctrl.raw())?,
        );
        // SAFETY: bfs_frontier_list(const unsigned* levels, unsigned begin, unsigned end,
        // unsigned mark, unsigned* wl_data, unsigned wl_mask, unsigned* ctrl): vertices
        // [begin, end) (end <= n) index levels (n); it appends at most end - begin <= n items
        // from ctrl's end word (zeroed above; CTRL_WORDS u32) into a worklist of
        // wl_mask + 1 >= 2n slots (bounds-checked all the same). One warp per 1024 vertices.
        unsafe { self.launch(&self.kernels.frontier_list, span.div_ceil(32), args, None) }
    }
}

impl Part for CudaPart {
    fn stream(&self) -> &Stream {
        &self.dir.stream
    }

    fn bitmap(&self) -> &Buffer<u32> {
        &self.bitmap
    }

    fn reset(&self, source: u32) -> Result<(), Error> {
        self.dir.reset(source)?;
        let d = &self.dir;
        let (begin, end, span) = self.owned_span();
        let args = (
            DevicePtr::<u32>::from_slice(&d.levels.raw())?,
            d.push_ptrs()?.offsets,
            d.pull_ptrs()?.offsets,
            begin,
            end,
            0u32,
            DevicePtr::<u64>::from_slice(&d.counters.raw())?,
        );
        // SAFETY: bfs_frontier_count(const unsigned* levels, const unsigned long long*
        // push_offsets, const unsigned long long* pull_offsets, unsigned begin, unsigned end,
        // unsigned mark, unsigned long long* counters): vertices [begin, end) (end <= n)
        // index levels (n) and both offset arrays (this device's rows, the owned range,
        // rebased to global ids); it adds to counters (COUNTERS u64).
        unsafe { self.launch(&self.kernels.frontier_count, span, args, None) }
    }

    fn push(&self, level: u32, frontier: u32) -> Result<(), Error> {
        // The list holds exactly the `frontier` vertices counted: every owned vertex that got
        // `level` was counted once, where it got it (reset, pull, push finds or an apply).
        // The push expands [0, frontier) and appends behind it, where `count_push_finds`
        // reads from.
        self.list_frontier(level, frontier)?;
        self.dir.launch_push(0, frontier)
    }

    fn pull(&self, level: u32, write_bitmap: bool) -> Result<(), Error> {
        let d = &self.dir;
        let (begin, end, span) = self.owned_span();
        if write_bitmap && span == 0 {
            // No finds: the one word covering the empty range is written from the levels.
            self.mark_bitmap(
                level + 1,
                words_of(&self.owned, bitmap_words(&self.bitmap)?),
            )?;
        }
        let bitmap = if write_bitmap {
            DevicePtr::<u32>::from_slice(&self.bitmap.raw())?
        } else {
            DevicePtr::<u32>::null()
        };
        let pull = d.pull_ptrs()?;
        let args = (
            DevicePtr::<u32>::from_slice(&d.levels.raw())?,
            d.push_ptrs()?.offsets,
            pull.offsets,
            pull.targets,
            begin,
            end,
            level,
            DevicePtr::<u64>::from_slice(&d.counters.raw())?,
            bitmap,
        );
        // A warp per bitmap word: the threads start at `begin` rounded down to a word.
        let threads = span + (begin % 32) as usize;
        // SAFETY: bfs_pull_count(unsigned* levels, const unsigned long long* push_offsets,
        // const unsigned long long* pull_offsets, const unsigned* pull_sources,
        // unsigned begin, unsigned end, unsigned level, unsigned long long* counters,
        // unsigned* bitmap): it reads vertices [begin, end) (end <= n) of `levels` (n
        // entries), their rows of both CSRs (this device's rows, the owned range, rebased to
        // global ids) and the pull rows' sources (vertices); it writes those levels, adds to
        // counters (COUNTERS u64) and, where `bitmap` is not null, writes the words covering
        // [begin, end), within the bitmap's ceil(n / 32).
        unsafe { self.launch(&self.kernels.pull_count, threads, args, None) }
    }

    fn count_push_finds(&self, _mark: u32, frontier: u32, write_bitmap: bool) -> Result<(), Error> {
        let d = &self.dir;
        if write_bitmap {
            d.stream.fill(&self.bitmap, 0u32)?;
        }
        let bitmap = if write_bitmap {
            DevicePtr::<u32>::from_slice(&self.bitmap.raw())?
        } else {
            DevicePtr::<u32>::null()
        };
        let (begin, end, _) = self.owned_span();
        let args = (
            DevicePtr::<u32>::from_slice(&d.wl.raw())?,
            (d.wl.len() - 1) as u32,
            frontier,
            DevicePtr::<u32>::from_slice(&d.ctrl.raw())?,
            d.n,
            begin,
            end,
            d.push_ptrs()?.offsets,
            d.pull_ptrs()?.offsets,
            DevicePtr::<u64>::from_slice(&d.counters.raw())?,
            bitmap,
        );
        // SAFETY: bfs_push_finds(const unsigned* wl_data, unsigned wl_mask, unsigned from,
        // const unsigned* ctrl, unsigned n, unsigned owned_begin, unsigned owned_end,
        // const unsigned long long* push_offsets, const unsigned long long* pull_offsets,
        // unsigned long long* counters, unsigned* bitmap): reads ctrl's end word (CTRL_WORDS
        // u32) and at most wl_mask + 1 worklist slots (masked positions); the rows it reads
        // are of owned vertices only (this device's rows, rebased to global ids); it sets
        // bits of vertices below n only, within the bitmap's ceil(n / 32) words, or none
        // (null), and adds to counters (COUNTERS u64). The push step appended its heads
        // behind its frontier of `frontier` items (listed from 0). Bounded by n threads.
        unsafe { self.launch(&self.kernels.push_finds, d.n as usize, args, None) }
    }

    fn mark_bitmap(&self, mark: u32, words: Range<u32>) -> Result<(), Error> {
        let span = words.end.saturating_sub(words.start) as usize;
        let args = (
            DevicePtr::<u32>::from_slice(&self.dir.levels.raw())?,
            self.dir.n,
            mark,
            DevicePtr::<u32>::from_slice(&self.bitmap.raw())?,
            words.start,
            words.end.min(self.bitmap.len() as u32),
        );
        // SAFETY: bfs_level_bitmap(const unsigned* levels, unsigned n, unsigned mark,
        // unsigned* bitmap, unsigned word_begin, unsigned word_end): reads levels below n
        // only and writes words [word_begin, word_end), within the bitmap's ceil(n / 32)
        // words (the caller's range, clamped).
        unsafe { self.launch(&self.kernels.level_bitmap, span * 32, args, None) }
    }

    fn apply(&self, packet: &Buffer<u32>, word_offset: u32, mark: u32) -> Result<(), Error> {
        let d = &self.dir;
        let (begin, end, _) = self.owned_span();
        let args = (
            DevicePtr::<u32>::from_slice(&d.levels.raw())?,
            d.n,
            DevicePtr::<u32>::from_slice(&packet.raw())?,
            word_offset,
            packet.len() as u32,
            mark,
            begin,
            end,
            d.push_ptrs()?.offsets,
            d.pull_ptrs()?.offsets,
            DevicePtr::<u64>::from_slice(&d.counters.raw())?,
        );
        // SAFETY: bfs_apply_bitmap(unsigned* levels, unsigned n, const unsigned* bitmap,
        // unsigned word_offset, unsigned words, unsigned mark, unsigned owned_begin,
        // unsigned owned_end, const unsigned long long* push_offsets,
        // const unsigned long long* pull_offsets, unsigned long long* counters): reads the
        // packet's `words` words, writes levels below n only, reads the rows of owned
        // vertices only (this device's rows) and adds to counters (COUNTERS u64). The packet
        // is a link receive buffer on this device, valid in stream order (the caller made the
        // stream wait for it) and not reused before the release event the caller records
        // after this launch. One warp per 32 words.
        unsafe { self.launch(&self.kernels.apply_bitmap, packet.len(), args, Some(packet)) }
    }

    fn read_counts(&self) -> Result<PartCounts, Error> {
        let d = &self.dir;
        let counters = read_counters(&d.stream, (&d.counters, &d.counters_host))?;
        Ok(PartCounts::from_counters(&counters))
    }

    fn check_worklist(&self) -> Result<(), Error> {
        let d = &self.dir;
        let ctrl = (&d.ctrl, &d.ctrl_host);
        read_back(&d.stream, ctrl, (&d.counters, &d.counters_host), d.wl.len()).map(|_| ())
    }

    fn levels(&self) -> Result<Vec<u32>, Error> {
        self.context
            .device(self.id)?
            .download(&self.dir.levels.slice(0..self.dir.n as usize)?)
    }
}
