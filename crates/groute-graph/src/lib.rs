//! Graphs for groute: CSR storage, readers and writers of the field's formats, seeded
//! generators, and partitioning into contiguous per-device vertex ranges.
//!
//! This crate knows nothing of devices; the algorithm crates upload what it builds.
//!
//! | concept | what it is |
//! |---|---|
//! | [`Csr`] | directed graph: `u64` offsets, `u32` targets, optional `u32` weights; owned or memory-mapped |
//! | [`CsrBuilder`], [`EdgeList`] | parallel counting-sort construction; symmetrise, dedup, drop self-loops |
//! | [`Graph`], [`VertexIds`] | a CSR plus the numbering of its source file (`external_id`, `internal_id`) and a name |
//! | [`InputOrder`] | vertices ranked by input id: how solvers report values independently of renumbering |
//! | [`GraphFormat`], [`load_graph`], [`write_graph`] | Matrix Market, DIMACS 9, SNAP, METIS, Galois `.gr`, groute cache `.grc` |
//! | [`GenSpec`], [`generate`], [`WeightSpec`] | Graph500 Kronecker, R-MAT, road-like grids, uniform random; `kron21.sym`, `road-usa` presets |
//! | [`Partition`], [`partition_graph`], [`HaloInfo`] | METIS k-way or edge-balanced blocks; renumbered so each part is a contiguous range |
//! | [`Progress`] | progress callback for long loads, generations and partitions |
//! | [`GraphError`] | the one error type: file, line and problem for malformed input |
//! | [`testing`], [`shipped_graphs`] | graphs for test suites: generated, from arc lists, the repository's `datasets/` |
//!
//! ```
//! use groute_graph::{generate, partition_graph, GenSpec, NoProgress, PartitionMethod};
//!
//! let spec: GenSpec = "kron:scale=10,ef=8,sym,seed=3".parse()?;
//! let g = generate(&spec, &NoProgress)?;
//! assert_eq!(g.num_vertices(), 1024);
//! let parted = partition_graph(g, 4, PartitionMethod::Block, &NoProgress)?;
//! let p = &parted.partition;
//! assert_eq!(p.num_parts(), 4);
//! assert_eq!(p.owner(p.range(2).start), 2);
//! # Ok::<(), groute_graph::GraphError>(())
//! ```

mod alloc;
mod components;
mod csr;
mod datasets;
mod degree_order;
mod error;
mod generate;
mod graph;
mod held_rows;
mod order;
mod par;
mod partition;
mod progress;
mod read;
mod rng;
mod storage;
pub mod testing;

pub use components::{Hub, WeakComponents, largest_component_hub};
pub use csr::{Csr, CsrBuilder, DegreeStats, EdgeList};
pub use datasets::{shipped_datasets_dir, shipped_graphs};
pub use degree_order::{degree_order_of_parts, order_parts_by_degree, renumber_rows};
pub use error::{BinaryProblem, GraphError, ParseProblem, PartitionProblem, SpecProblem};
pub use generate::{GenSpec, Generator, MAX_GENERATED_ARCS, RoadOrder, WeightSpec, generate};
pub use graph::{Graph, VertexIds};
pub use held_rows::{HeldRows, InArcs};
pub use order::InputOrder;
pub use partition::{
    AUTO_METIS_MAX_ARCS, Fallback, HaloInfo, Partition, PartitionMethod, PartitionStats,
    PartitionedGraph, block_partition, block_partition_of_offsets, halo_info, partition_graph,
};
pub use progress::{NoProgress, Progress};
pub use read::{GraphCache, GraphFormat, LoadOptions, load_graph, load_graph_with, write_graph};
pub use rng::SplitMix64;
pub use storage::Storage;
