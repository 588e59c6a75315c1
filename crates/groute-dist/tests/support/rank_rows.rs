//! [`RankRows`]: a symmetric graph written to a cache, and each rank's rows of it loaded from
//! the file, as the examples' ranks other than 0 hold them.

use std::ops::Range;
use std::path::PathBuf;

use groute_graph::{
    Graph, GraphCache, GraphFormat, HeldRows, Partition, block_partition_of_offsets, write_graph,
};

/// Each rank's rows of a cache of a symmetric graph (a rank of `devices` devices holding
/// parts `rank * devices..`), and the blocks partition they come from. The cache's folder
/// goes when this does.
pub struct RankRows {
    dir: PathBuf,
    /// One part per device of every rank.
    pub partition: Partition,
    graphs: Vec<(Graph, Range<u32>)>,
}

impl RankRows {
    /// Writes `graph` (symmetric) to a cache in a folder named by `tag` and loads each of
    /// `ranks` ranks' rows from it.
    pub fn new(graph: &Graph, (ranks, devices): (usize, usize), tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("groute-dist-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("graph.grc");
        write_graph(graph, &path, Some(GraphFormat::Cache)).expect("cache written");
        let cache = GraphCache::open(&path).expect("cache");
        let partition =
            block_partition_of_offsets(cache.offsets(), ranks * devices).expect("partition");
        let graphs = (0..ranks)
            .map(|r| {
                let held = partition.range_of_parts(r * devices..(r + 1) * devices);
                (cache.load_rows(held.clone()).expect("rows"), held)
            })
            .collect();
        RankRows {
            dir,
            partition,
            graphs,
        }
    }

    /// The rows rank `rank` holds.
    pub fn rows(&self, rank: usize) -> HeldRows<'_> {
        let (graph, held) = &self.graphs[rank];
        HeldRows::some(&graph.csr, held.clone(), true).expect("rows")
    }
}

impl Drop for RankRows {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
