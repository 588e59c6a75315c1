//! What the multi-process test jobs share: their seeded random graphs.

use groute_graph::{Csr, CsrBuilder, EdgeList};

/// A random graph of `n` vertices and `m` arcs (seeded by `seed`; both directions of each
/// when `symmetric`), weights 1..=100.
pub fn random_graph(n: u32, m: u32, seed: u64, symmetric: bool) -> Csr {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let pairs: Vec<(u32, u32)> = (0..m)
        .map(|_| {
            (
                (next() % u64::from(n)) as u32,
                (next() % u64::from(n)) as u32,
            )
        })
        .collect();
    let csr = CsrBuilder::new(n as usize)
        .symmetrize(symmetric)
        .build(&EdgeList::from_pairs(&pairs))
        .expect("graph");
    let weights = (0..csr.num_edges())
        .map(|_| (next() % 100) as u32 + 1)
        .collect();
    csr.with_weights(weights).expect("weights")
}

/// A job's checks on one rank: rank 0 prints each, every rank keeps its failures.
#[derive(Default)]
pub struct Checks {
    failures: Vec<String>,
}

impl Checks {
    /// Records the check `what` on `rank`.
    pub fn check(&mut self, rank: usize, what: String, ok: bool) {
        if rank == 0 {
            println!("{} {what}", if ok { "ok  " } else { "FAIL" });
        }
        if !ok {
            self.failures.push(what);
        }
    }

    /// The process's exit status: failure if any check failed on this rank.
    pub fn exit_code(&self, rank: usize) -> std::process::ExitCode {
        if self.failures.is_empty() {
            return std::process::ExitCode::SUCCESS;
        }
        eprintln!("rank {rank}: {} checks failed", self.failures.len());
        std::process::ExitCode::FAILURE
    }
}
