//! The check every fuzz target runs: the bytes, written to a scratch file, read as one format,
//! must give an error or a valid graph. The helpers are the reader tests' own
//! (`crates/groute-graph/tests/support/mod.rs`), so a crash found here reproduces there.

use std::sync::OnceLock;

use groute_graph::GraphFormat;

#[path = "../../crates/groute-graph/tests/support/mod.rs"]
mod support;

pub use support::{READERS, TempDir, assert_valid_graph};

/// Reads `data` as `format` (through a scratch file: the readers take paths) and panics unless
/// the reader returned an error or a graph whose CSR and numbering are valid.
pub fn check(format: GraphFormat, data: &[u8]) {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    let dir = DIR.get_or_init(|| TempDir::new("fuzz"));
    support::check_input(dir, format, data);
}
