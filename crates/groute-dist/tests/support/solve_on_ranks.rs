//! A solver across ranks that are threads of this process ([`LocalRanks`]): each rank made its
//! jittered host devices and collectives, holding the rows it is given, and its outcome
//! returned in rank order.

use groute_core::Context;
use groute_dist::{CommCollectives, LocalRanks, RankComm};
use groute_graph::{HeldRows, Partition};

use super::{host_context, on_every_rank};

/// Ranks that are threads of this process on host devices, jittered by a test file's own
/// seeds: the messages of `ranks` ranks of `devices` devices each by
/// `ranks * ranks_factor + devices`, rank `r`'s devices by `r + device_offset`.
#[derive(Clone, Copy)]
pub struct JitteredRanks {
    ranks_factor: u64,
    device_offset: u64,
}

impl JitteredRanks {
    /// Ranks jittered by `ranks_factor` and `device_offset` (see [`JitteredRanks`]).
    pub const fn new(ranks_factor: u64, device_offset: u64) -> Self {
        JitteredRanks {
            ranks_factor,
            device_offset,
        }
    }

    /// What `solve` returns on each of `ranks` ranks of `devices` devices, in rank order:
    /// rank `r` holds the rows `rows_of(r)` of a graph in `partition`, and is given its
    /// context and collectives. A rank whose collectives cannot be made returns that error.
    pub fn solve_on_every_rank<'g, T: Send>(
        self,
        rows_of: impl Fn(usize) -> HeldRows<'g> + Sync,
        partition: &Partition,
        (ranks, devices): (usize, usize),
        solve: impl Fn(
            &Context,
            (&HeldRows<'_>, &Partition),
            &mut CommCollectives<'_, LocalRanks>,
        ) -> Result<T, String>
        + Sync,
    ) -> Vec<Result<T, String>> {
        let messages_seed = ranks as u64 * self.ranks_factor + devices as u64;
        on_every_rank(LocalRanks::new(ranks, Some(messages_seed)), |mut comm| {
            let rank = comm.rank();
            let ctx = host_context(devices, Some(rank as u64 + self.device_offset));
            let mut collectives =
                CommCollectives::new(&mut comm, &ctx).map_err(|e| e.to_string())?;
            let rows = rows_of(rank);
            solve(&ctx, (&rows, partition), &mut collectives)
        })
    }
}
