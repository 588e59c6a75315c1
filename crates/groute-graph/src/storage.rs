//! Array storage that is either owned or a view into a memory-mapped file.

use std::ops::Deref;
use std::sync::Arc;

use memmap2::Mmap;

/// A read-only array of plain values, owned or borrowed from a memory-mapped binary cache.
///
/// Dereferences to `&[T]`. A mapped array keeps its mapping alive through an [`Arc`], so slices
/// of it stay valid as long as the array lives.
#[derive(Clone)]
pub struct Storage<T: bytemuck::Pod> {
    inner: Inner<T>,
}

#[derive(Clone)]
enum Inner<T> {
    Owned(Vec<T>),
    /// Invariant (checked by [`Storage::mapped`]): `map[start..start + len * size_of::<T>()]`
    /// exists and `map.as_ptr() + start` is aligned for `T`.
    Mapped {
        map: Arc<Mmap>,
        start: usize,
        len: usize,
    },
}

impl<T: bytemuck::Pod> Storage<T> {
    /// A view of `len` values of `T` at byte `start` of `map`; `None` if out of bounds or
    /// misaligned.
    pub(crate) fn mapped(map: Arc<Mmap>, start: usize, len: usize) -> Option<Self> {
        let bytes = len.checked_mul(size_of::<T>())?;
        let end = start.checked_add(bytes)?;
        let slice = map.get(start..end)?;
        // Validates alignment (and length) once; `deref` relies on it.
        bytemuck::try_cast_slice::<u8, T>(slice).ok()?;
        Some(Storage {
            inner: Inner::Mapped { map, start, len },
        })
    }

    /// Whether the values live in a memory-mapped file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.inner, Inner::Mapped { .. })
    }

    /// The values as an owned vector (copies a mapped array).
    pub fn into_vec(self) -> Vec<T> {
        match self.inner {
            Inner::Owned(v) => v,
            Inner::Mapped { .. } => self.deref().to_vec(),
        }
    }
}

impl<T: bytemuck::Pod> From<Vec<T>> for Storage<T> {
    fn from(v: Vec<T>) -> Self {
        Storage {
            inner: Inner::Owned(v),
        }
    }
}

impl<T: bytemuck::Pod> Deref for Storage<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.inner {
            Inner::Owned(v) => v,
            Inner::Mapped { map, start, len } => {
                // Bounds and alignment were checked in `mapped`, so this cast cannot fail; the
                // empty fallback is unreachable and only avoids a panic path.
                let bytes = &map[*start..*start + *len * size_of::<T>()];
                bytemuck::try_cast_slice(bytes).unwrap_or(&[])
            }
        }
    }
}

impl<T: bytemuck::Pod + std::fmt::Debug> std::fmt::Debug for Storage<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s: &[T] = self;
        if s.len() <= 16 {
            f.debug_list().entries(s).finish()
        } else {
            write!(
                f,
                "[{} values{}]",
                s.len(),
                if self.is_mapped() { ", mapped" } else { "" }
            )
        }
    }
}

impl<T: bytemuck::Pod + PartialEq> PartialEq for Storage<T> {
    fn eq(&self, other: &Self) -> bool {
        self.deref() == other.deref()
    }
}
impl<T: bytemuck::Pod + Eq> Eq for Storage<T> {}
