//! The GPU check (`tests/gpu-check`, a workspace of its own) resolves every crate it shares
//! with the root workspace to the root's version and builds its dependencies with the root's
//! dev profile. CI lints it right after the library under the same GPU features, in the same
//! target directory: with one version and one profile, bellperson's and supraseal-c2's builds
//! (build scripts that run nvcc for minutes) are the root's, not built again.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Every (name, version) a lock file lists.
fn locked(lock: &Path) -> BTreeSet<(String, String)> {
    let text = fs::read_to_string(lock).unwrap_or_else(|e| panic!("{}: {e}", lock.display()));
    let mut packages = BTreeSet::new();
    let mut name = None;
    for line in text.lines() {
        // The file's own `version = N` comes before any package: only a package's version
        // follows a name.
        if let Some(value) = line.strip_prefix("name = ") {
            name = Some(value.trim_matches('"').to_owned());
        } else if let (Some(value), Some(name)) = (line.strip_prefix("version = "), name.take()) {
            packages.insert((name, value.trim_matches('"').to_owned()));
        }
    }
    assert!(!packages.is_empty(), "{}: no packages", lock.display());
    packages
}

/// Versions by name.
fn by_name(packages: &BTreeSet<(String, String)>) -> BTreeMap<&str, BTreeSet<&str>> {
    let mut names: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (name, version) in packages {
        names.entry(name).or_default().insert(version);
    }
    names
}

#[test]
fn the_gpu_check_builds_on_the_roots_versions_and_profile() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ours = locked(&root.join("Cargo.lock"));
    let check = locked(&root.join("tests/gpu-check/Cargo.lock"));
    let (ours, check) = (by_name(&ours), by_name(&check));
    let differing: Vec<String> = check
        .iter()
        .filter(|(name, versions)| {
            ours.get(*name)
                .is_some_and(|root| !versions.is_subset(root))
        })
        .map(|(name, versions)| format!("{name} {versions:?} (root: {:?})", ours[name]))
        .collect();
    assert!(
        differing.is_empty(),
        "tests/gpu-check/Cargo.lock resolves differently from the root's (cargo update \
         --manifest-path tests/gpu-check/Cargo.toml -p NAME@VERSION --precise ROOT_VERSION): {differing:?}"
    );
    assert!(
        check.contains_key("bellperson") && check.contains_key("synthpool"),
        "the GPU check's lock lost bellperson or synthpool"
    );

    let profile = "[profile.dev.package.\"*\"]\nopt-level = 2\n";
    let manifest = |path: &str| fs::read_to_string(root.join(path)).unwrap();
    assert!(
        manifest("Cargo.toml").contains(profile),
        "the root's dependency profile moved"
    );
    assert!(
        manifest("tests/gpu-check/Cargo.toml").contains(profile),
        "tests/gpu-check/Cargo.toml lacks the root's dependency profile"
    );
}
