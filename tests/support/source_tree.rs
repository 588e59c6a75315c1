//! Walking the workspace's own sources, for the tests that check its layout: the files of a
//! folder by ending, and a skip where the test binary runs away from its checkout.

use std::path::{Path, PathBuf};

/// The files under `dir` whose names end in one of `endings`, skipping hidden folders and
/// build output (`target`).
pub fn files_ending_in(dir: &Path, endings: &[&str], found: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                files_ending_in(&path, endings, found);
            }
        } else if endings.iter().any(|e| name.ends_with(e)) {
            found.push(path);
        }
    }
}

/// `here`, unless the test runs away from its checkout: then it says on stderr that `path` is
/// not here (`why`) and the test should return, skipped.
pub fn here_or_skip(here: bool, path: &Path, why: &str) -> bool {
    if !here {
        eprintln!("SKIPPED: {} {why}", path.display());
    }
    here
}
