//! `tools/record` (`synthpool-record`), as a proving machine's setup runs it: for
//! filecoin-proofs 19.1's WindowPoSt and WinningPoSt of 2 KiB sectors, with their
//! parameters generated into an empty parameter cache (the test sizes' own way), it writes
//! one recording per proof into the recording cache, named after the verifying key the
//! parameter cache holds for that proof, which opens in place and has the circuit's shape.
//! It refuses a proof name it does not know, a missing verifying key (naming its file) and
//! generating parameters of a production size.
//!
//! The tool is built in `target/record` (its own workspace: it depends on filecoin-proofs,
//! which the library does not).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use bellperson_027::groth16::VerifyingKey;
use blstrs::{Bls12, Scalar as Fr};
use synthpool::precompiled::Recording;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn text(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The tool, built in its directory (whose cargo configuration names the target directory).
fn tool() -> PathBuf {
    let built = Command::new(env!("CARGO"))
        .arg("build")
        .current_dir(repository().join("tools/record"))
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("cargo starts");
    assert!(
        built.status.success(),
        "building the tool: {}",
        text(&built)
    );
    repository().join("target/record/debug/synthpool-record")
}

/// Runs the tool on `args` with `params` as the parameter cache and `recordings` as the
/// recording cache.
fn run(tool: &Path, params: &Path, recordings: &Path, args: &[&str]) -> Output {
    Command::new(tool)
        .args(args)
        .env("FIL_PROOFS_PARAMETER_CACHE", params)
        .env("SYNTHPOOL_RECORDING_CACHE", recordings)
        .output()
        .expect("the tool starts")
}

/// The name the drop-ins give the recording of parameters with this verifying key: its
/// input count and the personalized BLAKE2s digest of its bytes.
fn file_name(vk: &VerifyingKey<Bls12>) -> String {
    let mut bytes = Vec::new();
    vk.write(&mut bytes).unwrap();
    let digest = blake2s_simd::Params::new()
        .personal(b"synthrec")
        .hash(&bytes);
    format!("{}-{}.rec", vk.ic.len(), digest.to_hex())
}

#[test]
fn the_record_tool_writes_the_recordings_the_drop_ins_look_for() {
    let scratch = repository().join("target/record-tool-test");
    let _ = std::fs::remove_dir_all(&scratch);
    let (params, recordings) = (scratch.join("params"), scratch.join("recordings"));
    std::fs::create_dir_all(&params).unwrap();
    let tool = tool();

    let made = run(
        &tool,
        &params,
        &recordings,
        &[
            "--generate-test-parameters",
            "StackedDrgWindow2KiBV1_2",
            "StackedDrgWinning2KiBV1",
        ],
    );
    assert!(made.status.success(), "{}", text(&made));
    let mut expected: Vec<String> = std::fs::read_dir(&params)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "vk"))
        .map(|path| {
            let file = std::fs::File::open(path).unwrap();
            file_name(&VerifyingKey::<Bls12>::read(file).unwrap())
        })
        .collect();
    expected.sort();
    let mut written: Vec<String> = std::fs::read_dir(&recordings)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(written, expected, "one recording per verifying key");
    // WindowPoSt: two sectors of ten challenges; WinningPoSt: 66 sectors of one (the
    // constraints of tests/fork-kit's real circuits, the rows of the public inputs
    // included).
    let mut shapes: Vec<(usize, usize)> = written
        .iter()
        .map(|name| {
            let recording = Recording::<Fr>::map_unverified(&recordings.join(name)).unwrap();
            (recording.shape().inputs, recording.shape().constraints)
        })
        .collect();
    shapes.sort();
    assert_eq!(shapes, [(23, 21_889), (133, 90_883)]);

    let unknown = run(&tool, &params, &recordings, &["StackedDrg3GiBV1"]);
    assert!(!unknown.status.success());
    assert!(
        text(&unknown).contains("`StackedDrg3GiBV1`"),
        "{}",
        text(&unknown)
    );
    let missing = run(&tool, &params, &recordings, &["StackedDrgWindow8MiBV1_2"]);
    assert!(!missing.status.success());
    assert!(
        text(&missing).contains(&params.display().to_string()),
        "names the verifying key's file: {}",
        text(&missing)
    );
    let production = run(
        &tool,
        &params,
        &recordings,
        &["--generate-test-parameters", "StackedDrg32GiBV1_1"],
    );
    assert!(!production.status.success());
    assert!(
        text(&production).contains("test sizes only"),
        "{}",
        text(&production)
    );
    std::fs::remove_dir_all(scratch).unwrap();
}
