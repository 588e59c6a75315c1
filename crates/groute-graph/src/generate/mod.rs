//! Seeded, deterministic, parallel graph generators and the `--gen` / `--gen-weights` parsers.
//!
//! A spec is `kind[:key=value,flag,...]` or a preset name:
//!
//! | spec | graph |
//! |---|---|
//! | `kron:scale=S[,ef=16][,sym][,noself][,keepdup][,perm=1][,seed=1]` | Graph500 Kronecker (A=0.57, B=0.19, C=0.19), `ef * 2^S` generated edges, vertex labels permuted |
//! | `rmat:scale=S,a=..,b=..,c=..[,ef=16][,sym]...` | R-MAT with free parameters (no permutation unless `perm=1`) |
//! | `road:side=N` or `road:w=W,h=H` `[,p=0.6][,jitter=0.25][,unit=1000][,order=rows]` | 2D grid, each edge kept with probability `p`, jittered coordinates, integer Euclidean weights; vertices numbered row by row, or along a Hilbert curve with `order=hilbert` (the same graph, renumbered) |
//! | `random:n=N,m=M[,sym][,noself][,keepdup]` | `M` uniform random arcs |
//! | `kron<S>` | `kron:scale=S,ef=16,sym` |
//! | `kron21.sym` | DIMACS10 `kron_g500-logn21`: `kron:scale=21,ef=48,sym` (duplicates removed, self-loops kept) |
//! | `road-usa` | `road:side=4900,p=0.6`: about 24M vertices, like DIMACS USA-road |
//!
//! Presets take overrides after a colon (`kron21.sym:seed=7`). Every spec takes `seed=`
//! (default 1) and `weights=MIN..MAX[:SEED]` (uniform random weights, see [`WeightSpec`]).
//! Duplicates are removed unless `keepdup` is given; self-loops are kept unless `noself` is.
//!
//! Every generator splits its work into fixed-size chunks, each with its own random stream
//! derived from `(seed, chunk)`, so a spec gives the same graph on any number of threads.
//!
//! ```
//! use groute_graph::{generate, GenSpec, NoProgress};
//! let spec: GenSpec = "road:side=16,p=0.6,seed=2".parse()?;
//! let a = generate(&spec, &NoProgress)?;
//! let b = generate(&spec, &NoProgress)?;
//! assert_eq!(a.csr, b.csr);
//! assert!(a.symmetric && a.csr.is_weighted());
//! # Ok::<(), groute_graph::GraphError>(())
//! ```

mod rmat;
mod road;
mod spec;

pub use road::RoadOrder;

use std::fmt;
use std::str::FromStr;

use crate::error::{GraphError, SpecProblem};
use crate::graph::Graph;
use crate::progress::Progress;

/// The most arcs a generator spec may draw (before symmetrising): 2^34, whose edge list alone
/// takes 128 GiB. Larger specs are refused when parsed, before anything is allocated; within the
/// limit, every array is allocated fallibly, so a spec too large for the machine is a
/// [`GraphError::OutOfMemory`].
pub const MAX_GENERATED_ARCS: u64 = 1 << 34;

/// Graph500 Kronecker initiator probabilities.
pub const GRAPH500_ABC: (f64, f64, f64) = (0.57, 0.19, 0.19);

/// Which generator, with its parameters.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Generator {
    /// R-MAT / Kronecker: `edge_factor * 2^scale` edges over `2^scale` vertices.
    Rmat {
        /// log2 of the vertex count.
        scale: u32,
        /// Generated edges per vertex.
        edge_factor: u32,
        /// Probability of the top-left quadrant.
        a: f64,
        /// Probability of the top-right quadrant.
        b: f64,
        /// Probability of the bottom-left quadrant.
        c: f64,
        /// Randomly permute vertex labels (Graph500 does).
        permute: bool,
    },
    /// A `width x height` grid whose edges are each kept with probability `p`.
    Road {
        /// Grid columns.
        width: u32,
        /// Grid rows.
        height: u32,
        /// Probability of keeping each grid edge.
        p: f64,
        /// Coordinates move by up to this fraction of a grid step in x and y.
        jitter: f64,
        /// Weight of one grid step (weights are `round(unit * distance)`, at least 1).
        unit: u32,
        /// How the grid's cells are numbered.
        order: RoadOrder,
    },
    /// `edges` uniform random arcs over `vertices` vertices.
    Random {
        /// Vertex count.
        vertices: u64,
        /// Generated arcs.
        edges: u64,
    },
}

/// A parsed `--gen` specification.
#[derive(Clone, Debug, PartialEq)]
pub struct GenSpec {
    /// The generator.
    pub generator: Generator,
    /// Seed of every random choice.
    pub seed: u64,
    /// Add the reverse of every arc (ignored by `road`, which is always symmetric).
    pub symmetrize: bool,
    /// Remove duplicate arcs.
    pub dedup: bool,
    /// Remove self-loops.
    pub remove_self_loops: bool,
    /// Uniform random weights to attach.
    pub weights: Option<WeightSpec>,
    /// The preset name, if the spec was one.
    pub preset: Option<String>,
}

impl GenSpec {
    /// A spec for `generator` with the defaults (seed 1, dedup, self-loops kept, not symmetric).
    pub fn new(generator: Generator) -> GenSpec {
        GenSpec {
            generator,
            seed: 1,
            symmetrize: false,
            dedup: true,
            remove_self_loops: false,
            weights: None,
            preset: None,
        }
    }

    /// The Graph500 shape at `scale`: edge factor 16, symmetrised.
    pub fn kron(scale: u32, edge_factor: u32) -> GenSpec {
        let (a, b, c) = GRAPH500_ABC;
        GenSpec {
            symmetrize: true,
            ..GenSpec::new(Generator::Rmat {
                scale,
                edge_factor,
                a,
                b,
                c,
                permute: true,
            })
        }
    }

    /// Arcs the generator draws before symmetrising and deduplicating.
    pub fn generated_edges(&self) -> u64 {
        match &self.generator {
            Generator::Rmat {
                scale, edge_factor, ..
            } => u64::from(*edge_factor) << scale,
            Generator::Road { width, height, .. } => 2 * u64::from(*width) * u64::from(*height),
            Generator::Random { edges, .. } => *edges,
        }
    }
}

/// Uniform random integer weights: `MIN..MAX[:SEED]` (both ends included; `MIN..=MAX` also
/// accepted). The default seed is 1.
///
/// ```
/// use groute_graph::WeightSpec;
/// let w: WeightSpec = "1..100:7".parse()?;
/// assert_eq!((w.min, w.max, w.seed), (1, 100, 7));
/// # Ok::<(), groute_graph::GraphError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WeightSpec {
    /// Smallest weight.
    pub min: u32,
    /// Largest weight.
    pub max: u32,
    /// Seed.
    pub seed: u64,
}

impl WeightSpec {
    /// Attaches the weights to `graph` (see [`crate::Csr::with_uniform_weights`]).
    pub fn apply(&self, graph: Graph) -> Result<Graph, GraphError> {
        let csr = graph
            .csr
            .with_uniform_weights(self.min, self.max, self.seed)?;
        Ok(Graph { csr, ..graph })
    }
}

impl FromStr for WeightSpec {
    type Err = GraphError;
    fn from_str(s: &str) -> Result<WeightSpec, GraphError> {
        let err = |problem| GraphError::WeightSpec {
            spec: s.to_owned(),
            problem,
        };
        let value = |key: &str, v: &str| {
            err(SpecProblem::BadValue {
                key: key.to_owned(),
                value: v.to_owned(),
            })
        };
        let (range, seed) = match s.trim().split_once(':') {
            Some((r, sd)) => (r, Some(sd.trim())),
            None => (s.trim(), None),
        };
        let (lo, hi) = range
            .split_once("..")
            .ok_or(err(SpecProblem::MissingKey("..")))?;
        let hi = hi.strip_prefix('=').unwrap_or(hi);
        let min: u32 = lo.trim().parse().map_err(|_| value("min", lo))?;
        let max: u32 = hi.trim().parse().map_err(|_| value("max", hi))?;
        if min > max {
            return Err(err(SpecProblem::OutOfRange("MIN must not exceed MAX")));
        }
        let seed = match seed {
            Some(sd) => sd.parse().map_err(|_| value("seed", sd))?,
            None => 1,
        };
        Ok(WeightSpec { min, max, seed })
    }
}

impl fmt::Display for WeightSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}:{}", self.min, self.max, self.seed)
    }
}

/// Generates the graph a spec describes. Vertex ids are 0-based; the graph's name is the spec.
pub fn generate(spec: &GenSpec, progress: &dyn Progress) -> Result<Graph, GraphError> {
    let name = match &spec.preset {
        Some(p) => format!("{p} ({spec})"),
        None => spec.to_string(),
    };
    let mut g = match &spec.generator {
        Generator::Rmat { .. } | Generator::Random { .. } => rmat::generate(spec, progress)?,
        Generator::Road { .. } => road::generate(spec, progress)?,
    };
    g.name = name;
    if let Some(w) = &spec.weights {
        g = w.apply(g)?;
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse() {
        let k: GenSpec = "kron21.sym".parse().unwrap();
        assert_eq!(k.generator, GenSpec::kron(21, 48).generator);
        assert!(k.symmetrize && k.dedup && !k.remove_self_loops);
        let k: GenSpec = "kron18:seed=5".parse().unwrap();
        assert_eq!(k.seed, 5);
        assert!(matches!(
            k.generator,
            Generator::Rmat {
                scale: 18,
                edge_factor: 16,
                ..
            }
        ));
        let r: GenSpec = "road-usa".parse().unwrap();
        assert!(matches!(r.generator, Generator::Road { width: 4900, .. }));
    }

    #[test]
    fn specs_parse_keys_and_flags() {
        let k: GenSpec = "kron:scale=21,ef=48,sym".parse().unwrap();
        assert!(k.symmetrize);
        assert_eq!(k.generated_edges(), 48 << 21);
        let r: GenSpec = "road:side=4096,p=0.6".parse().unwrap();
        assert!(matches!(
            r.generator,
            Generator::Road {
                width: 4096,
                height: 4096,
                ..
            }
        ));
        let u: GenSpec = "random:n=1e3,m=2^12,noself,weights=1..9:3".parse().unwrap();
        assert_eq!(
            u.generator,
            Generator::Random {
                vertices: 1000,
                edges: 4096
            }
        );
        assert!(u.remove_self_loops);
        assert_eq!(
            u.weights,
            Some(WeightSpec {
                min: 1,
                max: 9,
                seed: 3
            })
        );
        let again: GenSpec = u.to_string().parse().unwrap();
        assert_eq!(again, u);
        let h: GenSpec = "road:side=16,order=Hilbert".parse().unwrap();
        assert!(matches!(
            h.generator,
            Generator::Road {
                order: RoadOrder::Hilbert,
                ..
            }
        ));
        assert!(h.to_string().ends_with(",order=hilbert,seed=1"), "{h}");
        assert_eq!(h.to_string().parse::<GenSpec>().unwrap(), h);
        // Row order is the default and stays out of the name.
        let r: GenSpec = "road:side=16,order=rows".parse().unwrap();
        assert!(!r.to_string().contains("order"), "{r}");
        let err = "road:side=16,order=zigzag".parse::<GenSpec>().unwrap_err();
        assert!(
            err.to_string().contains("`zigzag`") && err.to_string().contains("rows, hilbert"),
            "{err}"
        );
    }

    #[test]
    fn bad_specs_are_errors() {
        for s in [
            "kron",
            "kron:ef=3",
            "kron:scale=x",
            "kron:scale=40",
            "kron:scale=32",
            "kron:scale=31",
            "random:n=1000,m=100000000000",
            "rmat:scale=4,a=0.9,b=0.9",
            "road:p=0.5",
            "road:side=4,p=2",
            "random:n=3",
            "bogus:x=1",
            "kron:scale=3,color=red",
        ] {
            assert!(s.parse::<GenSpec>().is_err(), "{s}");
        }
    }

    #[test]
    fn weight_specs() {
        assert_eq!(
            "1..100".parse::<WeightSpec>().unwrap(),
            WeightSpec {
                min: 1,
                max: 100,
                seed: 1
            }
        );
        assert_eq!(
            "5..=5:9".parse::<WeightSpec>().unwrap(),
            WeightSpec {
                min: 5,
                max: 5,
                seed: 9
            }
        );
        for s in ["", "1-100", "9..1", "1..x", "1..2:z", "-1..3"] {
            assert!(s.parse::<WeightSpec>().is_err(), "{s}");
        }
    }
}
