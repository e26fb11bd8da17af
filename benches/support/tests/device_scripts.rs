//! The scripts carried to a lent GPU machine (scripts/scaling.sh, scripts/gpu-check.sh) run
//! there once, in minutes of device time: what can be checked without a device is checked
//! here, so a renamed variant or a broken argument check is found before then.

use std::path::PathBuf;
use std::process::Command;

use synthpool_bench::variants::{Variant, Workload};

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts")
        .join(name)
}

/// Where a run would write: nothing may be there after a refusal.
fn out() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("device-scripts-out")
}

/// Runs `script` with `args` (and `CIRCUIT` where given): its exit status and stderr.
fn run(name: &str, args: &[&str], circuit: Option<&str>) -> (Option<i32>, String) {
    let mut command = Command::new("bash");
    command
        .arg(script(name))
        .args(args)
        .env_remove("CIRCUIT")
        .env("OUT", out());
    if let Some(circuit) = circuit {
        command.env("CIRCUIT", circuit);
    }
    let output = command.output().expect("bash runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The words of every `variants=(...)` and `variants+=(...)` list in `text`.
fn listed_variants(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("local variants=(")
                .or_else(|| line.strip_prefix("variants+=("))?;
            Some(rest.split(')').next().unwrap_or_default().to_owned())
        })
        .flat_map(|list| {
            list.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn scaling_runs_only_the_benchs_variants_and_circuits() {
    let text = std::fs::read_to_string(script("scaling.sh")).unwrap();
    let variants = listed_variants(&text);
    // The direct and pre-compiled paths, and the streaming stores' and classification's
    // alternatives.
    for expected in [
        "default",
        "pce-spread",
        "pce-spread-cached",
        "pce-spread-classify-after",
    ] {
        assert!(
            variants.iter().any(|v| v == expected),
            "{expected} not in {variants:?}"
        );
    }
    for name in &variants {
        Variant::by_name(name).unwrap();
    }
    for circuit in ["porep", "snap"] {
        assert!(
            text.contains(&format!("$circuit == {circuit}")),
            "{circuit}"
        );
        Workload::by_name(circuit, Some(1)).unwrap();
    }
}

#[test]
fn the_scripts_parse_and_refuse_bad_arguments_before_running_anything() {
    for name in ["scaling.sh", "gpu-check.sh"] {
        let parsed = Command::new("bash")
            .arg("-n")
            .arg(script(name))
            .output()
            .expect("bash runs");
        assert!(parsed.status.success(), "{name}: {parsed:?}");
    }
    let refused = [
        ("scaling.sh", &[][..], None),
        ("scaling.sh", &["run", "0"][..], None),
        ("scaling.sh", &["run", "1", "two"][..], None),
        ("scaling.sh", &["run", "1"][..], Some("window")),
        ("scaling.sh", &["build", "extra"][..], None),
        ("gpu-check.sh", &[][..], None),
        ("gpu-check.sh", &["run", "merkle:2", "4", "extra"][..], None),
        ("gpu-check.sh", &["build", "extra"][..], None),
    ];
    let _ = std::fs::remove_dir_all(out());
    for (name, args, circuit) in refused {
        let (status, stderr) = run(name, args, circuit);
        assert_eq!(status, Some(2), "{name} {args:?}: {stderr}");
        assert!(stderr.contains("usage:"), "{name} {args:?}: {stderr}");
        assert!(!out().exists(), "{name} {args:?} wrote its output first");
    }
}
