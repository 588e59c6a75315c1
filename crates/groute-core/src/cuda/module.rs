//! Modules (compiled PTX loaded into one device's context) and their kernels.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Arc;

use parking_lot::Mutex;
use rayon::prelude::*;

use super::compile::{Ptx, arch_for, compile_ptx};
use crate::backend::RawStream;
use crate::backend::cuda::{CudaStream, DeviceInner, sys};
use crate::error::{Error, Result};
use groute_kernels::KernelSource;

/// A kernel source by the addresses and lengths of its `'static` name and text: two equal
/// keys name the same immutable bytes, so the same PTX (the compile options of
/// [`CudaModule::load`] are fixed per device and process, `GROUTE_NVRTC_OPTIONS` included:
/// it is read once). Two copies of one text at different addresses
/// only miss the fast path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SourceKey([usize; 4]);

impl SourceKey {
    fn of(source: &KernelSource) -> SourceKey {
        SourceKey([
            source.name.as_ptr() as usize,
            source.name.len(),
            source.source.as_ptr() as usize,
            source.source.len(),
        ])
    }
}

/// A loaded module, owned by its device (unloaded when the device's context goes).
pub(crate) struct ModuleInner {
    pub(crate) raw: sys::CUmodule,
    name: &'static str,
    functions: Mutex<HashMap<String, sys::CUfunction>>,
}

// SAFETY: module and function handles may be used from any thread (the driver is thread-safe);
// the function map is behind a mutex.
unsafe impl Send for ModuleInner {}
// SAFETY: as above.
unsafe impl Sync for ModuleInner {}

/// A kernel source compiled for, and loaded into, one device.
#[derive(Clone)]
pub struct CudaModule {
    inner: Arc<ModuleInner>,
    device: Arc<DeviceInner>,
}

impl std::fmt::Debug for CudaModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaModule")
            .field("source", &self.inner.name)
            .field("device", &self.device.index)
            .finish()
    }
}

impl CudaModule {
    /// Compiles `source` for the device of `stream` (once per process, see
    /// [`super::compile_ptx`]) and loads it into that device (once per device).
    ///
    /// Called before every launch, so a source already loaded into the device is found by
    /// the address of its `'static` text (`SourceKey`) without hashing it again (the PTX
    /// cache key is a SHA-256 of the source and every header: ~100 KB per launch otherwise).
    pub fn load(stream: &dyn RawStream, source: &KernelSource) -> Result<CudaModule> {
        let stream = CudaStream::from_raw(stream)?;
        let device = stream.device_inner();
        let key = SourceKey::of(source);
        if let Some(m) = device.loaded_sources.lock().get(&key) {
            return Ok(CudaModule {
                inner: m.clone(),
                device: device.clone(),
            });
        }
        let arch = arch_for(device.props.compute_capability);
        let ptx = compile_ptx(source, &arch, &[])?;
        let module = Self::load_ptx(device, source.name, &ptx)?;
        device
            .loaded_sources
            .lock()
            .insert(key, module.inner.clone());
        Ok(module)
    }

    /// Compiles every source of `sources` for the device of `stream` and loads it there, as
    /// [`CudaModule::load`] does one, the sources side by side on rayon's threads where more
    /// than one is still to load: a first run, with nothing cached yet, then waits for the
    /// longest compilation (and the driver's translation of its PTX) instead of their sum.
    /// The modules come back in the order of `sources`; a failure of any is the error.
    pub fn load_all<const N: usize>(
        stream: &dyn RawStream,
        sources: [&KernelSource; N],
    ) -> Result<[CudaModule; N]> {
        let device = CudaStream::from_raw(stream)?.device_inner();
        let missing = {
            let loaded = device.loaded_sources.lock();
            sources
                .iter()
                .filter(|&&s| !loaded.contains_key(&SourceKey::of(s)))
                .count()
        };
        let modules: Vec<CudaModule> = if missing < 2 {
            // At most one to compile: nothing to run side by side.
            sources
                .iter()
                .map(|&s| Self::load(stream, s))
                .collect::<Result<_>>()?
        } else {
            sources
                .par_iter()
                .map(|&s| Self::load(stream, s))
                .collect::<Result<_>>()?
        };
        let loaded = modules.len();
        modules
            .try_into()
            .map_err(|_| Error::invalid("loaded modules", loaded, "one per source"))
    }

    pub(crate) fn load_ptx(
        device: &Arc<DeviceInner>,
        name: &'static str,
        ptx: &Ptx,
    ) -> Result<CudaModule> {
        let loaded = |inner: &Arc<ModuleInner>| CudaModule {
            inner: inner.clone(),
            device: device.clone(),
        };
        if let Some(m) = device.modules.lock().get(&ptx.key) {
            return Ok(loaded(m));
        }
        let text = CString::new(ptx.text.as_bytes()).map_err(|_| Error::KernelCompile {
            kernel: name.to_string(),
            arch: ptx.arch.clone(),
            log: "PTX contains a NUL byte".into(),
        })?;
        device.bind()?;
        // Not under the lock: the driver translates the PTX here, which takes seconds for the
        // largest modules, and other modules may load meanwhile (`load_all`).
        // SAFETY: the device's context is current.
        let raw = unsafe { sys::module_load_ptx(&text)? };
        let mut modules = device.modules.lock();
        if let Some(m) = modules.get(&ptx.key) {
            // Another thread loaded the same PTX meanwhile (both translated it; rare, as the
            // sources of one `load_all` are distinct): keep its module.
            // SAFETY: the context is current and nothing holds a function of `raw` yet.
            let _ = unsafe { sys::module_unload(raw) };
            return Ok(loaded(m));
        }
        let inner = Arc::new(ModuleInner {
            raw,
            name,
            functions: Mutex::new(HashMap::new()),
        });
        modules.insert(ptx.key, inner.clone());
        Ok(loaded(&inner))
    }

    /// The kernel `name` (an `extern "C" __global__` function of the source).
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        let mut fns = self.inner.functions.lock();
        let raw = match fns.get(name) {
            Some(f) => *f,
            None => {
                // The module may have been loaded on another thread (`load_all`).
                self.device.bind()?;
                // SAFETY: the module stays loaded while its device lives; `self` holds the device.
                let f = unsafe { sys::module_get_function(self.inner.raw, name)? };
                fns.insert(name.to_string(), f);
                f
            }
        };
        Ok(CudaFunction {
            raw,
            name: name.to_string(),
            device: self.device.clone(),
            _module: self.inner.clone(),
        })
    }
}

/// One kernel of a loaded module. Launch it with [`CudaFunction::launch`].
#[derive(Clone)]
pub struct CudaFunction {
    pub(crate) raw: sys::CUfunction,
    name: String,
    pub(crate) device: Arc<DeviceInner>,
    _module: Arc<ModuleInner>,
}

// SAFETY: a function handle may be used from any thread; the value is immutable.
unsafe impl Send for CudaFunction {}
// SAFETY: as above.
unsafe impl Sync for CudaFunction {}

impl std::fmt::Debug for CudaFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaFunction")
            .field("name", &self.name)
            .field("device", &self.device.index)
            .finish()
    }
}

impl CudaFunction {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Blocks of `block_size` threads (with `dynamic_smem` bytes of dynamic shared memory) that
    /// fit on one multiprocessor at once (`cuOccupancyMaxActiveBlocksPerMultiprocessor`).
    pub fn max_active_blocks_per_multiprocessor(
        &self,
        block_size: u32,
        dynamic_smem: usize,
    ) -> Result<u32> {
        self.device.bind()?;
        // SAFETY: the function's module is loaded (held by `self`) and its context is current.
        unsafe { sys::occupancy_max_active_blocks(self.raw, block_size, dynamic_smem) }
    }

    /// Loads the function into its device now where the driver can (`cuFuncLoad`), so that
    /// its first launch does not load it lazily (which may wait for the device to go idle):
    /// call it before launching the members of a device-driven run, which wait for each
    /// other.
    pub fn load_now(&self) -> Result<()> {
        self.device.bind()?;
        // SAFETY: the function's module is loaded (held by `self`) and its context is current.
        unsafe { sys::func_load(self.raw) }
    }

    /// Lets launches of this kernel ask for up to `bytes` of dynamic shared memory per block
    /// (past 48 KiB a kernel must opt in; at most the device's
    /// [`crate::backend::DeviceProperties::shared_memory_per_block_optin`], which the driver
    /// checks).
    pub fn set_max_dynamic_shared_memory(&self, bytes: u32) -> Result<()> {
        self.device.bind()?;
        // SAFETY: the function's module is loaded (held by `self`) and its context is current.
        unsafe { sys::func_set_max_dynamic_shared(self.raw, bytes) }
    }

    /// The largest grid whose blocks are all resident at once: occupancy x multiprocessors.
    /// This is the grid for a cooperative launch or a persistent kernel.
    pub fn max_resident_grid(&self, block_size: u32, dynamic_smem: usize) -> Result<u32> {
        Ok(
            self.max_active_blocks_per_multiprocessor(block_size, dynamic_smem)?
                * self.device.props.multiprocessors,
        )
    }

    /// Clusters of `cluster` blocks of `block_size` threads that fit on the device at once
    /// (`cuOccupancyMaxActiveClusters`), for a kernel compiled with clusters of that size
    /// (`__cluster_dims__`). A cooperative launch of such a kernel
    /// ([`CudaFunction::launch_cooperative`]) holds at most this many clusters: fewer
    /// blocks than [`CudaFunction::max_resident_grid`] where a GPC's multiprocessors do not
    /// divide into whole clusters (with clusters of 4 blocks of 1,024 threads, the
    /// multiprocessors of a GPC past a multiple of 4 stay idle).
    pub fn max_active_clusters(&self, cluster: u32, block_size: u32) -> Result<u32> {
        self.device.bind()?;
        // SAFETY: the function's module is loaded (held by `self`) and its context is current.
        unsafe { sys::occupancy_max_active_clusters(self.raw, cluster, block_size, 0) }
    }

    /// Multiprocessors of the function's device.
    pub fn multiprocessors(&self) -> u32 {
        self.device.props.multiprocessors
    }
}
