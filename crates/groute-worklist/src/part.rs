//! One device's part of a partitioned graph: the rows of the vertices it owns.
//!
//! A partition renumbers the graph so that each device owns a contiguous range of vertices
//! `[first_row, end_row)` (`groute_graph::Partition`). The device then holds only those rows:
//! `offsets[first_row..=end_row]` with their global values, and the arcs they delimit,
//! `targets[offsets[first_row]..offsets[end_row]]` (and the weights beside them). Kernels keep
//! indexing by global vertex and arc ids: on CUDA through pointers rebased by the part's first
//! row and first arc ([`DeviceCsr::device_ptrs`]), on the host through [`DeviceCsr::row`]. A
//! device never reads another device's rows: it expands only the items it owns and sends the
//! others to their owners. On CUDA, compute-sanitizer's memcheck reports a read of a row that
//! is not there; on the host backend it panics, which fails the device.
//!
//! The part is uploaded straight from the loaded CSR's slices (no per-device copy on the
//! host), and counts as graph structure in the device's [`MemoryUsage`]
//! (`groute_core::MemoryUsage::graph_bytes`).

use std::ops::Range;

use groute_core::cuda::DevicePtr;
use groute_core::{Buffer, Device, Error};
use groute_graph::Csr;

/// One device's rows of a CSR, in device memory (see the module docs).
#[derive(Clone, Debug)]
pub struct DeviceCsr {
    rows: Range<u32>,
    first_arc: u64,
    num_arcs: usize,
    offsets: Buffer<u64>,
    targets: Buffer<u32>,
    weights: Option<Buffer<u32>>,
}

/// The rebased device pointers of a [`DeviceCsr`]: `offsets[v]` and `targets[e]` (and
/// `weights[e]`, null when the part has none) are valid for the owned vertices `v` and their
/// arcs `e`, by global ids.
#[derive(Clone, Copy, Debug)]
pub struct CsrPtrs {
    /// Row offsets, indexed by global vertex id.
    pub offsets: DevicePtr<u64>,
    /// Arc heads, indexed by global arc id.
    pub targets: DevicePtr<u32>,
    /// Arc weights, indexed by global arc id (null when the part has none).
    pub weights: DevicePtr<u32>,
}

impl DeviceCsr {
    /// Uploads the rows `rows` of `csr` to `device` (with the weights when `weighted`; the
    /// caller checked that `csr` has them). Waits for the copies.
    pub fn upload(
        device: &Device,
        csr: &Csr,
        rows: Range<u32>,
        weighted: bool,
    ) -> Result<Self, Error> {
        let n = csr.num_vertices();
        if rows.start > rows.end || rows.end as usize > n {
            return Err(Error::invalid(
                "device rows",
                format_args!("{rows:?}"),
                format!("a range of the graph's {n} vertices"),
            ));
        }
        let offsets = &csr.offsets()[rows.start as usize..=rows.end as usize];
        let first_arc = offsets[0];
        let arcs = first_arc as usize..offsets[offsets.len() - 1] as usize;
        let weights = match csr.weights() {
            Some(w) if weighted => Some(upload_arcs(device, &w[arcs.clone()])?),
            _ => None,
        };
        Ok(DeviceCsr {
            rows,
            first_arc,
            num_arcs: arcs.len(),
            offsets: device.upload_graph(offsets)?,
            targets: upload_arcs(device, &csr.targets()[arcs.clone()])?,
            weights,
        })
    }

    /// The owned vertices.
    pub fn rows(&self) -> Range<u32> {
        self.rows.clone()
    }

    /// Arcs held (those leaving the owned vertices).
    pub fn num_arcs(&self) -> usize {
        self.num_arcs
    }

    /// Whether the part holds weights.
    pub fn is_weighted(&self) -> bool {
        self.weights.is_some()
    }

    /// Bytes of device memory the part holds.
    pub fn bytes(&self) -> u64 {
        let words = self.offsets.len() * 8
            + self.targets.len() * 4
            + self.weights.as_ref().map_or(0, |w| w.len() * 4);
        words as u64
    }

    /// The buffers (for `keep_alive` and the like): offsets, targets and weights.
    pub fn buffers(&self) -> (&Buffer<u64>, &Buffer<u32>, Option<&Buffer<u32>>) {
        (&self.offsets, &self.targets, self.weights.as_ref())
    }

    /// The kernels' pointers, rebased to global ids (CUDA devices).
    pub fn device_ptrs(&self) -> Result<CsrPtrs, Error> {
        let weights = match &self.weights {
            Some(w) => DevicePtr::<u32>::from_slice(&w.raw())?.rebased(self.first_arc),
            None => DevicePtr::null(),
        };
        Ok(CsrPtrs {
            offsets: DevicePtr::<u64>::from_slice(&self.offsets.raw())?
                .rebased(u64::from(self.rows.start)),
            targets: DevicePtr::<u32>::from_slice(&self.targets.raw())?.rebased(self.first_arc),
            weights,
        })
    }

    /// A host view of the part (host-backend devices; `None` on CUDA).
    ///
    /// # Safety
    /// No stream writes the part's buffers while the view lives (they are written once, by
    /// [`DeviceCsr::upload`], which waits for its copies).
    pub unsafe fn host_view(&self) -> Option<HostCsrRows<'_>> {
        // SAFETY: the caller promises no writes while the view lives.
        let (offsets, targets) =
            unsafe { (self.offsets.as_host_slice()?, self.targets.as_host_slice()?) };
        // SAFETY: as above.
        let weights = unsafe { self.weights.as_ref().and_then(|w| w.as_host_slice()) };
        Some(HostCsrRows {
            first_row: self.rows.start,
            first_arc: self.first_arc,
            offsets,
            targets,
            weights,
        })
    }
}

/// Uploads one array per arc: `arcs`, or one zero when it is empty (a device allocation of no
/// bytes has no address to pass to a kernel; no kernel reads the element).
fn upload_arcs(device: &Device, arcs: &[u32]) -> Result<Buffer<u32>, Error> {
    device.upload_graph(if arcs.is_empty() { &[0] } else { arcs })
}

/// A host view of a [`DeviceCsr`], indexed by global vertex ids.
#[derive(Clone, Copy, Debug)]
pub struct HostCsrRows<'a> {
    first_row: u32,
    first_arc: u64,
    offsets: &'a [u64],
    targets: &'a [u32],
    weights: Option<&'a [u32]>,
}

impl<'a> HostCsrRows<'a> {
    /// The arcs of owned vertex `v` (global id): heads and weights (1 where the part holds
    /// none). Panics when `v` is not owned: a kernel that reads another device's row is a bug,
    /// and the panic fails the device.
    pub fn row(&self, v: u32) -> (&'a [u32], Option<&'a [u32]>) {
        let r = v
            .checked_sub(self.first_row)
            .map(|r| r as usize)
            .filter(|&r| r + 1 < self.offsets.len())
            .unwrap_or_else(|| {
                panic!(
                    "vertex {v} is not one of this device's rows {}..{}",
                    self.first_row,
                    self.first_row as usize + self.offsets.len() - 1
                )
            });
        let arcs = (self.offsets[r] - self.first_arc) as usize
            ..(self.offsets[r + 1] - self.first_arc) as usize;
        (&self.targets[arcs.clone()], self.weights.map(|w| &w[arcs]))
    }

    /// Out-degree of owned vertex `v` (panics as [`HostCsrRows::row`] does).
    pub fn degree(&self, v: u32) -> usize {
        self.row(v).0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use groute_core::{BackendChoice, Context};

    /// 0 -> 1, 2; 1 -> (none); 2 -> 0; 3 -> 1, 2, 3 (weights 10 x the arc id).
    fn csr() -> Csr {
        Csr::from_parts(
            vec![0u64, 2, 2, 3, 6],
            vec![1u32, 2, 0, 1, 2, 3],
            Some(vec![0u32, 10, 20, 30, 40, 50].into()),
        )
        .unwrap()
    }

    fn host() -> Context {
        Context::builder()
            .devices(1)
            .backend(BackendChoice::Host)
            .build()
            .unwrap()
    }

    #[test]
    fn a_part_holds_its_rows_indexed_by_global_ids() {
        let ctx = host();
        let device = &ctx.devices()[0];
        let part = DeviceCsr::upload(device, &csr(), 2..4, true).unwrap();
        assert_eq!(
            (part.rows(), part.num_arcs(), part.is_weighted()),
            (2..4, 4, true)
        );
        // Offsets 2..=4 (3 x 8 B), 4 targets and 4 weights.
        assert_eq!(part.bytes(), 24 + 16 + 16);
        assert_eq!(device.memory_usage().graph_bytes, part.bytes());
        // SAFETY: nothing writes the part.
        let rows = unsafe { part.host_view() }.unwrap();
        assert_eq!(rows.row(2), (&[0u32][..], Some(&[20u32][..])));
        assert_eq!(rows.row(3), (&[1u32, 2, 3][..], Some(&[30u32, 40, 50][..])));
        assert_eq!(rows.degree(3), 3);
        let unweighted = DeviceCsr::upload(device, &csr(), 0..2, false).unwrap();
        // SAFETY: as above.
        let rows = unsafe { unweighted.host_view() }.unwrap();
        assert_eq!(rows.row(0), (&[1u32, 2][..], None));
        assert_eq!(rows.degree(1), 0);
    }

    #[test]
    fn a_row_of_another_part_panics() {
        let ctx = host();
        let part = DeviceCsr::upload(&ctx.devices()[0], &csr(), 1..3, false).unwrap();
        // SAFETY: nothing writes the part.
        let rows = unsafe { part.host_view() }.unwrap();
        for v in [0, 3, 4] {
            let caught = std::panic::catch_unwind(|| rows.row(v));
            assert!(caught.is_err(), "row {v} is not the part's");
        }
    }

    #[test]
    fn an_empty_part_and_bad_ranges() {
        let ctx = host();
        let device = &ctx.devices()[0];
        let empty = DeviceCsr::upload(device, &csr(), 1..2, true).unwrap();
        assert_eq!(empty.num_arcs(), 0);
        assert!(DeviceCsr::upload(device, &csr(), 3..5, false).is_err());
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 3..2;
        assert!(DeviceCsr::upload(device, &csr(), reversed, false).is_err());
    }
}
