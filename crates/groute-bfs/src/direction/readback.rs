//! Reading a device's control block and counters back once per level (both backends).

use groute_core::{Buffer, Error, Stream};
use groute_kernels::abi::{TraversalCtrl, words_of};
use groute_kernels::abi_word;

/// Words of the control block read back (the traversals' [`TraversalCtrl`]).
pub(super) const CTRL_WORDS: usize = words_of::<TraversalCtrl>();
/// The worklist's end.
pub(super) const CTRL_WL_END: usize = abi_word!(TraversalCtrl, wl_end);
const CTRL_WL_OVERFLOW: usize = abi_word!(TraversalCtrl, wl_overflow);
const CTRL_SEND_OVERFLOW: usize = abi_word!(TraversalCtrl, send_overflow);
/// The counters of `kernels/bfs/bfs_direction.cu` (`groute::DIRECTION_*`).
pub(super) const COUNTERS: usize = 4;
/// Out-degrees of the new frontiers.
pub(super) const OUT_ARCS: usize = 0;
/// In-degrees of the new frontiers.
pub(super) const IN_ARCS: usize = 1;
/// Arcs scanned by pull steps.
pub(super) const EXAMINED: usize = 2;
/// Vertices of the frontiers (several devices: counted as found, `FrontierCounts` of
/// `kernels/include/direction.cuh`).
pub(super) const FRONTIER: usize = 3;

/// Copies the control block (`ctrl.0` into the host block `ctrl.1`) and the counters (likewise)
/// back on `stream`, waits for them, and returns their values (see [`check_ctrl`]).
pub(super) fn read_back(
    stream: &Stream,
    ctrl: (&Buffer<u32>, &Buffer<u32>),
    counters: (&Buffer<u64>, &Buffer<u64>),
    wl_slots: usize,
) -> Result<([u32; CTRL_WORDS], [u64; COUNTERS]), Error> {
    stream.copy(ctrl.1, &ctrl.0.slice(0..CTRL_WORDS)?)?;
    let sums = read_counters(stream, counters)?;
    // SAFETY: the copy into the host block has completed (read_counters synchronised the
    // stream) and nothing else writes it.
    let c = unsafe { ctrl.1.as_host_slice() }.ok_or_else(unsupported)?;
    let mut words = [0u32; CTRL_WORDS];
    words.copy_from_slice(c.get(..CTRL_WORDS).ok_or_else(unsupported)?);
    check_ctrl(&words, wl_slots)?;
    Ok((words, sums))
}

/// Copies the counters (`counters.0` into the host block `counters.1`) back on `stream`,
/// waits for them, and returns them.
pub(super) fn read_counters(
    stream: &Stream,
    counters: (&Buffer<u64>, &Buffer<u64>),
) -> Result<[u64; COUNTERS], Error> {
    stream.copy(counters.1, &counters.0.slice(0..COUNTERS)?)?;
    stream.synchronize()?;
    // SAFETY: the copy into the host block has completed (stream synchronised) and nothing
    // else writes it.
    let k = unsafe { counters.1.as_host_slice() }.ok_or_else(unsupported)?;
    let mut sums = [0u64; COUNTERS];
    sums.copy_from_slice(k.get(..COUNTERS).ok_or_else(unsupported)?);
    Ok(sums)
}

fn unsupported() -> Error {
    Error::Unsupported {
        operation: "reading the control block back",
        backend: "cuda",
    }
}

/// Fails the run when a worklist of `wl_slots` slots overflowed or an item was sent (neither
/// can happen: a broken invariant, reported, never ignored).
pub(super) fn check_ctrl(words: &[u32; CTRL_WORDS], wl_slots: usize) -> Result<(), Error> {
    for word in [CTRL_WL_OVERFLOW, CTRL_SEND_OVERFLOW] {
        if words[word] != 0 {
            return Err(Error::CapacityExceeded {
                what: "direction-optimizing BFS frontier".into(),
                capacity: wl_slots as u64,
                needed: u64::from(words[word]),
                setting: "none (a bug: please report it)",
            });
        }
    }
    Ok(())
}
