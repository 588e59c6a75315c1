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

fn bad(spec: &str, problem: SpecProblem) -> GraphError {
    GraphError::GenSpec {
        spec: spec.to_owned(),
        problem,
    }
}

fn parse_num<T: FromStr>(spec: &str, key: &str, value: &str) -> Result<T, GraphError> {
    let v = value.replace('_', "");
    // Accept 2^k and 1e6 style sizes for counts.
    if let Some(exp) = v.strip_prefix("2^")
        && let Ok(e) = exp.parse::<u32>()
        && e < 64
        && let Ok(x) = (1u64 << e).to_string().parse::<T>()
    {
        return Ok(x);
    }
    if let Ok(x) = v.parse::<T>() {
        return Ok(x);
    }
    if let Ok(f) = v.parse::<f64>()
        && f.fract() == 0.0
        && (0.0..1.8e19).contains(&f)
        && let Ok(x) = (f as u64).to_string().parse::<T>()
    {
        return Ok(x);
    }
    Err(bad(
        spec,
        SpecProblem::BadValue {
            key: key.to_owned(),
            value: value.to_owned(),
        },
    ))
}

impl FromStr for GenSpec {
    type Err = GraphError;

    fn from_str(s: &str) -> Result<GenSpec, GraphError> {
        parse_spec(s)
    }
}

fn parse_spec<'a>(s: &'a str) -> Result<GenSpec, GraphError> {
    {
        let spec = s.trim();
        let (head, rest) = match spec.split_once(':') {
            Some((h, r)) => (h.trim(), r),
            None => (spec, ""),
        };
        let lower = head.to_ascii_lowercase();
        let mut out = match lower.as_str() {
            "kron" | "kronecker" | "graph500" => GenSpec::kron(0, 16),
            "rmat" | "r-mat" => {
                let mut g = GenSpec::kron(0, 16);
                g.symmetrize = false;
                if let Generator::Rmat { permute, .. } = &mut g.generator {
                    *permute = false;
                }
                g
            }
            "road" | "grid" => GenSpec {
                symmetrize: true,
                ..GenSpec::new(Generator::Road {
                    width: 0,
                    height: 0,
                    p: 0.6,
                    jitter: 0.25,
                    unit: 1000,
                    order: RoadOrder::Rows,
                })
            },
            "random" | "uniform" | "er" => GenSpec::new(Generator::Random {
                vertices: 0,
                edges: 0,
            }),
            "kron21.sym" | "kron_g500-logn21" => GenSpec::kron(21, 48),
            "road-usa" | "usa" => GenSpec {
                symmetrize: true,
                ..GenSpec::new(Generator::Road {
                    width: 4900,
                    height: 4900,
                    p: 0.6,
                    jitter: 0.25,
                    unit: 1000,
                    order: RoadOrder::Rows,
                })
            },
            other => match other.strip_prefix("kron").map(str::parse::<u32>) {
                Some(Ok(scale)) => GenSpec::kron(scale, 16),
                _ => return Err(bad(spec, SpecProblem::UnknownKind(head.to_owned()))),
            },
        };
        let is_preset = !matches!(
            lower.as_str(),
            "kron"
                | "kronecker"
                | "graph500"
                | "rmat"
                | "r-mat"
                | "road"
                | "grid"
                | "random"
                | "uniform"
                | "er"
        );
        if is_preset {
            out.preset = Some(head.to_owned());
        }
        let (mut have_scale, mut have_w, mut have_h, mut have_n, mut have_m) =
            (is_preset, is_preset, is_preset, false, false);
        for item in rest.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (key, value) = match item.split_once('=') {
                Some((k, v)) => (k.trim().to_ascii_lowercase(), Some(v.trim())),
                None => (item.to_ascii_lowercase(), None),
            };
            let flag = |v: Option<&str>| -> Result<bool, GraphError> {
                match v.map(str::to_ascii_lowercase).as_deref() {
                    None | Some("1" | "true" | "yes" | "on") => Ok(true),
                    Some("0" | "false" | "no" | "off") => Ok(false),
                    Some(_) => Err(bad(
                        spec,
                        SpecProblem::BadValue {
                            key: key.clone(),
                            value: v.unwrap_or("").to_owned(),
                        },
                    )),
                }
            };
            let need = |v: Option<&'a str>| -> Result<&'a str, GraphError> {
                v.ok_or_else(|| {
                    bad(
                        spec,
                        SpecProblem::BadValue {
                            key: key.clone(),
                            value: String::new(),
                        },
                    )
                })
            };
            match key.as_str() {
                "seed" => out.seed = parse_num(spec, &key, need(value)?)?,
                "sym" | "symmetric" | "undirected" => out.symmetrize = flag(value)?,
                "dedup" => out.dedup = flag(value)?,
                "keepdup" | "multi" => out.dedup = !flag(value)?,
                "noself" | "noloops" => out.remove_self_loops = flag(value)?,
                "self" | "loops" => out.remove_self_loops = !flag(value)?,
                "weights" => {
                    out.weights = Some(need(value)?.parse().map_err(|e| match e {
                        GraphError::WeightSpec { problem, .. } => bad(spec, problem),
                        other => other,
                    })?)
                }
                _ => {
                    let v = need(value);
                    match &mut out.generator {
                        Generator::Rmat {
                            scale,
                            edge_factor,
                            a,
                            b,
                            c,
                            permute,
                        } => match key.as_str() {
                            "scale" => {
                                *scale = parse_num(spec, &key, v?)?;
                                have_scale = true;
                            }
                            "ef" | "edgefactor" | "edge_factor" => {
                                *edge_factor = parse_num(spec, &key, v?)?
                            }
                            "a" => *a = parse_num(spec, &key, v?)?,
                            "b" => *b = parse_num(spec, &key, v?)?,
                            "c" => *c = parse_num(spec, &key, v?)?,
                            "perm" | "permute" => *permute = flag(value)?,
                            _ => return Err(bad(spec, SpecProblem::UnknownKey(key))),
                        },
                        Generator::Road {
                            width,
                            height,
                            p,
                            jitter,
                            unit,
                            order,
                        } => match key.as_str() {
                            "side" | "n" => {
                                *width = parse_num(spec, &key, v?)?;
                                *height = *width;
                                (have_w, have_h) = (true, true);
                            }
                            "w" | "width" => {
                                *width = parse_num(spec, &key, v?)?;
                                have_w = true;
                            }
                            "h" | "height" => {
                                *height = parse_num(spec, &key, v?)?;
                                have_h = true;
                            }
                            "p" => *p = parse_num(spec, &key, v?)?,
                            "jitter" => *jitter = parse_num(spec, &key, v?)?,
                            "unit" => *unit = parse_num(spec, &key, v?)?,
                            "order" => {
                                let v = v?;
                                *order = v.parse().map_err(|()| {
                                    bad(
                                        spec,
                                        SpecProblem::UnknownChoice {
                                            key: key.clone(),
                                            value: v.to_owned(),
                                            known: RoadOrder::NAMES,
                                        },
                                    )
                                })?;
                            }
                            _ => return Err(bad(spec, SpecProblem::UnknownKey(key))),
                        },
                        Generator::Random { vertices, edges } => match key.as_str() {
                            "n" => {
                                *vertices = parse_num(spec, &key, v?)?;
                                have_n = true;
                            }
                            "m" => {
                                *edges = parse_num(spec, &key, v?)?;
                                have_m = true;
                            }
                            _ => return Err(bad(spec, SpecProblem::UnknownKey(key))),
                        },
                    }
                }
            }
        }
        match &out.generator {
            Generator::Rmat { scale, a, b, c, .. } => {
                if !have_scale {
                    return Err(bad(spec, SpecProblem::MissingKey("scale")));
                }
                if *scale > 31 {
                    return Err(bad(
                        spec,
                        SpecProblem::OutOfRange(
                            "scale must be at most 31 (2^scale vertices need u32 ids)",
                        ),
                    ));
                }
                let ok = |x: f64| (0.0..=1.0).contains(&x);
                if !(ok(*a) && ok(*b) && ok(*c) && a + b + c <= 1.0 + 1e-9) {
                    return Err(bad(
                        spec,
                        SpecProblem::OutOfRange(
                            "a, b, c must be probabilities with a + b + c <= 1",
                        ),
                    ));
                }
            }
            Generator::Road {
                width,
                height,
                p,
                jitter,
                ..
            } => {
                if !(have_w && have_h) {
                    return Err(bad(spec, SpecProblem::MissingKey("side (or w and h)")));
                }
                if u64::from(*width) * u64::from(*height) > u64::from(u32::MAX)
                    || *width == 0
                    || *height == 0
                {
                    return Err(bad(
                        spec,
                        SpecProblem::OutOfRange("grid must have 1 to 2^32 - 1 vertices"),
                    ));
                }
                if !(0.0..=1.0).contains(p) {
                    return Err(bad(spec, SpecProblem::OutOfRange("p must be in 0..=1")));
                }
                if !(0.0..0.5).contains(jitter) {
                    return Err(bad(
                        spec,
                        SpecProblem::OutOfRange("jitter must be in 0..0.5"),
                    ));
                }
            }
            Generator::Random { vertices, .. } => {
                if !have_n {
                    return Err(bad(spec, SpecProblem::MissingKey("n")));
                }
                if !have_m {
                    return Err(bad(spec, SpecProblem::MissingKey("m")));
                }
                if *vertices == 0 || *vertices > u64::from(u32::MAX) {
                    return Err(bad(spec, SpecProblem::OutOfRange("n must be in 1..2^32")));
                }
            }
        }
        let arcs = out.generated_edges();
        if arcs > MAX_GENERATED_ARCS {
            return Err(bad(
                spec,
                SpecProblem::TooManyArcs {
                    arcs,
                    limit: MAX_GENERATED_ARCS,
                },
            ));
        }
        Ok(out)
    }
}

impl fmt::Display for GenSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.generator {
            Generator::Rmat {
                scale,
                edge_factor,
                a,
                b,
                c,
                permute,
            } => {
                if (*a, *b, *c) == GRAPH500_ABC && *permute {
                    write!(f, "kron:scale={scale},ef={edge_factor}")?;
                } else {
                    write!(
                        f,
                        "rmat:scale={scale},ef={edge_factor},a={a},b={b},c={c},perm={}",
                        u8::from(*permute)
                    )?;
                }
            }
            Generator::Road {
                width,
                height,
                p,
                jitter,
                unit,
                order,
            } => {
                write!(
                    f,
                    "road:w={width},h={height},p={p},jitter={jitter},unit={unit}"
                )?;
                // Row order is the default, left out so that older specs keep their names.
                if *order != RoadOrder::Rows {
                    write!(f, ",order={order}")?;
                }
            }
            Generator::Random { vertices, edges } => write!(f, "random:n={vertices},m={edges}")?,
        }
        if !matches!(self.generator, Generator::Road { .. }) {
            f.write_str(if self.symmetrize { ",sym" } else { ",sym=0" })?;
        }
        if !self.dedup {
            f.write_str(",keepdup")?;
        }
        if self.remove_self_loops {
            f.write_str(",noself")?;
        }
        write!(f, ",seed={}", self.seed)?;
        if let Some(w) = &self.weights {
            write!(f, ",weights={w}")?;
        }
        Ok(())
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
