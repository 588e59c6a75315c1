//! `groute-core` knows no algorithm: no algorithm's name (bfs, sssp, pagerank, cc, pbf) in any
//! file of its `src/`, in any case, so that the runtime cannot grow a dependency on one. The
//! algorithms' kernels live in `groute-kernels`, their launches in their own crates.

use std::path::{Path, PathBuf};

/// Names that must not appear anywhere in a word (`bfs` also catches `BfsRelax`).
const ANYWHERE: &[&str] = &["bfs", "sssp", "pagerank", "pbf"];

/// Names too short to ban inside words (`accumulate`): banned as whole words only.
const WHOLE_WORD: &[&str] = &["cc"];

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .path();
        if path.is_dir() {
            rust_files(&path, found);
        } else {
            found.push(path);
        }
    }
}

/// The algorithm names in `line` (lower-cased), as found.
fn algorithm_names(line: &str) -> Vec<&'static str> {
    let lower = line.to_lowercase();
    let mut names: Vec<&str> = ANYWHERE
        .iter()
        .copied()
        .filter(|n| lower.contains(n))
        .collect();
    let words = lower.split(|c: char| !c.is_ascii_alphanumeric() && c != '_');
    let words: Vec<&str> = words.collect();
    names.extend(WHOLE_WORD.iter().copied().filter(|n| words.contains(n)));
    names
}

#[test]
fn the_scan_finds_each_name_in_any_case_and_cc_only_as_a_word() {
    assert_eq!(algorithm_names("use groute_bfs::Bfs;"), ["bfs"]);
    assert_eq!(
        algorithm_names("// PageRank and SSSP"),
        ["sssp", "pagerank"]
    );
    assert_eq!(algorithm_names("let x = PBF_BLOCK;"), ["pbf"]);
    assert_eq!(algorithm_names("device (cc 9.0)"), ["cc"]);
    assert!(algorithm_names("accumulate; access; let capability = 9;").is_empty());
}

#[test]
fn no_algorithm_name_appears_in_the_source() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    if !src.is_dir() {
        eprintln!(
            "SKIPPED: {} is not here (binary run outside its checkout)",
            src.display()
        );
        return;
    }
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 10,
        "only {} files under {}",
        files.len(),
        src.display()
    );
    let mut found = Vec::new();
    for file in &files {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (i, line) in text.lines().enumerate() {
            let names = algorithm_names(line);
            if !names.is_empty() {
                found.push(format!("{}:{}: {names:?}: {line}", file.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "groute-core names algorithms; move the code to the algorithm's crate (kernels to \
         groute-kernels) or reword:\n{}",
        found.join("\n")
    );
}
