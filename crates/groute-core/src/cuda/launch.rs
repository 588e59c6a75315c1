//! Typed kernel launches: the [`KernelArg`] marker trait, [`DevicePtr`], [`LaunchConfig`] and
//! [`CudaFunction::launch`] / [`CudaFunction::launch_cooperative`].

use std::ffi::c_void;
use std::sync::Arc;

use super::module::CudaFunction;
use crate::backend::cuda::{CudaStream, sys};
use crate::backend::{RawSlice, RawStream};
use crate::error::{Error, Result};

pub use groute_kernels::abi::{DevicePtr, KernelArg};

/// A [`RawSlice`] of device memory (or mapped host memory) gives its device address to
/// [`DevicePtr::from_slice`]; host memory a kernel cannot read is refused.
impl groute_kernels::abi::DeviceMemory for RawSlice {
    type Error = Error;

    fn device_address(&self) -> Result<u64> {
        self.device_ptr().ok_or(Error::Unsupported {
            operation: "passing memory that is not device-addressable to a kernel",
            backend: "cuda",
        })
    }

    fn misaligned(&self, addr: u64, align: usize, pointee: &'static str) -> Error {
        Error::invalid(
            "kernel argument",
            format_args!("{addr:#x}"),
            format!("a device pointer to {pointee} must be {align}-byte aligned"),
        )
    }
}

/// The arguments of one launch: a tuple of up to 18 [`KernelArg`]s, in parameter order (the
/// longest list a launch in the workspace passes; the persistent kernels take one parameter
/// struct of `groute_kernels::abi`).
///
/// # Safety
/// `param_ptrs` returns one pointer per element, in order, to the element inside `self`.
pub unsafe trait KernelArgs {
    /// Pointers to each argument (valid while `self` is borrowed).
    fn param_ptrs(&mut self) -> Vec<*mut c_void>;
}

macro_rules! kernel_args_tuple {
    ($($n:ident $i:tt),*) => {
        // SAFETY: one pointer per tuple field, in field order, into `self`.
        unsafe impl<$($n: KernelArg),*> KernelArgs for ($($n,)*) {
            fn param_ptrs(&mut self) -> Vec<*mut c_void> {
                vec![$((&mut self.$i as *mut $n).cast::<c_void>()),*]
            }
        }
    };
}
kernel_args_tuple!(A 0);
kernel_args_tuple!(A 0, B 1);
kernel_args_tuple!(A 0, B 1, C 2);
kernel_args_tuple!(A 0, B 1, C 2, D 3);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16);
kernel_args_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15, Q 16, R 17);

/// Grid and block shape of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks per grid `(x, y, z)`.
    pub grid: (u32, u32, u32),
    /// Threads per block `(x, y, z)`.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
    /// A programmatic dependent launch ([`CudaFunction::launch`] only; `cuLaunchKernelEx`,
    /// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`): where the operation before it
    /// on the stream is a kernel, its blocks may be scheduled as soon as every block of that
    /// kernel has signalled (`groute::let_dependents_launch`) or exited, so that its launch
    /// overlaps that kernel's last blocks instead of following its completion. The kernel
    /// must call `groute::wait_for_prior_grid` (`kernels/include/grid_dependency.cuh`)
    /// before its first access to global memory that an earlier operation on the stream
    /// writes or reads: it returns once the kernel before has completed and its writes are
    /// visible. After any other operation, and on devices of compute capability below 9.0
    /// (which have no such launch), it runs as a plain launch.
    pub dependent: bool,
}

impl LaunchConfig {
    /// A 1-D launch of `grid` blocks of `block` threads.
    pub fn linear(grid: u32, block: u32) -> Self {
        LaunchConfig {
            grid: (grid, 1, 1),
            block: (block, 1, 1),
            shared_mem_bytes: 0,
            dependent: false,
        }
    }

    /// One thread per element: `ceil(n / block)` blocks (at least one), capped at `max_grid`
    /// when given (for grid-stride kernels).
    pub fn for_elements(n: usize, block: u32, max_grid: Option<u32>) -> Self {
        let block = block.max(1);
        let blocks = n.div_ceil(block as usize).clamp(1, u32::MAX as usize) as u32;
        LaunchConfig::linear(max_grid.map_or(blocks, |m| blocks.min(m.max(1))), block)
    }

    fn validate(&self) -> Result<()> {
        let (g, b) = (self.grid, self.block);
        if g.0 == 0 || g.1 == 0 || g.2 == 0 || b.0 == 0 || b.1 == 0 || b.2 == 0 {
            return Err(Error::invalid(
                "launch configuration",
                format_args!("{self:?}"),
                "grid and block dimensions must all be at least 1",
            ));
        }
        Ok(())
    }

    fn raw(&self) -> sys::RawLaunch {
        sys::RawLaunch {
            grid: self.grid,
            block: self.block,
            shared_mem_bytes: self.shared_mem_bytes,
        }
    }
}

impl CudaFunction {
    fn check_stream<'a>(&self, stream: &'a dyn RawStream) -> Result<&'a CudaStream> {
        let s = CudaStream::from_raw(stream)?;
        if !Arc::ptr_eq(s.device_inner(), &self.device) {
            return Err(Error::Unsupported {
                operation: "launching a kernel on a stream of another device than its module's",
                backend: "cuda",
            });
        }
        Ok(s)
    }

    /// Enqueues the kernel on `stream` (a [`CudaStream`] of the module's device).
    ///
    /// # Safety
    /// `args` matches the kernel's parameter list exactly (types, order, count); every device
    /// pointer among them is valid for all accesses the kernel makes, and stays so until the
    /// kernel completes (keep the memory alive with [`CudaStream::keep_alive`] or the typed
    /// layer's buffers); the kernel's own preconditions hold; where `config.dependent`, the
    /// kernel waits for the prior grid before touching memory ([`LaunchConfig::dependent`]).
    /// Write one typed wrapper per kernel that states this once.
    pub unsafe fn launch<A: KernelArgs>(
        &self,
        stream: &dyn RawStream,
        config: LaunchConfig,
        args: A,
    ) -> Result<()> {
        let mode = plain_or_dependent(config.dependent, self.device.props.compute_capability);
        // SAFETY: the caller's guarantee (a dependent kernel waits for the prior grid).
        unsafe { self.enqueue(stream, config, args, mode) }
    }

    /// Enqueues the kernel as a cooperative launch (`cuLaunchKernelEx`; every block resident
    /// at once, grid-wide synchronisation allowed). Size the grid with
    /// [`CudaFunction::max_resident_grid`]; a kernel compiled with cluster dimensions
    /// (`__cluster_dims__`) gets its clusters formed as compiled, its grid sized with
    /// [`CudaFunction::max_active_clusters`].
    ///
    /// # Safety
    /// As [`CudaFunction::launch`]; with clusters, the grid is a multiple of the compiled
    /// cluster size.
    pub unsafe fn launch_cooperative<A: KernelArgs>(
        &self,
        stream: &dyn RawStream,
        config: LaunchConfig,
        args: A,
    ) -> Result<()> {
        if config.dependent {
            return Err(Error::invalid(
                "launch configuration",
                "dependent",
                "a cooperative launch follows the work before it (dependent: false)",
            ));
        }
        // SAFETY: the caller's guarantee.
        unsafe { self.enqueue(stream, config, args, sys::LaunchMode::Cooperative) }
    }

    /// Validates `config`, binds the stream's context and launches the kernel with the
    /// arguments' pointers, as `mode` says.
    ///
    /// # Safety
    /// As [`CudaFunction::launch`]; a cooperative grid fits on the device at once; a dependent
    /// kernel waits for the prior grid before touching memory.
    unsafe fn enqueue<A: KernelArgs>(
        &self,
        stream: &dyn RawStream,
        config: LaunchConfig,
        mut args: A,
        mode: sys::LaunchMode,
    ) -> Result<()> {
        config.validate()?;
        let s = self.check_stream(stream)?;
        s.bind()?;
        let mut params = args.param_ptrs();
        // SAFETY: the caller guarantees the arguments; the function and stream are live and of
        // the same context (checked above).
        unsafe { sys::launch_kernel(self.raw, config.raw(), s.raw(), &mut params, mode) }
    }
}

/// The mode of a [`CudaFunction::launch`] asked to be `dependent` on a device of
/// `compute_capability`: dependent only where asked on 9.0 or more.
fn plain_or_dependent(dependent: bool, compute_capability: (u32, u32)) -> sys::LaunchMode {
    match dependent && compute_capability.0 >= 9 {
        true => sys::LaunchMode::Dependent,
        false => sys::LaunchMode::Plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_is_dependent_only_where_asked_on_compute_capability_9_or_more() {
        assert_eq!(plain_or_dependent(true, (9, 0)), sys::LaunchMode::Dependent);
        assert_eq!(
            plain_or_dependent(true, (10, 0)),
            sys::LaunchMode::Dependent
        );
        assert_eq!(plain_or_dependent(true, (8, 9)), sys::LaunchMode::Plain);
        assert_eq!(plain_or_dependent(false, (9, 0)), sys::LaunchMode::Plain);
        assert!(!LaunchConfig::linear(1, 32).dependent);
    }
}
