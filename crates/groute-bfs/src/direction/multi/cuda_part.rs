//! [`CudaPart`]: one CUDA device's kernels of a multi-device run: the one-device storage and
//! push launch of `direction/cuda.rs` plus the kernels of `kernels/bfs/bfs_direction.cu`
//! that count each level's frontier as it is found (`bfs_pull_count`, `bfs_pull_listed`,
//! `bfs_push_finds`, `bfs_apply`; `bfs_frontier_count` for the
//! source), write the bitmap or list to send (`bfs_push_finds`, `bfs_level_bitmap`,
//! `bfs_list_heads`) and list the frontier before a push step (`bfs_frontier_list`,
//! `bfs_frontier_list_bits`).
//!
//! **Frontier bitmaps.** Where a part keeps [`PullBits`] (`BfsTuning::pull_bitmap`), its pulls
//! test in-neighbours against the bitmap of the frontier instead of reading their levels, and
//! scan pull lists instead of the owned range (`kernels/include/pull_lists.cuh`). The bitmap
//! of level L + 1 (the other parity's) is cleared when the step from L is enqueued, gets the
//! step's finds (a pull's owned words, a push's every head) and every bitmap the part applies
//! ORed in: every device's discoveries at L + 1, which the exchange brings to every part. The
//! bitmap the part sends is then copied from it (the words the step could set), a push lists
//! its frontier from it instead of the levels, and an apply takes the bits it does not hold
//! as the vertices new on the device, storing their levels without reading them.

use std::cell::Cell;
use std::ops::Range;

use groute_core::cuda::{CudaFunction, CudaModule, DevicePtr, KernelArgs, LaunchConfig};
use groute_core::{Buffer, Context, Device, DeviceId, Error, Stream};
use groute_graph::Csr;
use groute_kernels::bfs::DIRECTION;

use super::part::{Part, PartCounts, bitmap_words, check_list_fits, words_of};
use crate::BfsError;
use crate::direction::cuda::{BLOCK, CudaDirection};
use crate::direction::pull_bits::PullBits;
use crate::direction::readback::{CTRL_WL_END, read_back, read_counters};

/// One CUDA device's storage and kernels.
pub(super) struct CudaPart {
    context: Context,
    id: DeviceId,
    dir: CudaDirection,
    owned: Range<u32>,
    bitmap: Buffer<u32>,
    /// The frontier bitmaps and pull lists its pulls read, or `None`: they read levels.
    pull_bits: Option<PullBits>,
    /// Whether a pull of the current run scanned the lists (a later one scans what it kept).
    listed: Cell<bool>,
    kernels: PartKernels,
    grid: u32,
}

/// The levels, the push offsets, and the pull offsets and sources, as the pull kernels take
/// them first.
type PullRows = (
    DevicePtr<u32>,
    DevicePtr<u64>,
    DevicePtr<u64>,
    DevicePtr<u32>,
);

/// The kernels a part launches besides the push step's.
struct PartKernels {
    pull_count: CudaFunction,
    pull_listed: CudaFunction,
    push_finds: CudaFunction,
    level_bitmap: CudaFunction,
    apply: CudaFunction,
    frontier_count: CudaFunction,
    frontier_list: CudaFunction,
    frontier_list_bits: CudaFunction,
    list_heads: CudaFunction,
}

impl CudaPart {
    /// Uploads the rows of the vertices `owned`, which `device` owns, of the graph (`push`,
    /// and `pull` when it is a distinct transpose) to `device`; its pulls read frontier
    /// bitmaps and pull lists where `bitmaps`.
    pub(super) fn new(
        context: &Context,
        device: &Device,
        (push, pull): (&Csr, Option<&Csr>),
        owned: Range<u32>,
        bitmaps: bool,
    ) -> Result<Self, BfsError> {
        let n = push.num_vertices();
        // The frontier (owned vertices, at most n) plus what one push step appends behind it
        // (each vertex at most once per run): 2n slots never wrap.
        let dir = CudaDirection::new(context, device, (push, pull), owned.clone(), 2 * n)?;
        let module = CudaModule::load(dir.stream.raw().as_ref(), &DIRECTION)?;
        let kernels = PartKernels {
            pull_count: module.function("bfs_pull_count")?,
            pull_listed: module.function("bfs_pull_listed")?,
            push_finds: module.function("bfs_push_finds")?,
            level_bitmap: module.function("bfs_level_bitmap")?,
            apply: module.function("bfs_apply")?,
            frontier_count: module.function("bfs_frontier_count")?,
            frontier_list: module.function("bfs_frontier_list")?,
            frontier_list_bits: module.function("bfs_frontier_list_bits")?,
            list_heads: module.function("bfs_list_heads")?,
        };
        let grid = kernels
            .pull_count
            .max_resident_grid(BLOCK, 0)?
            .min(kernels.apply.max_resident_grid(BLOCK, 0)?)
            .min(kernels.pull_listed.max_resident_grid(BLOCK, 0)?)
            .max(1);
        let words = n.div_ceil(32).max(1);
        let bitmap = device.alloc::<u32>(words)?;
        let offsets = pull.unwrap_or(push).offsets();
        let threads = grid as usize * BLOCK as usize;
        // Written before any read: the bitmap of level 0 by `reset`, each later one cleared
        // by the step that finds its level; a warp's list entries below its count, which the
        // first pull of a run writes at the start of the lists.
        let pull_bits = bitmaps
            .then(|| PullBits::new(device, offsets, &owned, (words, threads)))
            .transpose()?;
        Ok(CudaPart {
            context: context.clone(),
            id: device.id(),
            dir,
            owned,
            bitmap,
            pull_bits,
            listed: Cell::new(false),
            kernels,
            grid,
        })
    }

    /// Launches `f` over `elements` threads (at most a resident grid) and keeps the storage,
    /// the bitmaps and `extra` alive until it completes.
    ///
    /// # Safety
    ///
    /// `args` must match `f`'s parameters, and every pointer in it must be device memory of
    /// this device that the kernel accesses in bounds: the storage, the bitmaps, the pull
    /// lists or `extra`.
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
        let mut alive = vec![&self.bitmap];
        alive.extend(extra);
        if let Some(p) = &self.pull_bits {
            alive.extend(p.buffers());
        }
        self.dir.keep_alive_with(&alive)
    }

    /// The bitmap of the frontier at `level`, or null where the part keeps none.
    fn front_ptr(&self, level: u32) -> Result<DevicePtr<u32>, Error> {
        match &self.pull_bits {
            Some(p) => DevicePtr::from_slice(&p.frontier(level)?.raw()),
            None => Ok(DevicePtr::null()),
        }
    }

    /// Clears the bitmap of the frontier at `level` (before the step that finds it), where
    /// the part keeps them.
    fn clear_front(&self, level: u32) -> Result<(), Error> {
        match &self.pull_bits {
            Some(p) => self.dir.stream.fill(&p.frontier(level)?, 0u32),
            None => Ok(()),
        }
    }

    /// Copies the words `words` of the bitmap of the frontier at `level` (the step's finds,
    /// before any other device's are applied) into the bitmap the part sends.
    fn send_front(&self, bits: &PullBits, level: u32, words: Range<u32>) -> Result<(), Error> {
        let words = words.start as usize..words.end as usize;
        let front = bits.frontier(level)?.slice(words.clone())?;
        self.dir.stream.copy(&self.bitmap.slice(words)?, &front)
    }

    /// The first arguments of both pull kernels: the levels, the push offsets, and the pull
    /// offsets and sources.
    fn pull_rows(&self) -> Result<PullRows, Error> {
        let d = &self.dir;
        let pull = d.pull_ptrs()?;
        Ok((
            DevicePtr::from_slice(&d.levels.raw())?,
            d.push_ptrs()?.offsets,
            pull.offsets,
            pull.targets,
        ))
    }

    /// The pull step from `level` over the pull lists (`bits` kept): the first of a run
    /// scans the pullable vertices, a later one what the earlier ones kept; the finds go to
    /// the bitmap of level + 1, cleared before.
    fn pull_listed(&self, bits: &PullBits, level: u32) -> Result<(), Error> {
        let d = &self.dir;
        self.clear_front(level + 1)?;
        let first = !self.listed.replace(true);
        let (levels, push_offsets, pull_offsets, sources) = self.pull_rows()?;
        let args = (
            level,
            u32::from(first),
            levels,
            push_offsets,
            pull_offsets,
            sources,
            self.front_ptr(level)?,
            self.front_ptr(level + 1)?,
            DevicePtr::<u32>::from_slice(&bits.lists().raw())?,
            bits.lists().len() as u64,
            DevicePtr::<u32>::from_slice(&bits.pullable().raw())?,
            bits.pullable_count(),
            DevicePtr::<u64>::from_slice(&d.counters.raw())?,
        );
        // Every pull of a run on the whole grid the lists were sized for (`PullBits::new`).
        let threads = self.grid as usize * BLOCK as usize;
        // SAFETY: bfs_pull_listed(unsigned level, unsigned first, unsigned* levels,
        // const unsigned long long* push_offsets, const unsigned long long* pull_offsets,
        // const unsigned* pull_sources, const unsigned* front, unsigned* next, unsigned* lists,
        // unsigned long long list_words, const unsigned* pullable,
        // unsigned long long pullable_count, unsigned long long* counters): `pullable` holds
        // pullable_count owned vertices (below n), whose rows of both CSRs this device holds
        // (rebased to global ids), and their in-neighbours are vertices; `front` and `next`
        // are the two bitmaps of ceil(n / 32) words; `lists` holds list_words u32, at least a
        // count and a region of ceil(pullable_count / warps) entries per warp of this grid
        // (the kernel checks it and does nothing otherwise); a warp reads its slice of
        // `pullable` and keeps at most what it read in its region; counters: COUNTERS u64.
        unsafe { self.launch(&self.kernels.pull_listed, threads, args, None) }
    }

    /// Applies a received `packet` (`list`: a list of push finds, else bitmap words from word
    /// `word_offset`) with level `mark`: `bfs_apply`.
    fn launch_apply(
        &self,
        packet: &Buffer<u32>,
        (word_offset, list): (u32, bool),
        mark: u32,
    ) -> Result<(), Error> {
        let d = &self.dir;
        let (begin, end, _) = self.owned_span();
        let words = u32::try_from(packet.len())
            .map_err(|_| Error::invalid("packet", packet.len(), "below 2^32 words"))?;
        let args = (
            DevicePtr::<u32>::from_slice(&d.levels.raw())?,
            d.n,
            DevicePtr::<u32>::from_slice(&packet.raw())?,
            word_offset,
            words,
            u32::from(list),
            mark,
            begin,
            end,
            d.push_ptrs()?.offsets,
            d.pull_ptrs()?.offsets,
            DevicePtr::<u64>::from_slice(&d.counters.raw())?,
            self.front_ptr(mark)?,
        );
        // SAFETY: bfs_apply(unsigned* levels, unsigned n, const unsigned* packet,
        // unsigned word_offset, unsigned words, unsigned list, unsigned mark,
        // unsigned owned_begin, unsigned owned_end, const unsigned long long* push_offsets,
        // const unsigned long long* pull_offsets, unsigned long long* counters,
        // unsigned* front): reads the packet's `words` words (a list: its count, clamped to
        // words - 1, then the vertices), writes levels and bits of `front` (null, or a bitmap
        // of ceil(n / 32) words) of vertices below n only (a list's are checked; a bitmap's
        // words word_offset.. word_offset + words lie within one, the exchange sending words
        // of one, whose bits every sender's kernels set for vertices below n only), reads the
        // rows of owned vertices only (this device's rows) and adds to counters (COUNTERS
        // u64). The packet is a link receive buffer or a gathered window on this device, valid
        // in stream order (the caller made the stream wait for it) and not reused before the
        // release event the caller records after this launch. A thread per word or item.
        unsafe { self.launch(&self.kernels.apply, packet.len(), args, Some(packet)) }
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
        let wl = (
            DevicePtr::<u32>::from_slice(&d.wl.raw())?,
            (d.wl.len() - 1) as u32,
            DevicePtr::<u32>::from_slice(&d.ctrl.raw())?,
        );
        if self.pull_bits.is_some() {
            let args = (self.front_ptr(level)?, begin, end, wl.0, wl.1, wl.2);
            let f = &self.kernels.frontier_list_bits;
            // SAFETY: bfs_frontier_list_bits(const unsigned* front, unsigned begin,
            // unsigned end, unsigned* wl_data, unsigned wl_mask, unsigned* ctrl): reads the
            // words of [begin, end) (end <= n) of `front`, a bitmap of ceil(n / 32) words, and
            // appends at most end - begin <= n items from ctrl's end word (zeroed above;
            // CTRL_WORDS u32) into a worklist of wl_mask + 1 >= 2n slots (bounds-checked all
            // the same). A thread per word.
            return unsafe { self.launch(f, span.div_ceil(32), args, None) };
        }
        let args = (
            DevicePtr::<u32>::from_slice(&d.levels.raw())?,
            begin,
            end,
            level,
            wl.0,
            wl.1,
            wl.2,
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
        self.listed.set(false);
        if let Some(bits) = &self.pull_bits {
            // The frontier at level 0: the source alone.
            let front = bits.frontier(0)?;
            d.stream.fill(&front, 0u32)?;
            let word = (source / 32) as usize;
            d.stream
                .fill(&front.slice(word..word + 1)?, 1u32 << (source % 32))?;
        }
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
        self.clear_front(level + 1)?;
        self.list_frontier(level, frontier)?;
        self.dir.launch_push(0, frontier)
    }

    fn pull(&self, level: u32, write_bitmap: bool) -> Result<(), Error> {
        if let Some(bits) = &self.pull_bits {
            self.pull_listed(bits, level)?;
            if write_bitmap {
                let owned = words_of(&self.owned, bitmap_words(&self.bitmap)?);
                self.send_front(bits, level + 1, owned)?;
            }
            return Ok(());
        }
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
        let (levels, push_offsets, pull_offsets, sources) = self.pull_rows()?;
        let args = (
            levels,
            push_offsets,
            pull_offsets,
            sources,
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

    fn count_push_finds(&self, mark: u32, frontier: u32, write_bitmap: bool) -> Result<(), Error> {
        let d = &self.dir;
        // The heads' bits: into the bitmap of the frontier at `mark` where the part keeps
        // them (cleared by `push`; copied to the one sent below), else into the one sent.
        let bitmap = if self.pull_bits.is_some() {
            self.front_ptr(mark)?
        } else if write_bitmap {
            d.stream.fill(&self.bitmap, 0u32)?;
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
        // bits of vertices below n only, within the ceil(n / 32) words of the bitmap sent or
        // of the frontier at `mark`, or none (null), and adds to counters (COUNTERS u64).
        // The push step appended its heads behind its frontier of `frontier` items (listed
        // from 0). Bounded by n threads.
        unsafe { self.launch(&self.kernels.push_finds, d.n as usize, args, None)? };
        match &self.pull_bits {
            Some(bits) if write_bitmap => {
                self.send_front(bits, mark, 0..bitmap_words(&self.bitmap)?)
            }
            _ => Ok(()),
        }
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
        self.launch_apply(packet, (word_offset, false), mark)
    }

    fn list_push_finds(&self, _mark: u32, frontier: u32, cap: u32) -> Result<(), Error> {
        let d = &self.dir;
        check_list_fits(
            cap,
            self.bitmap.len(),
            "a list of push finds in the bitmap sent",
        )?;
        let args = (
            DevicePtr::<u32>::from_slice(&d.wl.raw())?,
            (d.wl.len() - 1) as u32,
            frontier,
            DevicePtr::<u32>::from_slice(&d.ctrl.raw())?,
            DevicePtr::<u32>::from_slice(&self.bitmap.raw())?,
            cap,
        );
        // SAFETY: bfs_list_heads(const unsigned* wl_data, unsigned wl_mask, unsigned from,
        // unsigned* ctrl, unsigned* out, unsigned cap): reads ctrl's end word, raises its
        // overflow word (CTRL_WORDS u32) where the heads outnumber `cap`, reads at most `cap`
        // worklist slots (masked positions) and writes out[0..1 + cap], within the bitmap
        // (checked above).
        unsafe { self.launch(&self.kernels.list_heads, cap.max(1) as usize, args, None) }
    }

    fn apply_list(&self, list: &Buffer<u32>, cap: u32, mark: u32) -> Result<(), Error> {
        check_list_fits(cap, list.len(), "a received list of push finds")?;
        self.launch_apply(&list.slice(..cap as usize + 1)?, (0, true), mark)
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
