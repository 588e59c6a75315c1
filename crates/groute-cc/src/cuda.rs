//! Typed launch wrappers for `kernels/cc/cc.cu` (CUDA backend).
//!
//! [`CcKernels::load`] compiles (once per process) and loads (once per device) the module and
//! looks up its kernels; each method validates sizes, takes device pointers, launches with
//! one `SAFETY` comment naming the kernel's signature, and keeps the memory alive until the
//! kernel completes. Nothing is synchronised.
//!
//! The kernels check every vertex index against the parent array's length, so no content of
//! the buffers (a corrupted array, an edge out of range) can make them access memory out of
//! bounds: out-of-range edges and entries are skipped.

use std::sync::Arc;

use groute_core::backend::RawMemory;
use groute_core::cuda::{
    CudaFunction, CudaModule, CudaStream, DevicePtr, KernelSource, LaunchConfig,
};
use groute_core::{Buffer, Stream};
use groute_kernels::abi::CcLink;

use crate::device_rows::{LinkPass, RowsPart, TILE_ARCS};
use crate::{CcError, Edge};

/// Threads per block of every CC kernel (a multiple of 32: the warp hook needs whole warps).
pub const CC_BLOCK: u32 = 256;
const _: () = assert!(CC_BLOCK % 32 == 0);

/// The kernel source, `kernels/cc/cc.cu`.
pub const CC_SOURCE: KernelSource = groute_kernels::cc::CC;

/// The CC kernels loaded for one device, with their grid sizes (resident blocks; the warp
/// hook has its own).
#[derive(Clone, Debug)]
pub struct CcKernels {
    init: CudaFunction,
    first_parents: CudaFunction,
    hook: CudaFunction,
    compress: CudaFunction,
    merge: CudaFunction,
    take_slice: CudaFunction,
    link_first: CudaFunction,
    link_sampled: CudaFunction,
    link_rest: CudaFunction,
    link_tiles: CudaFunction,
    grid: u32,
    hook_grid: u32,
    link_grid: u32,
}

fn n32(what: &'static str, n: usize) -> Result<u32, CcError> {
    u32::try_from(n).map_err(|_| CcError::invalid(what, n, "at most u32::MAX elements"))
}

fn device_memory<T: bytemuck::Pod>(b: &Buffer<T>) -> Arc<dyn RawMemory> {
    b.raw().memory
}

impl CcKernels {
    /// Loads the module for the device of `stream` (a CUDA stream).
    pub fn load(stream: &Stream) -> Result<Self, CcError> {
        let module = CudaModule::load(stream.raw().as_ref(), &CC_SOURCE)?;
        let init = module.function("cc_init")?;
        let first_parents = module.function("cc_first_parents")?;
        let hook = module.function("cc_hook_edges_warp")?;
        let compress = module.function("cc_compress")?;
        let merge = module.function("cc_merge")?;
        let take_slice = module.function("cc_take_slice")?;
        let link_first = module.function("cc_link_first")?;
        let link_sampled = module.function("cc_link_sampled")?;
        let link_rest = module.function("cc_link_rest")?;
        let link_tiles = module.function("cc_link_tiles")?;
        // The hook gets its own grid, so that its resources never shrink the others'.
        let resident = |fs: &[&CudaFunction]| -> Result<u32, CcError> {
            let mut grid = u32::MAX;
            for f in fs {
                grid = grid.min(f.max_resident_grid(CC_BLOCK, 0)?.max(1));
            }
            Ok(grid)
        };
        let grid = resident(&[&init, &first_parents, &compress, &merge, &take_slice])?;
        let hook_grid = resident(&[&hook])?;
        let link_grid = resident(&[&link_first, &link_sampled, &link_rest, &link_tiles])?;
        Ok(CcKernels {
            init,
            first_parents,
            hook,
            compress,
            merge,
            take_slice,
            link_first,
            link_sampled,
            link_rest,
            link_tiles,
            grid,
            hook_grid,
            link_grid,
        })
    }

    fn config(&self, n: usize) -> LaunchConfig {
        LaunchConfig::for_elements(n, CC_BLOCK, Some(self.grid))
    }

    fn finish(stream: &Stream, memory: Vec<Arc<dyn RawMemory>>) -> Result<(), CcError> {
        CudaStream::from_raw(stream.raw().as_ref())?.keep_alive(memory)?;
        Ok(())
    }

    /// `parent[v] = v` for every `v`.
    pub fn init(&self, stream: &Stream, parent: &Buffer<u32>) -> Result<(), CcError> {
        let n = n32("parent array length", parent.len())?;
        if n == 0 {
            return Ok(());
        }
        let args = (DevicePtr::<u32>::from_slice(&parent.raw())?, n);
        // SAFETY: cc_init(unsigned* parent, unsigned n): the tuple matches it field by field;
        // `parent` is device memory of n u32s (from_slice checked it is device-addressable and
        // aligned) kept alive below until the kernel completes; cc_init writes indices < n.
        unsafe {
            self.init
                .launch(stream.raw().as_ref(), self.config(n as usize), args)?
        };
        Self::finish(stream, vec![device_memory(parent)])
    }

    /// For every edge of `edges` whose higher end is still a root, makes the lower end its
    /// parent (`cc_first_parents`: plain stores, before [`CcKernels::hook_edges`] over the same
    /// edges). `edges` as in [`CcKernels::hook_edges`].
    pub fn first_parents(
        &self,
        stream: &Stream,
        edges: &Buffer<Edge>,
        parent: &Buffer<u32>,
    ) -> Result<(), CcError> {
        self.launch_on_edges(&self.first_parents, self.grid, stream, edges, parent)
    }

    /// Hooks every edge of `edges` into `parent` (edges with an endpoint out of range are
    /// skipped; any edge order works, CSR order is what the warp-cooperative kernel is fast
    /// on). `edges` must be valid in stream order and unwritten until the kernel completes.
    pub fn hook_edges(
        &self,
        stream: &Stream,
        edges: &Buffer<Edge>,
        parent: &Buffer<u32>,
    ) -> Result<(), CcError> {
        self.launch_on_edges(&self.hook, self.hook_grid, stream, edges, parent)
    }

    /// Enqueues `kernel`, `cc_first_parents` or `cc_hook_edges_warp`, over `edges` and
    /// `parent`, on a grid of at most `grid` blocks.
    fn launch_on_edges(
        &self,
        kernel: &CudaFunction,
        grid: u32,
        stream: &Stream,
        edges: &Buffer<Edge>,
        parent: &Buffer<u32>,
    ) -> Result<(), CcError> {
        let n = n32("parent array length", parent.len())?;
        if edges.is_empty() || n == 0 {
            return Ok(());
        }
        let args = (
            // u64: checks the 8-byte alignment that a `uint2` load needs.
            DevicePtr::<u64>::from_slice(&edges.raw())?,
            edges.len() as u64,
            DevicePtr::<u32>::from_slice(&parent.raw())?,
            n,
        );
        let config = LaunchConfig::for_elements(edges.len(), CC_BLOCK, Some(grid));
        // SAFETY: cc_first_parents and cc_hook_edges_warp, the only kernels passed here, take
        // (const uint2* edges, unsigned long long m, unsigned* parent, unsigned n): the tuple
        // matches them field by field; `edges` holds m 8-byte `Edge`s (repr(C) {u, v} = uint2
        // {x, y}), 8-byte aligned (checked by from_slice::<u64>); `parent` holds n u32s; both
        // are device-addressable and kept alive below until the kernel completes; the kernels
        // check every index against n before using it, and blocks of CC_BLOCK threads are a
        // multiple of 32 as the warp hook requires.
        unsafe { kernel.launch(stream.raw().as_ref(), config, args)? };
        Self::finish(stream, vec![device_memory(edges), device_memory(parent)])
    }

    /// Enqueues one pass of linking a device's own rows (`cc_link_first`, `cc_link_sampled`,
    /// or `cc_link_rest` then `cc_link_tiles` where the part has tiles), adding the arcs linked
    /// to the part's count.
    pub(crate) fn link_rows(
        &self,
        stream: &Stream,
        rows: &RowsPart,
        pass: LinkPass,
        parent: &Buffer<u32>,
    ) -> Result<(), CcError> {
        let n = n32("parent array length", parent.len())?;
        let owned = rows.rows_within(parent.len())?;
        if owned.is_empty() || n == 0 {
            return Ok(());
        }
        let csr = rows.csr.device_ptrs()?;
        let (mut round, mut sampled, mut anchor, mut lower_only) = (0, 0, u32::MAX, false);
        match pass {
            LinkPass::First => {}
            LinkPass::Sampled { round: r } => round = r,
            LinkPass::Rest { anchor: a } => {
                sampled = crate::device_rows::SAMPLED_ARCS;
                anchor = a.unwrap_or(u32::MAX);
            }
            LinkPass::EveryArc { lower_only: l } => lower_only = l,
        }
        let args = CcLink {
            offsets: csr.offsets,
            targets: csr.targets,
            tile_row: DevicePtr::<u32>::from_slice(&rows.tile_row.raw())?,
            tile_begin: DevicePtr::<u64>::from_slice(&rows.tile_begin.raw())?,
            parent: DevicePtr::<u32>::from_slice(&parent.raw())?,
            linked: DevicePtr::<u64>::from_slice(&rows.linked.raw())?,
            first_row: owned.start,
            end_row: owned.end,
            n,
            round,
            sampled,
            anchor,
            tile_count: rows.tile_count,
            tile_arcs: TILE_ARCS,
            lower_only: lower_only.into(),
            pad: 0,
        };
        let raw = stream.raw();
        let kernels: &[(&CudaFunction, usize)] = match pass {
            LinkPass::First => &[(&self.link_first, owned.len())],
            LinkPass::Sampled { .. } => &[(&self.link_sampled, owned.len())],
            LinkPass::Rest { .. } | LinkPass::EveryArc { .. } if rows.tile_count == 0 => {
                &[(&self.link_rest, owned.len())]
            }
            LinkPass::Rest { .. } | LinkPass::EveryArc { .. } => &[
                (&self.link_rest, owned.len()),
                (&self.link_tiles, rows.tile_count as usize * 32),
            ],
        };
        for &(kernel, items) in kernels {
            // SAFETY: cc_link_first, cc_link_sampled, cc_link_rest and cc_link_tiles each take
            // one `CcLink` (abi_cc.h, its layout checked against the Rust twin by
            // groute-kernels' tests/abi.rs). `offsets` and `targets` are the part's rows
            // rebased to global ids (DeviceCsr::device_ptrs): the kernels read offsets[v] only
            // for owned v and v + 1 <= end_row, and targets only inside those rows; `tile_row`
            // and `tile_begin` hold `tile_count` entries (at least one element each) of rows
            // of the part; `parent` holds n u32s and `linked` one u64. Every buffer is device
            // memory kept alive below until the kernels complete; every head is checked
            // against n before it indexes `parent` (cc_link_first stores only to owned rows,
            // below n); blocks of CC_BLOCK threads are whole warps, as the warp-wide passes
            // require.
            unsafe {
                kernel.launch(
                    raw.as_ref(),
                    LaunchConfig::for_elements(items, CC_BLOCK, Some(self.link_grid)),
                    (args,),
                )?
            };
        }
        let (offsets, targets, _) = rows.csr.buffers();
        Self::finish(
            stream,
            vec![
                device_memory(offsets),
                device_memory(targets),
                device_memory(&rows.tile_row),
                device_memory(&rows.tile_begin),
                device_memory(parent),
                device_memory(&rows.linked),
            ],
        )
    }

    /// Pointer jumping: afterwards every vertex of `vertices` (clamped to the array) points
    /// at its root.
    pub fn compress(
        &self,
        stream: &Stream,
        parent: &Buffer<u32>,
        vertices: std::ops::Range<u32>,
    ) -> Result<(), CcError> {
        let n = n32("parent array length", parent.len())?;
        let end = vertices.end.min(n);
        if vertices.start >= end {
            return Ok(());
        }
        let args = (
            DevicePtr::<u32>::from_slice(&parent.raw())?,
            vertices.start,
            end,
            n,
        );
        let config = self.config((end - vertices.start) as usize);
        // SAFETY: cc_compress(unsigned* parent, unsigned first, unsigned end, unsigned n):
        // the tuple matches it field by field; `parent` is device memory of n u32s (from_slice
        // checked it is device-addressable and aligned) kept alive below until the kernel
        // completes; the kernel writes entries first..min(end, n) only and reads only below
        // n.
        unsafe { self.compress.launch(stream.raw().as_ref(), config, args)? };
        Self::finish(stream, vec![device_memory(parent)])
    }

    /// Merges another array's entries: `other[k]` is the parent of vertex `offset + k` there,
    /// hooked here as the edge `(offset + k, other[k])`. `other` as `edges` in
    /// [`CcKernels::hook_edges`].
    pub fn merge(
        &self,
        stream: &Stream,
        offset: usize,
        other: &Buffer<u32>,
        parent: &Buffer<u32>,
    ) -> Result<(), CcError> {
        let n = n32("parent array length", parent.len())?;
        let count = n32("merge packet length", other.len())?;
        let offset = n32("merge packet offset", offset)?;
        if count == 0 || n == 0 {
            return Ok(());
        }
        let args = (
            DevicePtr::<u32>::from_slice(&other.raw())?,
            offset,
            count,
            DevicePtr::<u32>::from_slice(&parent.raw())?,
            n,
        );
        // SAFETY: cc_merge(const unsigned* other, unsigned offset, unsigned count,
        // unsigned* parent, unsigned n): the tuple matches it field by field; `other` holds
        // count u32s and `parent` n u32s, both device-addressable and kept alive below until the
        // kernel completes; the kernel checks every vertex index against n before using it.
        unsafe {
            self.merge
                .launch(stream.raw().as_ref(), self.config(count as usize), args)?
        };
        Self::finish(stream, vec![device_memory(other), device_memory(parent)])
    }

    /// Takes `parent[start..start + slice.len()]` (compressed) into `slice` and sets
    /// `changed[0]` to 1 when any entry differs from what `slice` held (it is left as it is
    /// otherwise). Entries past the parent array are left as they are.
    pub fn take_slice(
        &self,
        stream: &Stream,
        (parent, start): (&Buffer<u32>, usize),
        slice: &Buffer<u32>,
        changed: &Buffer<u32>,
    ) -> Result<(), CcError> {
        let n = n32("parent array length", parent.len())?;
        let count = n32("slice length", slice.len())?;
        let start = n32("slice start", start)?;
        if count == 0 {
            return Ok(());
        }
        if changed.is_empty() {
            return Err(CcError::invalid("changed flag length", 0, "one word"));
        }
        let args = (
            DevicePtr::<u32>::from_slice(&parent.raw())?,
            start,
            count,
            DevicePtr::<u32>::from_slice(&slice.raw())?,
            DevicePtr::<u32>::from_slice(&changed.raw())?,
            n,
        );
        // SAFETY: cc_take_slice(const unsigned* parent, unsigned start, unsigned count,
        // unsigned* slice, unsigned* changed, unsigned n): the tuple matches it field by
        // field; `parent` holds n u32s, `slice` count u32s and `changed` at least one, all
        // device-addressable and kept alive below until the kernel completes; the kernel
        // reads parent only below n and writes slice only below count.
        unsafe {
            self.take_slice
                .launch(stream.raw().as_ref(), self.config(count as usize), args)?
        };
        Self::finish(
            stream,
            vec![
                device_memory(parent),
                device_memory(slice),
                device_memory(changed),
            ],
        )
    }
}
