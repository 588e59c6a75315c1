//! Which BFS runs ([`Direction`]) and, in a direction-optimizing run, which step each level
//! takes ([`SwitchRule`]).

use groute_core::Error;

use super::StepCounts;

/// Push turns to pull when the frontier's out-arcs exceed the unvisited in-arcs / this
/// (Beamer's alpha; GAP's default).
pub const PULL_ALPHA: u64 = 15;
/// Pull turns back to push when the frontier shrinks below the vertices / this (Beamer's
/// beta; GAP's default).
pub const PUSH_BETA: u64 = 18;
/// Push turns to pull only once the frontier's out-arcs also reach the vertices / this. A pull
/// step reads every vertex's level (and the in-arc offsets of each unvisited one), so a push
/// over fewer arcs than there are vertices costs less however few in-arcs are left unvisited:
/// on a graph with many vertices outside the source's component (a Kronecker graph's isolated
/// vertices) alpha alone turns the last thin levels into pulls over the whole graph.
pub const PULL_GAMMA: u64 = 1;
/// [`Direction::Auto`] optimizes symmetric graphs of at least this many arcs per vertex: below
/// it levels are many and thin (road networks), pull steps rarely pay, and the fused worklist
/// kernel wins.
pub const AUTO_MIN_AVERAGE_DEGREE: f64 = 8.0;

/// Which BFS runs (`--direction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Direction-optimizing (on any device count) for a symmetric graph of at least
    /// [`AUTO_MIN_AVERAGE_DEGREE`] arcs per vertex unless the fused kernel is forced
    /// (`--fused`); the asynchronous push (worklist) BFS otherwise.
    #[default]
    Auto,
    /// The asynchronous push BFS over the distributed worklist, on any device count.
    Push,
    /// Direction-optimizing (pull and push steps) on any device count; a directed graph pulls
    /// over its transpose.
    PullPush,
}

impl Direction {
    /// Whether a run on `devices` devices over a graph (`symmetric`, `average_degree` arcs per
    /// vertex) optimizes direction; `fused_forced`: the fused kernel was asked for
    /// explicitly. The fused kernel is a mode of the worklist BFS, so an explicit request for
    /// it is never dropped: [`Direction::Auto`] then keeps the worklist BFS (which runs it on
    /// one device, and in bounded fused rounds on several), and [`Direction::PullPush`] is
    /// refused with an error naming both flags.
    pub fn optimizes(
        self,
        devices: usize,
        symmetric: bool,
        average_degree: f64,
        fused_forced: bool,
    ) -> Result<bool, Error> {
        let _ = devices; // every device count is supported
        match self {
            Direction::Push => Ok(false),
            Direction::Auto => {
                Ok(symmetric && !fused_forced && average_degree >= AUTO_MIN_AVERAGE_DEGREE)
            }
            Direction::PullPush if fused_forced => Err(Error::invalid(
                "--fused",
                "on",
                "the fused kernel runs the worklist BFS, which --direction pull-push replaces: \
                 drop --fused, or use --direction push|auto",
            )),
            Direction::PullPush => Ok(true),
        }
    }
}

groute_core::choice_names! {
    /// The flag's spelling (`auto`, `push`, `pull-push`; `pull` and `do` parse as
    /// `pull-push` too).
    Direction, "direction" {
        Auto => "auto",
        Push => "push",
        PullPush => "pull-push" | "pull" | "do",
    }
}

/// Beamer's switching rule with its two parameters, and a bound on the pulls' cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchRule {
    /// Push turns to pull when the frontier's out-arcs exceed the unvisited in-arcs / alpha
    /// (0: never pull).
    pub alpha: u64,
    /// Pull turns to push when the frontier stops growing and holds fewer than n / beta
    /// vertices (0: as soon as the frontier stops growing).
    pub beta: u64,
    /// Push turns to pull only when the frontier's out-arcs also reach n / gamma ([`PULL_GAMMA`];
    /// 0: no such bound, Beamer's rule).
    pub gamma: u64,
}

impl Default for SwitchRule {
    fn default() -> Self {
        SwitchRule {
            alpha: PULL_ALPHA,
            beta: PUSH_BETA,
            gamma: PULL_GAMMA,
        }
    }
}

impl SwitchRule {
    /// Whether the step after frontier `current` (preceded by one of `previous_frontier`
    /// vertices; the last step pulled when `pulling`) pulls, with `unvisited_in_arcs` in-arcs
    /// left on unvisited vertices of a graph of `n` vertices. The device-driven kernel decides
    /// alike (`direction_pulls` of kernels/include/direction_fused_words.cuh).
    pub(crate) fn pulls(
        &self,
        pulling: bool,
        current: &StepCounts,
        previous_frontier: u64,
        unvisited_in_arcs: u64,
        n: u64,
    ) -> bool {
        if pulling {
            current.frontier >= previous_frontier || current.frontier.saturating_mul(self.beta) > n
        } else {
            let out_arcs = current.frontier_out_arcs;
            self.alpha != 0
                && out_arcs.saturating_mul(self.alpha) > unvisited_in_arcs
                && (self.gamma == 0 || out_arcs.saturating_mul(self.gamma) >= n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frontier(vertices: u64, out_arcs: u64) -> StepCounts {
        StepCounts {
            frontier: vertices,
            frontier_out_arcs: out_arcs,
            ..StepCounts::default()
        }
    }

    #[test]
    fn push_turns_to_pull_on_a_heavy_frontier() {
        let r = SwitchRule::default();
        assert!(!r.pulls(false, &frontier(10, 100), 1, 15 * 100, 100));
        assert!(r.pulls(false, &frontier(10, 101), 1, 15 * 100, 100));
    }

    #[test]
    fn a_frontier_of_fewer_out_arcs_than_vertices_pushes() {
        // Few in-arcs left unvisited: alpha alone would pull.
        let r = SwitchRule::default();
        assert!(!r.pulls(false, &frontier(10, 999), 1, 10, 1000));
        assert!(r.pulls(false, &frontier(10, 1000), 1, 10, 1000));
        let wider = SwitchRule { gamma: 4, ..r };
        assert!(!wider.pulls(false, &frontier(10, 249), 1, 10, 1000));
        assert!(wider.pulls(false, &frontier(10, 250), 1, 10, 1000));
        let beamer = SwitchRule { gamma: 0, ..r };
        assert!(beamer.pulls(false, &frontier(10, 1), 1, 10, 1000));
    }

    #[test]
    fn alpha_zero_never_pulls() {
        let r = SwitchRule {
            alpha: 0,
            beta: 1,
            gamma: 0,
        };
        assert!(!r.pulls(false, &frontier(10, u64::MAX), 1, 0, 1000));
    }

    #[test]
    fn pull_holds_while_growing_or_large() {
        let r = SwitchRule::default();
        assert!(r.pulls(true, &frontier(10, 0), 5, 0, 18_000));
        assert!(r.pulls(true, &frontier(1001, 0), 2000, 0, 18_000));
        assert!(!r.pulls(true, &frontier(999, 0), 2000, 0, 18_000));
    }

    #[test]
    fn auto_optimizes_dense_symmetric_graphs() {
        assert!(Direction::Auto.optimizes(1, true, 16.0, false).unwrap());
        assert!(!Direction::Auto.optimizes(1, true, 16.0, true).unwrap());
        assert!(!Direction::Auto.optimizes(1, false, 16.0, false).unwrap());
        assert!(!Direction::Auto.optimizes(1, true, 2.4, false).unwrap());
        assert!(Direction::Auto.optimizes(2, true, 16.0, false).unwrap());
        // An explicit --fused keeps the worklist BFS on any device count.
        assert!(!Direction::Auto.optimizes(4, true, 16.0, true).unwrap());
        assert!(!Direction::Auto.optimizes(2, true, 2.4, false).unwrap());
        assert!(!Direction::Push.optimizes(1, true, 16.0, false).unwrap());
        assert!(Direction::PullPush.optimizes(1, false, 1.0, false).unwrap());
        let err = Direction::PullPush
            .optimizes(1, true, 16.0, true)
            .expect_err("pull-push with --fused is refused");
        assert!(err.to_string().contains("--fused"), "{err}");
        assert!(Direction::PullPush.optimizes(8, false, 1.0, false).unwrap());
    }

    #[test]
    fn parses_its_spellings() {
        for d in [Direction::Auto, Direction::Push, Direction::PullPush] {
            assert_eq!(d.name().parse::<Direction>().unwrap(), d);
        }
        let e = "sideways".parse::<Direction>().unwrap_err();
        assert!(e.to_string().contains("pull-push"), "{e}");
    }
}
