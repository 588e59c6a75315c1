//! NVRTC: its version and compiling CUDA C++ to PTX.

use std::ffi::{CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use cudarc::nvrtc::sys as nvrtc_sys;

use super::nvrtc_library_present;

/// Why an NVRTC compilation produced no PTX.
#[derive(Debug)]
pub(crate) enum NvrtcFailure {
    /// The library could not be loaded or lacks a symbol.
    Unavailable(String),
    /// An NVRTC call failed outside compilation proper.
    Call(&'static str, cudarc::nvrtc::result::NvrtcError),
    /// The source did not compile; NVRTC's log.
    Compile(String),
}

fn nvrtc_check(
    status: nvrtc_sys::nvrtcResult,
    call: &'static str,
) -> std::result::Result<(), NvrtcFailure> {
    status.result().map_err(|e| NvrtcFailure::Call(call, e))
}

/// NVRTC's version `(major, minor)`.
pub(crate) fn nvrtc_version() -> std::result::Result<(i32, i32), NvrtcFailure> {
    if !nvrtc_library_present() {
        return Err(NvrtcFailure::Unavailable(
            "libnvrtc.so.13 was not found (set LD_LIBRARY_PATH, CUDA_HOME or \
             GROUTE_NVRTC_LIB_DIR; `.ci/nvrtc.sh` installs the pinned CUDA 13.0 NVRTC)"
                .into(),
        ));
    }
    let r = catch_unwind(|| {
        let (mut major, mut minor) = (0, 0);
        nvrtc_check(
            // SAFETY: valid out-pointers; the library is present.
            unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) },
            "nvrtcVersion",
        )
        .map(|()| (major, minor))
    });
    r.unwrap_or_else(|_| Err(NvrtcFailure::Unavailable("NVRTC lacks nvrtcVersion".into())))
}

/// Owns an `nvrtcProgram` and destroys it on drop.
struct Program(nvrtc_sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by `nvrtcCreateProgram` and is destroyed once.
        let _ = unsafe { nvrtc_sys::nvrtcDestroyProgram(&mut self.0) };
    }
}

/// Reads a log or PTX buffer of `size` bytes through `get` and returns it as text.
fn nvrtc_text(size: usize, get: impl FnOnce(*mut c_char) -> nvrtc_sys::nvrtcResult) -> String {
    let mut buf = vec![0u8; size.max(1)];
    if get(buf.as_mut_ptr().cast()).result().is_err() {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Compiles CUDA C++ `source` (called `name` in diagnostics) to PTX with NVRTC. `headers` are
/// `(include name, contents)` pairs NVRTC resolves `#include "name"` against without touching
/// the file system. Never panics.
pub(crate) fn nvrtc_compile(
    name: &str,
    source: &str,
    headers: &[(&str, &str)],
    options: &[String],
) -> std::result::Result<String, NvrtcFailure> {
    nvrtc_version()?;
    let cstr = |s: &str| {
        CString::new(s).map_err(|_| NvrtcFailure::Compile(format!("{name}: embedded NUL byte")))
    };
    let src = cstr(source)?;
    let cname = cstr(name)?;
    let header_src = headers
        .iter()
        .map(|(_, s)| cstr(s))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let header_names = headers
        .iter()
        .map(|(n, _)| cstr(n))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let copts = options
        .iter()
        .map(|o| cstr(o))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let src_ptrs: Vec<*const c_char> = header_src.iter().map(|c| c.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = header_names.iter().map(|c| c.as_ptr()).collect();
    let opt_ptrs: Vec<*const c_char> = copts.iter().map(|c| c.as_ptr()).collect();

    let run = || -> std::result::Result<String, NvrtcFailure> {
        let mut prog: nvrtc_sys::nvrtcProgram = ptr::null_mut();
        nvrtc_check(
            // SAFETY: every pointer refers to a NUL-terminated string that outlives the program;
            // the two header arrays have `headers.len()` entries each.
            unsafe {
                nvrtc_sys::nvrtcCreateProgram(
                    &mut prog,
                    src.as_ptr(),
                    cname.as_ptr(),
                    headers.len() as c_int,
                    src_ptrs.as_ptr(),
                    name_ptrs.as_ptr(),
                )
            },
            "nvrtcCreateProgram",
        )?;
        let prog = Program(prog);
        // SAFETY: `prog` is live; `opt_ptrs` holds `len` NUL-terminated options.
        let status = unsafe {
            nvrtc_sys::nvrtcCompileProgram(prog.0, opt_ptrs.len() as c_int, opt_ptrs.as_ptr())
        };
        let mut log_size = 0usize;
        // SAFETY: `prog` is live; valid out-pointer.
        let _ = unsafe { nvrtc_sys::nvrtcGetProgramLogSize(prog.0, &mut log_size) };
        // SAFETY: the buffer holds `log_size` bytes, as NVRTC asked for.
        let log = nvrtc_text(log_size, |p| unsafe {
            nvrtc_sys::nvrtcGetProgramLog(prog.0, p)
        });
        if status != nvrtc_sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(NvrtcFailure::Compile(if log.trim().is_empty() {
                format!("{status:?}")
            } else {
                log
            }));
        }
        let mut ptx_size = 0usize;
        nvrtc_check(
            // SAFETY: `prog` is live and compiled; valid out-pointer.
            unsafe { nvrtc_sys::nvrtcGetPTXSize(prog.0, &mut ptx_size) },
            "nvrtcGetPTXSize",
        )?;
        // SAFETY: the buffer holds `ptx_size` bytes, as NVRTC asked for.
        let ptx = nvrtc_text(ptx_size, |p| unsafe { nvrtc_sys::nvrtcGetPTX(prog.0, p) });
        Ok(ptx)
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|_| {
        Err(NvrtcFailure::Unavailable(
            "NVRTC lacks a required symbol".into(),
        ))
    })
}
