//! The examples' command-line convention, run through their built binaries: every example
//! answers `--version`, keeps `--help` to at most 35 lines, lists its tuning flags with
//! `--help-tuning`, and writes JSON that validates against `docs/report.schema.json`; the
//! default source of a traversal lies in the largest component.
//!
//! The binaries are `target/<profile>/examples/<name>`, built by `cargo test` (which builds
//! every example) before this test runs; a missing one fails the test naming the command that
//! builds it. The examples' shared module is compiled in here too, so its unit tests run with
//! this file.

#[path = "../examples/common/mod.rs"]
mod common;
#[path = "examples_cli/schema.rs"]
mod schema;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Every example of the convention.
const EXAMPLES: &[&str] = &[
    "bfs",
    "sssp",
    "pagerank",
    "cc",
    "pbf",
    "graphinfo",
    "topology",
    "fused_barrier",
    "host_side",
];

/// The built example `name`, next to this test's `deps/` directory.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its own path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test runs from target/<profile>/deps");
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: build the examples first (`cargo test` does, or `cargo build --examples`)",
        path.display()
    );
    path
}

/// Runs example `name` with `args` from the repository root (where the shipped graph is).
fn run(name: &str, args: &[&str]) -> Output {
    Command::new(example(name))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("GROUTE_TUNING")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {name}: {e}"))
}

/// Runs example `name`, requiring success; its stdout.
fn run_ok(name: &str, args: &[&str]) -> String {
    let out = run(name, args);
    assert!(
        out.status.success(),
        "{name} {args:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn schema() -> Value {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/report.schema.json"),
    )
    .expect("docs/report.schema.json is readable");
    serde_json::from_str(&text).expect("the schema is JSON")
}

/// Runs example `name` with `--json` and returns its report after validating it.
fn report(name: &str, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let stdout = run_ok(name, &all);
    let value: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{name} --json printed no JSON ({e}):\n{stdout}"));
    let schema = schema();
    let errors = schema::validate(&schema, &schema, &value, "$");
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{value:#}");
    assert_eq!(value["algorithm"], name);
    value
}

#[test]
fn every_example_answers_version() {
    for name in EXAMPLES {
        let stdout = run_ok(name, &["--version"]);
        assert!(
            stdout.contains(env!("CARGO_PKG_VERSION")),
            "{name} --version printed {stdout:?}"
        );
    }
}

#[test]
fn every_example_help_fits_in_35_lines() {
    for name in EXAMPLES {
        let stdout = run_ok(name, &["--help"]);
        let lines = stdout.lines().count();
        assert!(lines <= 35, "{name} --help has {lines} lines:\n{stdout}");
        assert!(stdout.contains("--json"), "{name} --help lacks --json");
        assert!(
            stdout.contains("--help-tuning"),
            "{name} --help lacks --help-tuning"
        );
    }
}

#[test]
fn help_tuning_lists_the_hidden_flags_and_exits_zero() {
    let stdout = run_ok("bfs", &["--help-tuning"]);
    for flag in [
        "--fused-grid",
        "--do-driver",
        "--direction",
        "--jitter",
        "--prio-delta",
    ] {
        assert!(
            stdout.contains(flag),
            "bfs --help-tuning lacks {flag}:\n{stdout}"
        );
    }
    assert!(!run_ok("bfs", &["--help"]).contains("--fused-grid"));
    let stdout = run_ok("pagerank", &["--help-tuning"]);
    assert!(
        stdout.contains("--driver") && stdout.contains("--sweep"),
        "{stdout}"
    );
    for name in EXAMPLES {
        run_ok(name, &["--help-tuning"]);
    }
}

#[test]
fn tuning_flags_are_read_from_the_environment() {
    let out = Command::new(example("bfs"))
        .args(["--gen", "road:side=8", "--backend", "host", "--json"])
        .env("GROUTE_TUNING", "--direction push --prio-delta 2")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("bfs runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["execution"]["detail"]["prio_delta"], 2);
    let line: Vec<&str> = v["command_line"]
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        line.ends_with(&["--direction", "push", "--prio-delta", "2"]),
        "{line:?}"
    );
}

#[test]
fn algorithm_reports_validate_against_the_schema() {
    let graph = ["--gen", "road:side=24", "--backend", "host", "--validate"];
    let mut checksums = Vec::new();
    for name in ["bfs", "sssp", "pagerank", "cc"] {
        let v = report(name, &graph);
        assert_eq!(v["validated"], true, "{name}");
        assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(v["graph"]["vertices"], 24 * 24, "{name}");
        assert_eq!(v["execution"]["backend"], "host");
        assert_eq!(v["devices"][0]["kind"], "host");
        assert!(
            v["times"]["run_ms"]["repeats"] == 1,
            "{name}: {}",
            v["times"]
        );
        checksums.push(v["graph"]["checksum"].clone());
    }
    // The same generated graph, the same checksum, whatever the example.
    assert!(checksums.windows(2).all(|w| w[0] == w[1]), "{checksums:?}");
    let v = report(
        "pbf",
        &["--size", "100000", "--devices", "2", "--backend", "host"],
    );
    assert_eq!(v["validated"], true);
    assert_eq!(v["devices"].as_array().map(Vec::len), Some(2));
    let v = report(
        "graphinfo",
        &[
            "--gen",
            "road:side=24",
            "--parts",
            "2",
            "--partition",
            "block",
        ],
    );
    assert_eq!(v["graph"]["vertices"], 24 * 24);
    assert_eq!(v["algorithm_stats"]["partition"]["parts"], 2);
    let v = report(
        "host_side",
        &["--gen", "road:side=16", "--runs", "1", "--backend", "host"],
    );
    assert_eq!(
        v["algorithm_stats"]["graphs"].as_array().map(Vec::len),
        Some(1)
    );
}

#[test]
fn repeats_report_median_min_and_max() {
    let v = report(
        "bfs",
        &[
            "--gen",
            "road:side=16",
            "--backend",
            "host",
            "--repeat",
            "3",
            "--devices",
            "2",
        ],
    );
    let t = &v["times"]["run_ms"];
    assert_eq!(t["repeats"], 3);
    let (min, median, max) = (t["min"].as_f64(), t["median"].as_f64(), t["max"].as_f64());
    assert!(min <= median && median <= max, "{t}");
    assert_eq!(v["devices"].as_array().map(Vec::len), Some(2));
}

#[test]
fn json_with_a_path_writes_the_report_there() {
    let path = std::env::temp_dir().join(format!("groute-cli-report-{}.json", std::process::id()));
    let path_text = path.to_string_lossy().into_owned();
    let stdout = run_ok(
        "sssp",
        &[
            "--gen",
            "road:side=8",
            "--backend",
            "host",
            "--json",
            &path_text,
        ],
    );
    assert!(
        stdout.contains("source"),
        "the human table goes to stdout:\n{stdout}"
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("written")).expect("JSON");
    let _ = std::fs::remove_file(&path);
    let schema = schema();
    assert!(schema::validate(&schema, &schema, &v, "$").is_empty());
}

#[test]
fn check_stays_an_alias_of_validate() {
    let v = report(
        "cc",
        &["--gen", "road:side=8", "--backend", "host", "--check"],
    );
    assert_eq!(v["validated"], true);
}

#[test]
fn graphinfo_runs_the_shipped_graph_without_a_graph_flag() {
    let v = report("graphinfo", &[]);
    assert_eq!(
        v["graph"]["name"].as_str().map(|n| n.contains("4elt")),
        Some(true),
        "{v}"
    );
}

#[test]
fn the_default_source_on_a_road_grid_reaches_more_than_half_of_the_vertices() {
    for name in ["bfs", "sssp"] {
        let v = report(name, &["--gen", "road:side=64", "--backend", "host"]);
        let n = v["graph"]["vertices"].as_u64().expect("vertices");
        let reached = v["algorithm_stats"]["reached"].as_u64().expect("reached");
        assert!(2 * reached > n, "{name}: reached {reached} of {n}");
    }
}

#[test]
fn a_source_in_a_small_component_draws_a_warning() {
    // A path of 200 vertices and, apart, the pair 500-501.
    let path = std::env::temp_dir().join(format!("groute-cli-small-{}.el", std::process::id()));
    let mut text: String = (0..199).map(|v| format!("{v} {}\n", v + 1)).collect();
    text += "500 501\n";
    std::fs::write(&path, text).expect("temp file");
    let path_text = path.to_string_lossy().into_owned();
    let small = run(
        "bfs",
        &[
            "--graph",
            &path_text,
            "--backend",
            "host",
            "--source",
            "500",
        ],
    );
    let large = run(
        "bfs",
        &["--graph", &path_text, "--backend", "host", "--source", "3"],
    );
    let _ = std::fs::remove_file(&path);
    assert!(
        small.status.success(),
        "{}",
        String::from_utf8_lossy(&small.stderr)
    );
    assert!(String::from_utf8_lossy(&small.stderr).contains("warning"));
    assert!(
        large.status.success(),
        "{}",
        String::from_utf8_lossy(&large.stderr)
    );
    assert!(!String::from_utf8_lossy(&large.stderr).contains("warning"));
}

#[test]
fn device_driven_execution_is_refused_where_there_is_none() {
    let out = run(
        "pbf",
        &[
            "--size",
            "1000",
            "--backend",
            "host",
            "--execution",
            "device-driven",
        ],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("host-driven"));
}

#[test]
fn cc_asked_device_driven_runs_label_propagation_and_writes_hook_and_compress_labels() {
    let dir = std::env::temp_dir();
    let pid = std::process::id();
    let labels = |execution: &str| {
        let path = dir.join(format!("groute-cli-cc-{execution}-{pid}.txt"));
        let out = run_ok(
            "cc",
            &[
                "--gen",
                "kron:scale=8,ef=4",
                "--devices",
                "3",
                "--backend",
                "host",
                "--execution",
                execution,
                "--validate",
                "--output",
                path.to_str().unwrap(),
            ],
        );
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).ok();
        (out, text)
    };
    let (auto_out, auto_labels) = labels("auto");
    let (device_out, device_labels) = labels("device-driven");
    assert!(!auto_out.contains("label propagation"), "{auto_out}");
    // The host backend runs its persistent members (and says so).
    assert!(device_out.contains("label propagation"), "{device_out}");
    assert!(device_out.contains("device-driven on host"), "{device_out}");
    assert!(device_out.contains("persistent member"), "{device_out}");
    assert_eq!(device_labels, auto_labels);
}

#[test]
fn the_validator_rejects_reports_that_break_the_schema() {
    let schema = schema();
    let v = report("cc", &["--gen", "road:side=8", "--backend", "host"]);
    let broken = |edit: &dyn Fn(&mut Value)| {
        let mut w = v.clone();
        edit(&mut w);
        schema::validate(&schema, &schema, &w, "$")
    };
    assert!(!broken(&|w| w["times"]["load_ms"] = Value::from("fast")).is_empty());
    assert!(!broken(&|w| w["graph"]["checksum"] = Value::from("fnv1a64-pieces:xyz")).is_empty());
    assert!(!broken(&|w| w["execution"]["mode"] = Value::from("sideways")).is_empty());
    assert!(
        !broken(&|w| {
            w.as_object_mut().map(|o| o.remove("algorithm"));
        })
        .is_empty()
    );
    assert!(!broken(&|w| w["extra"] = Value::Null).is_empty());
}

#[test]
fn every_algorithm_reports_each_devices_peak_memory() {
    for name in ["bfs", "sssp", "pagerank", "cc"] {
        let value = report(
            name,
            &[
                "--gen",
                "kron:scale=10,ef=8,sym",
                "--backend",
                "host",
                "--devices",
                "2",
            ],
        );
        let devices = value["memory"]["devices"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no memory.devices in {value:#}"));
        assert_eq!(devices.len(), 2, "{name}: {value:#}");
        for d in devices {
            let peak = d["peak_bytes"].as_u64().expect("peak_bytes is an integer");
            assert!(
                peak > 0,
                "{name}: device {} counted nothing: {value:#}",
                d["device"]
            );
            assert!(d["current_bytes"].as_u64().expect("current_bytes") <= peak);
            assert!(d["limit_bytes"].is_null());
        }
    }
}

#[test]
fn a_device_memory_limit_too_small_fails_cleanly_and_a_large_one_holds() {
    // Two devices: on one host device the direction-optimizing BFS keeps its arrays in host
    // vectors, not in device memory, and counts nothing.
    let graph = [
        "--gen",
        "kron:scale=12,ef=8,sym",
        "--backend",
        "host",
        "--devices",
        "2",
    ];
    let value = report("bfs", &graph);
    let peak = value["memory"]["devices"][0]["peak_bytes"]
        .as_u64()
        .expect("peak_bytes is an integer");
    let tight = (peak / 2).to_string();
    let mut args = graph.to_vec();
    args.extend(["--device-memory-limit", tight.as_str()]);
    let out = run("bfs", &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("memory limit"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let roomy = (peak * 2).to_string();
    let mut args = graph.to_vec();
    args.extend(["--device-memory-limit", roomy.as_str()]);
    let value = report("bfs", &args);
    let device = &value["memory"]["devices"][0];
    assert_eq!(device["limit_bytes"].as_u64(), Some(peak * 2));
    assert!(device["peak_bytes"].as_u64().expect("peak_bytes") <= peak * 2);
    assert_eq!(value["validated"], serde_json::Value::Null);
}

#[test]
fn a_device_memory_limit_that_does_not_parse_names_the_input() {
    let out = run(
        "bfs",
        &["--device-memory-limit", "lots", "--backend", "host"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("lots"), "{stderr}");
}
