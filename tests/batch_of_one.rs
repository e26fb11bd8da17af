//! A batch of one in a fresh process, as curio proves every WindowPoSt partition,
//! WinningPoSt and SnapDeals update: whatever the cache file holds, the drop-in a patched
//! fork calls returns bellperson's proof. A file that fails the member (another circuit's
//! recording saved under the key, the recording of the same shape with another coefficient,
//! a density bit dropped: each with a valid digest) is removed, so the next process records anew and the one after
//! proves from the new file. Each process is this test binary again, running [`child`].

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use bellperson_027::groth16::{self, Parameters};
use blstrs::{Bls12, Scalar as Fr};
use common::{Linear, NumCircuit};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool::groth16::v0_27 as ours;

/// The variable naming the cache directory of a child process.
const CHILD: &str = "SYNTHPOOL_BATCH_OF_ONE_CACHE";

fn circuit() -> Linear {
    Linear {
        x: Some(11),
        factor: 3,
    }
}

fn params() -> Parameters<Bls12> {
    let blank = Linear { x: None, factor: 3 };
    groth16::generate_random_parameters(blank, &mut XorShiftRng::seed_from_u64(65)).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn proof_bytes(proofs: &[groth16::Proof<Bls12>]) -> String {
    let mut bytes = Vec::new();
    for proof in proofs {
        proof.write(&mut bytes).unwrap();
    }
    hex(&bytes)
}

/// The fresh process: proves the batch of one with the cache its variable names, as the
/// patched fork does, and prints the proof and what the cache did.
#[test]
fn child() {
    let Ok(dir) = std::env::var(CHILD) else {
        return;
    };
    synthpool::groth16::set_cache_dir(Some(PathBuf::from(dir)));
    let remake = |_: usize| Ok::<_, String>(circuit());
    let mut rng = XorShiftRng::seed_from_u64(66);
    let proofs = ours::create_random_proof_batch_remaking(
        vec![circuit()],
        remake,
        &params(),
        false,
        &mut rng,
    )
    .expect("the batch of one proves");
    let stats = synthpool::groth16::stats::<Fr>();
    println!(
        "proof={} loaded={} recorded={} saved={} rejected={} redone={}",
        proof_bytes(&proofs),
        stats.loaded,
        stats.recorded,
        stats.saved,
        stats.rejected,
        stats.redone_members
    );
}

/// What a fresh process printed: the proof, and each counter by name.
struct Printed(String);

impl Printed {
    fn field(&self, name: &str) -> &str {
        let prefix = format!("{name}=");
        self.0
            .split_whitespace()
            .find_map(|word| word.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("no {name} in {}", self.0))
    }

    fn count(&self, name: &str) -> u64 {
        self.field(name).parse().unwrap()
    }
}

fn fresh_process(dir: &Path) -> Printed {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture"])
        .env(CHILD, dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout
        .lines()
        .find(|line| line.starts_with("proof="))
        .unwrap_or_else(|| panic!("no proof printed:\n{stdout}"));
    Printed(line.to_owned())
}

fn the_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rec"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}

#[test]
fn a_batch_of_one_in_a_fresh_process_proves_whatever_its_file_holds() {
    let dir = std::env::temp_dir().join(format!("synthpool-batch-of-one-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let bellperson = {
        let mut rng = XorShiftRng::seed_from_u64(66);
        proof_bytes(
            &groth16::create_random_proof_batch(vec![circuit()], &params(), &mut rng).unwrap(),
        )
    };
    // The first process records and saves; the next proves from the file.
    let first = fresh_process(&dir);
    assert_eq!(first.field("proof"), bellperson);
    assert_eq!((first.count("recorded"), first.count("saved")), (1, 1));
    let good = std::fs::read(the_file(&dir)).unwrap();
    let from_file = fresh_process(&dir);
    assert_eq!(from_file.field("proof"), bellperson);
    assert_eq!(
        (from_file.count("loaded"), from_file.count("recorded")),
        (1, 0)
    );

    type Plant = (&'static str, fn(&Path, &Path));
    let plants: [Plant; 3] = [
        ("another circuit saved under the key", |dir, _| {
            let other = NumCircuit { x: None, rounds: 3 };
            ours::save_recording(other, &params().vk, dir).unwrap();
        }),
        ("the same shape with another coefficient", |dir, _| {
            let other = Linear { x: None, factor: 5 };
            ours::save_recording(other, &params().vk, dir).unwrap();
        }),
        ("a density bit dropped", |_, file| {
            common::edit_section(file, common::A_AUX_DENSITY, |words| {
                let at = words.iter().position(|&byte| byte != 0).unwrap();
                words[at] &= words[at] - 1;
            })
        }),
    ];
    for (what, plant) in plants {
        let file = the_file(&dir);
        std::fs::write(&file, &good).unwrap();
        plant(&dir, &file);
        assert!(std::fs::read(&file).unwrap() != good, "{what}: planted");
        let met = fresh_process(&dir);
        assert_eq!(met.field("proof"), bellperson, "{what}");
        assert_eq!(
            (
                met.count("loaded"),
                met.count("redone"),
                met.count("rejected")
            ),
            (1, 1, 1),
            "{what}: {}",
            met.0
        );
        assert!(!file.exists(), "{what}: the file that failed is removed");
        let next = fresh_process(&dir);
        assert_eq!(next.field("proof"), bellperson, "{what}: the next process");
        assert_eq!(
            (next.count("recorded"), next.count("saved")),
            (1, 1),
            "{what}"
        );
        let after = fresh_process(&dir);
        assert_eq!(after.field("proof"), bellperson, "{what}: the one after");
        assert_eq!(
            (after.count("loaded"), after.count("recorded")),
            (1, 0),
            "{what}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
