//! The drop-in batch provers against bellperson's own, for 0.27 and 0.26: byte-identical
//! proofs for the same randomness, cold (recording) and warm (reusing), with in-memory and
//! mapped parameters; the persistent cache saves, loads, and refuses damaged or foreign
//! files; a member of another structure is an error naming it; a circuit that cannot be
//! recorded is synthesized directly; concurrent callers share one recording.
//!
//! The cache is process-wide, so everything runs in one test, in order.

mod common;

use std::path::{Path, PathBuf};

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError, Variable};
use blstrs::{Bls12, Scalar as Fr};
use common::{num_circuits as num, NumCircuit};
use ff::Field;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool::precompiled::cache::{self, CacheStats};
use synthpool::precompiled::Recording;

type Proofs = Vec<Vec<u8>>;

/// Each proof's bytes, as `write` serializes it (the two releases' proofs are distinct types).
fn serialized<P>(proofs: &[P], write: impl Fn(&P, &mut Vec<u8>) -> std::io::Result<()>) -> Proofs {
    proofs
        .iter()
        .map(|p| {
            let mut out = Vec::new();
            write(p, &mut out).unwrap();
            out
        })
        .collect()
}

fn bytes_027(proofs: &[bellperson_027::groth16::Proof<Bls12>]) -> Proofs {
    serialized(proofs, |p, out| p.write(out))
}

fn stats() -> CacheStats {
    cache::stats::<Fr>()
}

/// Asserts that `counter` of the stats grew by `by` since `before`.
macro_rules! grew {
    ($before:expr, $counter:ident, $by:expr) => {
        assert_eq!(
            stats().$counter - $before.$counter,
            $by,
            "{}: {:?}",
            stringify!($counter),
            stats()
        )
    };
}

/// `2 * width` aux values and `width` rows whose coefficients are all distinct: more than
/// a u16 dictionary holds when `width * width > 65536`.
#[derive(Clone)]
struct ManyCoefficients {
    width: u64,
}

impl Circuit<Fr> for ManyCoefficients {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let xs: Vec<(Variable, Fr)> = (0..self.width)
            .map(|i| {
                let v = Fr::from(i + 3);
                cs.alloc(|| format!("x {i}"), || Ok(v)).map(|var| (var, v))
            })
            .collect::<Result<_, _>>()?;
        for row in 0..self.width {
            let coeff = |i: u64| Fr::from(10 + row * self.width + i);
            let sum = xs
                .iter()
                .zip(0..)
                .fold(Fr::ZERO, |acc, ((_, v), i)| acc + *v * coeff(i));
            let z = cs.alloc(|| format!("z {row}"), || Ok(sum))?;
            cs.enforce(
                || format!("row {row}"),
                |lc| {
                    xs.iter()
                        .zip(0..)
                        .fold(lc, |lc, ((var, _), i)| lc + (coeff(i), *var))
                },
                |lc| lc + CS::one(),
                |lc| lc + z,
            );
        }
        Ok(())
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("synthpool-dropin-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rec"))
        .collect();
    files.sort();
    files
}

#[test]
fn drop_in_batch_provers_match_bellperson_with_every_cache_state() {
    use bellperson_027::groth16;
    use synthpool::groth16::v0_27 as ours;

    cache::set_cache_dir(None);
    let mut rng = XorShiftRng::seed_from_u64(27);
    let params = groth16::generate_random_parameters::<Bls12, _, _>(
        NumCircuit { x: None, rounds: 2 },
        &mut rng,
    )
    .unwrap();
    let xs = [3u64, 1 << 40, 7];
    let (r, s) = synthpool::prover::v0_27::random_rs::<Fr>(xs.len(), &mut rng);
    let expected = bytes_027(
        &groth16::create_proof_batch(num(&xs, 2), &params, r.clone(), s.clone()).unwrap(),
    );
    let prove = |params| {
        bytes_027(&ours::create_proof_batch(num(&xs, 2), params, r.clone(), s.clone()).unwrap())
    };

    // Cold, then warm.
    let before = stats();
    assert_eq!(prove(&params), expected, "cold");
    grew!(before, recorded, 1);
    assert_eq!(prove(&params), expected, "warm");
    grew!(before, recorded, 1);
    grew!(before, evaluated_batches, 1);

    // Random and prioritized variants draw as bellperson does.
    let theirs = groth16::create_random_proof_batch(
        num(&xs, 2),
        &params,
        &mut XorShiftRng::seed_from_u64(4),
    );
    let mine =
        ours::create_random_proof_batch(num(&xs, 2), &params, &mut XorShiftRng::seed_from_u64(4));
    assert_eq!(
        bytes_027(&mine.unwrap()),
        bytes_027(&theirs.unwrap()),
        "random"
    );
    let theirs = groth16::create_random_proof_batch_in_priority(
        num(&xs, 2),
        &params,
        &mut XorShiftRng::seed_from_u64(5),
    );
    let mine = ours::create_random_proof_batch_in_priority(
        num(&xs, 2),
        &params,
        &mut XorShiftRng::seed_from_u64(5),
    );
    assert_eq!(
        bytes_027(&mine.unwrap()),
        bytes_027(&theirs.unwrap()),
        "priority"
    );
    let mine = ours::create_proof_batch_in_priority(num(&xs, 2), &params, r.clone(), s.clone());
    assert_eq!(bytes_027(&mine.unwrap()), expected, "priority with r, s");

    // Mapped parameters, as filecoin-proofs reads them.
    let dir = scratch("params");
    let params_file = dir.join("params");
    params
        .write(std::fs::File::create(&params_file).unwrap())
        .unwrap();
    let mapped = groth16::Parameters::<Bls12>::build_mapped_parameters(params_file, false).unwrap();
    let mapped_proofs = ours::create_proof_batch(num(&xs, 2), &mapped, r.clone(), s.clone());
    assert_eq!(
        bytes_027(&mapped_proofs.unwrap()),
        expected,
        "mapped parameters"
    );

    // A member of another structure is an error naming it, not a proof.
    let mut mixed = num(&xs, 2);
    mixed[1].rounds = 3;
    let err = ours::create_proof_batch(mixed, &params, r.clone(), s.clone()).expect_err("refused");
    assert!(err.to_string().contains("batch member 1"), "{err}");

    // The persistent cache: saved after the first verified proof, loaded by a process that
    // has nothing in memory, damaged or foreign files refused and replaced.
    let cache_dir = scratch("cache");
    cache::set_cache_dir(Some(cache_dir.clone()));
    cache::clear::<Fr>();
    let before = stats();
    assert_eq!(prove(&params), expected, "recorded for the disk");
    grew!(before, recorded, 1);
    grew!(before, saved, 1);
    let files = cache_files(&cache_dir);
    assert_eq!(files.len(), 1, "{files:?}");
    cache::clear::<Fr>();
    assert_eq!(prove(&params), expected, "loaded from disk");
    grew!(before, loaded, 1);
    grew!(before, recorded, 1);

    let mut damaged = std::fs::read(&files[0]).unwrap();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x40;
    std::fs::write(&files[0], &damaged).unwrap();
    cache::clear::<Fr>();
    assert_eq!(prove(&params), expected, "damaged file");
    grew!(before, refused_files, 1);
    grew!(before, recorded, 2);
    grew!(before, saved, 2);
    assert!(
        Recording::<Fr>::load(&files[0]).is_ok(),
        "replaced by a good file"
    );

    let foreign = Recording::<Fr>::record(NumCircuit { x: None, rounds: 2 }).unwrap();
    foreign.save_keyed(&files[0], &[9; 32]).unwrap();
    cache::clear::<Fr>();
    assert_eq!(prove(&params), expected, "file of another key");
    grew!(before, refused_files, 2);
    grew!(before, recorded, 3);
    cache::set_cache_dir(None);

    // Concurrent callers of one structure: one recording between them.
    cache::clear::<Fr>();
    let before = stats();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..3).map(|_| scope.spawn(|| prove(&params))).collect();
        for worker in workers {
            assert_eq!(worker.join().unwrap(), expected, "concurrent");
        }
    });
    grew!(before, recorded, 1);
    grew!(before, evaluated_batches, 2);

    // A circuit the recorder refuses: synthesized directly, the same proofs.
    let wide = ManyCoefficients { width: 260 };
    let wide_params =
        groth16::generate_random_parameters::<Bls12, _, _>(wide.clone(), &mut rng).unwrap();
    let (r1, s1) = synthpool::prover::v0_27::random_rs::<Fr>(1, &mut rng);
    let theirs =
        groth16::create_proof_batch(vec![wide.clone()], &wide_params, r1.clone(), s1.clone());
    let before = stats();
    for _ in 0..2 {
        let mine =
            ours::create_proof_batch(vec![wide.clone()], &wide_params, r1.clone(), s1.clone());
        assert_eq!(
            bytes_027(&mine.unwrap()),
            bytes_027(theirs.as_ref().unwrap()),
            "unrecordable"
        );
    }
    grew!(before, unrecordable, 1);
    grew!(before, direct_batches, 1);

    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache_dir).unwrap();

    bellperson_0_26_drop_in_matches_too();
}

/// bellperson 0.26's drop-in, cold and warm.
fn bellperson_0_26_drop_in_matches_too() {
    use bellperson::groth16;
    use synthpool::groth16::v0_26 as ours;

    let mut rng = XorShiftRng::seed_from_u64(26);
    let params = groth16::generate_random_parameters::<Bls12, _, _>(
        NumCircuit { x: None, rounds: 1 },
        &mut rng,
    )
    .unwrap();
    let bytes = |proofs: Vec<groth16::Proof<Bls12>>| serialized(&proofs, |p, out| p.write(out));
    for _ in 0..2 {
        let theirs = groth16::create_random_proof_batch(
            num(&[5, 6], 1),
            &params,
            &mut XorShiftRng::seed_from_u64(8),
        );
        let mine = ours::create_random_proof_batch(
            num(&[5, 6], 1),
            &params,
            &mut XorShiftRng::seed_from_u64(8),
        );
        assert_eq!(bytes(mine.unwrap()), bytes(theirs.unwrap()));
    }
}
