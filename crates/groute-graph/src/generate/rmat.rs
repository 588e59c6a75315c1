//! R-MAT / Graph500 Kronecker and uniform random edge generators.

use rayon::prelude::*;

use super::{GenSpec, Generator};
use crate::alloc::{try_with_capacity, try_zeroed};
use crate::csr::{CsrBuilder, EdgeList};
use crate::error::GraphError;
use crate::graph::Graph;
use crate::progress::Progress;
use crate::rng::Xoshiro;

/// Edges per random stream: fixed, so the graph does not depend on the thread count.
const CHUNK: usize = 1 << 16;

/// Salt separating the permutation stream from the edge streams.
const PERMUTATION_STREAM: u64 = u64::MAX;

/// Fills each `(src[i], dst[i])` with an arc drawn by `draw`, in parallel: the arcs of chunk
/// `k` (of [`CHUNK`]) come from random stream `k` of `seed`, so the graph does not depend on the
/// thread count.
fn fill_arcs(
    src: &mut [u32],
    dst: &mut [u32],
    seed: u64,
    progress: &dyn Progress,
    draw: impl Fn(&mut Xoshiro) -> (u32, u32) + Sync,
) {
    src.par_chunks_mut(CHUNK)
        .zip(dst.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(k, (s, d))| {
            let mut rng = Xoshiro::for_chunk(seed, k as u64);
            for (s, d) in s.iter_mut().zip(d.iter_mut()) {
                (*s, *d) = draw(&mut rng);
            }
            progress.advance(s.len() as u64);
        });
}

pub(crate) fn generate(spec: &GenSpec, progress: &dyn Progress) -> Result<Graph, GraphError> {
    let m = spec.generated_edges();
    let (n, permute): (u64, bool) = match &spec.generator {
        Generator::Rmat { scale, permute, .. } => (1u64 << scale, *permute),
        Generator::Random { vertices, .. } => (*vertices, false),
        Generator::Road { .. } => (0, false),
    };
    if n > u64::from(u32::MAX) + 1 || n == 0 {
        return Err(GraphError::TooLarge {
            what: "vertex count",
            value: n,
            limit: u64::from(u32::MAX),
        });
    }
    // 2^32 vertices would need id 2^32 - 1 as a vertex *count* of 2^32: refuse.
    if n > u64::from(u32::MAX) {
        return Err(GraphError::TooLarge {
            what: "vertex count",
            value: n,
            limit: u64::from(u32::MAX),
        });
    }
    let m = usize::try_from(m).map_err(|_| GraphError::TooLarge {
        what: "generated edges",
        value: m,
        limit: usize::MAX as u64,
    })?;
    progress.stage("generating edges", m as u64);
    let mut src = try_zeroed::<u32>(m, "the generated arcs' sources")?;
    let mut dst = try_zeroed::<u32>(m, "the generated arcs' targets")?;
    match spec.generator {
        Generator::Rmat { scale, a, b, c, .. } => {
            // Quadrant thresholds on 32-bit draws.
            let t = |x: f64| (x * 4_294_967_296.0).round().min(4_294_967_295.0) as u64;
            let (ta, tab, tabc) = (t(a), t(a + b), t(a + b + c));
            fill_arcs(&mut src, &mut dst, spec.seed, progress, |rng| {
                let (mut u, mut v) = (0u32, 0u32);
                let mut bits = 0u64;
                for level in 0..scale {
                    if level % 2 == 0 {
                        bits = rng.next_u64();
                    }
                    let r = bits & 0xFFFF_FFFF;
                    bits >>= 32;
                    // Branch-free quadrant choice: [0, a) top-left, [a, a+b) top-right,
                    // [a+b, a+b+c) bottom-left, the rest bottom-right.
                    let bu = u32::from(r >= tab);
                    let bv = u32::from(r >= ta) ^ bu ^ u32::from(r >= tabc);
                    u = (u << 1) | bu;
                    v = (v << 1) | bv;
                }
                (u, v)
            });
        }
        Generator::Random { vertices, .. } => {
            fill_arcs(&mut src, &mut dst, spec.seed, progress, |rng| {
                let u = rng.below(vertices) as u32;
                (u, rng.below(vertices) as u32)
            });
        }
        Generator::Road { .. } => {}
    }
    if permute {
        progress.stage("permuting labels", 0);
        let perm = permutation(n as usize, spec.seed)?;
        src.par_iter_mut().for_each(|x| *x = perm[*x as usize]);
        dst.par_iter_mut().for_each(|x| *x = perm[*x as usize]);
    }
    progress.stage("building CSR", 0);
    let csr = CsrBuilder::new(n as usize)
        .symmetrize(spec.symmetrize)
        .dedup(spec.dedup)
        .remove_self_loops(spec.remove_self_loops)
        .build(&EdgeList {
            src,
            dst,
            weights: None,
        })?;
    Ok(Graph::new(csr, String::new(), spec.symmetrize))
}

/// A seeded uniform permutation of `0..n` (Fisher-Yates on its own stream).
fn permutation(n: usize, seed: u64) -> Result<Vec<u32>, GraphError> {
    let mut p = try_with_capacity::<u32>(n, "the vertex label permutation")?;
    p.extend(0..n as u32);
    let mut rng = Xoshiro::for_chunk(seed, PERMUTATION_STREAM);
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    #[test]
    fn kron_is_deterministic_across_thread_counts() {
        let spec: GenSpec = "kron:scale=9,ef=8,sym,seed=11".parse().unwrap();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let three = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let a = one.install(|| generate(&spec, &NoProgress)).unwrap();
        let b = three.install(|| generate(&spec, &NoProgress)).unwrap();
        assert_eq!(a.csr, b.csr);
        let c = generate(
            &GenSpec {
                seed: 12,
                ..spec.clone()
            },
            &NoProgress,
        )
        .unwrap();
        assert_ne!(a.csr, c.csr);
    }

    #[test]
    fn kron_degrees_are_skewed_and_symmetric() {
        let spec: GenSpec = "kron:scale=12,ef=16,sym".parse().unwrap();
        let g = generate(&spec, &NoProgress).unwrap();
        assert_eq!(g.num_vertices(), 4096);
        assert!(g.csr.is_symmetric());
        let s = g.csr.degree_stats();
        // Power-law-ish: the hub has far more than the mean, many vertices are isolated.
        assert!(s.max as f64 > 20.0 * s.mean, "{s:?}");
        assert!(s.zero_out_degree > 100, "{s:?}");
        // Dedup removes some but not most of the 2 * 16 * 4096 arcs.
        let m = g.num_edges();
        assert!(m > 80_000 && m < 2 * 16 * 4096, "{m}");
    }

    #[test]
    fn random_graph_degrees_are_flat() {
        let spec: GenSpec = "random:n=2000,m=40000,keepdup".parse().unwrap();
        let g = generate(&spec, &NoProgress).unwrap();
        assert_eq!(g.num_edges(), 40_000);
        let s = g.csr.degree_stats();
        assert!((s.mean - 20.0).abs() < 1e-9);
        assert!(s.max < 50, "{s:?}");
    }

    #[test]
    fn permutation_is_a_permutation() {
        let mut p = permutation(1000, 3).unwrap();
        p.sort_unstable();
        assert!(p.iter().enumerate().all(|(i, &x)| i as u32 == x));
    }
}
