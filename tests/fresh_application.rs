//! The README's application example, in a fresh crate outside the workspace that depends on
//! `groute` by path the way the README says, builds offline against the workspace's lock file
//! and runs: the facade's crates
//! resolve as dependencies (kernels embedded, nothing read from the checkout at run time).
//!
//! The application is written to a fresh temporary directory. It builds into the target
//! directory of this test (cargo holds no lock on it while tests run), with the workspace's
//! dev profile, so the dependencies the workspace already compiled are reused where their
//! features agree.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The application: the README's first Rust example under "Using groute from an
/// application", verbatim, so what the README tells a new user is what this test builds.
fn readme_application(root: &Path) -> String {
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md is readable");
    let section = readme
        .split_once("## Using groute from an application")
        .map(|(_, rest)| rest)
        .expect("the README has a section \"Using groute from an application\"");
    let code = section
        .split_once("```rust\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(code, _)| code)
        .expect("that section opens with a ```rust example");
    assert!(
        code.contains("fn main()"),
        "the README's first example is a whole program:\n{code}"
    );
    code.to_string()
}

/// The workspace's crates: the workspace compiles them at opt-level 1 (its dev profile), other
/// dependencies at 2.
const WORKSPACE_CRATES: &[&str] = &[
    "groute",
    "groute-kernels",
    "groute-core",
    "groute-graph",
    "groute-worklist",
    "groute-bfs",
    "groute-cc",
    "groute-pagerank",
    "groute-sssp",
];

/// The workspace's root (this test belongs to the facade, the root package).
fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A directory that is not inside the workspace (so cargo cannot take the application for one
/// of its members), removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "groute-fresh-application-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

#[test]
fn a_fresh_application_depending_on_groute_by_path_builds_and_runs() {
    let root = workspace_root();
    let app = TempDir::new();
    assert!(
        !app.0.starts_with(&root),
        "the application must live outside the workspace"
    );
    // `[workspace]` keeps cargo from looking for a workspace above the temporary directory.
    // The profile is the workspace's (its own crates at opt-level 1, other dependencies at 2),
    // so that what the workspace compiled is reused where the features agree.
    let mut manifest = format!(
        "[package]\nname = \"fresh-app\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\
         publish = false\n\n[dependencies]\ngroute = {{ path = {:?} }}\n\n[workspace]\n\n\
         [profile.dev]\nopt-level = 1\n\n[profile.dev.package.\"*\"]\nopt-level = 2\n",
        root.display().to_string()
    );
    for member in WORKSPACE_CRATES {
        manifest.push_str(&format!(
            "\n[profile.dev.package.{member}]\nopt-level = 1\n"
        ));
    }
    write(&app.0.join("Cargo.toml"), &manifest);
    write(&app.0.join("src/main.rs"), &readme_application(&root));
    std::fs::copy(root.join("Cargo.lock"), app.0.join("Cargo.lock"))
        .unwrap_or_else(|e| panic!("copying the workspace's Cargo.lock: {e}"));

    // `<target>/tmp`: its parent is the target directory this test was built in.
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let target = tmp.parent().unwrap_or(tmp);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["run", "--offline", "--quiet", "--manifest-path"])
        .arg(app.0.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .output()
        .unwrap_or_else(|e| panic!("running cargo: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the fresh application failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    // The README's example prints how many vertices a BFS of `road:side=64` (4096 vertices)
    // reached from the hub of its largest component, which holds most of the grid.
    let reached: usize = stdout
        .trim_end()
        .strip_suffix(" vertices reached")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected output:\n{stdout}\nstderr:\n{stderr}"));
    assert!(
        (2049..=4096).contains(&reached),
        "BFS from the default source of a 64 x 64 grid reached {reached} vertices, not most of them"
    );
}
