//! Reading the scaling bench's JSON lines, with errors that name the file, the line and
//! the fix. Lines of an older record format are upgraded to the current one ([`upgraded`]);
//! a format newer than this reader is an error.

use std::path::Path;

use crate::record::{FORMAT, Measurement};

/// The algorithms the report knows, in report order.
pub const ALGORITHMS: [&str; 4] = ["bfs", "sssp", "pagerank", "cc"];

/// A record that could not be read or makes no sense.
#[derive(Debug)]
pub struct InputError {
    /// The file and line (`path:line`), or the file alone.
    pub place: String,
    /// What is wrong and what to do.
    pub reason: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.place, self.reason)
    }
}

impl std::error::Error for InputError {}

/// The JSON values of the lines of `text` (read from `path`), each with its place
/// (`path:line`); blank lines are skipped. A line that is not a `T` is an error naming its
/// place, `what` the file should hold and `fix` (how to write it).
pub fn json_lines<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
    what: &str,
    fix: &str,
) -> Result<Vec<(String, T)>, InputError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let place = format!("{}:{}", path.display(), i + 1);
        let value = serde_json::from_str(line).map_err(|e| InputError {
            place: place.clone(),
            reason: format!("not a {what} ({e}); {fix}"),
        })?;
        out.push((place, value));
    }
    Ok(out)
}

/// Parses the JSON lines of `text` (read from `path`); blank lines are skipped.
pub fn parse_records(path: &Path, text: &str) -> Result<Vec<Measurement>, InputError> {
    let mut out = Vec::new();
    let lines: Vec<(String, Measurement)> = json_lines(
        path,
        text,
        "scaling record",
        "give the file written by the scaling bench (GROUTE_BENCH_JSON=PATH cargo bench --bench scaling)",
    )?;
    for (place, m) in lines {
        if m.format == 0 || m.format > FORMAT {
            return Err(InputError {
                place,
                reason: format!(
                    "record format {} is not one this report reads (1..={FORMAT}); build the \
                     report from the same commit as the bench that wrote it",
                    m.format
                ),
            });
        }
        let m = upgraded(m);
        check(&m).map_err(|reason| InputError { place, reason })?;
        out.push(m);
    }
    Ok(out)
}

/// `m` in the current [`FORMAT`]: a format 1 record (its `median_ms` a full run) gets that
/// time as `full_run_median_ms` and its solver clock as the algorithm time (timer `solver
/// clock`; min and max, not recorded for it, set to it; the rate recomputed from it); a
/// current record is unchanged.
pub fn upgraded(m: Measurement) -> Measurement {
    if m.format != 1 {
        return m;
    }
    let algorithm_ms = m.solver_median_ms;
    Measurement {
        format: FORMAT,
        timer: "solver clock".into(),
        full_run_median_ms: m.median_ms,
        median_ms: algorithm_ms,
        min_ms: algorithm_ms,
        max_ms: algorithm_ms,
        edges_per_s: if algorithm_ms > 0.0 {
            m.edges as f64 / (algorithm_ms / 1e3)
        } else {
            0.0
        },
        ..m
    }
}

/// Reads and parses every file of `paths`; an input without any record is an error.
pub fn read_inputs(paths: &[std::path::PathBuf]) -> Result<Vec<Measurement>, InputError> {
    let mut all = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path).map_err(|e| InputError {
            place: path.display().to_string(),
            reason: format!("cannot read it ({e}); check the --input path"),
        })?;
        all.extend(parse_records(path, &text)?);
    }
    if all.is_empty() {
        return Err(InputError {
            place: paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            reason: "no measurements; run the scaling bench with GROUTE_BENCH_JSON first".into(),
        });
    }
    Ok(all)
}

/// The values a record must have to be tabulated.
fn check(m: &Measurement) -> Result<(), String> {
    if !ALGORITHMS.contains(&m.algorithm.as_str()) {
        return Err(format!(
            "algorithm `{}` is not one of {}",
            m.algorithm,
            ALGORITHMS.join(", ")
        ));
    }
    if m.devices == 0 {
        return Err("devices is 0; a run uses at least one device".into());
    }
    for (name, v) in [
        ("median_ms", m.median_ms),
        ("min_ms", m.min_ms),
        ("max_ms", m.max_ms),
        ("full_run_median_ms", m.full_run_median_ms),
        ("solver_median_ms", m.solver_median_ms),
        ("edges_per_s", m.edges_per_s),
    ] {
        if !v.is_finite() || v < 0.0 {
            return Err(format!(
                "{name} = {v} must be a finite, non-negative number"
            ));
        }
    }
    if m.median_ms == 0.0 {
        return Err("median_ms is 0; a timed run takes some time".into());
    }
    if m.samples == 0 {
        return Err("samples is 0; a median needs at least one run".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::sample;

    #[test]
    fn reads_lines_and_skips_blank_ones() {
        let a = serde_json::to_string(&sample("bfs", "kron21.sym", 1, 10.0)).unwrap();
        let b = serde_json::to_string(&sample("cc", "kron21.sym", 2, 3.0)).unwrap();
        let got = parse_records(Path::new("x.json"), &format!("{a}\n\n{b}\n")).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].algorithm, "cc");
    }

    #[test]
    fn malformed_json_names_the_line_and_the_fix() {
        let a = serde_json::to_string(&sample("bfs", "kron21.sym", 1, 10.0)).unwrap();
        let err = parse_records(Path::new("s.json"), &format!("{a}\n{{\"algorithm\": 3}}\n"))
            .unwrap_err();
        assert_eq!(err.place, "s.json:2");
        assert!(err.reason.contains("GROUTE_BENCH_JSON"), "{err}");
    }

    #[test]
    fn impossible_values_are_errors_naming_the_field() {
        let mut m = sample("bfs", "kron21.sym", 1, 10.0);
        m.median_ms = f64::NAN;
        let text = serde_json::to_string(&m).unwrap().replace("null", "-1.0");
        let err = parse_records(Path::new("s.json"), &text).unwrap_err();
        assert!(err.reason.contains("median_ms"), "{err}");
        let mut m = sample("bfs", "kron21.sym", 1, 10.0);
        m.algorithm = "dfs".into();
        let err =
            parse_records(Path::new("s.json"), &serde_json::to_string(&m).unwrap()).unwrap_err();
        assert!(err.reason.contains("dfs"), "{err}");
        let mut m = sample("bfs", "kron21.sym", 1, 10.0);
        m.devices = 0;
        let err =
            parse_records(Path::new("s.json"), &serde_json::to_string(&m).unwrap()).unwrap_err();
        assert!(err.reason.contains("devices"), "{err}");
    }

    #[test]
    fn a_format_1_line_reads_as_format_2_with_the_full_run_moved_aside() {
        // A format 1 record of the host backend: no `format` field, `median_ms` a full run.
        let line = r#"{"algorithm":"bfs","graph":"kron:scale=14,ef=16,sym","vertices":16384,"arcs":426096,"devices":1,"backend":"host","gpu":"host executor 0","timer":"wall","median_ms":4.0,"min_ms":2.0,"max_ms":276.0,"samples":255,"solver_median_ms":3.0,"edges":426000,"edges_kind":"traversed","edges_per_s":106500000.0,"work_items":12507,"date":"2026-11-21","commit":"99251a4"}"#;
        let got = parse_records(Path::new("old.json"), line).unwrap();
        let m = &got[0];
        assert_eq!(m.format, FORMAT);
        assert_eq!(m.full_run_median_ms, 4.0);
        assert_eq!((m.median_ms, m.min_ms, m.max_ms), (3.0, 3.0, 3.0));
        assert_eq!(m.timer, "solver clock");
        assert_eq!(m.edges_per_s, 426000.0 / 3e-3);
    }

    #[test]
    fn a_current_line_round_trips_unchanged() {
        let m = sample("sssp", "kron21.sym", 2, 7.0);
        let line = serde_json::to_string(&m).unwrap();
        assert!(line.contains("\"format\":2"), "{line}");
        assert_eq!(parse_records(Path::new("x.json"), &line).unwrap(), vec![m]);
    }

    #[test]
    fn an_unknown_format_is_an_error_naming_it() {
        let mut m = sample("bfs", "kron21.sym", 1, 10.0);
        m.format = FORMAT + 1;
        let err =
            parse_records(Path::new("s.json"), &serde_json::to_string(&m).unwrap()).unwrap_err();
        assert!(err.reason.contains("record format"), "{err}");
    }

    #[test]
    fn no_records_at_all_is_an_error() {
        let dir = crate::tests_support::scratch_dir("empty-input");
        let path = dir.join("empty.json");
        std::fs::write(&path, "\n").unwrap();
        let err = read_inputs(&[path]).unwrap_err();
        assert!(err.reason.contains("no measurements"), "{err}");
        let err = read_inputs(&[dir.join("missing.json")]).unwrap_err();
        assert!(err.reason.contains("--input"), "{err}");
    }
}
