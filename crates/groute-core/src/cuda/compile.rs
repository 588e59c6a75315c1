//! NVRTC compilation with a per-process and an on-disk PTX cache.
//!
//! A compilation is keyed by SHA-256 over NVRTC's version, the target architecture, the
//! options, the source and every embedded header. The first use in a process looks the key up
//! in the disk cache (`$GROUTE_NVRTC_CACHE`, else `$XDG_CACHE_HOME/groute/nvrtc`, else
//! `~/.cache/groute/nvrtc`; one `<sha256>.ptx` file per key, written atomically) and compiles
//! only on a miss; later uses in the process hit the in-memory map. Distinct kernels compile
//! concurrently when several threads ask ([`super::CudaModule::load_all`]); one kernel asked
//! for by several threads at once compiles once. Cache I/O errors only cost a recompilation.
//!
//! `GROUTE_NVRTC_OPTIONS` (whitespace-separated, read once per process) adds options to
//! every kernel's compilation, after the defaults; they are part of the key. It is for
//! experiments on the kernels' compile-time settings without rebuilding the binaries, for
//! example `GROUTE_NVRTC_OPTIONS=-DGROUTE_CLUSTER_RELEASE_LEVELS=4` (the macros a kernel reads
//! are documented where it reads them). A compile failure's log names the options it added.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use sha2::{Digest, Sha256};

use crate::backend::cuda::sys::{self, NvrtcFailure};
use crate::error::{Error, Result};
use groute_kernels::{HEADERS, KernelSource};

/// Compiled PTX text for one (source, architecture, options).
#[derive(Clone, Debug)]
pub struct Ptx {
    /// Cache key (SHA-256).
    pub key: [u8; 32],
    /// The PTX text.
    pub text: Arc<str>,
    /// The architecture it was compiled for (`"compute_90"`).
    pub arch: String,
}

fn nvrtc_error(e: NvrtcFailure, kernel: &str, arch: &str) -> Error {
    match e {
        NvrtcFailure::Unavailable(reason) => Error::CudaUnavailable {
            reason: format!("NVRTC is needed to compile {kernel}: {reason}"),
        },
        NvrtcFailure::Call(call, err) => Error::driver(call, err),
        NvrtcFailure::Compile(log) => Error::KernelCompile {
            kernel: kernel.to_string(),
            arch: arch.to_string(),
            log: with_extra_options_note(log, extra_options()),
        },
    }
}

/// NVRTC's version `(major, minor)`; [`Error::CudaUnavailable`] when `libnvrtc` cannot be
/// loaded. Never panics.
pub fn nvrtc_version() -> Result<(u32, u32)> {
    sys::nvrtc_version()
        .map(|(a, b)| (a.max(0) as u32, b.max(0) as u32))
        .map_err(|e| nvrtc_error(e, "(version query)", "-"))
}

/// The virtual architecture NVRTC targets for a device of compute capability `capability`.
pub fn arch_for(capability: (u32, u32)) -> String {
    format!("compute_{}{}", capability.0, capability.1)
}

/// The CUDA toolkit's include directory, if a toolkit is installed (`CUDA_HOME`, `CUDA_PATH`,
/// `/usr/local/cuda`). Kernels only need it for toolkit headers (`<cuda/atomic>`, ...).
pub fn toolkit_include_dir() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(h) = std::env::var_os(var) {
            candidates.push(PathBuf::from(h).join("include"));
        }
    }
    candidates.push("/usr/local/cuda/include".into());
    candidates
        .into_iter()
        .find(|d| d.join("cuda_runtime_api.h").exists() || d.join("cuda.h").exists())
}

/// The environment variable whose whitespace-separated options every kernel is also compiled
/// with (see the module docs).
pub const NVRTC_OPTIONS_ENV: &str = "GROUTE_NVRTC_OPTIONS";

/// The value of [`NVRTC_OPTIONS_ENV`] when the process first asked, if set: every compilation
/// of the process uses the same options (a loaded module is reused per device).
fn extra_options() -> Option<&'static str> {
    static OPTIONS: OnceLock<Option<String>> = OnceLock::new();
    OPTIONS
        .get_or_init(|| {
            std::env::var_os(NVRTC_OPTIONS_ENV).map(|v| v.to_string_lossy().into_owned())
        })
        .as_deref()
}

/// NVRTC's `log`, with a line naming the options [`NVRTC_OPTIONS_ENV`] added (`extra`), so
/// that a failure they caused says where they came from and how to drop them.
fn with_extra_options_note(log: String, extra: Option<&str>) -> String {
    match extra {
        Some(o) if !o.trim().is_empty() => format!(
            "{log}\n(compiled with {NVRTC_OPTIONS_ENV}=\"{o}\" added to the options; unset it \
             to compile the kernels as shipped)"
        ),
        _ => log,
    }
}

/// The options every kernel is compiled with for `arch`, plus `extra`, plus those of
/// [`NVRTC_OPTIONS_ENV`].
pub fn compile_options(arch: &str, extra: &[&str]) -> Vec<String> {
    let mut o = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
    ];
    if let Some(inc) = toolkit_include_dir() {
        o.push(format!("--include-path={}", inc.display()));
    }
    o.extend(extra.iter().map(|s| s.to_string()));
    if let Some(env) = extra_options() {
        o.extend(env.split_whitespace().map(str::to_string));
    }
    o
}

/// Where compiled PTX is cached on disk, if anywhere.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("GROUTE_NVRTC_CACHE") {
        return Some(d.into());
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("groute").join("nvrtc"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("groute").join("nvrtc"))
}

fn cache_key(version: (u32, u32), arch: &str, options: &[String], src: &KernelSource) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut put = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    put(b"groute-nvrtc-ptx-v1");
    put(format!("{}.{}", version.0, version.1).as_bytes());
    put(arch.as_bytes());
    for o in options {
        put(o.as_bytes());
    }
    put(src.name.as_bytes());
    put(src.source.as_bytes());
    for hd in HEADERS {
        put(hd.name.as_bytes());
        put(hd.source.as_bytes());
    }
    h.finalize().into()
}

fn hex(key: &[u8; 32]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// One key's entry of the process's PTX cache: empty until its first compilation (or disk
/// read) succeeds, and locked across it.
type CacheSlot = Arc<Mutex<Option<Arc<str>>>>;

/// The process's PTX cache: one slot per key, so that distinct kernels compile concurrently
/// while two threads asking for the same one compile it once.
fn memory_cache() -> &'static Mutex<HashMap<[u8; 32], CacheSlot>> {
    static CACHE: OnceLock<Mutex<HashMap<[u8; 32], CacheSlot>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Compiles `source` to PTX for `arch` (`"compute_90"`) with [`compile_options`] plus `extra`,
/// through the process and disk caches. [`Error::KernelCompile`] carries NVRTC's log;
/// [`Error::CudaUnavailable`] says NVRTC could not be loaded. Never panics.
pub fn compile_ptx(source: &KernelSource, arch: &str, extra: &[&str]) -> Result<Ptx> {
    let version = nvrtc_version()?;
    let options = compile_options(arch, extra);
    let key = cache_key(version, arch, &options, source);
    let ptx = |text: Arc<str>| Ptx {
        key,
        text,
        arch: arch.to_string(),
    };
    let slot = memory_cache().lock().entry(key).or_default().clone();
    // The key's slot, held across its compilation: each kernel is compiled once per process
    // even when several threads ask at the same time, and other kernels meanwhile.
    let mut mem = slot.lock();
    if let Some(t) = mem.as_ref() {
        return Ok(ptx(t.clone()));
    }
    let file = cache_dir().map(|d| d.join(format!("{}.ptx", hex(&key))));
    if let Some(text) = file.as_ref().and_then(|f| std::fs::read_to_string(f).ok()) {
        if text.contains(".version") {
            let t: Arc<str> = text.into();
            *mem = Some(t.clone());
            return Ok(ptx(t));
        }
    }
    let headers: Vec<(&str, &str)> = HEADERS.iter().map(|h| (h.name, h.source)).collect();
    let text = sys::nvrtc_compile(source.name, source.source, &headers, &options)
        .map_err(|e| nvrtc_error(e, source.name, arch))?;
    if let Some(f) = &file {
        if let Some(dir) = f.parent() {
            let tmp = dir.join(format!(".{}.{}.tmp", hex(&key), std::process::id()));
            let _ = std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&tmp, text.as_bytes()))
                .and_then(|()| std::fs::rename(&tmp, f));
            let _ = std::fs::remove_file(&tmp);
        }
    }
    let t: Arc<str> = text.into();
    *mem = Some(t.clone());
    Ok(ptx(t))
}

/// Compiles `source` with NVRTC and no cache (for the CI check: every kernel, every time).
pub fn compile_uncached(source: &KernelSource, arch: &str, extra: &[&str]) -> Result<Ptx> {
    let version = nvrtc_version()?;
    let options = compile_options(arch, extra);
    let key = cache_key(version, arch, &options, source);
    let headers: Vec<(&str, &str)> = HEADERS.iter().map(|h| (h.name, h.source)).collect();
    let text = sys::nvrtc_compile(source.name, source.source, &headers, &options)
        .map_err(|e| nvrtc_error(e, source.name, arch))?;
    Ok(Ptx {
        key,
        text: text.into(),
        arch: arch.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::{NVRTC_OPTIONS_ENV, with_extra_options_note};

    #[test]
    fn a_compile_log_names_the_options_the_environment_added() {
        let log = with_extra_options_note("error: bad option".into(), Some("-DX=1 --bogus"));
        assert!(log.starts_with("error: bad option\n"), "{log}");
        assert!(log.contains(NVRTC_OPTIONS_ENV), "{log}");
        assert!(log.contains("\"-DX=1 --bogus\""), "{log}");
    }

    #[test]
    fn a_compile_log_is_unchanged_without_added_options() {
        assert_eq!(with_extra_options_note("log".into(), None), "log");
        assert_eq!(with_extra_options_note("log".into(), Some("  ")), "log");
    }
}
