//! groute-bfs (being written).
