//! Fuzzes the Metis reader: any bytes give an error or a valid graph.

#![no_main]

use groute_graph::GraphFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| groute_graph_fuzz::check(GraphFormat::Metis, data));
