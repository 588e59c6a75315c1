//! Every vertex's rank at the end of a [`PageRankRanks::run`]: read back from this
//! process's devices, gathered from every process's across processes, and mapped back to
//! the input order.

use groute_core::Error;
use groute_worklist::RankCollectives;

use super::PageRankRanks;
use crate::PageRankError;

impl PageRankRanks {
    /// Every vertex's rank, in the input order ([`PageRankRanks::gather_ranks_as_held`]
    /// mapped back where the devices hold the degree order).
    pub(super) fn gather_ranks(
        &self,
        collectives: &mut dyn RankCollectives,
    ) -> Result<Vec<f32>, PageRankError> {
        let values = self.gather_ranks_as_held(collectives)?;
        Ok(match &self.order {
            Some(order) => order.to_input_order(values)?,
            None => values,
        })
    }

    /// Every vertex's rank in the devices' numbering: with other processes, every process's
    /// `mine` gathered (after [`PageRankRanks::stage_ranks`]); alone, each device's ranks
    /// read back.
    pub(super) fn gather_ranks_as_held(
        &self,
        collectives: &mut dyn RankCollectives,
    ) -> Result<Vec<f32>, PageRankError> {
        let n = self.owned.last().map_or(0, |r| r.end as usize);
        if self.owned.len() == 1 {
            let mut values = rank_vec(n)?;
            for (device, sweeps) in self.context.devices().iter().zip(&self.devices) {
                let bits = device.download(&sweeps.ranks()?)?;
                values.extend(bits.iter().map(|&b| f32::from_bits(b)));
            }
            return Ok(values);
        }
        // Every process takes part in the gather before anything of its own can fail.
        let device = &self.context.devices()[0];
        collectives.all_gather(&self.mine, &self.all, device.stream())?;
        let all = device.download(&self.all)?;
        let mut values = rank_vec(n)?;
        let longest = self.mine.len();
        for (r, range) in self.owned.iter().enumerate() {
            let at = r * longest;
            values.extend(all[at..at + range.len()].iter().map(|&b| f32::from_bits(b)));
        }
        Ok(values)
    }
}

/// An empty vector with room for `n` ranks, or an error where the host cannot hold them.
pub(super) fn rank_vec(n: usize) -> Result<Vec<f32>, Error> {
    let mut values = Vec::new();
    values
        .try_reserve_exact(n)
        .map_err(|_| Error::invalid("vertices", n, "as many ranks as host memory holds"))?;
    Ok(values)
}
