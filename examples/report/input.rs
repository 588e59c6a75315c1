//! Reading the scaling bench's JSON lines, with errors that name the file, the line and
//! the fix.

use std::path::Path;

use crate::record::Measurement;

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

/// Parses the JSON lines of `text` (read from `path`); blank lines are skipped.
pub fn parse_records(path: &Path, text: &str) -> Result<Vec<Measurement>, InputError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let place = format!("{}:{}", path.display(), i + 1);
        let m: Measurement = serde_json::from_str(line).map_err(|e| InputError {
            place: place.clone(),
            reason: format!(
                "not a scaling record ({e}); give the file written by the scaling bench \
                 (GROUTE_BENCH_JSON=PATH cargo bench --bench scaling)"
            ),
        })?;
        check(&m).map_err(|reason| InputError { place, reason })?;
        out.push(m);
    }
    Ok(out)
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
