//! groute-graph (being written).
