//! The bench's settings, from the environment:
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `GROUTE_BENCH_BACKEND` | `auto`, `cuda` or `host` | `auto` (CUDA when a GPU is usable) |
//! | `GROUTE_BENCH_DEVICES` | device counts, e.g. `1,2,4` | 1..=GPUs present; `1,2` on the host backend |
//! | `GROUTE_BENCH_GRAPHS` | generator specs separated by `;` | CUDA: `kron21.sym;road:side=2048,p=0.6`; host: `kron:scale=14,ef=16,sym;road:side=256,p=0.6` |
//! | `GROUTE_BENCH_ALGOS` | subset of `bfs,sssp,pagerank,cc` | all four |
//! | `GROUTE_BENCH_PARTITION` | `block` or `metis` | `block` (METIS on kron21 takes minutes) |
//! | `GROUTE_BENCH_JSON` | file to append one JSON line per measurement to | none |
//! | `GROUTE_BENCH_MEASURE_MS` | criterion's measurement time per benchmark, of algorithm time (at least 10 runs are timed whatever it is) | `3000` |
//! | `GROUTE_BENCH_WARM_UP_MS` | criterion's warm-up per benchmark, of algorithm time | `500` |
//! | `GROUTE_COMMIT` | commit recorded in the JSON; also read when the bench is built (`GROUTE_COMMIT=$(git rev-parse --short HEAD)` while staging binaries for another machine, whose checkout's git may be elsewhere) | the build's `GROUTE_COMMIT`, else `git rev-parse --short HEAD` |

use std::path::PathBuf;
use std::time::Duration;

use groute::core::BackendChoice;
use groute::graph::PartitionMethod;

/// The algorithms the bench knows, in report order.
pub const ALGORITHMS: [&str; 4] = ["bfs", "sssp", "pagerank", "cc"];

/// Default graphs on GPUs: the kron21 preset and a 4M-vertex road-like grid, the graphs
/// of the published figures the report compares with.
pub const CUDA_GRAPHS: [&str; 2] = ["kron21.sym", "road:side=2048,p=0.6"];
/// Default graphs on the host backend: small enough for a laptop.
pub const HOST_GRAPHS: [&str; 2] = ["kron:scale=14,ef=16,sym", "road:side=256,p=0.6"];

/// Settings read from the environment.
#[derive(Debug)]
pub struct Config {
    /// Which backend to ask for.
    pub backend: BackendChoice,
    /// Device counts (`None`: the default for the backend found).
    pub devices: Option<Vec<usize>>,
    /// Graph specs (`None`: the default for the backend found).
    pub graphs: Option<Vec<String>>,
    /// Algorithms to run.
    pub algorithms: Vec<String>,
    /// How vertices are split between devices.
    pub partition: PartitionMethod,
    /// Where to append the JSON lines.
    pub json: Option<PathBuf>,
    /// Criterion's measurement time per benchmark. It counts algorithm time, not the full
    /// runs around it: where a full run is much longer than the algorithm (CC's staging on a
    /// large graph), a short one keeps the bench's wall time in bounds.
    pub measurement: Duration,
    /// Criterion's warm-up per benchmark (after the bench's own warm-up runs).
    pub warm_up: Duration,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Config {
    /// Reads the environment; an unparsable value is an error naming the variable.
    pub fn from_env() -> Result<Config, String> {
        let backend = match var("GROUTE_BENCH_BACKEND") {
            Some(s) => s
                .parse()
                .map_err(|e| format!("GROUTE_BENCH_BACKEND={s}: {e}; use auto, cuda or host"))?,
            None => BackendChoice::Auto,
        };
        let devices = var("GROUTE_BENCH_DEVICES")
            .map(|s| parse_devices(&s))
            .transpose()?;
        let graphs = var("GROUTE_BENCH_GRAPHS").map(|s| {
            s.split(';')
                .map(|g| g.trim().to_string())
                .filter(|g| !g.is_empty())
                .collect()
        });
        let algorithms = match var("GROUTE_BENCH_ALGOS") {
            Some(s) => parse_algorithms(&s)?,
            None => ALGORITHMS.iter().map(|a| a.to_string()).collect(),
        };
        let partition = match var("GROUTE_BENCH_PARTITION") {
            Some(s) => s
                .parse()
                .map_err(|e| format!("GROUTE_BENCH_PARTITION={s}: {e}; use block or metis"))?,
            None => PartitionMethod::Block,
        };
        Ok(Config {
            backend,
            devices,
            graphs,
            algorithms,
            partition,
            json: var("GROUTE_BENCH_JSON").map(PathBuf::from),
            measurement: millis("GROUTE_BENCH_MEASURE_MS", 3000)?,
            warm_up: millis("GROUTE_BENCH_WARM_UP_MS", 500)?,
        })
    }
}

/// The duration in milliseconds that `name` gives (`default` where it is unset); at least 1.
fn millis(name: &str, default: u64) -> Result<Duration, String> {
    match var(name) {
        None => Ok(Duration::from_millis(default)),
        Some(s) => match s.trim().parse::<u64>() {
            Ok(ms) if ms >= 1 => Ok(Duration::from_millis(ms)),
            _ => Err(format!(
                "{name}={s}: not a number of milliseconds; give a whole number of 1 or more, e.g. {default}"
            )),
        },
    }
}

/// `1,2,4` -> `[1, 2, 4]`; every count at least 1.
pub fn parse_devices(s: &str) -> Result<Vec<usize>, String> {
    let counts = s
        .split(',')
        .map(|d| match d.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(format!(
                "GROUTE_BENCH_DEVICES={s}: `{d}` is not a device count; give counts of 1 or more, e.g. 1,2,4"
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(counts)
}

/// `bfs,cc` -> those names, each one of [`ALGORITHMS`].
pub fn parse_algorithms(s: &str) -> Result<Vec<String>, String> {
    s.split(',')
        .map(|a| {
            let a = a.trim().to_ascii_lowercase();
            if ALGORITHMS.contains(&a.as_str()) {
                Ok(a)
            } else {
                Err(format!(
                    "GROUTE_BENCH_ALGOS={s}: unknown algorithm `{a}`; choose from {}",
                    ALGORITHMS.join(",")
                ))
            }
        })
        .collect()
}
