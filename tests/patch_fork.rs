//! `scripts/patch-fork.sh` on the published sources of filecoin-hashers 14.1,
//! storage-proofs-core 19.1, storage-proofs-porep 19.1, storage-proofs-post 19.1 and
//! storage-proofs-update 19.1, laid
//! out as a filecoin-proofs checkout: it refuses a checkout it does not recognise without
//! touching it, makes exactly the recipe's edits, changes nothing when run again, gives a
//! dependency an earlier recipe added the features it lacks, and the patched crates compile
//! against this workspace on one bellpepper-core, ours, and one neptune, shared with us; so
//! does `tests/fork-kit/real-circuit`, the tool that measures synthesis on the real circuit.
//! That tool, built on the patched crates, then checks the real circuit of every proof
//! filecoin-proofs 19.1 makes (PoRep at 2 KiB and 8 MiB from sectors it seals, WindowPoSt,
//! WinningPoSt, and the empty-sector update of a committed-capacity sector it seals and
//! encodes): each one's constraints and assignment equal to upstream's term for term (its
//! digest against the one the tool's unpatched build printed, pinned), its pre-compiled
//! vectors equal to its direct synthesis, which on the tool's two threads, and on three (a
//! PoRep or SnapDeals partition's challenges, PoSt's chunks of sectors spread over them)
//! equals one thread's, and so does a first member's recording pass; WindowPoSt and
//! WinningPoSt are also proven by bellperson and by the drop-in, cold and warm, the proofs
//! byte-compared and verified.
//! The kit's `test-srs`, for the by-hand tests that aggregate proofs, writes an SRS once.
//! storage-proofs-porep's and storage-proofs-update's own circuit tests then run on the
//! patched crates, and the compound tests of WindowPoSt, SnapDeals and a PoRep partition,
//! which prove through the patched `circuit_proofs` (recording, then from the files saved).
//!
//! The sources come through cargo (downloaded on the first run, cached after); everything is
//! built in `target/fork-kit`, apart from the workspace's own artifacts.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CRATES: [(&str, &str); 5] = [
    ("filecoin-hashers", "14.1.0"),
    ("storage-proofs-core", "19.1.0"),
    ("storage-proofs-porep", "19.1.0"),
    ("storage-proofs-post", "19.1.0"),
    ("storage-proofs-update", "19.1.0"),
];

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn scratch() -> PathBuf {
    repository().join("target/fork-kit")
}

fn succeeded(what: &str, output: Output) -> String {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8 output")
}

fn cargo(directory: &Path, args: &[&str]) -> String {
    cargo_with(directory, args, &[])
}

/// [`cargo`], with the environment variables `vars` set.
fn cargo_with(directory: &Path, args: &[&str], vars: &[(&str, &Path)]) -> String {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .current_dir(directory)
        .env("CARGO_TARGET_DIR", scratch().join("target"))
        .envs(vars.iter().copied())
        .output()
        .expect("cargo starts");
    succeeded(
        &format!("cargo {args:?} in {}", directory.display()),
        output,
    )
}

fn patch_fork(checkout: &Path) -> Output {
    Command::new(repository().join("scripts/patch-fork.sh"))
        .arg(checkout)
        .output()
        .expect("scripts/patch-fork.sh starts")
}

/// The published source directory of every crate of [`CRATES`], as cargo unpacked it.
fn published_sources() -> Vec<PathBuf> {
    let fetch = scratch().join("sources");
    fs::create_dir_all(&fetch).unwrap();
    let dependencies: String = CRATES
        .iter()
        .map(|(name, version)| {
            format!("{name} = {{ version = \"={version}\", default-features = false }}\n")
        })
        .collect();
    fs::write(
        fetch.join("Cargo.toml"),
        format!(
            "[package]\nname = \"fork-kit-sources\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
             [lib]\npath = \"lib.rs\"\n[workspace]\n[dependencies]\n{dependencies}"
        ),
    )
    .unwrap();
    fs::write(fetch.join("lib.rs"), "").unwrap();
    fs::copy(
        repository().join("tests/fork-kit/Cargo.lock"),
        fetch.join("Cargo.lock"),
    )
    .unwrap();
    let metadata = cargo(&fetch, &["metadata", "--format-version", "1"]);
    let manifests: Vec<&str> = metadata
        .split("\"manifest_path\":\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    CRATES
        .iter()
        .map(|(name, version)| {
            let suffix = format!("/{name}-{version}/Cargo.toml");
            let manifest = manifests
                .iter()
                .find(|path| path.ends_with(&suffix))
                .unwrap_or_else(|| panic!("cargo metadata names no {name} {version}"));
            Path::new(manifest).parent().unwrap().to_path_buf()
        })
        .collect()
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Every file of the checkout (its build products aside) with its contents.
fn snapshot(checkout: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, directory: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in fs::read_dir(directory).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, files);
            } else {
                let relative = path.strip_prefix(root).unwrap().to_path_buf();
                files.insert(relative, fs::read(&path).unwrap());
            }
        }
    }
    let mut files = BTreeMap::new();
    walk(checkout, checkout, &mut files);
    files
}

/// The import of bellperson's batch provers the recipe takes out.
const EXPECTED_IMPORT: &str = "create_random_proof_batch, create_random_proof_batch_in_priority, ";

/// How `circuit_proofs` builds its circuits, as published (the vanilla proofs consumed) and
/// as the recipe leaves it (kept, to make a member's circuit again).
const CIRCUITS_BUILT: &str = "            .into_par_iter()
            .enumerate()
            .map(|(k, vanilla_proof)| {
                Self::circuit(
                    pub_in,
                    C::ComponentPrivateInputs::default(),
                    &vanilla_proof,
";
const CIRCUITS_BUILT_KEPT: &str = "            .par_iter()
            .enumerate()
            .map(|(k, vanilla_proof)| {
                Self::circuit(
                    pub_in,
                    C::ComponentPrivateInputs::default(),
                    vanilla_proof,
";

/// The choice of bellperson's batch prover, which the recipe takes out.
const PROVER_CHOICE: &str = "        // The same function is used within the while loop below, decide on the function once and
        // not on every iteration.
        let create_random_proof_batch_fun = if priority {
            create_random_proof_batch_in_priority
        } else {
            create_random_proof_batch
        };

";

/// Each batch's proofs, as published and as the recipe makes them.
const BATCH_PROVEN: &str =
    "            let proofs = create_random_proof_batch_fun(batch, groth_params, &mut rng)?;\n";
const BATCH_PROVEN_REMAKING: &str =
    "            // synthpool: a member whose recording fails is made again from its vanilla proof
            // and synthesized directly, so no recording file ever costs a proof.
            let first = groth_proofs.len();
            let remake = |i: usize| {
                Self::circuit(
                    pub_in,
                    C::ComponentPrivateInputs::default(),
                    &vanilla_proofs[first + i],
                    pub_params,
                    Some(first + i),
                )
            };
            let proofs = synthpool::groth16::v0_27::create_random_proof_batch_remaking(
                batch,
                remake,
                groth_params,
                priority,
                &mut rng,
            )?;
";

/// The line of `CompoundProof::circuit_proofs` the supraseal block follows.
const CIRCUIT_PROOFS_RNG: &str =
    "    ) -> Result<Vec<groth16::Proof<Bls12>>> {\n        let mut rng = OsRng;\n";

/// What the recipe adds to `circuit_proofs`: under `cuda-supraseal`, the parameters with
/// the file filecoin-proofs loaded them from.
const SUPRASEAL_FILE: &str = "        // synthpool: under cuda-supraseal, the parameters with their file, whose head gives
        // the verifying key recordings earn trust against and the sizes checked before supraseal.
        #[cfg(feature = \"cuda-supraseal\")]
        let groth_params = &synthpool::prover::v0_27::SuprasealParametersWithFile::new(
            groth_params,
            crate::parameter_cache::parameter_cache_params_path(&Self::cache_identifier(pub_params)),
        );
";

/// storage-proofs-core's published manifest with its GPU features forwarded to synthpool.
fn gpu_features_forwarded(manifest: &str) -> String {
    ["cuda", "cuda-supraseal", "opencl"]
        .iter()
        .fold(manifest.to_string(), |manifest, feature| {
            let upstream = if *feature == "opencl" { "opencl" } else { "cuda" };
            let list = format!(
                "{feature} = [\n    \"bellperson/{feature}\",\n    \"filecoin-hashers/{upstream}\",\n"
            );
            replaced(
                &manifest,
                &format!("{list}]\n"),
                &format!("{list}    \"synthpool/{feature}\",\n]\n"),
            )
        })
}

fn text(files: &BTreeMap<PathBuf, Vec<u8>>, path: &str) -> String {
    String::from_utf8(files[Path::new(path)].clone()).unwrap()
}

/// The loop over a partition's challenges in `StackedCircuit::synthesize`, as published.
const CHALLENGE_LOOP: &str = "        for (i, proof) in proofs.into_iter().enumerate() {\n";

/// What the recipe puts before it: the same challenges spread over the rayon pool's
/// threads where the system can branch; the loop runs where it cannot.
const SPREAD_CHALLENGES: &str =
    "        // synthpool: the challenges on every thread of the rayon pool where the constraint
        // system can branch, bit-identical to the loop below, which runs where it cannot.
        let proofs = match synthpool::branches::spread(cs, proofs, |cs, i, proof| {
            proof.synthesize(
                &mut cs.namespace(|| format!(\"challenge_{}\", i)),
                &comm_d_num,
                &comm_c_num,
                &comm_r_last_num,
                &replica_id_bits,
            )
        })? {
            synthpool::branches::Spread::Done => return Ok(()),
            synthpool::branches::Spread::Here(proofs) => proofs,
        };
";

/// FallbackPoStCircuit's import of rayon's traits and its chunks of sectors, as published.
const POST_IMPORT: &str = "use rayon::prelude::{ParallelIterator, ParallelSlice};\n";
const POST_CHUNKS: &str = "        let chunk_size = (sectors.len() / num_chunks).max(1);
        let css = sectors
            .par_chunks(chunk_size)
";

/// What the recipe makes of them: the chunks spread over the rayon pool's threads where the
/// system can branch; systems from `new()`, in parallel, where it cannot.
const SPREAD_SECTORS: &str = "        let chunk_size = (sectors.len() / num_chunks).max(1);
        // synthpool: the chunks on every thread of the rayon pool where the constraint system
        // can branch (the first in the system itself), bit-identical to the systems from
        // `new()` below, which run where it cannot.
        let sector_groups: Vec<_> = sectors.chunks(chunk_size).collect();
        let sector_groups = match synthpool::branches::spread(cs, sector_groups, |cs, _, sector_group| {
            for (i, sector) in sector_group.iter().enumerate() {
                let mut cs = cs.namespace(|| format!(\"sector_{}\", i));
                sector.synthesize(&mut cs)?;
            }
            Ok(())
        })? {
            synthpool::branches::Spread::Done => return Ok(()),
            synthpool::branches::Spread::Here(sector_groups) => sector_groups,
        };
        let css = sector_groups
            .into_par_iter()
";

/// The head of the loop over a partition's challenges in `EmptySectorUpdateCircuit::synthesize`,
/// as published, and the end of its body and the function.
const UPDATE_LOOP: &str =
    "        for (c_index, c_bits_without_partition) in generated_bits.into_iter().enumerate() {\n";
const UPDATE_LOOP_END: &str = "            )?;\n        }\n\n        Ok(())\n    }\n}\n";

/// What the recipe makes of them: the loop's body a closure, the challenges spread over the
/// rayon pool's threads where the system can branch, the closure called in the loop where
/// it cannot.
const SPREAD_UPDATE: &str =
    "        // synthpool: the challenges on every thread of the rayon pool where the constraint
        // system can branch, bit-identical to the loop below, which runs where it cannot.
        let synthesize_challenge = |cs: &mut CS::Root,
                                    c_index: usize,
                                    c_bits_without_partition: Vec<AllocatedBit>|
         -> Result<(), SynthesisError> {
";
const SPREAD_UPDATE_END: &str = "            )?;
            Ok(())
        };
        match synthpool::branches::spread(cs, generated_bits, &synthesize_challenge)? {
            synthpool::branches::Spread::Done => {}
            synthpool::branches::Spread::Here(generated_bits) => {
                for (c_index, c_bits_without_partition) in generated_bits.into_iter().enumerate() {
                    synthesize_challenge(cs.get_root(), c_index, c_bits_without_partition)?;
                }
            }
        }

        Ok(())
    }
}
";

/// A row of the apex tree in storage-proofs-update's `apex_por`, as published (from its head to
/// its last line, the lines between re-indented by the recipe).
const APEX_ROW: &str = "        let row = apex_tree\n            .last()\n";
const APEX_ROW_END: &str =
    "            .collect::<Result<Vec<AllocatedNum<Fr>>, SynthesisError>>()?;\n        apex_tree.push(row);\n";

/// What the recipe makes of it: the row's hashes spread where the system spreads small parts,
/// their outputs handed on, and the published row, one level deeper, elsewhere.
const SPREAD_APEX_ROW: &str = "        // synthpool: the row's hashes on every thread of the rayon pool where the
        // constraint system spreads small parts, bit-identical to upstream's row below,
        // which runs elsewhere.
        let siblings_row: Vec<&[AllocatedNum<Fr>]> = apex_tree.last().unwrap().chunks(2).collect();
        let row = match synthpool::branches::spread_small_returning(&mut cs, siblings_row, |cs, i, siblings| {
            <TreeDHasher as Hasher>::Function::hash2_circuit(
                cs.namespace(|| {
                    format!(
                        \"apex_tree generation hash (tree_row={}, siblings={})\",
                        row_index, i,
                    )
                }),
                &siblings[0],
                &siblings[1],
            )
        })? {
            synthpool::branches::Returned::Done(row) => row,
            synthpool::branches::Returned::Here(_) => apex_tree
                .last()
";
const SPREAD_APEX_ROW_END: &str =
    "                .collect::<Result<Vec<AllocatedNum<Fr>>, SynthesisError>>()?,\n        };\n        apex_tree.push(row);\n";

/// The published row between its first two lines and its last: every line four spaces deeper.
fn apex_row_deeper(published: &str) -> String {
    let start = published.find(APEX_ROW).expect("the apex row") + APEX_ROW.len();
    let end = published.find(APEX_ROW_END).expect("the apex row's end");
    published[start..end]
        .lines()
        .map(|line| format!("    {line}\n"))
        .collect()
}

/// `before` with `old` (present exactly once) replaced by `new`.
fn replaced(before: &str, old: &str, new: &str) -> String {
    assert_eq!(before.matches(old).count(), 1, "expected once: {old}");
    before.replacen(old, new, 1)
}

#[test]
fn patch_fork_applies_the_recipe_to_filecoin_proofs_19_1_and_its_real_circuits_match_upstream() {
    let checkout = lay_out_published_crates();
    let original = refuses_an_unrecognised_checkout(&checkout);
    circuits_only_leaves_the_prover_alone(&checkout);
    let (after, edits) = applies_exactly_the_recipe(&checkout, &original);
    changes_nothing_when_run_again(&checkout, &after, edits);
    upgrades_an_earlier_recipe(&checkout, &after);
    forwards_gpu_features_written_on_one_line(&checkout, &after);
    compiles_on_our_core_alone(&checkout);
    real_circuits_match_upstream(&checkout);
    cuzk_seam_matches_direct_synthesis();
    writes_a_test_srs_once();
    upstreams_stacked_circuit_tests_pass(&checkout);
    upstreams_update_circuit_tests_pass(&checkout);
    upstreams_compound_proofs_pass(&checkout);
    points_filecoin_ffi_at_the_checkout(&checkout);
}

/// `--circuits-only` (scripts/patch-cuzk.sh's mode), on a copy: the circuits' edits, the
/// SnapDeals circuit made `Clone`, nothing of the prover (compound_proof.rs and
/// storage-proofs-core's manifest as published); a second run changes nothing.
fn circuits_only_leaves_the_prover_alone(checkout: &Path) {
    let copy = scratch().join("circuits-only");
    if copy.exists() {
        fs::remove_dir_all(&copy).unwrap();
    }
    copy_tree(checkout, &copy);
    let published = snapshot(&copy);
    let run = || {
        let output = Command::new(repository().join("scripts/patch-fork.sh"))
            .arg("--circuits-only")
            .arg(&copy)
            .output()
            .unwrap();
        succeeded("patch-fork.sh --circuits-only", output)
    };
    run();
    let patched = snapshot(&copy);
    for unchanged in [
        "storage-proofs-core/src/compound_proof.rs",
        "storage-proofs-core/Cargo.toml",
    ] {
        assert!(
            patched[Path::new(unchanged)] == published[Path::new(unchanged)],
            "{unchanged} changed"
        );
    }
    let update = text(&patched, "storage-proofs-update/src/circuit.rs");
    assert!(update.contains("impl<TreeR> Clone for EmptySectorUpdateCircuit<TreeR>\n"));
    assert!(!update.contains("#[derive(Clone)]\npub struct PrivateInputs<TreeR>"));
    assert!(text(
        &patched,
        "storage-proofs-porep/src/stacked/circuit/proof.rs"
    )
    .contains("synthpool::branches::spread"));
    let again = run();
    assert!(
        !again.contains(": patched"),
        "a second run patched:\n{again}"
    );
    assert!(snapshot(&copy) == patched, "a second run changed files");
    fs::remove_dir_all(&copy).unwrap();
}

/// The published crates laid out as a filecoin-proofs checkout, with the kit's workspace,
/// lock and real-circuit tool.
fn lay_out_published_crates() -> PathBuf {
    let checkout = scratch().join("checkout");
    if checkout.exists() {
        fs::remove_dir_all(&checkout).unwrap();
    }
    for ((name, _), source) in CRATES.iter().zip(published_sources()) {
        copy_tree(&source, &checkout.join(name));
    }
    let manifests = repository().join("tests/fork-kit");
    fs::copy(
        manifests.join("workspace.toml"),
        checkout.join("Cargo.toml"),
    )
    .unwrap();
    fs::copy(manifests.join("Cargo.lock"), checkout.join("Cargo.lock")).unwrap();
    for tool in ["real-circuit", "cuzk-standin"] {
        copy_tree(&manifests.join(tool), &checkout.join(tool));
    }

    checkout
}

/// A checkout whose prover import is not the expected one is refused, nothing touched;
/// returns compound_proof.rs as published.
fn refuses_an_unrecognised_checkout(checkout: &Path) -> String {
    // A checkout whose prover import is not the expected one: refused, nothing touched.
    let compound_proof = checkout.join("storage-proofs-core/src/compound_proof.rs");
    let original = fs::read_to_string(&compound_proof).unwrap();

    fs::write(
        &compound_proof,
        replaced(&original, EXPECTED_IMPORT, "create_random_proof_batch, "),
    )
    .unwrap();
    let unrecognised = snapshot(checkout);
    let refused = patch_fork(checkout);
    let complaint = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "accepted: {complaint}");
    assert!(
        complaint.contains("storage-proofs-core/src/compound_proof.rs")
            && complaint.contains("create_random_proof_batch_in_priority"),
        "{complaint}"
    );
    assert!(
        snapshot(checkout) == unrecognised,
        "a refused run changed files"
    );
    fs::write(&compound_proof, &original).unwrap();
    refuses_apex_rows_an_earlier_recipe_spread(checkout);

    original
}

/// storage-proofs-update's gadgets.rs as the recipe before `spread_small_returning` left it
/// (the apex rows through `spread_returning`, on every system) is named and refused, nothing
/// touched.
fn refuses_apex_rows_an_earlier_recipe_spread(checkout: &Path) {
    let gadgets = checkout.join("storage-proofs-update/src/gadgets.rs");
    let published = fs::read_to_string(&gadgets).unwrap();
    let start = published.find(APEX_ROW).expect("the apex row");
    let end = published.find(APEX_ROW_END).expect("the apex row's end") + APEX_ROW_END.len();
    let earlier = format!(
        "{}{SPREAD_APEX_ROW}{}{SPREAD_APEX_ROW_END}{}",
        &published[..start],
        apex_row_deeper(&published),
        &published[end..]
    )
    .replace("spread_small_returning(", "spread_returning(");
    fs::write(&gadgets, earlier).unwrap();
    let patched_before = snapshot(checkout);
    let refused = patch_fork(checkout);
    let complaint = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "accepted: {complaint}");
    assert!(
        complaint.contains("storage-proofs-update/src/gadgets.rs")
            && complaint.contains("an earlier recipe"),
        "{complaint}"
    );
    assert!(
        snapshot(checkout) == patched_before,
        "a refused run changed files"
    );
    fs::write(&gadgets, published).unwrap();
}

/// The recipe, and nothing else: every file as it is afterwards, and how many the recipe
/// edits.
fn applies_exactly_the_recipe(
    checkout: &Path,
    original: &str,
) -> (BTreeMap<PathBuf, Vec<u8>>, usize) {
    // The recipe, and nothing else.
    let before = snapshot(checkout);
    succeeded("patch-fork.sh", patch_fork(checkout));
    let after = snapshot(checkout);
    let repo = repository().display().to_string();
    let poseidon_dependency =
        format!("\n[dependencies.synthpool]\npath = \"{repo}\"\nfeatures = [\"neptune-11\"]\n");
    // neptune's Poseidon gadget, imported alone, swapped for ours.
    let swapped = |files: &BTreeMap<PathBuf, Vec<u8>>, path: &str| {
        replaced(
            &text(files, path),
            "use neptune::circuit::poseidon_hash;\n",
            "use synthpool::poseidon::poseidon_hash;\n",
        )
    };
    let expected: BTreeMap<&str, String> = [
        (
            "Cargo.toml",
            replaced(
                &text(&before, "Cargo.toml"),
                "[patch.crates-io]\n",
                &format!(
                    "[patch.crates-io]\n\
                     # synthpool: every crate of the graph builds on its bellpepper-core\n\
                     bellpepper-core = {{ path = \"{repo}/gadgets\" }}\n"
                ),
            ),
        ),
        (
            "filecoin-hashers/Cargo.toml",
            text(&before, "filecoin-hashers/Cargo.toml") + &poseidon_dependency,
        ),
        (
            "storage-proofs-porep/Cargo.toml",
            text(&before, "storage-proofs-porep/Cargo.toml") + &poseidon_dependency,
        ),
        (
            "storage-proofs-update/Cargo.toml",
            text(&before, "storage-proofs-update/Cargo.toml") + &poseidon_dependency,
        ),
        (
            "filecoin-hashers/src/poseidon.rs",
            replaced(
                &text(&before, "filecoin-hashers/src/poseidon.rs"),
                "use neptune::{circuit::poseidon_hash, poseidon::Poseidon};\n",
                "use neptune::poseidon::Poseidon;\nuse synthpool::poseidon::poseidon_hash;\n",
            ),
        ),
        (
            "storage-proofs-porep/src/stacked/circuit/hash.rs",
            swapped(&before, "storage-proofs-porep/src/stacked/circuit/hash.rs"),
        ),
        (
            "storage-proofs-update/src/poseidon/circuit.rs",
            swapped(&before, "storage-proofs-update/src/poseidon/circuit.rs"),
        ),
        (
            "storage-proofs-update/src/circuit.rs",
            replaced(
                &replaced(
                    &swapped(&before, "storage-proofs-update/src/circuit.rs"),
                    UPDATE_LOOP,
                    SPREAD_UPDATE,
                ),
                UPDATE_LOOP_END,
                SPREAD_UPDATE_END,
            ),
        ),
        ("storage-proofs-update/src/gadgets.rs", {
            let published = swapped(&before, "storage-proofs-update/src/gadgets.rs");
            let start = published.find(APEX_ROW).expect("the apex row");
            let end =
                published.find(APEX_ROW_END).expect("the apex row's end") + APEX_ROW_END.len();
            let spread = format!(
                "{SPREAD_APEX_ROW}{}{SPREAD_APEX_ROW_END}",
                apex_row_deeper(&published)
            );
            format!("{}{spread}{}", &published[..start], &published[end..])
        }),
        (
            "storage-proofs-core/Cargo.toml",
            gpu_features_forwarded(&text(&before, "storage-proofs-core/Cargo.toml"))
                + &format!(
                    "\n[dependencies.synthpool]\npath = \"{repo}\"\n\
                     features = [\"bellperson-0.27\"]\n"
                ),
        ),
        (
            "filecoin-hashers/src/sha256.rs",
            replaced(
                &text(&before, "filecoin-hashers/src/sha256.rs"),
                "num::AllocatedNum, sha256::sha256 as sha256_circuit},\n    \
                 ConstraintSystem, SynthesisError,\n};\n",
                "num::AllocatedNum},\n    ConstraintSystem, SynthesisError,\n};\n\
                 use synthpool::sha256::sha256 as sha256_circuit;\n",
            ),
        ),
        (
            "storage-proofs-porep/src/stacked/circuit/create_label.rs",
            replaced(
                &text(
                    &before,
                    "storage-proofs-porep/src/stacked/circuit/create_label.rs",
                ),
                "num::AllocatedNum, sha256::sha256 as sha256_circuit,\n        \
                 uint32::UInt32,\n    },\n    ConstraintSystem, SynthesisError,\n};\n",
                "num::AllocatedNum, uint32::UInt32,\n    },\n    \
                 ConstraintSystem, SynthesisError,\n};\n\
                 use synthpool::sha256::sha256 as sha256_circuit;\n",
            ),
        ),
        (
            "storage-proofs-porep/src/stacked/circuit/proof.rs",
            replaced(
                &text(&before, "storage-proofs-porep/src/stacked/circuit/proof.rs"),
                CHALLENGE_LOOP,
                &format!("{SPREAD_CHALLENGES}{CHALLENGE_LOOP}"),
            ),
        ),
        (
            "storage-proofs-post/Cargo.toml",
            text(&before, "storage-proofs-post/Cargo.toml")
                + &format!("\n[dependencies.synthpool]\npath = \"{repo}\"\n"),
        ),
        (
            "storage-proofs-post/src/fallback/circuit.rs",
            replaced(
                &replaced(
                    &text(&before, "storage-proofs-post/src/fallback/circuit.rs"),
                    POST_IMPORT,
                    "use rayon::prelude::{IntoParallelIterator, ParallelIterator};\n",
                ),
                POST_CHUNKS,
                SPREAD_SECTORS,
            ),
        ),
        ("storage-proofs-core/src/compound_proof.rs", {
            let mut patched = replaced(original, EXPECTED_IMPORT, "");
            for (published, recipe) in [
                (CIRCUITS_BUILT, CIRCUITS_BUILT_KEPT),
                (PROVER_CHOICE, ""),
                (BATCH_PROVEN, BATCH_PROVEN_REMAKING),
                (
                    CIRCUIT_PROOFS_RNG,
                    &format!("{CIRCUIT_PROOFS_RNG}{SUPRASEAL_FILE}"),
                ),
            ] {
                patched = replaced(&patched, published, recipe);
            }
            patched
        }),
    ]
    .into_iter()
    .collect();
    for (path, contents) in &after {
        let path_text = path.to_str().unwrap();
        match expected.get(path_text) {
            Some(patched) => assert_eq!(
                String::from_utf8_lossy(contents),
                *patched,
                "{path_text} patched otherwise than the recipe says"
            ),
            None => assert!(before.get(path) == Some(contents), "{path_text} changed"),
        }
    }
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );

    let edits = expected.len();
    (after, edits)
}

/// A second run reports every edit unchanged (storage-proofs-core's manifest and
/// storage-proofs-update's circuit and gadgets have two each) and changes no file.
fn changes_nothing_when_run_again(
    checkout: &Path,
    after: &BTreeMap<PathBuf, Vec<u8>>,
    edits: usize,
) {
    let again = succeeded("patch-fork.sh, again", patch_fork(checkout));
    assert_eq!(again.matches(": unchanged").count(), edits + 3, "{again}");
    assert!(snapshot(checkout) == *after, "a second run changed files");
}

/// A checkout patched by the recipe before it swapped Poseidon: its dependencies gain the
/// feature they lack, and keep the ones they have; one patched before members could be
/// made again: its `circuit_proofs` gains the remaking drop-in.
fn upgrades_an_earlier_recipe(checkout: &Path, after: &BTreeMap<PathBuf, Vec<u8>>) {
    // A checkout patched by the recipe before it swapped Poseidon: its dependencies gain
    // the feature they lack, and keep the ones they have.
    let hashers = checkout.join("filecoin-hashers/Cargo.toml");
    let porep_manifest = checkout.join("storage-proofs-porep/Cargo.toml");
    let patched_hashers = fs::read_to_string(&hashers).unwrap();
    let patched_porep = fs::read_to_string(&porep_manifest).unwrap();
    let feature = "features = [\"neptune-11\"]\n";
    fs::write(&hashers, replaced(&patched_hashers, feature, "")).unwrap();
    fs::write(
        &porep_manifest,
        replaced(&patched_porep, feature, "features = [\"serde\"]\n"),
    )
    .unwrap();
    succeeded("patch-fork.sh, upgrading", patch_fork(checkout));
    assert_eq!(fs::read_to_string(&hashers).unwrap(), patched_hashers);
    assert_eq!(
        fs::read_to_string(&porep_manifest).unwrap(),
        replaced(
            &patched_porep,
            feature,
            "features = [\"serde\", \"neptune-11\"]\n"
        )
    );
    fs::write(&porep_manifest, &patched_porep).unwrap();
    assert!(snapshot(checkout) == *after);

    // `circuit_proofs` as the recipe left it before members could be made again: bellperson's
    // batch provers swapped for synthpool's by their import.
    let compound_proof = checkout.join("storage-proofs-core/src/compound_proof.rs");
    let patched = fs::read_to_string(&compound_proof).unwrap();
    let mut earlier = replaced(
        &patched,
        "    Circuit,\n};\n",
        "    Circuit,\n};\nuse synthpool::groth16::v0_27::{create_random_proof_batch, \
         create_random_proof_batch_in_priority};\n",
    );
    let groth_proofs = "        let mut groth_proofs = Vec::with_capacity(circuits.len());\n";
    for (recipe, before) in [
        (CIRCUITS_BUILT_KEPT, CIRCUITS_BUILT),
        (BATCH_PROVEN_REMAKING, BATCH_PROVEN),
        (groth_proofs, &format!("{PROVER_CHOICE}{groth_proofs}")),
    ] {
        earlier = replaced(&earlier, recipe, before);
    }
    fs::write(&compound_proof, earlier).unwrap();
    succeeded(
        "patch-fork.sh, upgrading circuit_proofs",
        patch_fork(checkout),
    );
    assert_eq!(fs::read_to_string(&compound_proof).unwrap(), patched);
}

/// The GPU features as rust-fil-proofs' own manifest writes them, one line each, gain
/// synthpool's.
fn forwards_gpu_features_written_on_one_line(checkout: &Path, after: &BTreeMap<PathBuf, Vec<u8>>) {
    // The features as rust-fil-proofs' own manifest writes them, one line each.
    let core_manifest = checkout.join("storage-proofs-core/Cargo.toml");
    let patched_core = fs::read_to_string(&core_manifest).unwrap();
    let one_line = [
        ("cuda", "\"bellperson/cuda\", \"filecoin-hashers/cuda\""),
        (
            "cuda-supraseal",
            "\"bellperson/cuda-supraseal\", \"filecoin-hashers/cuda\"",
        ),
        (
            "opencl",
            "\"bellperson/opencl\", \"filecoin-hashers/opencl\"",
        ),
    ];
    let mut unpatched = patched_core.clone();
    for (feature, list) in one_line {
        let upstream = if feature == "opencl" {
            "opencl"
        } else {
            "cuda"
        };
        unpatched = replaced(
            &unpatched,
            &format!(
                "{feature} = [\n    \"bellperson/{feature}\",\n    \"filecoin-hashers/{upstream}\",\n    \
                 \"synthpool/{feature}\",\n]\n"
            ),
            &format!("{feature} = [{list}]\n"),
        );
    }
    fs::write(&core_manifest, &unpatched).unwrap();
    succeeded("patch-fork.sh, one-line features", patch_fork(checkout));
    let mut forwarded = unpatched.clone();
    for (feature, list) in one_line {
        forwarded = replaced(
            &forwarded,
            &format!("{feature} = [{list}]\n"),
            &format!("{feature} = [{list}, \"synthpool/{feature}\"]\n"),
        );
    }
    assert_eq!(fs::read_to_string(&core_manifest).unwrap(), forwarded);
    fs::write(&core_manifest, &patched_core).unwrap();
    assert!(snapshot(checkout) == *after);
}

/// The patched crates compile against this workspace, on our core alone, with one neptune
/// for the fork's crates and ours; each GPU build of storage-proofs-core turns on
/// synthpool's feature of that name.
fn compiles_on_our_core_alone(checkout: &Path) {
    let repo = repository().display().to_string();
    // The patched crates compile against this workspace, on our core alone, with one
    // neptune for the fork's crates and ours.
    let porep = [
        "-p",
        "storage-proofs-porep",
        "-p",
        "storage-proofs-post",
        "-p",
        "storage-proofs-update",
        "--no-default-features",
    ];
    cargo(checkout, &[&["check"][..], &porep].concat());
    // The measurement tool on the real circuit builds on the patched crates.
    cargo(checkout, &["check", "-p", "real-circuit"]);
    // Each GPU build of storage-proofs-core turns on synthpool's feature of that name.
    for feature in ["cuda", "cuda-supraseal", "opencl"] {
        let tree = cargo(
            checkout,
            &[
                "tree",
                "-e",
                "features",
                "-i",
                "synthpool",
                "-p",
                "storage-proofs-core",
                "--no-default-features",
                "--features",
                &format!("storage-proofs-core/{feature}"),
            ],
        );
        assert!(
            tree.contains(&format!("synthpool feature \"{feature}\"")),
            "{feature}: {tree}"
        );
    }
    let neptune_users = cargo(
        checkout,
        &[&["tree", "-e", "normal", "-i", "neptune"][..], &porep].concat(),
    );
    assert!(
        neptune_users.starts_with("neptune v11.")
            && neptune_users.contains(&format!("synthpool v0.1.0 ({repo})")),
        "{neptune_users}"
    );
    let core_users = cargo(
        checkout,
        &[
            &["tree", "-e", "normal", "-i", "bellpepper-core"][..],
            &porep,
        ]
        .concat(),
    );
    assert!(
        core_users.starts_with("bellpepper-core v0.2")
            && core_users
                .lines()
                .next()
                .unwrap()
                .contains(&format!("({repo}/gadgets)")),
        "{core_users}"
    );
}

/// The real circuits, on the patched crates: the tool fails on a digest that is not
/// upstream's, pre-compiled vectors that differ from direct synthesis, direct synthesis on
/// its threads that differs from one thread's, or a proof that differs from bellperson's.
fn real_circuits_match_upstream(checkout: &Path) {
    // With the cuzk stand-in, in one build: the features of their shared crates unified.
    cargo(
        checkout,
        &[
            "build",
            "--release",
            "-p",
            "real-circuit",
            "-p",
            "cuzk-standin",
        ],
    );
    let tool = scratch().join("target/release/real-circuit");
    let real_circuit = |threads: &str, args: &[&str]| {
        let output = Command::new(&tool)
            .args(args)
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .expect("real-circuit starts");
        succeeded(
            &format!("real-circuit {args:?} on {threads} threads"),
            output,
        )
    };
    for circuit in ["2KiB", "8MiB", "window-post", "winning-post", "snap"] {
        let out = real_circuit("2", &[circuit, "pce", "1"]);
        assert!(out.contains("identical to upstream's"), "{circuit}: {out}");
    }
    // Challenges that do not divide evenly over the threads: two of PoRep, ten of SnapDeals.
    for circuit in ["2KiB", "snap"] {
        let out = real_circuit("3", &[circuit, "pce", "1"]);
        assert!(out.contains("identical to upstream's"), "{circuit}: {out}");
    }
    for circuit in ["window-post", "winning-post"] {
        let out = real_circuit("2", &[circuit, "prove"]);
        for batch in ["cold", "warm"] {
            let line =
                format!("drop-in, {batch}: 2 proofs byte-identical to bellperson's, verified");
            assert!(out.contains(&line), "{circuit}: {out}");
        }
    }
}

/// synthpool's seam for cuzk (`scripts/cuzk/synthpool_seam.rs`), compiled as in cuzk-core
/// against the stand-ins of `tests/fork-kit/cuzk-standin` (built beside real-circuit), on
/// every real circuit: a first batch recorded, batches from the recording into pinned
/// buffers and onto the heap, a fallback forced, and another structure under one key, each
/// prover identical to direct synthesis (and the circuit's constraints to upstream's).
fn cuzk_seam_matches_direct_synthesis() {
    let tool = scratch().join("target/release/cuzk-standin");
    for circuit in ["2KiB", "8MiB", "window-post", "winning-post", "snap"] {
        let output = Command::new(&tool)
            .arg(circuit)
            .env("RAYON_NUM_THREADS", "2")
            .output()
            .expect("cuzk-standin starts");
        let out = succeeded(&format!("cuzk-standin {circuit}"), output);
        let mut expected = vec![
            "identical to upstream's".to_string(),
            format!("{circuit}: first batch: recorded beside its synthesis, 2 circuits identical"),
            format!("{circuit}: from the recording into pinned buffers: 2 circuits identical, 6 buffers back in the pool"),
            format!("{circuit}: from the recording, no room in the pool: 2 circuits identical, on the heap"),
            format!("{circuit}: fallback forced (synthesis failed: "),
        ];
        if circuit == "8MiB" || circuit == "winning-post" {
            expected.push(format!(
                "{circuit}: under a key another structure holds: refused (the witness has"
            ));
        }
        for line in expected {
            assert!(out.contains(&line), "{circuit}: no `{line}` in:\n{out}");
        }
    }
}

/// The kit's `test-srs` (built with real-circuit), for the by-hand tests that aggregate
/// proofs (docs/testing.md, where filecoin-ffi's aggregation uses it): it writes an SRS and
/// checks it by reading it back, refuses a number of proofs that is not a power of two, and
/// never replaces a file.
fn writes_a_test_srs_once() {
    let srs = scratch().join("test.srs");
    if srs.exists() {
        fs::remove_file(&srs).unwrap();
    }
    let test_srs = |proofs: &str| {
        Command::new(scratch().join("target/release/test-srs"))
            .arg(&srs)
            .arg(proofs)
            .output()
            .expect("test-srs starts")
    };
    assert!(!test_srs("3").status.success(), "3 proofs accepted");
    assert!(!srs.exists(), "written for a refused number of proofs");
    let out = succeeded("test-srs", test_srs("4"));
    assert!(out.contains("up to 4 proofs"), "{out}");
    let written = fs::read(&srs).unwrap();
    let again = test_srs("4");
    assert!(!again.status.success(), "an existing file was replaced");
    assert_eq!(
        fs::read(&srs).unwrap(),
        written,
        "an existing file was changed"
    );
}

/// storage-proofs-porep's own circuit tests (constraint counts and satisfaction of the
/// stacked circuit, its gadgets') on the patched crates, without the default features,
/// which link hwloc and OpenCL; the rest of the five crates' suites run by hand
/// (docs/testing.md).
fn upstreams_stacked_circuit_tests_pass(checkout: &Path) {
    let out = cargo(
        checkout,
        &[
            "test",
            "--release",
            "-p",
            "storage-proofs-porep",
            "--no-default-features",
            "--test",
            "stacked_circuit",
        ],
    );
    assert!(out.contains("test result: ok. 4 passed"), "{out}");
}

/// storage-proofs-update's own circuit tests at 1 and 2 KiB (the larger sizes take more
/// memory than a test should, on a system that keeps every name): on a system that cannot
/// branch the patched circuit runs its challenges through the loop, with upstream's
/// constraint counts, its constraints satisfied.
fn upstreams_update_circuit_tests_pass(checkout: &Path) {
    let out = cargo(
        checkout,
        &[
            "test",
            "--release",
            "-p",
            "storage-proofs-update",
            "--no-default-features",
            "--features",
            "isolated-testing",
            "--test",
            "circuit",
            "--",
            "--exact",
            "test_empty_sector_update_circuit_1kib",
            "test_empty_sector_update_circuit_2kib",
        ],
    );
    assert!(out.contains("test result: ok. 2 passed"), "{out}");
}

/// Where the compound tests' generated parameters are kept between runs of the suite:
/// generating them takes about 11 minutes on two cores (PoRep's 518 MB, SnapDeals'), reading
/// them seconds. They are test parameters (random, of test-sized circuits), named so that no
/// production proof looks them up, and kept apart from filecoin-proofs' own cache.
const TEST_PARAMETERS: &str = "/var/tmp/synthpool-test-parameters";

/// rust-fil-proofs' own compound tests, which prove through the patched `circuit_proofs`
/// (the remaking drop-in) and verify against generated parameters: WindowPoSt at every tree
/// shape, single and two partitions; SnapDeals at 1 KiB; a PoRep partition (base 8). Each
/// runs twice in processes of its own over one recording cache: the first records and saves
/// its recordings, the second proves from those files, which stay as they were (a file that
/// failed a member would be removed, one refused would be recorded again and replaced).
fn upstreams_compound_proofs_pass(checkout: &Path) {
    let recordings = scratch().join("compound-recordings");
    if recordings.exists() {
        fs::remove_dir_all(&recordings).unwrap();
    }
    let vars = [
        ("FIL_PROOFS_PARAMETER_CACHE", Path::new(TEST_PARAMETERS)),
        ("SYNTHPOOL_RECORDING_CACHE", recordings.as_path()),
    ];
    let tests = [
        ("storage-proofs-post", "fallback_compound", None, 6),
        (
            "storage-proofs-update",
            "compound",
            Some("test_empty_sector_update_compound_1kib"),
            1,
        ),
        (
            "storage-proofs-porep",
            "stacked_compound",
            Some("test_stacked_compound_poseidon_base_8"),
            1,
        ),
    ];
    let files = || -> BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
        fs::read_dir(&recordings)
            .map(|listing| {
                listing
                    .map(|entry| {
                        let path = entry.unwrap().path();
                        let metadata = fs::metadata(&path).unwrap();
                        use std::os::unix::fs::MetadataExt;
                        (path, (metadata.ino(), metadata.modified().unwrap()))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut saved = BTreeMap::new();
    for run in ["recording", "from the files"] {
        for (package, test, exact, passed) in tests {
            let mut args = vec![
                "test",
                "--release",
                "-p",
                package,
                "--no-default-features",
                "--test",
                test,
                "--",
                "--ignored",
            ];
            args.extend(exact.iter().flat_map(|name| ["--exact", *name]));
            let out = cargo_with(checkout, &args, &vars);
            assert!(
                out.contains(&format!("test result: ok. {passed} passed")),
                "{package} {test}, {run}: {out}"
            );
        }
        match run {
            "recording" => saved = files(),
            _ => assert_eq!(
                files(),
                saved,
                "the files the first runs saved served as they were"
            ),
        }
    }
    // WindowPoSt's five structures, SnapDeals' and PoRep's.
    assert_eq!(saved.len(), 7, "{saved:?}");
}

/// scripts/patch-ffi.sh on a stand-in for filecoin-ffi v1.36.1 (`tests/ffi-kit`: filcrypto's
/// dependency on filecoin-proofs-api 19.1 and its features), with the kit's checkout as the
/// rust-fil-proofs checkout: it refuses an unknown release and a manifest it does not
/// recognise without touching either, adds exactly its `[patch.crates-io]` section and
/// removes the install marker, changes nothing when run again, leaves one bellpepper-core,
/// ours, in the graph, and the crate compiles with `--locked` (its default CPU features;
/// checked, not built: a debug build of the whole graph would add minutes to CI and nothing
/// a check misses, the stand-in linking nothing).
fn points_filecoin_ffi_at_the_checkout(checkout: &Path) {
    let ffi = scratch().join("filecoin-ffi");
    if ffi.exists() {
        fs::remove_dir_all(&ffi).unwrap();
    }
    copy_tree(&repository().join("tests/ffi-kit"), &ffi);
    let patch_ffi = || {
        Command::new(repository().join("scripts/patch-ffi.sh"))
            .arg(&ffi)
            .arg(checkout)
            .output()
            .expect("scripts/patch-ffi.sh starts")
    };
    let refused = |why: &str| {
        let both = || (snapshot(&ffi), snapshot(checkout));
        let before = both();
        let output = patch_ffi();
        let complaint = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(!output.status.success(), "accepted: {complaint}");
        assert!(complaint.contains(why), "{complaint}");
        assert!(both() == before, "a refused run changed files");
    };
    let version = ffi.join("version.json");
    let released = fs::read_to_string(&version).unwrap();
    fs::write(&version, replaced(&released, "v1.36.1", "v1.35.0")).unwrap();
    refused("filecoin-ffi v1.35.0");
    fs::write(&version, &released).unwrap();
    let manifest = ffi.join("rust/Cargo.toml");
    let published = fs::read_to_string(&manifest).unwrap();
    let api = "filecoin-proofs-api = { version = \"19.1\", default-features = false }";
    fs::write(
        &manifest,
        replaced(&published, api, "filecoin-proofs-api = \"19.1\""),
    )
    .unwrap();
    refused(api);
    fs::write(&manifest, &published).unwrap();

    let installed = [".install-filcrypto", "libfilcrypto.a"];
    for file in installed {
        fs::write(ffi.join(file), "built before").unwrap();
    }
    succeeded("patch-ffi.sh", patch_ffi());
    let repo = repository().display().to_string();
    let fork = checkout.display().to_string();
    let crates = [
        "filecoin-hashers",
        "storage-proofs-core",
        "storage-proofs-porep",
        "storage-proofs-post",
        "storage-proofs-update",
    ];
    let section: String = crates
        .iter()
        .map(|name| format!("{name} = {{ path = \"{fork}/{name}\" }}\n"))
        .collect();
    assert_eq!(
        fs::read_to_string(&manifest).unwrap(),
        format!(
            "{published}\n# synthpool: the prover's crates from this checkout of rust-fil-proofs, \
             patched by\n# synthpool's scripts/patch-fork.sh, and bellpepper-core from synthpool, \
             for every crate:\n# {fork}\n[patch.crates-io]\nbellpepper-core = {{ path = \
             \"{repo}/gadgets\" }}\n{section}"
        )
    );
    assert!(installed.iter().all(|file| !ffi.join(file).exists()));
    for file in installed {
        fs::write(ffi.join(file), "built since").unwrap();
    }
    let patched = (snapshot(&ffi), snapshot(checkout));
    succeeded("patch-ffi.sh, again", patch_ffi());
    assert!(
        (snapshot(&ffi), snapshot(checkout)) == patched,
        "a second run changed files"
    );

    let rust = ffi.join("rust");
    let tree = cargo(
        &rust,
        &["tree", "--locked", "-e", "normal", "-i", "bellpepper-core"],
    );
    assert!(
        tree.lines().next().unwrap() == format!("bellpepper-core v0.2.1 ({repo}/gadgets)"),
        "{tree}"
    );
    cargo(
        &rust,
        &[
            "check",
            "--locked",
            "--no-default-features",
            "--features",
            "multicore-sdr",
        ],
    );
}
