//! The `--gen` spec: [`GenSpec`]'s parser (`kind[:key=value,flag,...]` or a preset name, see the
//! module table) and its printer, which writes a spec that parses back to the same value.

use std::fmt;
use std::str::FromStr;

use super::*;
use crate::error::{GraphError, SpecProblem};

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
