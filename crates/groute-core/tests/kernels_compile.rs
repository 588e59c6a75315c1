//! CI check: every kernel of `groute-kernels` (`kernels/<folder>/*.cu`) compiles with NVRTC
//! for `compute_90`. (That its lists match the folders is `groute-kernels`' own test.)
//!
//! Runs wherever `libnvrtc.so.13` can be loaded (no GPU needed; `.ci/nvrtc.sh` installs the
//! pinned CUDA 13.0 NVRTC from PyPI). Without NVRTC the tests print why and skip, unless
//! `GROUTE_REQUIRE_NVRTC=1`, which makes a missing NVRTC a failure.

use groute_core::cuda::{self, KernelSource};
use groute_kernels::KERNELS;

/// The architecture of the GPU machine (Hopper).
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
/// `groute-worklist`'s fused traversal) compile too, so that they cannot rot unnoticed.
#[test]
fn the_diagnostic_builds_compile() {
    if !nvrtc_or_skip("the_diagnostic_builds_compile") {
        return;
    }
    let traced: &[&str] = &[
        "-DGROUTE_TRACE_CLUSTER",
        "-DGROUTE_TRACE_LEVEL=900",
        "-DGROUTE_TRACE_PHASES",
    ];
    let builds: [(KernelSource, &[&str]); 2] = [
        (groute_kernels::bfs::BFS_FUSED, traced),
        (groute_kernels::sssp::SSSP_FUSED, traced),
    ];
    for (k, options) in builds {
        let (k, name) = (&k, k.name);
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

/// Threads asking for kernels at the same time (`CudaModule::load_all` on a first run): the
/// threads asking for one kernel get the one text it compiled to, and the kernels keep their
/// own keys.
#[test]
fn concurrent_compilations_give_one_text_per_kernel() {
    if !nvrtc_or_skip("concurrent_compilations_give_one_text_per_kernel") {
        return;
    }
    let sources = [
        groute_kernels::runtime::PEER_COPY,
        groute_kernels::pbf::PBF,
        groute_kernels::runtime::PEER_COPY,
        groute_kernels::pbf::PBF,
    ];
    let compiled: Vec<cuda::Ptx> = std::thread::scope(|scope| {
        let threads: Vec<_> = sources
            .iter()
            .map(|k| scope.spawn(move || cuda::compile_ptx(k, ARCH, &[])))
            .collect();
        threads
            .into_iter()
            .zip(&sources)
            .map(|(t, k)| match t.join() {
                Ok(Ok(ptx)) => ptx,
                Ok(Err(e)) => panic!("{}: {e}", k.name),
                Err(_) => panic!("{}: the compiling thread panicked", k.name),
            })
            .collect()
    });
    for (a, b) in [(0, 2), (1, 3)] {
        assert_eq!(compiled[a].key, compiled[b].key, "{}", sources[a].name);
        assert!(
            std::sync::Arc::ptr_eq(&compiled[a].text, &compiled[b].text),
            "{}: two texts for one kernel",
            sources[a].name
        );
    }
    assert_ne!(compiled[0].key, compiled[1].key);
    assert!(compiled[0].text.contains(".entry peer_copy"));
    assert!(!compiled[1].text.contains(".entry peer_copy"));
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
