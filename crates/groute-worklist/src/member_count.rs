//! [`MemberCount`]: the termination count of device-driven members, the rules of
//! `docs/device-protocol.md` ("Termination of the members") as one type. The host backend's
//! members use it; `tests/loom_termination.rs` model-checks it.

use crate::sync::{AtomicU64, Ordering};

/// The members counted in plus the items published and not yet taken. The rules:
///
/// 1. every member is counted in before any starts ([`MemberCount::new`]);
/// 2. a member adds the items it publishes *before* they are visible to their receiver
///    ([`MemberCount::publish`]);
/// 3. it takes received items out as it takes them, an idle member counting itself back in
///    with the same update ([`MemberCount::take`]);
/// 4. it counts itself out only with no work and its sends published
///    ([`MemberCount::count_out`]).
///
/// Then the count is positive while any item exists (its member is counted in, or the item
/// itself is counted), and once it is 0 nothing can raise it (only a counted-in member
/// publishes): 0 means done, and every member sees it.
///
/// ```
/// use groute_worklist::MemberCount;
/// let count = MemberCount::new(2);
/// let (mut a, mut b) = (true, true); // both counted in
/// count.publish(3); // a sends 3 items to b
/// assert!(!count.count_out(&mut a)); // a idles
/// count.take(3, &mut b); // b takes them
/// assert!(count.count_out(&mut b)); // b idles last: the run is over
/// assert!(count.is_done());
/// ```
#[derive(Debug)]
pub struct MemberCount {
    pending: AtomicU64,
}

impl MemberCount {
    /// A count with `members` members counted in.
    pub fn new(members: usize) -> Self {
        MemberCount {
            pending: AtomicU64::new(members as u64),
        }
    }

    /// Counts `items` about to be published (call before they are visible).
    pub fn publish(&self, items: u64) {
        if items > 0 {
            self.pending.fetch_add(items, Ordering::AcqRel);
        }
    }

    /// Takes `items` received items (at least one) out of the count; a member that had
    /// counted itself out (`counted_in` false) counts itself back in with the same update.
    pub fn take(&self, items: u64, counted_in: &mut bool) {
        debug_assert!(items > 0, "take at least one item");
        let back_in = u64::from(!*counted_in);
        self.pending.fetch_sub(items - back_in, Ordering::AcqRel);
        *counted_in = true;
    }

    /// Counts a member with no work and its sends published out (`counted_in` becomes
    /// false); whether this ended the run. Counting out twice is a no-op.
    pub fn count_out(&self, counted_in: &mut bool) -> bool {
        if !*counted_in {
            return self.is_done();
        }
        *counted_in = false;
        self.pending.fetch_sub(1, Ordering::AcqRel) == 1
    }

    /// Whether the run is over (no member counted in, no item published and not taken).
    pub fn is_done(&self) -> bool {
        self.pending.load(Ordering::Acquire) == 0
    }

    /// The count now.
    pub fn pending(&self) -> u64 {
        self.pending.load(Ordering::Acquire)
    }
}
