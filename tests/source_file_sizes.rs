//! No hand-written source file of the workspace is over [`MAX_LINES`] lines: Rust, CUDA and
//! shell sources under the crates, the kernels, the facade, its examples, benches, tests and
//! tools (small files with one idea each). Generated and fetched trees (`target`, `.gpu`,
//! `.nvrtc`, hidden folders) are not read.

use std::path::Path;

#[path = "support/source_tree.rs"]
mod source_tree;

use source_tree::{files_ending_in, here_or_skip};

/// The most lines a source file may have.
const MAX_LINES: usize = 700;

/// The folders of the workspace that hold sources.
const SOURCE_ROOTS: &[&str] = &[
    "crates", "kernels", "src", "examples", "benches", "tests", "tools",
];

/// The endings of source files.
const SOURCE_ENDINGS: &[&str] = &[".rs", ".cu", ".cuh", ".h", ".sh", ".py"];

#[test]
fn no_source_file_is_over_the_line_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let here = root.join("crates").is_dir();
    if !here_or_skip(
        here,
        root,
        "holds no workspace (run from the packaged crate)",
    ) {
        return;
    }
    let mut files = Vec::new();
    for dir in SOURCE_ROOTS
        .iter()
        .map(|r| root.join(r))
        .filter(|p| p.is_dir())
    {
        files_ending_in(&dir, SOURCE_ENDINGS, &mut files);
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
