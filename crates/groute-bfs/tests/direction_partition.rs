//! The direction-optimizing solver refuses a partition made for another graph (it would read
//! past the graph's arrays or give wrong levels).

use groute_bfs::{BfsOptions, BfsSolver, Direction};
use groute_core::Context;
use groute_graph::{Graph, NoProgress, PartitionMethod, partition_graph};

#[test]
fn partition_of_another_graph_is_an_error_naming_both_sizes() {
    for devices in [1, 2] {
        let ctx = Context::host(devices).unwrap();
        let big = Graph::generated("road:side=12").unwrap();
        let small = Graph::generated("road:side=5").unwrap();
        let mut parted =
            partition_graph(big, devices, PartitionMethod::Block, &NoProgress).unwrap();
        parted.graph = small;
        let o = BfsOptions {
            direction: Direction::PullPush,
            ..BfsOptions::default()
        };
        let e = BfsSolver::new(&ctx, &parted, &o).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("144 vertices") && msg.contains("25 vertices"),
            "{msg}"
        );
    }
}
