//! Every CUDA source of the workspace lives in `kernels/`, the `groute-kernels` crate, so that
//! it is packaged with the crate that embeds it.

use std::path::Path;

/// `.cu` and `.cuh` files under `dir`, skipping hidden folders and build output (`target`).
fn cuda_files(dir: &Path, found: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let name = name.unwrap_or_default();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                cuda_files(&path, found);
            }
        } else if name.ends_with(".cu") || name.ends_with(".cuh") {
            found.push(path.display().to_string());
        }
    }
}

#[test]
fn cuda_sources_live_only_in_the_kernels_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let kernels = root.join("kernels");
    if !kernels.join("Cargo.toml").is_file() {
        eprintln!(
            "SKIPPED: {} is not here (binary run outside its checkout)",
            kernels.display()
        );
        return;
    }
    let mut inside = Vec::new();
    cuda_files(&kernels, &mut inside);
    assert!(!inside.is_empty(), "no kernel under {}", kernels.display());
    let mut everywhere = Vec::new();
    cuda_files(root, &mut everywhere);
    let outside: Vec<_> = everywhere
        .iter()
        .filter(|p| !Path::new(p).starts_with(&kernels))
        .collect();
    assert!(
        outside.is_empty(),
        "CUDA sources outside kernels/ (move them into their folder there and list them in \
         groute-kernels): {outside:?}"
    );
}
