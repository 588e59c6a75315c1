//! The value of a vertex: one 32-bit word, combined atomically.

use std::fmt::Debug;
use std::sync::atomic::{AtomicU32, Ordering};

/// A vertex value held in one `u32` word (a device's value arrays are `u32` buffers; `f32`
/// values travel as their bits), with the atomic combines the executors apply: `u32` or
/// `f32` (sealed: the executors reinterpret downloaded words as values, which needs a `Pod`
/// type of one aligned word).
pub trait AtomicValue: sealed::OneWord + bytemuck::Pod + PartialOrd + Debug + Send + Sync {
    /// The value of an empty accumulation (the identity of [`AtomicValue::fetch_add`]).
    const ZERO: Self;
    /// The word that holds `self`.
    fn to_bits(self) -> u32;
    /// The value a word holds.
    fn from_bits(bits: u32) -> Self;
    /// `self + other`, saturating where the type would wrap.
    fn add(self, other: Self) -> Self;

    /// Sets `cell` to the smaller of its value and `value`; returns the value before.
    fn fetch_min(cell: &AtomicU32, value: Self) -> Self {
        let old = cell.fetch_update(Ordering::AcqRel, Ordering::Acquire, |bits| {
            (value < Self::from_bits(bits)).then_some(value.to_bits())
        });
        Self::from_bits(old.unwrap_or_else(|bits| bits))
    }

    /// Adds `value` to `cell`; returns the value before.
    fn fetch_add(cell: &AtomicU32, value: Self) -> Self {
        let old = cell.fetch_update(Ordering::AcqRel, Ordering::Acquire, |bits| {
            Some(Self::from_bits(bits).add(value).to_bits())
        });
        Self::from_bits(old.unwrap_or_else(|bits| bits))
    }
}

mod sealed {
    /// The value types: `Pod` words of 4 bytes, 4-aligned.
    pub trait OneWord {}
    impl OneWord for u32 {}
    impl OneWord for f32 {}
}

impl AtomicValue for u32 {
    const ZERO: Self = 0;
    fn to_bits(self) -> u32 {
        self
    }
    fn from_bits(bits: u32) -> Self {
        bits
    }
    fn add(self, other: Self) -> Self {
        self.saturating_add(other)
    }
    fn fetch_min(cell: &AtomicU32, value: Self) -> Self {
        cell.fetch_min(value, Ordering::AcqRel)
    }
}

impl AtomicValue for f32 {
    const ZERO: Self = 0.0;
    fn to_bits(self) -> u32 {
        f32::to_bits(self)
    }
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
    fn add(self, other: Self) -> Self {
        self + other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_keeps_the_smaller_value_and_returns_the_old_one() {
        let cell = AtomicU32::new(7);
        assert_eq!(u32::fetch_min(&cell, 9), 7);
        assert_eq!(cell.load(Ordering::Relaxed), 7);
        assert_eq!(u32::fetch_min(&cell, 3), 7);
        assert_eq!(cell.load(Ordering::Relaxed), 3);
        let cell = AtomicU32::new(2.5f32.to_bits());
        assert_eq!(f32::fetch_min(&cell, 4.0), 2.5);
        assert_eq!(f32::fetch_min(&cell, 1.5), 2.5);
        assert_eq!(f32::from_bits(cell.load(Ordering::Relaxed)), 1.5);
    }

    #[test]
    fn add_accumulates_and_saturates_integers() {
        let cell = AtomicU32::new(0.25f32.to_bits());
        assert_eq!(f32::fetch_add(&cell, 0.5), 0.25);
        assert_eq!(f32::from_bits(cell.load(Ordering::Relaxed)), 0.75);
        let cell = AtomicU32::new(u32::MAX - 1);
        assert_eq!(u32::fetch_add(&cell, 5), u32::MAX - 1);
        assert_eq!(cell.load(Ordering::Relaxed), u32::MAX);
    }
}
