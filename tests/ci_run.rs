//! `.ci/run` stops at the first command that fails, whichever it is, the README's test
//! command included, and exits non-zero: a failing test can never leave CI green.
//!
//! The script runs in a scratch copy of its own directory layout with a stand-in `cargo`
//! first on `PATH` and a stand-in `scripts/gpu-builds.sh`: each logs that it ran, and the
//! one named by `CI_RUN_FAIL` fails the way a failing test does (cargo's exit status 101).
//! First every command is recorded from a run where none fails; then each of them fails in
//! turn, and the run must exit non-zero right after it, with nothing after it run. Nothing
//! in the repository is touched.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn executable(path: &Path, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, body).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A stand-in that logs its command line and fails when it is the one asked to.
fn stand_in(log: &Path, name: &str) -> String {
    format!(
        "#!/usr/bin/env bash\n\
         line=\"{name} $*\"\n\
         echo \"$line\" >>'{}'\n\
         if [[ $line == \"$CI_RUN_FAIL\" ]]; then\n\
         \x20   echo 'test result: FAILED. 0 passed; 1 failed' >&2\n\
         \x20   exit 101\n\
         fi\n",
        log.display()
    )
}

/// Runs the copied script, failing `fail` (a logged line) if given: its exit code and the
/// commands it ran.
fn run(root: &Path, fail: Option<&str>) -> (Option<i32>, Vec<String>) {
    let log = root.join("log");
    let _ = fs::remove_file(&log);
    let path = format!(
        "{}:{}",
        root.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("bash")
        .arg(root.join(".ci/run"))
        .env("PATH", path)
        .env("CI_RUN_FAIL", fail.unwrap_or(""))
        .output()
        .expect("bash runs .ci/run");
    let ran = fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    (output.status.code(), ran)
}

#[test]
fn ci_stops_with_a_failure_at_whichever_command_fails() {
    let root = repository().join("target/ci-run");
    if root.exists() {
        fs::remove_dir_all(&root).unwrap();
    }
    fs::create_dir_all(root.join(".ci")).unwrap();
    fs::copy(repository().join(".ci/run"), root.join(".ci/run")).unwrap();
    let log = root.join("log");
    executable(&root.join("bin/cargo"), &stand_in(&log, "cargo"));
    executable(
        &root.join("scripts/gpu-builds.sh"),
        &stand_in(&log, "scripts/gpu-builds.sh"),
    );

    let (code, all) = run(&root, None);
    assert_eq!(code, Some(0), "nothing failed: {all:?}");
    let readme = fs::read_to_string(repository().join("README.md")).unwrap();
    let test_command = readme
        .lines()
        .find(|line| line.starts_with("cargo test "))
        .expect("README.md gives a test command");
    let tests: Vec<String> = test_command.split(" && ").map(str::to_string).collect();
    assert!(tests.len() > 1, "{test_command}");
    for test in &tests {
        assert_eq!(
            all.iter().filter(|line| *line == test).count(),
            1,
            "`{test}`, of the README's test command, runs once: {all:?}"
        );
    }
    assert_eq!(
        all.last().map(String::as_str),
        Some("scripts/gpu-builds.sh "),
        "the GPU builds come last: {all:?}"
    );

    for (at, failing) in all.iter().enumerate() {
        let (code, ran) = run(&root, Some(failing));
        assert!(
            matches!(code, Some(c) if c != 0),
            "`{failing}` failed and .ci/run exited {code:?}"
        );
        assert_eq!(
            ran,
            all[..=at],
            "`{failing}` failed: .ci/run must stop right after it"
        );
    }
}
