//! Writes `docs/performance.md` and the strong-scaling plots `docs/scaling-<algo>.svg` from
//! the JSON lines of the scaling bench (`GROUTE_BENCH_JSON`), and optionally the headline
//! table of the README (between `<!-- perf:begin -->` and `<!-- perf:end -->`).
//!
//! ```text
//! cargo run --release --example report -- --input scaling.json [--input more.json] --out docs/ [--readme README.md] [--ranks ranks.jsonl]
//! ```
//!
//! `--ranks` adds the section on one process against several ranks, from the JSON lines
//! `tools/ranks-record.py` makes of a `tools/ranks-gpu.sh` run.
//!
//! A line that is not a scaling record, or holds an impossible value, is an error naming the
//! file and line. When the same algorithm, graph, machine and device count appear twice,
//! the later line wins (so a re-run appended to a file replaces the earlier one).

#[path = "../../benches/scaling/record.rs"]
#[allow(dead_code)] // the bench's helpers (utc_date) are not used here
mod record;

mod bound;
mod input;
mod markdown;
mod plot;
mod published;
mod ranks;
mod series;
#[cfg(test)]
mod tests_support;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

/// Markers of the README's generated headline table.
const README_BEGIN: &str = "<!-- perf:begin -->";
const README_END: &str = "<!-- perf:end -->";

#[derive(Parser, Debug)]
#[command(about = "Performance report from the scaling bench's JSON lines")]
struct Cli {
    /// A JSON-lines file written by the scaling bench (repeatable).
    #[arg(long, value_name = "PATH", required = true)]
    input: Vec<PathBuf>,
    /// Folder for performance.md and the SVG plots.
    #[arg(long, value_name = "DIR", default_value = "docs")]
    out: PathBuf,
    /// Also replace the headline table between the perf markers of this README.
    #[arg(long, value_name = "PATH")]
    readme: Option<PathBuf>,
    /// JSON lines of `tools/ranks-record.py`: adds the section on one process against
    /// several ranks.
    #[arg(long, value_name = "PATH")]
    ranks: Option<PathBuf>,
}

type AnyError = Box<dyn std::error::Error>;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<(), AnyError> {
    let records = input::read_inputs(&cli.input)?;
    let rank_runs = match &cli.ranks {
        Some(path) => ranks::read_ranks(path)?,
        None => Vec::new(),
    };
    let mut inputs: Vec<String> = cli
        .input
        .iter()
        .map(|p| format!("--input {}", p.display()))
        .collect();
    if let Some(path) = &cli.ranks {
        inputs.push(format!("--ranks {}", path.display()));
    }
    let command = format!(
        "cargo run --release --example report -- {} --out {}",
        inputs.join(" "),
        cli.out.display()
    );
    let ranks_section = ranks::ranks_md(&rank_runs);
    let written = write_report(&records, &ranks_section, &cli.out, &command)?;
    for path in &written {
        println!("wrote {}", path.display());
    }
    if let Some(readme) = &cli.readme {
        update_readme(readme, &markdown::headline(&records))?;
        println!("updated the headline table of {}", readme.display());
    }
    Ok(())
}

/// Writes `performance.md` and one SVG per algorithm measured into `out`; returns the paths.
fn write_report(
    records: &[record::Measurement],
    ranks_section: &str,
    out: &Path,
    command: &str,
) -> Result<Vec<PathBuf>, AnyError> {
    std::fs::create_dir_all(out)
        .map_err(|e| format!("cannot create {} ({e}); check --out", out.display()))?;
    let mut written = Vec::new();
    let md = out.join("performance.md");
    let mut text = markdown::performance_md(records, command);
    if !ranks_section.is_empty() {
        text.push('\n');
        text.push_str(ranks_section);
    }
    std::fs::write(&md, text).map_err(|e| format!("cannot write {} ({e})", md.display()))?;
    written.push(md);
    for algorithm in input::ALGORITHMS {
        let series = series::series_of(records, algorithm);
        if series.is_empty() {
            continue;
        }
        let path = out.join(format!("scaling-{algorithm}.svg"));
        std::fs::write(&path, plot::scaling_svg(algorithm, &series)?)
            .map_err(|e| format!("cannot write {} ({e})", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Replaces the text between the perf markers of `readme` with `table`.
fn update_readme(readme: &Path, table: &str) -> Result<(), AnyError> {
    let text = std::fs::read_to_string(readme)
        .map_err(|e| format!("cannot read {} ({e}); check --readme", readme.display()))?;
    let replaced = replace_between_markers(&text, table).ok_or_else(|| {
        format!(
            "{} has no `{README_BEGIN}` ... `{README_END}` section; add the two markers where the headline table goes",
            readme.display()
        )
    })?;
    std::fs::write(readme, replaced)
        .map_err(|e| format!("cannot write {} ({e})", readme.display()))?;
    Ok(())
}

fn replace_between_markers(text: &str, table: &str) -> Option<String> {
    let begin = text.find(README_BEGIN)? + README_BEGIN.len();
    let end = begin + text[begin..].find(README_END)?;
    Some(format!("{}\n{}{}", &text[..begin], table, &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::{sample, scratch_dir};

    /// The command line `--input json --out out`, without a README or a ranks file.
    fn cli_reading(json: PathBuf, out: &Path) -> Cli {
        Cli {
            input: vec![json],
            out: out.to_path_buf(),
            readme: None,
            ranks: None,
        }
    }

    #[test]
    fn writes_the_report_and_a_plot_per_algorithm_from_a_json_file() {
        let dir = scratch_dir("end-to-end");
        let json = dir.join("scaling.json");
        let lines: Vec<String> = [
            sample("bfs", "kron21.sym", 1, 8.0),
            sample("bfs", "kron21.sym", 2, 5.0),
            sample("sssp", "kron21.sym", 1, 20.0),
        ]
        .iter()
        .map(|m| serde_json::to_string(m).unwrap())
        .collect();
        std::fs::write(&json, lines.join("\n")).unwrap();
        let out = dir.join("docs");
        let cli = cli_reading(json, &out);
        run(&cli).unwrap();
        let md = std::fs::read_to_string(out.join("performance.md")).unwrap();
        assert!(md.contains("## BFS") && md.contains("## SSSP"), "{md}");
        for algo in ["bfs", "sssp"] {
            let svg = std::fs::read_to_string(out.join(format!("scaling-{algo}.svg"))).unwrap();
            assert!(svg.starts_with("<svg"));
        }
        assert!(
            !out.join("scaling-cc.svg").exists(),
            "no CC measurements, no CC plot"
        );
    }

    #[test]
    fn malformed_input_is_an_error_and_writes_nothing() {
        let dir = scratch_dir("malformed");
        let json = dir.join("bad.json");
        std::fs::write(&json, "not json\n").unwrap();
        let out = dir.join("docs");
        let cli = cli_reading(json, &out);
        let err = run(&cli).unwrap_err().to_string();
        assert!(
            err.contains("bad.json:1") && err.contains("not a scaling record"),
            "{err}"
        );
        assert!(!out.exists());
    }

    #[test]
    fn the_readme_table_is_replaced_between_the_markers_only() {
        let text = format!("intro\n{README_BEGIN}\nold\n{README_END}\noutro\n");
        let got = replace_between_markers(&text, "| new |\n").unwrap();
        assert_eq!(
            got,
            format!("intro\n{README_BEGIN}\n| new |\n{README_END}\noutro\n")
        );
        assert!(replace_between_markers("no markers", "x").is_none());
        let dir = scratch_dir("readme");
        let readme = dir.join("README.md");
        std::fs::write(&readme, "no markers\n").unwrap();
        let err = update_readme(&readme, "x").unwrap_err().to_string();
        assert!(err.contains("perf:begin"), "{err}");
    }
}
