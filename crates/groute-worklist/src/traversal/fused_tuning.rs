//! Tuning knobs of the fused kernel (`fused.rs`): its block size and how its blocks wait at
//! the grid barrier (`grid_barrier` of `kernels/include/fused.cuh`). They change the speed of
//! a run, never its result.

use groute_core::Error;

/// Threads per block of the fused kernel when [`WorklistOptions::fused_block`] is `None`.
///
/// The single-block mode's default bound is one item per thread of a block. History, on one
/// H200 (BFS, road grid of 4.2M vertices, levels of about 1,000 vertices), before the barrier
/// and expand rework, 256-thread blocks: single-block bound 0 / 256 / 1,024 / 4,096 items took
/// 43.3 / 41.9 / 56.8 / 113 ms: one block is worth it while it needs a single pass.
///
/// [`WorklistOptions::fused_block`]: crate::WorklistOptions::fused_block
pub const FUSED_BLOCK: u32 = 256;

/// Blocks of more threads than this run the kernel's build for 1,024-thread blocks
/// (`<algo>_fused_wide`, `__launch_bounds__(1024, 1)`: its registers are capped so that such a
/// block fits on a multiprocessor).
pub(crate) const FUSED_NARROW_MAX_BLOCK: u32 = 256;

/// [`FusedBarrier::spin_ns`] when not set: the sleep between two polls of the generation word.
pub const FUSED_SPIN_NS: u32 = 20;

/// The longest sleep `__nanosleep` takes (1 ms); [`FusedBarrier::spin_ns`] is at most this.
pub const FUSED_MAX_SPIN_NS: u32 = 1_000_000;

/// `groute::FUSED_BARRIER_FENCED` and `groute::FUSED_BARRIER_TAGGED` of fused.cuh.
const FUSED_BARRIER_FENCED: u32 = 1;
const FUSED_BARRIER_TAGGED: u32 = 2;
/// `groute::FUSED_DIRECT_MIN` of fused.cuh ([`WorklistOptions::fused_direct_min`]).
///
/// [`WorklistOptions::fused_direct_min`]: crate::WorklistOptions::fused_direct_min
pub(crate) const FUSED_DIRECT_MIN: u32 = 4;

/// How the blocks of the fused kernel wait at its grid barrier
/// ([`WorklistOptions::fused_barrier`](crate::WorklistOptions::fused_barrier)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FusedBarrier {
    /// Nanoseconds a waiting block sleeps (`__nanosleep`) between two polls of the barrier's
    /// generation word (`--fused-spin-ns`); 0: poll without sleeping. At most
    /// [`FUSED_MAX_SPIN_NS`].
    pub spin_ns: u32,
    /// Order memory around the barrier with `__threadfence()` and relaxed atomics (the pattern
    /// of cooperative groups' grid sync, `--fused-fenced-barrier`) instead of single PTX
    /// acquire/release operations (an `atom.acq_rel` arrival, an `st.release` release, an
    /// `ld.acquire` poll).
    pub fenced: bool,
    /// Waiting blocks poll the barrier's release record itself, every word tagged with the
    /// generation that wrote it (`--fused-tagged-barrier`), instead of the generation word
    /// followed by a read of the record: one L2 round trip less per block and barrier.
    pub tagged: bool,
}

impl Default for FusedBarrier {
    fn default() -> Self {
        FusedBarrier {
            spin_ns: FUSED_SPIN_NS,
            fenced: false,
            tagged: false,
        }
    }
}

impl FusedBarrier {
    /// The kernel's `(spin_ns, barrier_flags)` arguments, or an error naming the setting.
    pub(crate) fn kernel_args(&self) -> Result<(u32, u32), Error> {
        if self.spin_ns > FUSED_MAX_SPIN_NS {
            return Err(Error::invalid(
                "fused_barrier.spin_ns (--fused-spin-ns)",
                self.spin_ns,
                format!("give 0..={FUSED_MAX_SPIN_NS} ns (0: poll without sleeping)"),
            ));
        }
        let flags = if self.fenced { FUSED_BARRIER_FENCED } else { 0 }
            | if self.tagged { FUSED_BARRIER_TAGGED } else { 0 };
        Ok((self.spin_ns, flags))
    }
}

/// The fused kernel's threads per block: `requested` (a multiple of 32 from 32 to 1,024) or
/// [`FUSED_BLOCK`].
pub(crate) fn fused_block(requested: Option<u32>) -> Result<u32, Error> {
    match requested {
        None => Ok(FUSED_BLOCK),
        Some(b) if (32..=1024).contains(&b) && b % 32 == 0 => Ok(b),
        Some(b) => Err(Error::invalid(
            "fused_block (--fused-block)",
            b,
            "give a multiple of 32 from 32 to 1024 threads",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sizes_are_multiples_of_a_warp_up_to_1024() {
        assert_eq!(fused_block(None).unwrap(), FUSED_BLOCK);
        for b in [32, 64, 256, 512, 1024] {
            assert_eq!(fused_block(Some(b)).unwrap(), b);
        }
        for b in [0, 1, 31, 33, 100, 1056, 2048] {
            let err = fused_block(Some(b)).unwrap_err().to_string();
            assert!(err.contains("--fused-block"), "{b}: {err}");
        }
    }

    #[test]
    fn the_barrier_arguments_name_a_bad_sleep() {
        assert_eq!(
            FusedBarrier::default().kernel_args().unwrap(),
            (FUSED_SPIN_NS, 0)
        );
        let fenced = FusedBarrier {
            spin_ns: 0,
            fenced: true,
            tagged: false,
        };
        assert_eq!(fenced.kernel_args().unwrap(), (0, FUSED_BARRIER_FENCED));
        let both = FusedBarrier {
            spin_ns: 7,
            fenced: true,
            tagged: true,
        };
        assert_eq!(
            both.kernel_args().unwrap(),
            (7, FUSED_BARRIER_FENCED | FUSED_BARRIER_TAGGED)
        );
        let too_long = FusedBarrier {
            spin_ns: FUSED_MAX_SPIN_NS + 1,
            ..FusedBarrier::default()
        };
        let err = too_long.kernel_args().unwrap_err().to_string();
        assert!(err.contains("--fused-spin-ns"), "{err}");
    }
}
