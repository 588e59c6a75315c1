//! The sequential reference: power iteration to a tight tolerance, in `f64`.

use groute_graph::Csr;
use rayon::prelude::*;

/// The exact fixed point of unnormalised PageRank, to within [`Reference::error_bound`].
#[derive(Clone, Debug)]
pub struct Reference {
    /// One rank per vertex (the CSR's numbering).
    pub ranks: Vec<f64>,
    /// Iterations run.
    pub iterations: usize,
    /// A bound on `|ranks - r*|_1` (L1 distance to the true fixed point).
    pub error_bound: f64,
}

/// The L1 distance `sum |ranks(v) - exact(v)|` between computed ranks and reference ranks
/// ([`Reference::ranks`]), or the ranks of another run, in the same vertex order: what the
/// error bounds bound.
pub fn l1_distance<T: Copy + Into<f64>>(ranks: &[f32], exact: &[T]) -> f64 {
    ranks
        .iter()
        .zip(exact)
        .map(|(&a, &b)| (f64::from(a) - b.into()).abs())
        .sum()
}

/// Solves `r = (1 - alpha) + alpha * A r` (`(A r)(v)` = sum over arcs `u -> v` of
/// `r(u) / outdeg(u)`) by Jacobi power iteration until the L1 distance to the fixed point is
/// provably below `1e-9 * |r|_1` (the step shrinks by `alpha` per iteration, so the distance
/// after a step of `delta` is at most `delta * alpha / (1 - alpha)`), or 10,000 iterations.
///
/// Parallel (rayon), pull-based over the transposed graph.
pub fn pagerank_reference(csr: &Csr, alpha: f64) -> Reference {
    let n = csr.num_vertices();
    let t = csr.transpose();
    let inv_deg: Vec<f64> = (0..n as u32)
        .into_par_iter()
        .map(|v| match csr.out_degree(v) {
            0 => 0.0,
            d => 1.0 / d as f64,
        })
        .collect();
    let mut r = vec![1.0 - alpha; n];
    let mut next = vec![0f64; n];
    let mut iterations = 0;
    let mut error_bound = f64::INFINITY;
    while iterations < 10_000 {
        let contrib: Vec<f64> = r.par_iter().zip(&inv_deg).map(|(x, d)| x * d).collect();
        next.par_iter_mut().enumerate().for_each(|(v, out)| {
            let s: f64 = t
                .neighbors(v as u32)
                .iter()
                .map(|&u| contrib[u as usize])
                .sum();
            *out = (1.0 - alpha) + alpha * s;
        });
        let delta: f64 = r.par_iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
        std::mem::swap(&mut r, &mut next);
        iterations += 1;
        error_bound = delta * alpha / (1.0 - alpha);
        let norm: f64 = r.par_iter().sum();
        if error_bound <= 1e-9 * norm.max(1.0) {
            break;
        }
    }
    Reference {
        ranks: r,
        iterations,
        error_bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use groute_graph::{CsrBuilder, EdgeList};

    #[test]
    fn a_two_cycle_has_rank_one() {
        let csr = CsrBuilder::new(2)
            .build(&EdgeList::from_pairs(&[(0, 1), (1, 0)]))
            .unwrap();
        let r = pagerank_reference(&csr, 0.85);
        assert!(r.ranks.iter().all(|x| (x - 1.0).abs() < 1e-8), "{r:?}");
    }

    #[test]
    fn a_dangling_sink_gets_the_mass_of_its_source() {
        // 0 -> 1, 1 dangling: r0 = 0.15, r1 = 0.15 + 0.85 * 0.15.
        let csr = CsrBuilder::new(2)
            .build(&EdgeList::from_pairs(&[(0, 1)]))
            .unwrap();
        let r = pagerank_reference(&csr, 0.85);
        assert!((r.ranks[0] - 0.15).abs() < 1e-12);
        assert!((r.ranks[1] - (0.15 + 0.85 * 0.15)).abs() < 1e-12);
    }
}
