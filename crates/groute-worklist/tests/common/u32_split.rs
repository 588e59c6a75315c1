//! [`U32Split`]: the split of the synthetic programs of the engine's tests, whose `u32` items
//! travel as they are; each program says only which items a device keeps, and their
//! priorities.

use groute_worklist::{SplitFlags, SplitOps};

/// Which `u32` items a device keeps (the others pass on over the ring), and their priorities.
pub trait KeepRule: Clone + Send + Sync {
    /// Whether this device keeps `item`, produced here or received.
    fn keeps(&self, item: u32) -> bool;
    /// `item`'s priority (lower is more urgent).
    fn prio(&self, item: u32) -> u32;
}

/// The [`SplitOps`] of a [`KeepRule`]: items packed as themselves, kept where the rule says
/// so and passed on elsewhere.
#[derive(Clone)]
pub struct U32Split<R>(pub R);

impl<R: KeepRule> SplitOps for U32Split<R> {
    type Local = u32;
    type Packed = u32;
    fn pack(&self, item: u32) -> u32 {
        item
    }
    fn unpack(&self, packed: u32) -> u32 {
        packed
    }
    fn on_send(&self, p: &u32) -> SplitFlags {
        if self.0.keeps(*p) {
            SplitFlags::KEEP
        } else {
            SplitFlags::PASS
        }
    }
    fn on_receive(&self, p: &u32) -> SplitFlags {
        self.on_send(p)
    }
    fn get_prio(&self, item: &u32) -> u32 {
        self.0.prio(*item)
    }
}
