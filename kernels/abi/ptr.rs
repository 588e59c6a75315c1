//! [`DevicePtr`]: a typed device address, and [`KernelArg`]: what may be passed to a kernel.

use core::marker::PhantomData;

/// A value that may be passed by value to a kernel parameter of the matching C type.
///
/// # Safety
/// The type's size, alignment and bit patterns match the CUDA C parameter it is passed to
/// (`#[repr(C)]` or `#[repr(transparent)]` plain data, no references, no padding the kernel
/// reads). The launch wrapper that names a kernel's signature is responsible for the match;
/// the ABI structs of this module are checked against their C twins by `tests/abi.rs`.
pub unsafe trait KernelArg: Copy {}

macro_rules! kernel_arg_scalars {
    ($($t:ty),*) => { $(
        // SAFETY: plain scalars with the size and layout of the C type of the same width.
        unsafe impl KernelArg for $t {}
    )* };
}
kernel_arg_scalars!(
    u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, usize, isize, bool
);

/// Memory whose device address a kernel can take ([`DevicePtr::from_slice`]); the CUDA
/// backend's slices implement it.
pub trait DeviceMemory {
    /// Why an address could not be taken.
    type Error;
    /// The memory's device address, or why it has none (host memory a kernel cannot read).
    fn device_address(&self) -> Result<u64, Self::Error>;
    /// The error for `addr`, which is not aligned to `align` bytes for elements of `pointee`.
    fn misaligned(&self, addr: u64, align: usize, pointee: &'static str) -> Self::Error;
}

/// A device address of elements of type `T` (a `T*` in C).
#[repr(transparent)]
pub struct DevicePtr<T> {
    addr: u64,
    _marker: PhantomData<fn() -> T>,
}

impl<T> Clone for DevicePtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevicePtr<T> {}

impl<T> PartialEq for DevicePtr<T> {
    fn eq(&self, other: &Self) -> bool {
        self.addr == other.addr
    }
}
impl<T> Eq for DevicePtr<T> {}

impl<T> core::fmt::Debug for DevicePtr<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "DevicePtr({:#x})", self.addr)
    }
}

impl<T> Default for DevicePtr<T> {
    fn default() -> Self {
        Self::null()
    }
}

// SAFETY: a 64-bit device address, passed as a `T*` (8 bytes on every CUDA platform).
unsafe impl<T> KernelArg for DevicePtr<T> {}

// SAFETY: `#[repr(transparent)]` over a `u64` (the marker is zero-sized): every bit pattern is
// a valid value (an address the host never dereferences), zero is null, no padding.
unsafe impl<T: 'static> bytemuck::Zeroable for DevicePtr<T> {}
// SAFETY: as above; `Copy` and `'static`.
unsafe impl<T: 'static> bytemuck::Pod for DevicePtr<T> {}

impl<T> DevicePtr<T> {
    /// The null pointer.
    pub const fn null() -> Self {
        DevicePtr {
            addr: 0,
            _marker: PhantomData,
        }
    }

    /// The device address of `memory` (CUDA device memory or mapped host memory), checked
    /// for alignment to `T`. The memory must be kept alive until the kernel completes.
    pub fn from_slice<M: DeviceMemory + ?Sized>(memory: &M) -> Result<Self, M::Error> {
        let addr = memory.device_address()?;
        let align = core::mem::align_of::<T>();
        if addr % align as u64 != 0 {
            return Err(memory.misaligned(addr, align, core::any::type_name::<T>()));
        }
        Ok(DevicePtr {
            addr,
            _marker: PhantomData,
        })
    }

    /// A pointer from a raw device address.
    ///
    /// # Safety
    /// `addr` is a device address valid for the kernel's accesses as `T`, or null.
    pub unsafe fn from_raw(addr: u64) -> Self {
        DevicePtr {
            addr,
            _marker: PhantomData,
        }
    }

    /// The pointer `q` with `q[first]` at this pointer's element 0: how a kernel indexes a
    /// slice of a larger array (a device's part of a graph, say) by the whole array's
    /// indices. Elements below `first` are not this slice's: the kernel must not touch them
    /// (compute-sanitizer's memcheck reports it if it does).
    pub fn rebased(self, first: u64) -> Self {
        DevicePtr {
            addr: self
                .addr
                .wrapping_sub(first.wrapping_mul(core::mem::size_of::<T>() as u64)),
            _marker: PhantomData,
        }
    }

    /// The address.
    pub fn addr(self) -> u64 {
        self.addr
    }

    /// Whether this is the null pointer.
    pub fn is_null(self) -> bool {
        self.addr == 0
    }
}
