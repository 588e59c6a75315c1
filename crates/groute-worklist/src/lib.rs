//! groute-worklist (being written).
