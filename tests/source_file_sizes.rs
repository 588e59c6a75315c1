//! No hand-written source file of the workspace is over [`MAX_LINES`] lines: Rust, CUDA and
//! shell sources under the crates, the kernels, the facade, its examples, benches, tests and
//! tools (small files with one idea each). Generated and fetched trees (`target`, `.gpu`,
//! `.nvrtc`, hidden folders) are not read.

use std::path::{Path, PathBuf};

/// The most lines a source file may have.
const MAX_LINES: usize = 700;

/// The folders of the workspace that hold sources.
const SOURCE_ROOTS: &[&str] = &[
    "crates", "kernels", "src", "examples", "benches", "tests", "tools",
];

/// The endings of source files.
const SOURCE_ENDINGS: &[&str] = &[".rs", ".cu", ".cuh", ".h", ".sh", ".py"];

/// Every source file under `dir`, skipping hidden folders and build output.
fn source_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                source_files(&path, found);
            }
        } else if SOURCE_ENDINGS.iter().any(|e| name.ends_with(e)) {
            found.push(path);
        }
    }
}

#[test]
fn no_source_file_is_over_the_line_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !root.join("crates").is_dir() {
        eprintln!(
            "SKIPPED: {} holds no workspace (run from the packaged crate)",
            root.display()
        );
        return;
    }
    let mut files = Vec::new();
    for dir in SOURCE_ROOTS
        .iter()
        .map(|r| root.join(r))
        .filter(|p| p.is_dir())
    {
        source_files(&dir, &mut files);
    }
    assert!(
        files.len() > 100,
        "found only {} source files under {}",
        files.len(),
        root.display()
    );
    let mut over: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).ok()?;
            let lines = text.lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", f.display()))
        })
        .collect();
    over.sort();
    assert!(
        over.is_empty(),
        "over {MAX_LINES} lines; split each by idea: {over:#?}"
    );
}
