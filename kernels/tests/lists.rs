//! The embedded lists match the folders: every `.cu` file under `kernels/` is in [`KERNELS`]
//! under its path, every header of `include/` in [`HEADERS`], and no header lies elsewhere
//! (NVRTC is given [`HEADERS`] only, so a header beside an algorithm would not resolve).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use groute_kernels::{HEADERS, KERNELS};

/// The crate's folder, or `None` (said loudly) where the test binary runs away from it.
fn crate_root() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if root.join("include").is_dir() {
        Some(root)
    } else {
        eprintln!(
            "SKIPPED: {} is not here (binary run outside its checkout)",
            root.display()
        );
        None
    }
}

/// Paths (relative to `root`, `/`-separated) of the files under `dir` whose names end in `ext`.
fn files(root: &Path, dir: &Path, ext: &str, found: &mut BTreeSet<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .path();
        if path.is_dir() {
            files(root, &path, ext, found);
        } else if path.extension().is_some_and(|x| x == ext) {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
            found.insert(parts.join("/"));
        }
    }
}

#[test]
fn every_kernel_file_is_listed_under_its_path() {
    let Some(root) = crate_root() else { return };
    let mut on_disk = BTreeSet::new();
    files(&root, &root, "cu", &mut on_disk);
    let listed: BTreeSet<String> = KERNELS.iter().map(|k| k.name.to_string()).collect();
    assert_eq!(listed.len(), KERNELS.len(), "a kernel is listed twice");
    assert_eq!(
        on_disk, listed,
        "add every kernels/<folder>/*.cu to its module and to groute_kernels::KERNELS"
    );
}

#[test]
fn every_header_is_in_include_and_listed() {
    let Some(root) = crate_root() else { return };
    let mut on_disk = BTreeSet::new();
    files(&root, &root, "cuh", &mut on_disk);
    files(&root, &root, "h", &mut on_disk);
    let listed: BTreeSet<String> = HEADERS
        .iter()
        .map(|h| format!("include/{}", h.name))
        .collect();
    assert_eq!(listed.len(), HEADERS.len(), "a header is listed twice");
    assert_eq!(
        on_disk, listed,
        "keep headers in kernels/include/ and add each to groute_kernels::HEADERS"
    );
}

#[test]
fn each_source_is_its_file_under_its_name() {
    let Some(root) = crate_root() else { return };
    for k in KERNELS {
        let text = std::fs::read_to_string(root.join(k.name))
            .unwrap_or_else(|e| panic!("{}: {e}", k.name));
        assert_eq!(text, k.source, "{} embeds another file", k.name);
    }
    for h in HEADERS {
        let text = std::fs::read_to_string(root.join("include").join(h.name))
            .unwrap_or_else(|e| panic!("{}: {e}", h.name));
        assert_eq!(text, h.source, "{} embeds another file", h.name);
    }
}
