//! Every CUDA source of the workspace lives in `kernels/`, the `groute-kernels` crate, so that
//! it is packaged with the crate that embeds it.

use std::path::Path;

#[path = "support/source_tree.rs"]
mod source_tree;

use source_tree::{files_ending_in, here_or_skip};

/// The endings of CUDA sources.
const CUDA_ENDINGS: &[&str] = &[".cu", ".cuh"];

#[test]
fn cuda_sources_live_only_in_the_kernels_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let kernels = root.join("kernels");
    let here = kernels.join("Cargo.toml").is_file();
    if !here_or_skip(
        here,
        &kernels,
        "is not here (binary run outside its checkout)",
    ) {
        return;
    }
    let mut inside = Vec::new();
    files_ending_in(&kernels, CUDA_ENDINGS, &mut inside);
    assert!(!inside.is_empty(), "no kernel under {}", kernels.display());
    let mut everywhere = Vec::new();
    files_ending_in(root, CUDA_ENDINGS, &mut everywhere);
    let outside: Vec<_> = everywhere
        .iter()
        .filter(|p| !p.starts_with(&kernels))
        .collect();
    assert!(
        outside.is_empty(),
        "CUDA sources outside kernels/ (move them into their folder there and list them in \
         groute-kernels): {outside:?}"
    );
}
