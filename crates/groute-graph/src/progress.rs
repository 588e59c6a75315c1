//! Progress reporting for long loads, generations and partitions.

/// Receives progress from long operations; called from worker threads.
///
/// A stage begins with [`Progress::stage`] (its name and total units: bytes for readers, arcs for
/// generators) and advances by [`Progress::advance`]. Both default to doing nothing.
pub trait Progress: Sync {
    /// A new stage begins.
    fn stage(&self, name: &str, total: u64) {
        let _ = (name, total);
    }
    /// `delta` more units of the current stage are done.
    fn advance(&self, delta: u64) {
        let _ = delta;
    }
}

/// Reports nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}
