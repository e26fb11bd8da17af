//! Pre-compiled evaluation: the assignment from record + witness + evaluate equals
//! ProvingAssignment's field for field on every circuit family the assignment tests use;
//! proofs from it are bellperson's; the file format round-trips and rejects damage.

mod common;

use std::path::PathBuf;

use bellpepper_core::Circuit;
use blstrs::{Bls12, Scalar as Fr};
use common::{assert_same_parts, ExtendCircuit, NumCircuit, Parts, RandomCircuit, Sha256Circuit};
use rand_core::{RngCore, SeedableRng};
use rand_xorshift::XorShiftRng;
use synthpool::circuits::{GadgetSet, Labeling, MerklePath};
use synthpool::pce::PreparedCircuit;
use synthpool::{synthesize, ProvingAssignment};

fn assert_same(ours: &ProvingAssignment<Fr>, expected: &ProvingAssignment<Fr>, what: &str) {
    assert_same_parts(Parts::of(ours), Parts::of(expected), what);
}

fn check<C: Circuit<Fr> + Clone>(circuit: C, what: &str) -> PreparedCircuit<Fr> {
    let prepared = PreparedCircuit::record(circuit.clone()).unwrap();
    let expected = synthesize(circuit.clone()).unwrap();
    assert_eq!(prepared.shape(), expected.shape(), "{what}: shape");
    let ours = prepared.synthesize(circuit).unwrap();
    assert_same(&ours, &expected, what);
    prepared
}

#[test]
fn equals_proving_assignment_on_every_circuit_family() {
    for seed in 0..40 {
        check(
            RandomCircuit { seed, steps: 200 },
            &format!("random {seed}"),
        );
    }
    for seed in 0..5 {
        let parts: Vec<RandomCircuit> = (0..4)
            .map(|k| RandomCircuit {
                seed: 100 + seed * 10 + k,
                steps: 60,
            })
            .collect();
        check(
            ExtendCircuit {
                parts,
                parallel: true,
            },
            &format!("extend {seed}"),
        );
    }
    check(
        NumCircuit {
            x: Some(Fr::from(77u64)),
            rounds: 3,
        },
        "num",
    );
    check(
        Sha256Circuit {
            bytes: Some((0..64).collect()),
            len: 64,
        },
        "sha256 64 bytes",
    );
    for gadgets in [GadgetSet::Bellperson, GadgetSet::Synthpool] {
        check(MerklePath::sample(5, 2, gadgets), "merkle");
    }
    let prepared = check(Labeling::sample(3, GadgetSet::Synthpool), "labeling");
    // Dictionary coding: a few hundred distinct coefficients, 6 bytes a nonzero + offsets.
    println!(
        "labeling: {} nonzeros, {} distinct coefficients, {:.2} bytes per nonzero",
        prepared.nonzeros(),
        prepared.dictionary_len(),
        prepared.bytes_per_nonzero()
    );
    assert!(
        prepared.bytes_per_nonzero() <= 8.5,
        "{}",
        prepared.bytes_per_nonzero()
    );
}

#[test]
fn one_recording_serves_many_witnesses() {
    let prepared = PreparedCircuit::<Fr>::record(NumCircuit { x: None, rounds: 2 }).unwrap();
    for x in [1u64, 2, 1 << 50] {
        let circuit = NumCircuit {
            x: Some(Fr::from(x)),
            rounds: 2,
        };
        assert_same(
            &prepared.synthesize(circuit.clone()).unwrap(),
            &synthesize(circuit).unwrap(),
            "num",
        );
    }
}

#[test]
fn witnesses_of_another_shape_are_errors() {
    let prepared = PreparedCircuit::<Fr>::record(NumCircuit { x: None, rounds: 2 }).unwrap();
    let err = prepared
        .synthesize(NumCircuit {
            x: Some(Fr::from(3u64)),
            rounds: 3,
        })
        .err()
        .unwrap();
    assert!(err.to_string().contains("the witness has"), "{err}");
}

#[test]
fn proofs_from_prepared_assignments_are_bellpersons() {
    use bellperson::groth16;
    let mut rng = XorShiftRng::seed_from_u64(5);
    let params = groth16::generate_random_parameters::<Bls12, _, _>(
        NumCircuit { x: None, rounds: 2 },
        &mut rng,
    )
    .unwrap();
    let prepared = PreparedCircuit::<Fr>::record(NumCircuit { x: None, rounds: 2 }).unwrap();
    let circuit = NumCircuit {
        x: Some(Fr::from(9u64)),
        rounds: 2,
    };
    let (r, s) = synthpool::prover::v0_26::random_rs::<Fr>(1, &mut rng);
    let expected = groth16::create_proof(circuit.clone(), &params, r[0], s[0]).unwrap();
    let assignment = prepared.synthesize(circuit).unwrap();
    let proof = synthpool::prover::v0_26::prove(&params, std::slice::from_ref(&assignment), &r, &s)
        .unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    proof[0].write(&mut a).unwrap();
    expected.write(&mut b).unwrap();
    assert_eq!(a, b);
    let pvk = groth16::prepare_verifying_key(&params.vk);
    assert!(groth16::verify_proof(&pvk, &proof[0], &assignment.input_assignment[1..]).unwrap());
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("synthpool-pce-{}-{name}", std::process::id()))
}

fn saved_file(name: &str) -> (PreparedCircuit<Fr>, PathBuf, Vec<u8>) {
    let prepared =
        PreparedCircuit::<Fr>::record(MerklePath::sample(1, 1, GadgetSet::Synthpool)).unwrap();
    let path = temp(name);
    prepared.save(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (prepared, path, bytes)
}

#[test]
fn save_and_load_round_trip() {
    let (prepared, path, bytes) = saved_file("roundtrip");
    let loaded = PreparedCircuit::<Fr>::load(&path).unwrap();
    assert_eq!(loaded.shape(), prepared.shape());
    assert_eq!(loaded.nonzeros(), prepared.nonzeros());
    let circuit = MerklePath::sample(1, 1, GadgetSet::Synthpool);
    assert_same(
        &loaded.synthesize(circuit.clone()).unwrap(),
        &synthesize(circuit).unwrap(),
        "loaded",
    );
    println!(
        "file: {} bytes for {} nonzeros",
        bytes.len(),
        prepared.nonzeros()
    );
    std::fs::remove_file(path).unwrap();
}

fn load_bytes(name: &str, bytes: &[u8]) -> std::io::Result<PreparedCircuit<Fr>> {
    let path = temp(name);
    std::fs::write(&path, bytes).unwrap();
    let result = PreparedCircuit::<Fr>::load(&path);
    std::fs::remove_file(&path).unwrap();
    result
}

fn error_of(name: &str, bytes: &[u8]) -> String {
    match load_bytes(name, bytes) {
        Ok(_) => panic!("{name}: damaged file accepted"),
        Err(e) => {
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{name}: {e}");
            e.to_string()
        }
    }
}

#[test]
fn damaged_foreign_and_truncated_files_are_clear_errors() {
    let (_, path, bytes) = saved_file("damage");
    std::fs::remove_file(path).unwrap();

    assert!(error_of("empty", &[]).contains("truncated"));
    assert!(
        error_of("magic", &[b"NOTAPCE!".as_slice(), &bytes[8..]].concat()).contains("bad magic")
    );
    let mut version = bytes.clone();
    version[8] = 2;
    assert!(error_of("version", &version).contains("format version 2"));
    let mut field = bytes.clone();
    field[20] ^= 1; // inside the modulus text
    assert!(error_of("field", &field).contains("recorded for the field"));
    assert!(error_of("short", &bytes[..bytes.len() - 1]).contains("truncated or corrupt"));
    let mut flipped = bytes.clone();
    let middle = bytes.len() / 2;
    flipped[middle] ^= 0x10;
    assert!(error_of("flip", &flipped).contains("checksum mismatch"));
}

#[test]
fn files_with_a_valid_checksum_but_broken_invariants_are_rejected() {
    let (_, path, bytes) = saved_file("crafted");
    std::fs::remove_file(path).unwrap();
    // The first column of A sits after the fixed header, the dictionary and A's row offsets;
    // find it by re-deriving the layout from the header.
    let modulus_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let counts_at = 16 + modulus_len + 4;
    let count = |k: usize| {
        u64::from_le_bytes(
            bytes[counts_at + 8 * k..counts_at + 8 * k + 8]
                .try_into()
                .unwrap(),
        ) as usize
    };
    let (aux, rows, dictionary) = (count(1), count(2), count(3));
    let first_column = counts_at + 7 * 8 + dictionary * 32 + (rows + 1) * 4;
    let reseal = |mut crafted: Vec<u8>| {
        let body = crafted.len() - 32;
        let digest = blake2s_simd::blake2s(&crafted[..body]);
        crafted[body..].copy_from_slice(digest.as_bytes());
        crafted
    };
    let mut crafted = bytes.clone();
    let column = (aux as u32 + 5).to_le_bytes();
    crafted[first_column..first_column + 4].copy_from_slice(&column);
    assert!(error_of("crafted", &reseal(crafted)).contains("out of range"));

    // A huge aux count changes no section length; it must not size anything.
    let mut crafted = bytes.clone();
    crafted[counts_at + 8..counts_at + 16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(error_of("huge aux", &reseal(crafted)).contains("variable counts"));
}

#[test]
fn extreme_counts_in_the_header_are_errors() {
    let (_, path, bytes) = saved_file("counts");
    std::fs::remove_file(path).unwrap();
    let modulus_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let counts_at = 16 + modulus_len + 4;
    for k in 0..7 {
        for value in [u64::MAX, u64::MAX - 1, 1 << 62, 0] {
            let mut damaged = bytes.clone();
            damaged[counts_at + 8 * k..counts_at + 8 * k + 8].copy_from_slice(&value.to_le_bytes());
            if damaged != bytes {
                error_of(&format!("count-{k}-{value}"), &damaged);
            }
        }
    }
}

#[test]
fn random_damage_never_panics_and_is_never_accepted() {
    let (_, path, bytes) = saved_file("fuzz");
    std::fs::remove_file(path).unwrap();
    let mut rng = XorShiftRng::seed_from_u64(0xf022);
    for round in 0..300 {
        let mut damaged = bytes.clone();
        match rng.next_u32() % 4 {
            0 => damaged.truncate((rng.next_u64() % bytes.len() as u64) as usize),
            1 => {
                let at = (rng.next_u64() % bytes.len() as u64) as usize;
                damaged[at] ^= 1 << (rng.next_u32() % 8);
            }
            2 => {
                // Plausible-looking header damage: a count set to a huge or small value.
                let at = 16 + (rng.next_u64() % 120) as usize;
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
        assert!(
            load_bytes(&format!("fuzz-{round}"), &damaged).is_err(),
            "round {round} accepted"
        );
    }
}

#[test]
fn recycled_buffers_give_the_same_assignments_proof_after_proof() {
    let prepared = PreparedCircuit::<Fr>::record(NumCircuit { x: None, rounds: 2 }).unwrap();
    let mut recycled = synthpool::pce::Recycled::default();
    for x in [5u64, 6, 1 << 33, 7] {
        let circuit = NumCircuit {
            x: Some(Fr::from(x)),
            rounds: 2,
        };
        let expected = synthesize(circuit.clone()).unwrap();
        let ours = recycled.synthesize(&prepared, circuit).unwrap();
        assert_same(ours, &expected, &format!("recycled, x = {x}"));
    }
}
