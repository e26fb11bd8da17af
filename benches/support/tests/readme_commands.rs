//! README.md cannot drift from the repository: every command it shows in a `sh` block runs
//! here in its cheapest form, and the variables the docs document are the ones the code
//! reads (the bench's in docs/performance.md, the drop-ins' in the README).
//!
//! Cheapest forms: the bench on the smallest circuit, one repetition, a few variants, no
//! batches, no criterion, in the dev profile (the test build's artifacts), its report to a
//! scratch file; the test command checked against `.ci/run`, which runs it as one of its
//! lines; perf-stat.sh's `run` and `kernel` with `--dry-run`, their runner arguments checked
//! by the runner, and `compare` on stored figures; patch-fork.sh and patch-ffi.sh refusing
//! missing checkouts (tests/patch_fork.rs runs them on the published crates and a stand-in
//! for filecoin-ffi's crate); the record tool given the
//! README's proof names and an empty parameter cache (tests/record_tool.rs records).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

fn readme() -> String {
    std::fs::read_to_string(repository().join("README.md")).expect("README.md is readable")
}

fn performance() -> String {
    std::fs::read_to_string(repository().join("docs/performance.md"))
        .expect("docs/performance.md is readable")
}

/// The lines of README.md's `sh` blocks.
fn commands() -> Vec<String> {
    sh_lines(&readme())
}

/// The lines of `markdown`'s `sh` blocks.
fn sh_lines(markdown: &str) -> Vec<String> {
    let mut inside = false;
    let mut commands = Vec::new();
    for line in markdown.lines() {
        match line.trim() {
            "```sh" => inside = true,
            "```" => inside = false,
            command if inside && !command.is_empty() => commands.push(command.to_string()),
            _ => {}
        }
    }
    commands
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("synthpool-readme-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(output: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn succeeded(command: &str, output: Output) -> String {
    assert!(
        output.status.success(),
        "`{command}` failed: {}",
        text(&output)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn bench(command: &str, extra: &[&str]) {
    let report = scratch("bench").join("report.json");
    let output = Command::new(env!("CARGO"))
        .current_dir(repository())
        .args(["bench", "--bench", "synth_only"])
        .args(extra)
        .args(["--profile", "dev"])
        .env("SYNTH_CIRCUITS", "merkle")
        .env("SYNTH_SIZE", "1")
        .env("SYNTH_REPS", "1")
        .env("SYNTH_VARIANTS", "baseline,pce-reuse-1t,dropin-warm")
        .env("SYNTH_BATCHES", "0")
        .env("SYNTH_CRITERION", "0")
        .env("SYNTH_REPORT", &report)
        .output()
        .unwrap();
    let out = succeeded(command, output);
    assert!(out.contains("merkle depth 1: 45904 constraints"), "{out}");
    for variant in ["baseline", "pce-reuse-1t", "dropin-warm"] {
        assert!(out.lines().any(|l| l.starts_with(variant)), "{out}");
    }
    let json = std::fs::read_to_string(&report).expect("the report is written where asked");
    assert!(json.contains("\"schema\": 5"), "{json}");
}

fn test_command(command: &str) {
    let ci = std::fs::read_to_string(repository().join(".ci/run")).unwrap();
    let in_subshell = format!("({command})");
    assert!(
        ci.lines().any(|line| line.trim() == in_subshell),
        ".ci/run must run exactly the README's test command, as one line in a subshell \
         (`set -e` stops on the subshell's failure, not on one inside an `&&` list)"
    );
}

/// A patch script refusing checkouts that are not there (tests/patch_fork.rs runs both on
/// real ones).
fn patch_fork(command: &str, script: &str) {
    // The README runs it from beside the checkout: `synthpool/scripts/...`.
    let script = script.strip_prefix("synthpool/").unwrap_or(script);
    let missing = scratch("patch-fork").join("no-such-checkout");
    let arguments = if script.ends_with("patch-fork.sh") {
        1
    } else {
        2
    };
    let output = Command::new("bash")
        .arg(repository().join(script))
        .args(std::iter::repeat_n(&missing, arguments))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "`{command}`: {}",
        text(&output)
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("no such directory"),
        "`{command}`: {}",
        text(&output)
    );
}

/// The record tool, built (debug) in its own target directory, given the README's proofs
/// with an empty parameter cache: it must get as far as looking for the first one's
/// verifying key there, so every name is one it knows.
fn record(command: &str, proofs: &[&str]) {
    let tool_dir = repository().join("tools/record");
    let built = Command::new(env!("CARGO"))
        .arg("build")
        .current_dir(&tool_dir)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    succeeded("building tools/record", built);
    let (params, recordings) = (scratch("record-params"), scratch("record-recordings"));
    let output = Command::new(repository().join("target/record/debug/synthpool-record"))
        .args(proofs)
        .env("FIL_PROOFS_PARAMETER_CACHE", &params)
        .env("SYNTHPOOL_RECORDING_CACHE", &recordings)
        .output()
        .unwrap();
    assert!(!output.status.success(), "`{command}`: {}", text(&output));
    assert!(
        text(&output).contains(&params.display().to_string()),
        "`{command}` names a proof the tool does not know: {}",
        text(&output)
    );
}

/// Runs perf-stat.sh as the README does, `run` and `kernel` with `--dry-run`, and checks
/// the runner accepts the arguments they would measure with.
fn perf_stat(command: &str, words: &[&str], store: &Path) {
    let mut args: Vec<&str> = words[1..].to_vec();
    if matches!(args.first(), Some(&"run") | Some(&"kernel")) {
        args.push("--dry-run");
    }
    if args.first() == Some(&"compare") {
        for tag in &args[1..] {
            std::fs::create_dir_all(store.join(tag)).unwrap();
            std::fs::write(
                store.join(tag).join("figures.txt"),
                "instructions 1000\nallocations_per_constraint 0.001\nmode cachegrind\n",
            )
            .unwrap();
        }
    }
    let output = Command::new("bash")
        .arg(repository().join(words[0]))
        .args(&args)
        .env("PERF_STAT_DIR", store)
        .output()
        .unwrap();
    let out = succeeded(command, output);
    if let Some(runner_args) = out
        .lines()
        .find_map(|l| l.strip_prefix("runner arguments: "))
    {
        let output = Command::new(env!("CARGO_BIN_EXE_synth_runner"))
            .args(runner_args.split_whitespace())
            .arg("--check")
            .output()
            .unwrap();
        succeeded(&format!("synth_runner {runner_args} --check"), output);
    } else {
        assert!(out.contains("within noise"), "`{command}`: {out}");
    }
}

#[test]
fn every_command_of_the_readme_runs_in_its_cheapest_form() {
    let commands = commands();
    let store = scratch("perf-stat");
    let mut kinds = BTreeSet::new();
    let read = variables_the_bench_reads();
    for command in &commands {
        let mut words: Vec<&str> = command.split_whitespace().collect();
        // Leading `NAME=value` settings: the bench's own variables, which the cheapest form
        // overrides.
        while let Some((name, _)) = words.first().and_then(|w| w.split_once('=')) {
            assert!(
                read.contains(name),
                "`{command}` sets {name}, which the bench never reads"
            );
            words.remove(0);
        }
        match words.as_slice() {
            ["cargo", "bench", "--bench", "synth_only", extra @ ..] => {
                bench(command, extra);
                kinds.insert("bench");
            }
            ["cargo", "test", ..] => {
                test_command(command);
                kinds.insert("test");
            }
            [script, _] if script.ends_with("scripts/patch-fork.sh") => {
                patch_fork(command, script);
                kinds.insert("patch-fork");
            }
            [script, _, _] if script.ends_with("scripts/patch-ffi.sh") => {
                patch_fork(command, script);
                kinds.insert("patch-ffi");
            }
            [script, _, _] if script.ends_with("scripts/patch-cuzk.sh") => {
                patch_fork(command, script);
                kinds.insert("patch-cuzk");
            }
            ["cd", dir, "&&", "cargo", "run", "--release", "--", proofs @ ..]
                if dir.ends_with("tools/record") =>
            {
                record(command, proofs);
                kinds.insert("record");
            }
            _ => panic!("README.md shows `{command}`, which this test cannot run: teach it"),
        }
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        [
            "bench",
            "patch-cuzk",
            "patch-ffi",
            "patch-fork",
            "record",
            "test"
        ],
        "the README shows each of the project's commands"
    );
    // The measuring commands live beside the measurements.
    let mut measured = 0;
    for command in sh_lines(&performance()) {
        let words: Vec<&str> = command.split_whitespace().collect();
        if words.first() == Some(&"scripts/perf-stat.sh") {
            perf_stat(&command, &words, &store);
            measured += 1;
        }
    }
    assert!(
        measured >= 4,
        "docs/performance.md shows perf-stat.sh's commands"
    );
    std::fs::remove_dir_all(store).unwrap();
}

/// The `SYNTH_*` names in `text`.
fn bench_variables(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_uppercase() || c == '_'))
        .filter(|word| word.starts_with("SYNTH_") && word.len() > "SYNTH_".len())
        .map(str::to_string)
        .collect()
}

/// The `SYNTH_*` variables benches/synth_only.rs reads.
fn variables_the_bench_reads() -> BTreeSet<String> {
    let bench_source = std::fs::read_to_string(repository().join("benches/synth_only.rs")).unwrap();
    // The rest of each line that reads a variable.
    let reading = |pattern: &str| -> Vec<String> {
        bench_source
            .match_indices(pattern)
            .flat_map(|(at, _)| bench_variables(bench_source[at..].lines().next().unwrap()))
            .collect()
    };
    let read: BTreeSet<String> = reading("env::var")
        .into_iter()
        .chain(reading("env_list(\""))
        .collect();
    assert!(
        read.contains("SYNTH_CIRCUITS") && read.contains("SYNTH_REPORT"),
        "{read:?}"
    );
    read
}

#[test]
fn the_docs_document_the_variables_the_code_reads() {
    let readme = readme();
    let read = variables_the_bench_reads();
    assert_eq!(
        bench_variables(&performance()),
        read,
        "SYNTH_ variables: docs/performance.md against the bench"
    );
    for variable in [
        synthpool::groth16::CACHE_DIR_VARIABLE,
        synthpool::groth16::IN_FLIGHT_VARIABLE,
        synthpool::groth16::RETAIN_BUFFERS_VARIABLE,
    ] {
        assert!(readme.contains(&format!("`{variable}`")), "{variable}");
    }
    assert!(readme.contains(&format!(
        "| `{}` | `groth16::set_in_flight` |",
        synthpool::groth16::IN_FLIGHT_VARIABLE
    )));
    assert!(readme.contains(&format!(
        "(default {})",
        synthpool::groth16::DEFAULT_IN_FLIGHT
    )));
}

/// The bench variants `markdown` names: the first cells of tables headed `variant`, the
/// cells of `bench variant` columns, `SYNTH_VARIANTS=` lists, and backticked names of the
/// pre-compiled and drop-in families (`pce...`, `dropin-...`).
fn variants_named(markdown: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let mut column: Option<usize> = None;
    for line in markdown.lines() {
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        if line.trim_start().starts_with('|') {
            if let Some(at) = cells
                .iter()
                .position(|c| *c == "variant" || *c == "bench variant")
            {
                column = Some(at);
                continue;
            }
            if let Some(at) = column {
                let cell = cells.get(at).copied().unwrap_or("");
                if !cell.starts_with("---") {
                    let name = cell.split(" (").next().unwrap_or(cell).trim_matches('`');
                    named.insert(name.to_string());
                }
            }
        } else {
            column = None;
        }
        for (at, _) in line.match_indices("SYNTH_VARIANTS=") {
            let list = line[at + "SYNTH_VARIANTS=".len()..]
                .split(|c: char| c.is_whitespace() || c == '`')
                .next()
                .unwrap_or("");
            named.extend(
                list.split(',')
                    .filter(|v| !v.is_empty())
                    .map(str::to_string),
            );
        }
        for piece in line.split('`').skip(1).step_by(2) {
            if piece.starts_with("pce") || piece.starts_with("dropin-") {
                named.insert(piece.to_string());
            }
        }
    }
    named
}

#[test]
fn the_docs_name_only_variants_and_variables_that_exist() {
    let known: BTreeSet<&str> = synthpool_bench::variants::VARIANTS
        .iter()
        .map(|v| v.name)
        .collect();
    let bench_source = std::fs::read_to_string(repository().join("benches/synth_only.rs")).unwrap();
    let read = variables_the_bench_reads();
    let settings = [
        synthpool::groth16::CACHE_DIR_VARIABLE,
        synthpool::groth16::IN_FLIGHT_VARIABLE,
        synthpool::groth16::RETAIN_BUFFERS_VARIABLE,
    ];
    for (name, text) in [
        ("README.md", readme()),
        ("docs/performance.md", performance()),
        ("benches/synth_only.rs", bench_source),
    ] {
        for variant in variants_named(&text) {
            assert!(
                known.contains(variant.as_str()),
                "{name} names the variant `{variant}`, which the bench does not have"
            );
        }
        for variable in bench_variables(&text) {
            assert!(
                read.contains(&variable),
                "{name} names {variable}, which the bench never reads"
            );
        }
        for word in text.split(|c: char| !(c.is_ascii_uppercase() || c == '_')) {
            if word.starts_with("SYNTHPOOL_") {
                assert!(
                    settings.contains(&word),
                    "{name} names {word}, which the drop-ins never read"
                );
            }
        }
    }
    // The walk sees what is there.
    let perf = variants_named(&performance());
    assert!(
        perf.contains("dropin-retained") && perf.contains("baseline"),
        "{perf:?}"
    );
    assert!(variants_named("| variant |\n|---|\n| `nonesuch` |").contains("nonesuch"));
}
