//! Modules, kernel launches (plain, cooperative, with clusters) and occupancy queries.

use std::ffi::{CStr, CString, c_int, c_uint, c_void};
use std::panic::catch_unwind;
use std::ptr;
use std::sync::OnceLock;

use cudarc::driver::sys;

use super::{CUfunction, CUmodule, CUstream, check};
use crate::error::{Error, Result};

/// Loads a PTX image into the current context (the driver JIT-compiles it for the device).
///
/// # Safety
/// A context is current on this thread.
pub(crate) unsafe fn module_load_ptx(ptx: &CStr) -> Result<CUmodule> {
    let mut m = ptr::null_mut();
    check(
        // SAFETY: `ptx` is NUL-terminated PTX text; valid out-pointer.
        unsafe { sys::cuModuleLoadData(&mut m, ptx.as_ptr().cast()) },
        "cuModuleLoadData",
    )?;
    Ok(m)
}

/// Unloads a module.
///
/// # Safety
/// `m` is live, its context is current, and none of its functions is used again.
pub(crate) unsafe fn module_unload(m: CUmodule) -> Result<()> {
    // SAFETY: caller's guarantee.
    check(unsafe { sys::cuModuleUnload(m) }, "cuModuleUnload")
}

/// Looks a kernel up by its (`extern "C"`) name.
///
/// # Safety
/// `m` is live.
pub(crate) unsafe fn module_get_function(m: CUmodule, name: &str) -> Result<CUfunction> {
    let cname = CString::new(name).map_err(|_| {
        Error::invalid(
            "kernel name",
            name,
            "a kernel name must not contain NUL bytes",
        )
    })?;
    let mut f = ptr::null_mut();
    check(
        // SAFETY: valid out-pointer and NUL-terminated name; caller's guarantee for `m`.
        unsafe { sys::cuModuleGetFunction(&mut f, m, cname.as_ptr()) },
        "cuModuleGetFunction",
    )?;
    Ok(f)
}

/// Grid and block shape of one launch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawLaunch {
    pub(crate) grid: (u32, u32, u32),
    pub(crate) block: (u32, u32, u32),
    pub(crate) shared_mem_bytes: u32,
}

/// The launch configuration of `cuLaunchKernelEx` for `cfg` on `s` with `attrs`.
fn launch_config(
    cfg: RawLaunch,
    s: CUstream,
    attrs: &mut [sys::CUlaunchAttribute],
) -> sys::CUlaunchConfig {
    sys::CUlaunchConfig {
        gridDimX: cfg.grid.0,
        gridDimY: cfg.grid.1,
        gridDimZ: cfg.grid.2,
        blockDimX: cfg.block.0,
        blockDimY: cfg.block.1,
        blockDimZ: cfg.block.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: s,
        attrs: attrs.as_mut_ptr(),
        numAttrs: attrs.len() as c_uint,
    }
}

/// The cooperative attribute of `cuLaunchKernelEx`.
fn cooperative_attribute() -> sys::CUlaunchAttribute {
    // SAFETY: a plain C struct of integers and a union of plain data: all zeroes is valid.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr.value.cooperative = 1;
    attr
}

/// How a launch relates to the rest of its stream (an attribute of `cuLaunchKernelEx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaunchMode {
    /// After everything before it on the stream.
    Plain,
    /// Every block resident at once, grid-wide synchronisation allowed, and a kernel compiled
    /// with cluster dimensions (`__cluster_dims__`) gets its clusters formed as compiled.
    Cooperative,
    /// Programmatic dependent launch: where the stream's previous operation is a kernel, the
    /// blocks may be scheduled once each of its blocks has signalled or exited, and must wait
    /// for its completion (`griddepcontrol.wait`) before touching memory.
    Dependent,
}

/// The programmatic-stream-serialization attribute of `cuLaunchKernelEx`.
fn dependent_attribute() -> sys::CUlaunchAttribute {
    // SAFETY: a plain C struct of integers and a union of plain data: all zeroes is valid.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    attr
}

/// Launches `f` on `s` (`cuLaunchKernelEx`) as `mode` says.
///
/// # Safety
/// `params` holds one pointer per kernel parameter, each pointing at a value of exactly the
/// parameter's type and layout; device pointers among them are valid for every access the
/// kernel makes until it completes; `f` and `s` are live and belong to the same context.
/// A cooperative grid fits on the device at once (see [`occupancy_max_active_blocks`]; with
/// clusters, it is a multiple of the compiled cluster size and holds at most
/// [`occupancy_max_active_clusters`] clusters). A dependent kernel waits for the kernel
/// before it (`griddepcontrol.wait`) before its first access to memory that an earlier
/// operation on the stream writes or reads.
pub(crate) unsafe fn launch_kernel(
    f: CUfunction,
    cfg: RawLaunch,
    s: CUstream,
    params: &mut [*mut c_void],
    mode: LaunchMode,
) -> Result<()> {
    let mut one = [match mode {
        LaunchMode::Dependent => dependent_attribute(),
        LaunchMode::Plain | LaunchMode::Cooperative => cooperative_attribute(),
    }];
    let attrs: &mut [sys::CUlaunchAttribute] = match mode {
        LaunchMode::Plain => &mut [],
        LaunchMode::Cooperative | LaunchMode::Dependent => &mut one,
    };
    let config = launch_config(cfg, s, attrs);
    check(
        // SAFETY: `config` and its attributes outlive the call; caller's guarantee for the rest.
        unsafe { sys::cuLaunchKernelEx(&config, f, params.as_mut_ptr(), ptr::null_mut()) },
        "cuLaunchKernelEx",
    )
}

/// Lets launches of `f` ask for up to `bytes` of dynamic shared memory per block
/// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`; beyond 48 KiB a kernel must opt in).
///
/// # Safety
/// `f` is a function of a live module; its context is current.
pub(crate) unsafe fn func_set_max_dynamic_shared(f: CUfunction, bytes: u32) -> Result<()> {
    let bytes = c_int::try_from(bytes).unwrap_or(c_int::MAX);
    check(
        // SAFETY: caller's guarantee; the attribute takes a byte count.
        unsafe {
            sys::cuFuncSetAttribute(
                f,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes,
            )
        },
        "cuFuncSetAttribute",
    )
}

/// Clusters of `f` (a kernel compiled with clusters of `cluster` blocks) with blocks of
/// `block_size` threads that fit on the device at once.
///
/// # Safety
/// `f` is live and its context is current.
pub(crate) unsafe fn occupancy_max_active_clusters(
    f: CUfunction,
    cluster: u32,
    block_size: u32,
    dynamic_smem: u32,
) -> Result<u32> {
    let mut attrs = [cooperative_attribute()];
    let cfg = RawLaunch {
        grid: (cluster, 1, 1),
        block: (block_size, 1, 1),
        shared_mem_bytes: dynamic_smem,
    };
    let config = launch_config(cfg, ptr::null_mut(), &mut attrs);
    let mut n: c_int = 0;
    check(
        // SAFETY: valid out-pointer and configuration; caller's guarantee for `f`.
        unsafe { sys::cuOccupancyMaxActiveClusters(&mut n, f, &config) },
        "cuOccupancyMaxActiveClusters",
    )?;
    Ok(n.max(0) as u32)
}

/// Blocks of `block_size` threads of `f` that fit on one multiprocessor at once.
///
/// # Safety
/// `f` is live and its context is current.
pub(crate) unsafe fn occupancy_max_active_blocks(
    f: CUfunction,
    block_size: u32,
    dynamic_smem: usize,
) -> Result<u32> {
    let mut n: c_int = 0;
    check(
        // SAFETY: valid out-pointer; caller's guarantee.
        unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut n,
                f,
                block_size as c_int,
                dynamic_smem,
            )
        },
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    )?;
    Ok(n.max(0) as u32)
}

/// Loads `f` into its context now (`cuFuncLoad`, CUDA 12.4+), where the driver has the entry
/// point; else does nothing (the function loads at its first use). Under lazy module loading
/// (the default since CUDA 12.2) a function's first launch may wait for its context to go
/// idle; loading it ahead keeps that wait away from launches that must not block (the members
/// of a device-driven run, whose first member already waits for the others).
///
/// # Safety
/// `f` is a function of a live module; its context is current.
pub(crate) unsafe fn func_load(f: CUfunction) -> Result<()> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    let present = *PRESENT.get_or_init(|| {
        // SAFETY: the driver library was loaded at init; looking a symbol up calls nothing.
        catch_unwind(|| unsafe { sys::culib().get::<*const c_void>(b"cuFuncLoad").is_ok() })
            .unwrap_or(false)
    });
    if !present {
        return Ok(());
    }
    // SAFETY: caller's guarantee; the entry point exists (checked above).
    check(unsafe { sys::cuFuncLoad(f) }, "cuFuncLoad")
}

// ------------------------------------------------------------------------------------------
