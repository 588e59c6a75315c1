//! [`DeviceRows`]: the graph's rows held in device memory, a contiguous block of vertices per
//! device, and the sampled linking over them (Afforest) that a run does on each device.

use std::sync::Arc;
use std::time::{Duration, Instant};

use groute_core::backend::Backend;
use groute_core::{Buffer, Context, Device, Stream};
use groute_graph::{Csr, Graph, Partition, block_partition};
use groute_worklist::DeviceCsr;
use rayon::prelude::*;

use crate::CcError;
use crate::kernels::Kernels;

/// Arcs at the start of each row linked before the rest of the rows, on graphs that are
/// sampled: arc 0 where its head is below the row (made the row's parent, ECL-CC's
/// initialisation) and arc 1 (one round of Afforest's neighbour sampling; two arcs is its
/// authors' choice). Arc 0 to a higher head is linked with the rest of its row, where that
/// row is still outside the anchor's tree: a sampling round over arc 0 spent most of its time
/// on these rows.
pub const SAMPLED_ARCS: u32 = 2;

/// Arcs per tile of a long row (CUDA): rows with at least this many arcs are split into tiles
/// of this many, one warp each, so that a hub's arcs spread over the whole grid instead of
/// keeping one warp busy while the others idle.
pub const TILE_ARCS: u32 = 2048;

/// One device's rows, their tiles and its count of arcs linked.
pub(crate) struct RowsPart {
    pub(crate) csr: DeviceCsr,
    /// The row of each tile.
    pub(crate) tile_row: Buffer<u32>,
    /// The first arc of each tile.
    pub(crate) tile_begin: Buffer<u64>,
    pub(crate) tile_count: u32,
    /// Arcs linked by this device's kernels (zeroed before every run).
    pub(crate) linked: Buffer<u64>,
}

/// The rows of a graph in device memory, one contiguous block of vertices per device (blocks
/// of about equal arcs, in the graph's own numbering), uploaded once and linked by every run of
/// [`crate::connected_components`]: each device links its own rows into its parent array, the
/// arrays then merge up the reduction tree.
///
/// A device first makes each row's arc 0 the row's parent where its head is below the row (a
/// plain store per row, no find and no atomic: ECL-CC's initialisation, Jaiganesh and
/// Burtscher, HPDC 2018; the passes after it leave those arcs out). Then, on a graph of at
/// least [`crate::CcStorage::DENSE_DEGREE`] arcs per vertex, it links as Afforest does (Sutton,
/// Ben-Nun and Barak, "Optimizing Parallel Graph Connectivity Computation via Subgraph
/// Sampling", IPDPS 2018):
/// 1. **Sampling:** arc 1 of every row, then a compress of the device's rows and the anchor
///    (the rest pass asks whether the rows are in the anchor's tree; the other vertices'
///    paths are left as they are, so that a device's compress shrinks with its share of the
///    rows). With the parents of the first step, this already joins nearly every vertex of
///    the largest component into one tree on most graphs ([`SAMPLED_ARCS`]).
/// 2. **The rest:** every row's remaining arcs (arc 0 too where its head is above the row),
///    except the rows of vertices already in the tree of the *anchor* (the vertex of largest
///    degree). On a symmetric graph that skip is exact: an arc from such a row to a vertex
///    outside the tree is linked from the other end, whose row holds the reverse arc
///    (whichever device holds it), and an arc between two vertices in the anchor's trees joins
///    nothing that the merged forests do not join already, because every device's tree holds
///    the same anchor. A directed graph has no anchor: every arc is linked (weak connectivity
///    ignores direction).
///
/// On a sparser graph sampling would link most arcs anyway, so after a compress of its rows a
/// device links every remaining arc once: on a symmetric graph only the arcs to lower heads,
/// each edge from its higher end (the reverse arc is in the head's row, whichever device holds
/// it).
///
/// So a power-law graph's run reads a few arcs per vertex instead of all of them. The device
/// memory it takes is each device's rows (8 bytes per vertex and 4 per arc, and 12 per tile of
/// a long row) and, during a run, a parent array of 4 bytes per vertex of the graph. Where the
/// rows do not fit, [`DeviceRows::new`] fails with [`CcError::RowsDoNotFit`], which names the
/// other storage: [`crate::StagedEdges`] streams the edges from host memory instead, for graphs
/// whose arcs do not fit the devices (a run whose parent array does not fit fails with the
/// device's memory error).
pub struct DeviceRows {
    parts: Vec<RowsPart>,
    num_vertices: usize,
    num_arcs: usize,
    linking: RowsLinking,
    backend: Arc<dyn Backend>,
    upload_time: Duration,
}

impl std::fmt::Debug for DeviceRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceRows")
            .field("num_vertices", &self.num_vertices)
            .field("num_arcs", &self.num_arcs)
            .field("devices", &self.parts.len())
            .field("linking", &self.linking)
            .finish()
    }
}

impl DeviceRows {
    /// Uploads the rows of `graph` to the devices of `ctx`, a block of vertices of about equal
    /// arcs per device. The anchor is the vertex of largest degree where `graph.symmetric`
    /// says the graph is symmetric, none otherwise.
    pub fn new(ctx: &Context, graph: &Graph) -> Result<Self, CcError> {
        let start = Instant::now();
        let csr = &graph.csr;
        let n = csr.num_vertices();
        crate::staged_edges::check_vertex_count(n)?;
        let partition = rows_partition(csr, ctx.num_devices())?;
        let mut parts = Vec::with_capacity(ctx.num_devices());
        for (d, device) in ctx.devices().iter().enumerate() {
            parts.push(RowsPart::upload(device, csr, partition.range(d))?);
        }
        let linking = RowsLinking::for_graph(graph);
        Ok(DeviceRows {
            parts,
            num_vertices: n,
            num_arcs: csr.num_edges() as usize,
            linking,
            backend: ctx.backend().clone(),
            upload_time: start.elapsed(),
        })
    }

    /// Vertices of the graph.
    pub fn num_vertices(&self) -> usize {
        self.num_vertices
    }

    /// Arcs of the graph (all devices' rows).
    pub fn num_arcs(&self) -> usize {
        self.num_arcs
    }

    /// The vertex whose tree's rows the second pass skips (`None` on a directed graph, and
    /// where the rows are not sampled).
    pub fn anchor(&self) -> Option<u32> {
        match self.linking {
            RowsLinking::Sampled { anchor } => anchor,
            RowsLinking::EveryArc { .. } => None,
        }
    }

    /// Each device's rows.
    pub fn rows(&self) -> Vec<std::ops::Range<u32>> {
        self.parts.iter().map(|p| p.csr.rows()).collect()
    }

    /// How long [`DeviceRows::new`] took (partition, tiles and uploads).
    pub fn upload_time(&self) -> Duration {
        self.upload_time
    }

    /// Whether these rows live on `ctx`'s devices.
    pub fn belongs_to(&self, ctx: &Context) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self.backend), Arc::as_ptr(ctx.backend()))
            && ctx.num_devices() == self.parts.len()
    }

    /// The arcs each device linked in the last run (read back from the devices: call it after
    /// the run).
    pub(crate) fn linked_per_device(&self, ctx: &Context) -> Result<Vec<u64>, CcError> {
        ctx.devices()
            .iter()
            .zip(&self.parts)
            .map(|(device, part)| part.linked(device))
            .collect()
    }

    /// Enqueues device `d`'s linking on `stream` (its stream): [`RowsPart::enqueue_link`]
    /// as this graph's rows are linked.
    pub(crate) fn enqueue_link(
        &self,
        d: usize,
        kernels: &Kernels,
        stream: &Stream,
        parent: &Buffer<u32>,
    ) -> Result<(), CcError> {
        self.parts[d].enqueue_link(kernels, stream, parent, self.linking)
    }
}

impl RowsPart {
    /// Uploads the rows `rows` of `csr` to `device`, with their tiles and a count
    /// ([`CcError::RowsDoNotFit`] where the device's memory cannot hold them).
    pub(crate) fn upload(
        device: &Device,
        csr: &Csr,
        rows: std::ops::Range<u32>,
    ) -> Result<Self, CcError> {
        Self::upload_unnamed(device, csr, rows).map_err(|e| match e {
            CcError::Core(
                e @ (groute_core::Error::DeviceOutOfMemory { .. }
                | groute_core::Error::DeviceMemoryLimit { .. }),
            ) => CcError::RowsDoNotFit(e),
            e => e,
        })
    }

    fn upload_unnamed(
        device: &Device,
        csr: &Csr,
        rows: std::ops::Range<u32>,
    ) -> Result<Self, CcError> {
        let (tile_row, tile_begin) = tiles(csr.offsets(), rows.clone())?;
        let tile_count = u32::try_from(tile_row.len())
            .map_err(|_| CcError::invalid("tiles", tile_row.len(), "below 2^32 per device"))?;
        // One element at least: zero-byte allocations are refused by some backends.
        let tile_row = device.upload(if tile_row.is_empty() { &[0] } else { &tile_row })?;
        let tile_begin = device.upload(if tile_begin.is_empty() {
            &[0]
        } else {
            &tile_begin
        })?;
        Ok(RowsPart {
            csr: DeviceCsr::upload(device, csr, rows, false)?,
            tile_row,
            tile_begin,
            tile_count,
            linked: device.alloc::<u64>(1)?,
        })
    }

    /// Enqueues the linking of these rows on `stream` (their device's), as `linking` says:
    /// zero the count, make each row's arc 0 its parent where the head is below the row
    /// (ECL-CC's initialisation), then either sample (arc 1 of every row, then a compress of
    /// these rows and the anchor) and link the rest of the rows outside the anchor's tree, or
    /// compress these rows and link every other arc; `parent` holds an initialised array.
    /// Afterwards `parent` is a forest, not compressed.
    pub(crate) fn enqueue_link(
        &self,
        kernels: &Kernels,
        stream: &Stream,
        parent: &Buffer<u32>,
        linking: RowsLinking,
    ) -> Result<(), CcError> {
        stream.fill(&self.linked, 0u64)?;
        kernels.link_rows(stream, self, LinkPass::First, parent)?;
        match linking {
            RowsLinking::Sampled { anchor } => {
                kernels.link_rows(stream, self, LinkPass::Sampled { round: 1 }, parent)?;
                let rows = self.csr.rows();
                kernels.compress_range(stream, parent, rows.clone())?;
                // The rest pass's every warp starts from the anchor's root.
                if let Some(a) = anchor.filter(|a| !rows.contains(a)) {
                    kernels.compress_range(stream, parent, a..a.saturating_add(1))?;
                }
                kernels.link_rows(stream, self, LinkPass::Rest { anchor }, parent)
            }
            RowsLinking::EveryArc { lower_only } => {
                // Only the device's rows have parents yet.
                kernels.compress_range(stream, parent, self.csr.rows())?;
                kernels.link_rows(stream, self, LinkPass::EveryArc { lower_only }, parent)
            }
        }
    }

    /// The rows, checked to lie in a parent array of `n` entries (the kernels of either backend
    /// index it by row).
    pub(crate) fn rows_within(&self, n: usize) -> Result<std::ops::Range<u32>, CcError> {
        let owned = self.csr.rows();
        if owned.end as usize > n {
            return Err(CcError::invalid(
                "device rows",
                format_args!("{owned:?}"),
                format!("rows of the parent array's {n} vertices"),
            ));
        }
        Ok(owned)
    }

    /// The arcs the last run linked (read back from `device`, whose part this is: call it after
    /// the run).
    pub(crate) fn linked(&self, device: &Device) -> Result<u64, CcError> {
        Ok(device.download(&self.linked)?.first().copied().unwrap_or(0))
    }
}

/// The vertex of largest degree among `rows` (the lowest such), with its degree; `None` where
/// no row has an arc.
pub(crate) fn largest_degree(offsets: &[u64], rows: std::ops::Range<u32>) -> Option<(u64, u32)> {
    rows.into_par_iter()
        .map(|v| {
            let degree = offsets[v as usize + 1] - offsets[v as usize];
            (degree, std::cmp::Reverse(v))
        })
        .max()
        .filter(|&(degree, _)| degree > 0)
        .map(|(degree, std::cmp::Reverse(v))| (degree, v))
}

/// How a device links its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RowsLinking {
    /// Afforest: sample, then link the rest of the rows outside the anchor's tree (`None`:
    /// every row).
    Sampled { anchor: Option<u32> },
    /// Every arc once (`lower_only`, a symmetric graph: only the arcs to lower heads, the
    /// others being their reverses).
    EveryArc { lower_only: bool },
}

impl RowsLinking {
    /// Sampling on graphs of at least [`crate::CcStorage::DENSE_DEGREE`] arcs per vertex, around
    /// the vertex of largest degree where the graph is symmetric; every arc on sparser ones.
    pub(crate) fn for_graph(graph: &Graph) -> RowsLinking {
        let csr = &graph.csr;
        let n = csr.num_vertices();
        // Dense as CcStorage::Auto counts it: where it keeps the rows on the devices.
        let auto = crate::CcStorage::Auto.resolve(n, csr.num_edges());
        if auto == crate::CcStorage::DeviceRows {
            let anchor = graph
                .symmetric
                .then(|| largest_degree(csr.offsets(), 0..n as u32).map(|(_, v)| v))
                .flatten();
            RowsLinking::Sampled { anchor }
        } else {
            RowsLinking::EveryArc {
                lower_only: graph.symmetric,
            }
        }
    }
}

/// One pass of [`RowsPart::enqueue_link`]. The passes after [`LinkPass::First`] leave out the
/// arcs it linked (and loops).
#[derive(Clone, Copy, Debug)]
pub(crate) enum LinkPass {
    /// Each row's arc 0 where its head is below the row: the head becomes the row's parent.
    First,
    /// Arc number `round` of every row.
    Sampled { round: u32 },
    /// The arcs after the first [`SAMPLED_ARCS`] (arc 0 too where its head is above the row),
    /// but in the rows of the anchor's tree.
    Rest { anchor: Option<u32> },
    /// Every arc (`lower_only`: only the arcs to lower heads).
    EveryArc { lower_only: bool },
}

/// Blocks of about equal arcs, one per device; where the graph has fewer vertices than there
/// are devices, one vertex each to the first devices and none to the others.
fn rows_partition(csr: &Csr, devices: usize) -> Result<Partition, CcError> {
    let n = csr.num_vertices();
    if n >= devices {
        return Ok(block_partition(csr, devices)?);
    }
    let bounds = (0..=devices).map(|d| d.min(n) as u32).collect();
    Partition::from_bounds(bounds).ok_or(CcError::invalid(
        "devices",
        devices,
        "a partition of the graph's vertices",
    ))
}

/// The tiles of the rows `rows` with at least [`TILE_ARCS`] arcs: each tile's row and first arc
/// (an error where host memory cannot hold them).
fn tiles(offsets: &[u64], rows: std::ops::Range<u32>) -> Result<(Vec<u32>, Vec<u64>), CcError> {
    let per_row: Vec<(u32, u64, u64)> = rows
        .into_par_iter()
        .filter_map(|u| {
            let begin = offsets[u as usize];
            let end = offsets[u as usize + 1];
            (end - begin >= u64::from(TILE_ARCS)).then_some((u, begin, end))
        })
        .collect();
    let count: u64 = per_row
        .iter()
        .map(|&(_, begin, end)| (end - begin).div_ceil(u64::from(TILE_ARCS)))
        .sum();
    let too_many = |_| {
        CcError::Core(groute_core::Error::OutOfMemory {
            bytes: usize::try_from(count.saturating_mul(12)).unwrap_or(usize::MAX),
            location: "host memory (the tiles of the long rows)".into(),
            source: None,
        })
    };
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    let mut tile_row = Vec::new();
    let mut tile_begin = Vec::new();
    tile_row.try_reserve_exact(count).map_err(too_many)?;
    tile_begin.try_reserve_exact(count).map_err(too_many)?;
    for (u, begin, end) in per_row {
        for first in (begin..end).step_by(TILE_ARCS as usize) {
            tile_row.push(u);
            tile_begin.push(first);
        }
    }
    Ok((tile_row, tile_begin))
}
