//! scripts/patch-cuzk.sh refuses what is not curio v1.28.4's cuzk, naming the file, and
//! changes nothing then. (Patching the real tree needs curio's sources, which CI cannot
//! fetch: docs/testing.md says how it was checked by hand.)

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const EDITED: [&str; 11] = [
    "extern/cuzk/Cargo.toml",
    "extern/cuzk/Cargo.lock",
    "extern/cuzk/rust-toolchain.toml",
    "extern/cuzk/cuzk-core/Cargo.toml",
    "extern/cuzk/cuzk-core/src/lib.rs",
    "extern/cuzk/cuzk-core/src/pipeline.rs",
    "extern/cuzk/cuzk-pce/Cargo.toml",
    "extern/cuzk/cuzk-pce/src/recording_cs.rs",
    "extern/bellperson/src/gpu/locks.rs",
    "extern/bellperson/src/groth16/prover/mod.rs",
    "extern/bellperson/src/lc.rs",
];

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("patch-cuzk")
        .join(name);
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap();
    }
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn patch_cuzk(args: &[&Path]) -> Output {
    Command::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/patch-cuzk.sh"
    ))
    .args(args)
    .output()
    .unwrap()
}

/// Every file under `dir` with its contents, to see that a refused run wrote nothing.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push((path.clone(), fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

fn refused(output: &Output, naming: &str) {
    let complaint = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{complaint}");
    assert!(
        complaint.contains(naming),
        "does not name {naming}: {complaint}"
    );
}

#[test]
fn another_curio_tree_is_refused_by_name_and_left_as_it_was() {
    let root = scratch("another-release");
    let (curio, fork) = (root.join("curio"), root.join("rust-fil-proofs"));
    fs::create_dir_all(&fork).unwrap();

    // No cuzk at all.
    fs::create_dir_all(&curio).unwrap();
    refused(&patch_cuzk(&[&curio, &fork]), "extern/cuzk: not found");

    // Every file there, none of them v1.28.4's: the first is named, nothing is written.
    for file in EDITED {
        let path = curio.join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, format!("not curio's {file}\n")).unwrap();
    }
    let before = snapshot(&root);
    let output = patch_cuzk(&[&curio, &fork]);
    refused(&output, "extern/cuzk/Cargo.toml: not curio v1.28.4's");
    assert!(snapshot(&root) == before, "a refused run changed files");

    // A file missing: named.
    fs::remove_file(curio.join(EDITED[0])).unwrap();
    refused(
        &patch_cuzk(&[&curio, &fork]),
        "extern/cuzk/Cargo.toml: not found",
    );
}

#[test]
fn a_tree_patched_for_other_checkouts_is_refused() {
    let root = scratch("other-checkouts");
    let (curio, fork) = (root.join("curio"), root.join("rust-fil-proofs"));
    fs::create_dir_all(curio.join("extern/cuzk")).unwrap();
    fs::create_dir_all(&fork).unwrap();
    fs::write(
        curio.join("extern/cuzk/.synthpool-patch"),
        "synthpool /elsewhere\nrust-fil-proofs /elsewhere\n",
    )
    .unwrap();
    let before = snapshot(&root);
    refused(
        &patch_cuzk(&[&curio, &fork]),
        "was patched for another synthpool checkout",
    );
    assert!(snapshot(&root) == before, "a refused run changed files");
}

#[test]
fn wrong_arguments_are_a_usage_error() {
    let root = scratch("usage");
    let output = patch_cuzk(&[&root]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("usage:"));
    let output = patch_cuzk(&[&root.join("absent"), &root]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no such directory"));
}
