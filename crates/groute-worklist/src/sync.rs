//! The synchronization primitives of the termination and soft-priority counters.
//!
//! Normally `std`'s atomics and `parking_lot`'s lock. Built with `--cfg loom`, loom's, so
//! that `tests/loom_termination.rs` can run the counters under the loom model checker (every
//! interleaving of a small workload, up to a preemption bound). Only the counters use this
//! module; the rest of the crate keeps its own primitives and is not model-checked.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};

#[cfg(not(loom))]
pub(crate) use parking_lot::Mutex;

/// loom's lock behind `parking_lot`'s interface: `lock` returns the guard (a poisoned lock
/// still hands its data over, as `parking_lot`'s never poisons).
#[cfg(loom)]
#[derive(Debug)]
pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Mutex(loom::sync::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
        match self.0.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}
