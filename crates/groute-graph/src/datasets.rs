//! Where the small graphs shipped with the repository (`datasets/`) are.

use std::path::PathBuf;

/// The repository's `datasets/` folder: `$GROUTE_DATASETS` if set, else the folder next to
/// this crate's sources at build time, else `datasets/` or `../../datasets` relative to the
/// working directory (binaries staged to another machine run from the repository root or a
/// package folder). `None` when none exists.
pub fn shipped_datasets_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("GROUTE_DATASETS").map(PathBuf::from),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../datasets")),
        Some(PathBuf::from("datasets")),
        Some(PathBuf::from("../../datasets")),
    ];
    candidates.into_iter().flatten().find(|p| p.is_dir())
}

/// Every graph of [`shipped_datasets_dir`] that loads (format from its extension) and has at
/// least one vertex, for tests that run on all of them. Empty when the folder is not found.
pub fn shipped_graphs() -> Vec<crate::Graph> {
    let Some(dir) = shipped_datasets_dir() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| crate::load_graph(&p, None).ok())
        .filter(|g| g.num_vertices() > 0)
        .collect()
}
