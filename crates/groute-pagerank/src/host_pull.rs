//! The host backend's pull sweep (the mirror of `pagerank_pull_take` and
//! `pagerank_pull_gather`), run as the first round of [`crate::SweepMode::Pull`]: pass 1
//! takes every owned residual into the rank and a share per out-arc, then the cut vertices'
//! shares are pushed along their cut arcs only (the mirror of `pagerank_pull_cut`); pass 2
//! adds to each owned vertex the shares of its in-neighbours.

use groute_worklist::algorithm::{HostRound, par_collect};
use groute_worklist::{DeviceCsr, WorklistAlgorithm};
use rayon::prelude::*;

use crate::algorithm::PageRank;
use crate::sweep::CutArcs;

/// A device's pull topology on the host backend.
pub(crate) struct HostPull {
    /// The owned rows of the in-CSR, uploaded to the device: the transpose's of a directed
    /// graph, or (symmetric graph) the device's part of the CSR itself.
    pub(crate) in_csr: DeviceCsr,
    /// The owned vertices' arcs to other devices' vertices (`None`: there are none).
    pub(crate) cut: Option<CutArcs>,
}

impl HostPull {
    /// A pull sweep over the owned range of `round` (every residual above 0 is taken).
    /// Returns the owned vertices that crossed epsilon and the remote vertices whose halo
    /// slot was empty, as a push sweep does.
    pub(crate) fn sweep(&self, round: &HostRound<'_, PageRank>) -> Vec<u32> {
        let owned = round.owned.clone();
        let start = owned.start;
        // Pass 1: take and store the shares; then push the cut vertices' shares.
        let shares: Vec<f32> = owned
            .clone()
            .into_par_iter()
            .map(|v| {
                let Some(rho) = round.take(v) else {
                    return 0.0;
                };
                let degree = round.rows.degree(v);
                if degree == 0 {
                    return 0.0; // dangling: its mass leaves the system
                }
                let degree = u32::try_from(degree).unwrap_or(u32::MAX);
                round.algorithm.relax(rho, 1, degree).unwrap_or(0.0)
            })
            .collect();
        let mut out = match &self.cut {
            None => Vec::new(),
            Some(cut) => par_collect((0..cut.vertices.len() as u32).into_par_iter(), |i, out| {
                let (v, arcs) = cut.list(i as usize);
                let share = shares[(v - start) as usize];
                if share <= 0.0 {
                    return;
                }
                round.cut_arcs.add(arcs.len() as u64);
                for &w in arcs {
                    if round.combine(w, share) {
                        out.push(w);
                    }
                }
            }),
        };
        // Pass 2: gather the owned in-neighbours' shares (remote ones arrive as items), over
        // the owned rows of the in-CSR.
        // SAFETY: the part was uploaded and synchronised before the run started and is never
        // written again.
        let Some(in_rows) = (unsafe { self.in_csr.host_view() }) else {
            return out;
        };
        let share_of = |u: u32| {
            if owned.contains(&u) {
                shares[(u - start) as usize]
            } else {
                0.0
            }
        };
        out.extend(par_collect(owned.clone().into_par_iter(), |v, out| {
            let sum: f32 = in_rows.row(v).0.iter().map(|&u| share_of(u)).sum();
            if sum > 0.0 && round.combine(v, sum) {
                out.push(v);
            }
        }));
        out
    }
}
