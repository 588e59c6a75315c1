//! Fallible allocation of arrays whose length comes from input.
//!
//! A header, a generator spec or a flag can ask for any size. Every array sized by such a
//! number is allocated here, so that a request the machine cannot meet is a
//! [`GraphError::OutOfMemory`] naming the bytes and what asked for them, never an abort.

use crate::error::GraphError;

fn out_of_memory<T>(len: usize, what: &'static str) -> GraphError {
    GraphError::OutOfMemory {
        what,
        bytes: (len as u128 * std::mem::size_of::<T>() as u128).min(u128::from(u64::MAX)) as u64,
    }
}

/// A vector of `len` zeros (calloc: pages are zeroed lazily by the system, as with `vec![0; n]`).
pub(crate) fn try_zeroed<T: bytemuck::Zeroable>(
    len: usize,
    what: &'static str,
) -> Result<Vec<T>, GraphError> {
    bytemuck::allocation::try_zeroed_vec(len).map_err(|()| out_of_memory::<T>(len, what))
}

/// An empty vector with room for `len` items.
pub(crate) fn try_with_capacity<T>(len: usize, what: &'static str) -> Result<Vec<T>, GraphError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| out_of_memory::<T>(len, what))?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_sizes_are_errors_naming_bytes_and_purpose() {
        let e = try_zeroed::<u64>(usize::MAX / 4, "test offsets").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("test offsets"), "{msg}");
        assert!(
            matches!(e, GraphError::OutOfMemory { bytes, .. } if bytes >= u64::MAX / 2),
            "{e:?}"
        );
        assert!(try_with_capacity::<u32>(usize::MAX / 2, "test targets").is_err());
    }

    #[test]
    fn possible_sizes_are_filled() {
        assert_eq!(try_zeroed::<u32>(3, "a").unwrap(), vec![0, 0, 0]);
        assert!(try_with_capacity::<u8>(5, "c").unwrap().capacity() >= 5);
    }
}
