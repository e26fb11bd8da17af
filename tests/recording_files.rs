//! Recording files, read into memory (`Recording::load`, everything checked) and in place
//! (`Recording::map_unverified`, the header and dictionary checked, the rest read where it
//! lies): both give direct synthesis's vectors; saves are atomic; a damaged, foreign or
//! truncated file is a clear error where each path looks; a mapped file that breaks the
//! format, or that is truncated or rewritten while mapped (its times set back or not), makes
//! the evaluation that sees it an error, never a panic (nor a word on stderr) or a SIGBUS; a
//! file renamed over a mapped one leaves the mapping reading the old one.

mod common;

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use common::{assert_same, Gadgets, RandomCircuit, Sha256Circuit};
use ff::Field;
use generic_array::typenum::U8;
use neptune::poseidon::PoseidonConstants;
use rand_core::{RngCore, SeedableRng};
use rand_xorshift::XorShiftRng;
use synthpool::precompiled::Recording;
use synthpool::{synthesize, Error, FileProblem};

/// SHA-256 of eight bytes and an arity-8 Poseidon hash, so a file holds every part a
/// recording has: MultiEq's runs, rows of general coefficients, claims, field stretches.
#[derive(Clone)]
struct Mixed {
    seed: Option<u64>,
}

impl Circuit<Fr> for Mixed {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let sha = match self.seed {
            Some(seed) => Sha256Circuit {
                bytes: Some((0..8).map(|i| (seed as u8).wrapping_mul(31) ^ i).collect()),
                len: 8,
                gadgets: Gadgets::Synthpool,
            },
            None => Sha256Circuit {
                bytes: None,
                len: 8,
                gadgets: Gadgets::Synthpool,
            },
        };
        sha.synthesize(&mut cs.namespace(|| "sha256"))?;
        let mut rng = XorShiftRng::seed_from_u64(self.seed.unwrap_or(0));
        let preimage = (0..8)
            .map(|i| {
                let value = self.seed.map(|_| Fr::random(&mut rng));
                AllocatedNum::alloc(cs.namespace(|| format!("x{i}")), || {
                    value.ok_or(SynthesisError::AssignmentMissing)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let constants = PoseidonConstants::<Fr, U8>::new();
        let hash =
            synthpool::poseidon::poseidon_hash(cs.namespace(|| "poseidon"), preimage, &constants)?;
        hash.inputize(cs.namespace(|| "out"))
    }
}

/// A directory of its own for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("synthpool-files-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn saved_file(dir: &Path) -> (Recording<Fr>, PathBuf, Vec<u8>) {
    let recording = Recording::record(Mixed { seed: None }).unwrap();
    let path = dir.join("recording.rec");
    recording.save(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (recording, path, bytes)
}

/// How a test opens a file.
#[derive(Clone, Copy, Debug)]
enum Open {
    Load,
    Map,
}

impl Open {
    fn open(self, path: &Path) -> Result<Recording<Fr>, Error> {
        match self {
            Open::Load => Recording::load(path),
            Open::Map => Recording::map_unverified(path),
        }
    }
}

/// Writes `bytes` to a file of `dir` and opens it.
fn open_bytes(dir: &Path, name: &str, bytes: &[u8], how: Open) -> Result<Recording<Fr>, Error> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let result = how.open(&path);
    std::fs::remove_file(&path).unwrap();
    result
}

fn problem_of(dir: &Path, name: &str, bytes: &[u8], how: Open) -> String {
    match open_bytes(dir, name, bytes, how) {
        Ok(_) => panic!("{name}: damaged file accepted by {how:?}"),
        Err(Error::File { path, problem }) => {
            assert!(path.ends_with(name), "{name}: {}", path.display());
            problem.to_string()
        }
        Err(other) => panic!("{name}, {how:?}: {other}"),
    }
}

/// Where the file's parts lie: the seven u64 counts, and each section's offset and length.
struct Layout {
    counts: usize,
    sections: Vec<(usize, usize)>,
}

fn layout(bytes: &[u8]) -> Layout {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let counts = 16 + u32_at(12) + 4 + 32;
    let table = counts + 7 * 8;
    let sections = (0..u32_at(table))
        .map(|i| (u64_at(table + 4 + 16 * i), u64_at(table + 12 + 16 * i)))
        .collect();
    Layout { counts, sections }
}

/// The section of matrix A's columns: after the dictionary and A's row offsets.
const A_COLUMNS: usize = 2;

/// Recomputes the digest, as a hostile writer would.
fn reseal(mut crafted: Vec<u8>) -> Vec<u8> {
    let body = crafted.len() - 32;
    let digest = blake2s_simd::blake2sp::blake2sp(&crafted[..body]);
    crafted[body..].copy_from_slice(digest.as_bytes());
    crafted
}

/// Synthesizes `Mixed` of `seed` from `recording`: an error, or vectors that must be direct
/// synthesis's when `exact`.
fn synthesized(
    recording: &Recording<Fr>,
    seed: u64,
) -> Result<synthpool::ProverVectors<Fr>, Error> {
    recording.synthesize(Mixed { seed: Some(seed) })
}

#[test]
fn loaded_and_mapped_files_give_direct_synthesis() {
    let dir = scratch("roundtrip");
    let (recording, path, bytes) = saved_file(&dir);
    for how in [Open::Load, Open::Map] {
        let opened = how.open(&path).unwrap();
        assert_eq!(opened.shape(), recording.shape());
        assert_eq!(opened.nonzeros(), recording.nonzeros());
        for seed in [1, 2] {
            assert_same(
                &synthesized(&opened, seed).unwrap(),
                &synthesize(Mixed { seed: Some(seed) }).unwrap(),
                &format!("{how:?} {seed}"),
            );
        }
    }
    // The file keeps what evaluation derives: about a tenth of it, by the bench's measure.
    println!(
        "file: {} bytes for {} nonzeros ({:.2} per nonzero)",
        bytes.len(),
        recording.nonzeros(),
        bytes.len() as f64 / recording.nonzeros() as f64
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn damaged_foreign_and_truncated_files_are_clear_errors_on_opening() {
    let dir = scratch("damage");
    let (_, _, bytes) = saved_file(&dir);
    for how in [Open::Load, Open::Map] {
        assert_eq!(problem_of(&dir, "empty", &[], how), "truncated");
        assert!(problem_of(
            &dir,
            "magic",
            &[b"NOTAPCE!".as_slice(), &bytes[8..]].concat(),
            how
        )
        .contains("bad magic"));
        let mut version = bytes.clone();
        version[8] = 1;
        assert!(problem_of(&dir, "version", &version, how).contains("format version 1"));
        let mut field = bytes.clone();
        field[20] ^= 1; // inside the modulus text
        assert!(problem_of(&dir, "field", &field, how).contains("recorded for the field"));
        assert!(problem_of(&dir, "short", &bytes[..bytes.len() - 1], how)
            .contains("truncated or corrupt"));
    }
    // Only reading all of it finds a flipped bit in the body.
    let mut flipped = bytes.clone();
    let middle = bytes.len() / 2;
    flipped[middle] ^= 0x10;
    assert!(problem_of(&dir, "flip", &flipped, Open::Load).contains("checksum mismatch"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn files_with_a_valid_checksum_but_broken_invariants_are_refused_or_fail_evaluation() {
    let dir = scratch("crafted");
    let (_, _, bytes) = saved_file(&dir);
    let layout = layout(&bytes);
    let count = |k: usize| {
        let at = layout.counts + 8 * k;
        u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize
    };
    let (inputs, aux) = (count(0), count(1));
    let first_column = layout.sections[A_COLUMNS].0;
    let mut crafted = bytes.clone();
    let past_the_variables = (inputs + aux) as u32 + 5;
    crafted[first_column..first_column + 4].copy_from_slice(&past_the_variables.to_le_bytes());
    let crafted = reseal(crafted);
    assert!(problem_of(&dir, "crafted", &crafted, Open::Load).contains("out of range"));
    // In place, the column is read when evaluating: an error naming the file, no panic, and
    // nothing printed (a child process's stderr shows it).
    std::fs::write(dir.join("crafted.rec"), &crafted).unwrap();
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_mapped_file_out_of_range_fails_quietly",
            "--nocapture",
        ])
        .env(QUIET_CHILD, dir.join("crafted.rec"))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr),
    );
    assert!(
        child.status.success() && stdout.contains(QUIET_DONE),
        "{stdout}\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    // A huge aux count changes no section length; it must not size anything.
    let mut crafted = bytes.clone();
    let at = layout.counts + 8;
    crafted[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    for how in [Open::Load, Open::Map] {
        assert!(
            problem_of(&dir, "huge aux", &reseal(crafted.clone()), how).contains("aux variables")
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// The environment variable naming the file the quiet child maps.
const QUIET_CHILD: &str = "SYNTHPOOL_QUIET_CHILD_FILE";
/// What the quiet child prints when the evaluation failed as it should.
const QUIET_DONE: &str = "out of range, quietly";

/// The child of the test above: evaluates the mapped file its variable names, which must
/// fail with an error naming the file.
#[test]
fn a_mapped_file_out_of_range_fails_quietly() {
    let Ok(path) = std::env::var(QUIET_CHILD) else {
        return;
    };
    let mapped = Recording::<Fr>::map_unverified(Path::new(&path)).unwrap();
    match synthesized(&mapped, 1) {
        Err(Error::File {
            problem: FileProblem::Inconsistent(_),
            ..
        }) => println!("{QUIET_DONE}"),
        other => panic!("{:?}", other.map(|_| "vectors")),
    }
}

#[test]
fn extreme_counts_and_section_offsets_in_the_header_are_errors() {
    let dir = scratch("counts");
    let (_, _, bytes) = saved_file(&dir);
    let layout = layout(&bytes);
    let table = layout.counts + 7 * 8 + 4;
    let fields = (0..7)
        .map(|k| layout.counts + 8 * k)
        .chain((0..2 * layout.sections.len()).map(|k| table + 8 * k));
    for (k, at) in fields.enumerate() {
        for value in [u64::MAX, u64::MAX - 1, 1 << 62, 0, 63] {
            let mut damaged = bytes.clone();
            damaged[at..at + 8].copy_from_slice(&value.to_le_bytes());
            if damaged != bytes {
                for how in [Open::Load, Open::Map] {
                    let opened = open_bytes(&dir, &format!("field-{k}-{value}"), &damaged, how);
                    assert!(opened.is_err(), "field {k} = {value} accepted by {how:?}");
                }
            }
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Loading never accepts a damaged file; opening in place never panics, and an
/// evaluation of a damaged mapped file either fails with an error or gives vectors (the
/// drop-ins verify every proof made from a mapped file).
#[test]
fn random_damage_never_panics_and_loading_never_accepts_it() {
    let dir = scratch("fuzz");
    let (_, _, bytes) = saved_file(&dir);
    let mut rng = XorShiftRng::seed_from_u64(0xf022);
    let (mut refused, mut failed, mut evaluated) = (0, 0, 0);
    for round in 0..300 {
        let mut damaged = bytes.clone();
        match rng.next_u32() % 4 {
            0 => damaged.truncate((rng.next_u64() % bytes.len() as u64) as usize),
            1 => {
                let at = (rng.next_u64() % bytes.len() as u64) as usize;
                damaged[at] ^= 1 << (rng.next_u32() % 8);
            }
            2 => {
                // Plausible-looking damage: a word set to a huge or small value.
                let at = (rng.next_u64() % (bytes.len() as u64 - 8)) as usize;
                let value = if rng.next_u32() % 2 == 0 {
                    u64::MAX
                } else {
                    rng.next_u64() % 1000
                };
                damaged[at..at + 8].copy_from_slice(&value.to_le_bytes());
            }
            _ => damaged.extend((0..1 + rng.next_u32() % 64).map(|_| rng.next_u32() as u8)),
        }
        if damaged == bytes {
            continue;
        }
        let name = format!("fuzz-{round}");
        assert!(
            open_bytes(&dir, &name, &damaged, Open::Load).is_err(),
            "round {round} accepted"
        );
        let path = dir.join(&name);
        std::fs::write(&path, &damaged).unwrap();
        match Recording::<Fr>::map_unverified(&path) {
            Err(_) => refused += 1,
            Ok(mapped) => match synthesized(&mapped, 1) {
                Err(_) => failed += 1,
                Ok(_) => evaluated += 1,
            },
        }
        std::fs::remove_file(&path).unwrap();
    }
    println!(
        "mapped: {refused} refused on opening, {failed} failed evaluating, {evaluated} evaluated"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn concurrent_saves_never_damage_swap_or_touch_other_files() {
    let dir = scratch("concurrent");
    let users_file = dir.join("porep.partial");
    std::fs::write(&users_file, b"the user's own file").unwrap();
    let recordings: Vec<Recording<Fr>> = (0..4)
        .map(|seed| Recording::record(RandomCircuit { seed, steps: 300 }).unwrap())
        .collect();
    let nonzeros: Vec<usize> = recordings.iter().map(Recording::nonzeros).collect();
    // Two writers per path, on one path and its sibling with the same stem.
    let targets = [dir.join("porep.rec"), dir.join("porep.bin")];
    std::thread::scope(|scope| {
        for (i, recording) in recordings.iter().enumerate() {
            let target = &targets[i % 2];
            scope.spawn(move || {
                for _ in 0..10 {
                    recording.save(target).unwrap();
                }
            });
        }
    });
    for (i, target) in targets.iter().enumerate() {
        for how in [Open::Load, Open::Map] {
            let opened = how.open(target).unwrap();
            // Written by one of the two recordings saved under this name, whole.
            let candidates = [nonzeros[i], nonzeros[i + 2]];
            assert!(
                candidates.contains(&opened.nonzeros()),
                "{} {how:?}",
                target.display()
            );
        }
    }
    assert_eq!(std::fs::read(&users_file).unwrap(), b"the user's own file");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["porep.bin", "porep.partial", "porep.rec"]);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Truncated in place while mapped: the reads past the new end see zeros instead of
/// raising SIGBUS, and the evaluation is an error; the process goes on, and the same file
/// written whole again maps and evaluates.
#[test]
fn a_file_truncated_under_its_mapping_fails_the_evaluation_not_the_process() {
    let dir = scratch("truncated");
    let (_, path, bytes) = saved_file(&dir);
    for keep in [bytes.len() / 2, 4096, 0] {
        let mapped = Recording::<Fr>::map_unverified(&path).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(keep as u64).unwrap();
        drop(file);
        match synthesized(&mapped, 1) {
            Err(Error::File {
                problem: FileProblem::Changed(why),
                ..
            }) => assert!(why.contains("truncated"), "{why}"),
            other => panic!("kept {keep}: {:?}", other.map(|_| "vectors")),
        }
        drop(mapped);
        std::fs::write(&path, &bytes).unwrap();
    }
    let mapped = Recording::<Fr>::map_unverified(&path).unwrap();
    assert_same(
        &synthesized(&mapped, 2).unwrap(),
        &synthesize(Mixed { seed: Some(2) }).unwrap(),
        "written again",
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Written in place while mapped (same length, other bytes), by an ordinary writer or by
/// one that sets the modification time back: the evaluation is an error. Renamed over while
/// mapped (how saves replace files): the mapping reads the old file and the evaluation is
/// right.
#[test]
fn a_file_rewritten_under_its_mapping_is_an_error_and_one_renamed_over_is_not_seen() {
    let dir = scratch("rewritten");
    let (_, path, bytes) = saved_file(&dir);
    let columns = layout(&bytes).sections[A_COLUMNS].0;
    for restores_times in [false, true] {
        let mapped = Recording::<Fr>::map_unverified(&path).unwrap();
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.seek(SeekFrom::Start(columns as u64)).unwrap();
        file.write_all(&bytes[columns + 4..columns + 8]).unwrap();
        if restores_times {
            file.set_modified(modified).unwrap();
        }
        drop(file);
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap() == modified,
            restores_times
        );
        match synthesized(&mapped, 1) {
            Err(Error::File {
                problem: FileProblem::Changed(why),
                ..
            }) => assert!(why.contains("written"), "{why}"),
            other => panic!(
                "times restored {restores_times}: {:?}",
                other.map(|_| "vectors")
            ),
        }
        drop(mapped);
        std::fs::write(&path, &bytes).unwrap();
    }

    let mapped = Recording::<Fr>::map_unverified(&path).unwrap();
    Recording::record(RandomCircuit { seed: 9, steps: 50 })
        .unwrap()
        .save(&path)
        .unwrap();
    assert_same(
        &synthesized(&mapped, 3).unwrap(),
        &synthesize(Mixed { seed: Some(3) }).unwrap(),
        "renamed over",
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// The environment variable that turns the huge-header test into its memory-limited child.
const CHILD: &str = "SYNTHPOOL_HUGE_HEADER_FILE";
/// What the child prints when both openings were refused as they should be.
const REFUSED: &str = "huge header refused:";

/// A file whose header promises 12 GiB of sections (sparse: no disk used), opened with 4
/// GiB of address space: loading is `OutOfMemory` before it reads anything large, mapping
/// an error from the system; neither aborts.
#[test]
fn a_header_promising_more_memory_than_there_is_is_an_error_within_seconds() {
    if let Ok(path) = std::env::var(CHILD) {
        let started = std::time::Instant::now();
        let err = Recording::<Fr>::load(Path::new(&path)).expect_err("refused");
        assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
        let mapped = Recording::<Fr>::map_unverified(Path::new(&path)).expect_err("refused");
        assert!(matches!(mapped, Error::File { .. }), "{mapped}");
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
        println!("{REFUSED} {err}; {mapped}");
        return;
    }
    let dir = scratch("huge");
    let (_, _, bytes) = saved_file(&dir);
    let layout = layout(&bytes);
    // A's columns and coefficient ids grown to make the file 12 GiB; the table and the
    // counts follow, every other section as it was.
    let extra = ((12u64 << 30) / 6) as usize;
    let nonzeros_at = layout.counts + 4 * 8;
    let nonzeros_a = u64::from_le_bytes(bytes[nonzeros_at..nonzeros_at + 8].try_into().unwrap())
        as usize
        + extra;
    let mut header = bytes[..layout.sections[0].0].to_vec();
    header[nonzeros_at..nonzeros_at + 8].copy_from_slice(&(nonzeros_a as u64).to_le_bytes());
    let table = layout.counts + 7 * 8 + 4;
    let mut offset = layout.sections[0].0;
    for (i, &(_, len)) in layout.sections.iter().enumerate() {
        let len = match i {
            A_COLUMNS => len + 4 * extra,
            3 => len + 2 * extra,
            _ => len,
        };
        header[table + 16 * i..table + 16 * i + 8].copy_from_slice(&(offset as u64).to_le_bytes());
        header[table + 16 * i + 8..table + 16 * i + 16]
            .copy_from_slice(&(len as u64).to_le_bytes());
        offset += len.next_multiple_of(64);
    }
    let (dictionary_at, dictionary_len) = layout.sections[0];
    let path = dir.join("huge.rec");
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(&header).unwrap();
    file.write_all(&bytes[dictionary_at..dictionary_at + dictionary_len])
        .unwrap();
    file.set_len(offset as u64 + 32).unwrap(); // sparse: no disk space used
    drop(file);

    let exe = std::env::current_exe().unwrap();
    let child = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" --exact \"$1\" --nocapture")
        .arg(&exe)
        .arg("a_header_promising_more_memory_than_there_is_is_an_error_within_seconds")
        .env(CHILD, &path)
        .output()
        .unwrap();
    std::fs::remove_dir_all(dir).unwrap();
    let output = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success() && output.contains(REFUSED),
        "the memory-limited opening: {}\n{output}\n{}",
        child.status,
        String::from_utf8_lossy(&child.stderr)
    );
}
