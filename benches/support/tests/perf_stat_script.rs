//! scripts/perf-stat.sh's parsers and comparison, on perf and cachegrind outputs recorded
//! into tests/fixtures/perf-stat (the script itself needs perf or valgrind only for `run`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The bench package, which holds the fixtures; the script is the workspace's.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn script(args: &[&str], store: Option<&Path>) -> (bool, String, String) {
    let mut command = Command::new("bash");
    command
        .arg(root().join("../../scripts/perf-stat.sh"))
        .args(args);
    if let Some(store) = store {
        command.env("PERF_STAT_DIR", store);
    }
    let out = command.output().expect("bash runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn fixture(name: &str) -> String {
    root()
        .join("tests/fixtures/perf-stat")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn parses_perf_stat_csv_with_hardware_counters() {
    let (ok, out, err) = script(&["parse-perf", &fixture("perf-stat-x-hardware.txt")], None);
    assert!(ok, "{err}");
    for line in [
        "cycles 1123456789",
        "cycles_noise_pct 1.20",
        "instructions 2456789012",
        "L1_dcache_load_misses 21987654",
        "branch_misses 6543210",
        "task_clock 401.23",
        "page_faults 98765",
    ] {
        assert!(out.lines().any(|l| l == line), "missing `{line}` in\n{out}");
    }
}

#[test]
fn marks_unsupported_hardware_counters() {
    let (ok, out, _) = script(
        &["parse-perf", &fixture("perf-stat-x-unsupported.txt")],
        None,
    );
    assert!(ok);
    assert!(out.lines().any(|l| l == "cycles n/a"), "{out}");
    assert!(out.lines().any(|l| l == "task_clock 87.82"), "{out}");
}

#[test]
fn parses_cachegrind_summary() {
    let (ok, out, err) = script(
        &["parse-cachegrind", &fixture("cachegrind-stderr.txt")],
        None,
    );
    assert!(ok, "{err}");
    for key in [
        "instructions",
        "d1_misses",
        "lld_misses",
        "branches",
        "branch_misses",
    ] {
        let value = out
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key} ")))
            .unwrap_or_else(|| panic!("no {key} in\n{out}"));
        assert!(value.parse::<u64>().unwrap() > 0, "{key} = {value}");
    }
}

#[test]
fn compare_flags_changes_past_noise_and_refuses_mixed_or_missing_tags() {
    let store = std::env::temp_dir().join(format!("perf-stat-test-{}", std::process::id()));
    let write = |tag: &str, figures: &str| {
        std::fs::create_dir_all(store.join(tag)).unwrap();
        std::fs::write(store.join(tag).join("figures.txt"), figures).unwrap();
    };
    write(
        "base",
        "instructions 1000\nd1_misses 100\nallocations_per_constraint 4.5\nmode cachegrind\n",
    );
    write(
        "head",
        "instructions 800\nd1_misses 100.2\nallocations_per_constraint 0.001\nmode cachegrind\n",
    );
    write(
        "perfrun",
        "instructions 1000\ninstructions_noise_pct 2.0\nmode perf\n",
    );
    let (ok, out, err) = script(&["compare", "base", "head"], Some(&store));
    assert!(ok, "{err}");
    assert!(out.contains("simulated"), "{out}");
    let verdict = |metric: &str| {
        out.lines()
            .find(|l| l.starts_with(metric))
            .unwrap()
            .to_string()
    };
    assert!(verdict("instructions").contains("IMPROVED"), "{out}");
    assert!(verdict("d1_misses").contains("within noise"), "{out}");
    assert!(
        verdict("allocations_per_constraint").contains("IMPROVED"),
        "{out}"
    );

    let (ok, _, err) = script(&["compare", "base", "perfrun"], Some(&store));
    assert!(!ok && err.contains("cannot compare"), "{err}");
    let (ok, _, err) = script(&["compare", "base", "missing"], Some(&store));
    assert!(!ok && err.contains("no complete results"), "{err}");
    let (ok, _, err) = script(&["frobnicate"], Some(&store));
    assert!(!ok && err.contains("unknown command"), "{err}");
    let (ok, _, err) = script(&["kernel", "--reps", "2"], Some(&store));
    assert!(
        !ok && err.contains("unknown argument '--reps' for kernel"),
        "{err}"
    );
    std::fs::remove_dir_all(&store).unwrap();
}
