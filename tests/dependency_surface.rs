//! The dependencies a filecoin-proofs fork pulls in with synthpool, per feature set (normal
//! dependencies only, from the committed lock file): the SHA-256 family, synthesis and
//! pre-compiled evaluation need no bellperson; each prover feature brings exactly its own
//! bellperson; `neptune-11` (the Poseidon gadget) brings neptune 11 and blstrs, which a
//! fork has already; the GPU features bring exactly what bellperson's own bring (and
//! `cuda-supraseal` the supraseal-c2 that bellperson's uses); none brings perf-event,
//! serde_json, criterion or jemalloc, which stay in the bench package. A change to these
//! lists is a decision: update them with it.

use std::collections::BTreeSet;
use std::process::Command;

/// Package names (bellperson with its version) of `cargo tree` for these features.
fn surface(features: &[&str]) -> BTreeSet<String> {
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "--locked", "-p", "synthpool", "-e", "normal"])
        .args([
            "--prefix",
            "none",
            "--format",
            "{p}",
            "--no-default-features",
        ]);
    if !features.is_empty() {
        command.args(["--features", &features.join(",")]);
    }
    let output = command.output().expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?;
            let version = words.next().unwrap_or_default();
            Some(if name == "bellperson" {
                format!("{name} {version}")
            } else {
                name.to_string()
            })
        })
        .collect()
}

/// What every feature set has: the core, the field, rayon, DensityTracker's crate and what
/// they pull in.
const CORE: &[&str] = &[
    "arrayvec",
    "bellpepper-core",
    "bitvec",
    "blake2s_simd",
    "block-buffer",
    "byteorder",
    "cfg-if",
    "constant_time_eq",
    "cpufeatures",
    "crossbeam-channel",
    "crossbeam-deque",
    "crossbeam-epoch",
    "crossbeam-utils",
    "crypto-common",
    "digest",
    "ec-gpu",
    "ec-gpu-gen",
    "either",
    "execute",
    "execute-command-macro",
    "execute-command-macro-impl",
    "execute-command-tokens",
    "ff",
    "flume",
    "funty",
    "generic-array",
    "group",
    "hex",
    "libc",
    "lock_api",
    "log",
    "num_cpus",
    "once_cell",
    "proc-macro2",
    "quote",
    "radium",
    "rand_core",
    "rayon",
    "rayon-core",
    "rustversion",
    "scopeguard",
    "serde",
    "serde_core",
    "serde_derive",
    "sha2",
    "spin",
    "subtle",
    "syn",
    "synthpool",
    "tap",
    "thiserror",
    "thiserror-impl",
    "typenum",
    "unicode-ident",
    "wyz",
    "yastl",
];

/// What a prover feature adds besides its bellperson.
const PROVER: &[&str] = &[
    "bincode",
    "blst",
    "blstrs",
    "byte-slice-cast",
    "memmap2",
    "pairing",
    "rand",
    "rand_xorshift",
    "threadpool",
    "zeroize",
    "zeroize_derive",
];

/// What `neptune-11` adds: neptune and what it pulls in, and blstrs (with blst), whose
/// scalars the native Poseidon sums as limbs; a fork has both.
const NEPTUNE: &[&str] = &[
    "arrayref",
    "bellpepper",
    "blake2b_simd",
    "blst",
    "blstrs",
    "byte-slice-cast",
    "itertools",
    "lazy_static",
    "neptune",
    "pairing",
    "pasta_curves",
    "rand",
    "rand_xorshift",
    "static_assertions",
    "threadpool",
    "trait-set",
    "zeroize",
    "zeroize_derive",
];

/// What bellperson's `cuda` brings (rust-gpu-tools over the CUDA driver API).
const CUDA: &[&str] = &[
    "bitflags",
    "cuda-driver-sys",
    "fil-rustacuda",
    "fs2",
    "home",
    "parking_lot",
    "parking_lot_core",
    "rust-gpu-tools",
    "rustacuda_core",
    "rustacuda_derive",
    "smallvec",
    "temp-env",
];

/// What bellperson's `opencl` brings.
const OPENCL: &[&str] = &[
    "cl3",
    "fs2",
    "home",
    "opencl-sys",
    "opencl3",
    "parking_lot",
    "parking_lot_core",
    "rust-gpu-tools",
    "smallvec",
    "temp-env",
];

/// What `cuda-supraseal` brings: supraseal's prover, the very crates bellperson's
/// `cuda-supraseal` uses.
const SUPRASEAL: &[&str] = &["sppark", "supraseal-c2"];

fn expected(extra: &[&str], bellperson: Option<&str>) -> BTreeSet<String> {
    expected_with(extra, &[], bellperson)
}

fn expected_with(extra: &[&str], gpu: &[&str], bellperson: Option<&str>) -> BTreeSet<String> {
    CORE.iter()
        .chain(extra)
        .chain(gpu)
        .map(|name| name.to_string())
        .chain(bellperson.map(|version| format!("bellperson {version}")))
        .collect()
}

#[test]
fn each_feature_set_carries_only_what_it_uses() {
    let cases: [(&[&str], BTreeSet<String>); 7] = [
        (&[], expected(&[], None)),
        (&["neptune-11"], expected(NEPTUNE, None)),
        (&["bellperson-0.26"], expected(PROVER, Some("v0.26.0"))),
        (&["bellperson-0.27"], expected(PROVER, Some("v0.27.0"))),
        (
            &["bellperson-0.27", "cuda"],
            expected_with(PROVER, CUDA, Some("v0.27.0")),
        ),
        (
            &["bellperson-0.27", "opencl"],
            expected_with(PROVER, OPENCL, Some("v0.27.0")),
        ),
        (
            &["cuda-supraseal"],
            expected_with(PROVER, SUPRASEAL, Some("v0.27.0")),
        ),
    ];
    for (features, expected) in cases {
        let found = surface(features);
        for banned in ["perf-event", "serde_json", "criterion", "tikv-jemallocator"] {
            assert!(!found.contains(banned), "{features:?} pulls in {banned}");
        }
        let added: Vec<_> = found.difference(&expected).collect();
        let gone: Vec<_> = expected.difference(&found).collect();
        assert!(
            added.is_empty() && gone.is_empty(),
            "{features:?}: new dependencies {added:?}, gone {gone:?}"
        );
    }
}
