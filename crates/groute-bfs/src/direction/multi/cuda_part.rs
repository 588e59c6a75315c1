//! [`CudaPart`]: one CUDA device's kernels of a multi-device run: the one-device storage and
//! steps of `direction/cuda.rs` (its push and pull launches) plus `bfs_level_bitmap`,
//! `bfs_apply_bitmap` and `bfs_frontier_scan` of `kernels/bfs/bfs_direction.cu`.

use std::ops::Range;

use groute_core::cuda::{CudaFunction, CudaModule, DevicePtr, KernelArgs, LaunchConfig};
use groute_core::{Buffer, Context, Device, DeviceId, Error, Stream};
use groute_graph::Csr;
use groute_kernels::bfs::DIRECTION;

use super::part::{Part, PartCounts};
use crate::BfsError;
use crate::direction::cuda::{BLOCK, CudaDirection};
use crate::direction::readback::{read_back, read_counters};

/// One CUDA device's storage and kernels.
pub(super) struct CudaPart {
    context: Context,
    id: DeviceId,
    dir: CudaDirection,
    owned: Range<u32>,
    bitmap: Buffer<u32>,
    mark_bitmap: CudaFunction,
    apply_bitmap: CudaFunction,
    frontier_scan: CudaFunction,
    grid: u32,
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
        // The frontier (owned vertices, at most n) plus what one step appends behind it (each
        // vertex at most once per run): 2n slots never wrap.
        let dir = CudaDirection::new(context, device, (push, pull), owned.clone(), 2 * n)?;
        let module = CudaModule::load(dir.stream.raw().as_ref(), &DIRECTION)?;
        let mark_bitmap = module.function("bfs_level_bitmap")?;
        let apply_bitmap = module.function("bfs_apply_bitmap")?;
        let frontier_scan = module.function("bfs_frontier_scan")?;
        let grid = frontier_scan.max_resident_grid(BLOCK, 0)?.max(1);
        let bitmap = device.alloc::<u32>(n.div_ceil(32).max(1))?;
        Ok(CudaPart {
            context: context.clone(),
            id: device.id(),
            dir,
            owned,
            bitmap,
            mark_bitmap,
            apply_bitmap,
            frontier_scan,
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
}

impl Part for CudaPart {
    fn stream(&self) -> &Stream {
        &self.dir.stream
    }

    fn bitmap(&self) -> &Buffer<u32> {
        &self.bitmap
    }

    fn reset(&self, source: u32) -> Result<(), Error> {
        self.dir.reset(source)
    }

    fn push(&self, _level: u32, frontier: u32) -> Result<(), Error> {
        self.dir.launch_push(0, frontier)
    }

    fn pull(&self, level: u32) -> Result<(), Error> {
        // Appends behind the frontier; those items are never read (the scan rebuilds it).
        self.dir.launch_pull(level, 0, self.owned.clone())
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
            DevicePtr::<u32>::from_slice(&self.dir.ctrl.raw())?,
        );
        // SAFETY: bfs_level_bitmap(const unsigned* levels, unsigned n, unsigned mark,
        // unsigned* bitmap, unsigned word_begin, unsigned word_end, unsigned* ctrl): reads
        // levels below n only, writes words [word_begin, word_end), within the bitmap's
        // ceil(n / 32) words (the caller's range), and ctrl's first word (CTRL_WORDS u32).
        unsafe { self.launch(&self.mark_bitmap, span * 32, args, None) }
    }

    fn apply(&self, packet: &Buffer<u32>, word_offset: u32, mark: u32) -> Result<(), Error> {
        let args = (
            DevicePtr::<u32>::from_slice(&self.dir.levels.raw())?,
            self.dir.n,
            DevicePtr::<u32>::from_slice(&packet.raw())?,
            word_offset,
            packet.len() as u32,
            mark,
        );
        // SAFETY: bfs_apply_bitmap(unsigned* levels, unsigned n, const unsigned* bitmap,
        // unsigned word_offset, unsigned words, unsigned mark): reads the packet's `words`
        // words and writes levels below n only. The packet is a link receive buffer on this
        // device, valid in stream order (the caller made the stream wait for it) and not reused
        // before the release event the caller records after this launch.
        unsafe { self.launch(&self.apply_bitmap, packet.len() * 32, args, Some(packet)) }
    }

    fn scan_frontier(&self, mark: u32) -> Result<(), Error> {
        // The worklist starts empty: zeroed by the reset, rewound by mark_bitmap since.
        let d = &self.dir;
        let args = (
            DevicePtr::<u32>::from_slice(&d.levels.raw())?,
            d.push_ptrs()?.offsets,
            d.pull_ptrs()?.offsets,
            self.owned.start,
            self.owned.end.min(d.n),
            mark,
            DevicePtr::<u32>::from_slice(&d.wl.raw())?,
            (d.wl.len() - 1) as u32,
            DevicePtr::<u32>::from_slice(&d.ctrl.raw())?,
            DevicePtr::<u64>::from_slice(&d.counters.raw())?,
        );
        let span = self.owned.end.saturating_sub(self.owned.start) as usize;
        // SAFETY: bfs_frontier_scan(const unsigned* levels, const unsigned long long* push_offsets,
        // const unsigned long long* pull_offsets, unsigned begin, unsigned end, unsigned mark,
        // unsigned* wl_data, unsigned wl_mask, unsigned* ctrl, unsigned long long* counters):
        // vertices [begin, end) (end clamped to n) index levels (n) and both offset arrays
        // (this device's rows, the owned range, rebased to global ids); it appends at most end - begin <= n items from position 0 into a worklist
        // of wl_mask + 1 >= 2n slots; counters holds four u64.
        unsafe { self.launch(&self.frontier_scan, span, args, None) }
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
