//! CI check: every kernel in `kernels/*.cu` compiles with NVRTC for `compute_90`.
//!
//! Runs wherever `libnvrtc.so.13` can be loaded (no GPU needed; `.ci/nvrtc.sh` installs the
//! pinned CUDA 13.0 NVRTC from PyPI). Without NVRTC the tests print why and skip, unless
//! `GROUTE_REQUIRE_NVRTC=1`, which makes a missing NVRTC a failure.

use std::collections::BTreeSet;
use std::path::Path;

use groute_core::cuda::{self, HEADERS, KERNELS, KernelSource};

/// The architecture of the GPU machine (H200).
const ARCH: &str = "compute_90";

/// Highest PTX ISA the GPU machine's driver (580, CUDA 13.0) accepts.
const MAX_PTX_ISA: (u32, u32) = (9, 0);

fn nvrtc_or_skip(test: &str) -> bool {
    match cuda::nvrtc_version() {
        Ok(v) => {
            eprintln!("{test}: NVRTC {}.{}", v.0, v.1);
            true
        }
        Err(e) => {
            if std::env::var("GROUTE_REQUIRE_NVRTC").as_deref() == Ok("1") {
                panic!("{test}: GROUTE_REQUIRE_NVRTC=1 but NVRTC is unavailable: {e}");
            }
            eprintln!("{test}: SKIPPED, NVRTC unavailable ({e}); run .ci/nvrtc.sh to install it");
            false
        }
    }
}

fn ptx_isa(ptx: &str) -> Option<(u32, u32)> {
    let line = ptx
        .lines()
        .find(|l| l.trim_start().starts_with(".version"))?;
    let v = line.split_whitespace().nth(1)?;
    let (a, b) = v.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[test]
fn every_kernel_compiles_for_compute_90() {
    if !nvrtc_or_skip("every_kernel_compiles_for_compute_90") {
        return;
    }
    let mut failures = Vec::new();
    for k in KERNELS {
        match cuda::compile_uncached(k, ARCH, &[]) {
            Ok(ptx) => {
                let isa = ptx_isa(&ptx.text);
                eprintln!(
                    "  {}: {} bytes of PTX, ISA {:?}, {} entry points",
                    k.name,
                    ptx.text.len(),
                    isa,
                    ptx.text.matches(".entry").count()
                );
                assert!(
                    ptx.text.contains(".target sm_90"),
                    "{}: PTX not for sm_90",
                    k.name
                );
                let isa = isa.unwrap_or((99, 99));
                assert!(
                    isa <= MAX_PTX_ISA,
                    "{}: PTX ISA {isa:?} is newer than driver 580 accepts ({MAX_PTX_ISA:?}); \
                     pin NVRTC 13.0 (nvidia-cuda-nvrtc==13.0.88)",
                    k.name
                );
            }
            Err(e) => failures.push(format!("{}: {e}", k.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "kernels failed to compile:\n{}",
        failures.join("\n")
    );
}

/// The kernels' diagnostic builds (`GROUTE_NVRTC_OPTIONS` experiments documented in
/// `groute-worklist`'s fused traversal and in `kernels/bfs_direction_fused.cu`) compile too,
/// so that they cannot rot unnoticed.
#[test]
fn the_diagnostic_builds_compile() {
    if !nvrtc_or_skip("the_diagnostic_builds_compile") {
        return;
    }
    let traced: &[&str] = &["-DGROUTE_TRACE_CLUSTER", "-DGROUTE_TRACE_LEVEL=900"];
    let builds: [(&str, &[&str]); 3] = [
        ("bfs.cu", traced),
        ("sssp.cu", traced),
        ("bfs_direction_fused.cu", &["-DGROUTE_DO_RUNTIME_FLAGS"]),
    ];
    for (name, options) in builds {
        let k = KERNELS
            .iter()
            .find(|k| k.name == name)
            .unwrap_or_else(|| panic!("{name} is not an embedded kernel"));
        let diagnostic = cuda::compile_uncached(k, ARCH, options)
            .unwrap_or_else(|e| panic!("{name} with {options:?}: {e}"));
        let shipped =
            cuda::compile_uncached(k, ARCH, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_ne!(
            diagnostic.text, shipped.text,
            "{name}: {options:?} changed nothing (are the macros still read?)"
        );
    }
}

#[test]
fn compile_errors_carry_the_nvrtc_log() {
    if !nvrtc_or_skip("compile_errors_carry_the_nvrtc_log") {
        return;
    }
    let bad = KernelSource {
        name: "broken.cu",
        source: "extern \"C\" __global__ void k(int* p) { p[0] = undeclared_name; }",
    };
    match cuda::compile_uncached(&bad, ARCH, &[]) {
        Err(groute_core::Error::KernelCompile { kernel, arch, log }) => {
            assert_eq!(kernel, "broken.cu");
            assert_eq!(arch, ARCH);
            assert!(log.contains("undeclared_name"), "log: {log}");
        }
        other => panic!("expected a KernelCompile error, got {other:?}"),
    }
}

#[test]
fn embedded_kernel_lists_match_the_kernels_directory() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels");
    if !root.is_dir() {
        // A staged test binary run away from its source tree (the GPU machine).
        eprintln!(
            "SKIPPED: {} is not here (binary run outside its checkout)",
            root.display()
        );
        return;
    }
    let names = |dir: &Path, ext: &str| -> BTreeSet<String> {
        std::fs::read_dir(dir)
            .map(|it| {
                it.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(ext))
                    .collect()
            })
            .unwrap_or_default()
    };
    let on_disk = names(&root, ".cu");
    let embedded: BTreeSet<String> = KERNELS.iter().map(|k| k.name.to_string()).collect();
    assert_eq!(
        on_disk, embedded,
        "add every kernels/*.cu to groute_core::cuda::KERNELS"
    );
    let on_disk = names(&root.join("include"), ".cuh");
    let embedded: BTreeSet<String> = HEADERS.iter().map(|h| h.name.to_string()).collect();
    assert_eq!(
        on_disk, embedded,
        "add every kernels/include/*.cuh to groute_core::cuda::HEADERS"
    );
}
