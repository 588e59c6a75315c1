//! Running one test again in a child process under an address-space limit, so that an
//! allocation too large for the limit fails the same way on every machine, however much
//! memory it has.

use std::process::Command;

/// Set in the child process that runs one test under the address-space limit.
const CHILD: &str = "GROUTE_HOSTILE_LIMITED_CHILD";

/// Runs `body` in a child process limited to 4 GB of address space (`ulimit -v`): in the
/// parent, starts the child (the running test binary, only the test `name`) and asserts
/// that it ran that one test and passed without a panic; in the child, runs `body`.
pub fn under_4gb_limit(name: &str, body: impl FnOnce()) {
    if std::env::var_os(CHILD).is_some() {
        body();
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000 && exec \"$0\" --exact \"$1\" --test-threads 1 --nocapture")
        .arg(&exe)
        .arg(name)
        .env(CHILD, "1")
        .output()
        .expect("the child test process starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "child failed: {:?}\n{text}",
        out.status
    );
    assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
    assert!(!text.contains("panicked"), "{text}");
}
