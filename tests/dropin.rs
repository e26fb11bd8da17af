//! The drop-in batch provers against bellperson's own, for 0.27 and 0.26: byte-identical
//! proofs for the same randomness, cold (recording) and warm (reusing), with in-memory and
//! mapped parameters, at every number of members in flight; the persistent cache saves,
//! loads, and refuses damaged or foreign files; recordings earn trust by a verified proof
//! and a bad caller or a bad file never poisons the process; parameters of another circuit
//! are an error; a member that fails or panics fails the batch with its index.
//!
//! The cache is process-wide, so everything runs in one test, in order.

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError, Variable};
use bellperson_027::groth16::{self, ParameterSource, Parameters, VerifyingKey};
use blstrs::{Bls12, Scalar as Fr};
use common::{linear, num_circuits as num, Linear, NumCircuit};
use ff::Field;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool::groth16::{self as dropin, v0_27 as ours, CacheStats};
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

fn bytes_027(proofs: &[groth16::Proof<Bls12>]) -> Proofs {
    serialized(proofs, |p, out| p.write(out))
}

fn stats() -> CacheStats {
    dropin::stats::<Fr>()
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

/// A member that fails its synthesis, or panics in it, for batches of [`NumCircuit`]s.
#[derive(Clone)]
enum Member {
    Good(NumCircuit),
    Fails,
    Panics,
}

impl Circuit<Fr> for Member {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            Member::Good(circuit) => circuit.synthesize(cs),
            Member::Fails => Err(SynthesisError::AssignmentMissing),
            Member::Panics => panic!("a member panicked on purpose"),
        }
    }
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

/// Parameters whose H query is handed out only once the gate opens: a batch proven with
/// them holds its structure on probation for as long as the test wants.
struct Gated<'a> {
    params: &'a Parameters<Bls12>,
    gate: Arc<(Mutex<bool>, Condvar)>,
}

impl ParameterSource<Bls12> for Gated<'_> {
    type G1Builder = <&'static Parameters<Bls12> as ParameterSource<Bls12>>::G1Builder;
    type G2Builder = <&'static Parameters<Bls12> as ParameterSource<Bls12>>::G2Builder;

    fn get_vk(&self, ic: usize) -> Result<&VerifyingKey<Bls12>, SynthesisError> {
        self.params.get_vk(ic)
    }
    fn get_h(&self, n: usize) -> Result<Self::G1Builder, SynthesisError> {
        let (open, changed) = &*self.gate;
        let mut open = open.lock().unwrap();
        while !*open {
            open = changed.wait(open).unwrap();
        }
        self.params.get_h(n)
    }
    fn get_l(&self, n: usize) -> Result<Self::G1Builder, SynthesisError> {
        self.params.get_l(n)
    }
    fn get_a(
        &self,
        i: usize,
        a: usize,
    ) -> Result<(Self::G1Builder, Self::G1Builder), SynthesisError> {
        self.params.get_a(i, a)
    }
    fn get_b_g1(
        &self,
        i: usize,
        a: usize,
    ) -> Result<(Self::G1Builder, Self::G1Builder), SynthesisError> {
        self.params.get_b_g1(i, a)
    }
    fn get_b_g2(
        &self,
        i: usize,
        a: usize,
    ) -> Result<(Self::G2Builder, Self::G2Builder), SynthesisError> {
        self.params.get_b_g2(i, a)
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

/// Whether every proof verifies for its member's public input.
fn all_verify(
    params: &Parameters<Bls12>,
    proofs: &[groth16::Proof<Bls12>],
    publics: &[Fr],
) -> bool {
    let pvk = groth16::prepare_verifying_key(&params.vk);
    proofs
        .iter()
        .zip(publics)
        .all(|(proof, public)| groth16::verify_proof(&pvk, proof, &[*public]).unwrap_or(false))
}

#[test]
fn drop_in_batch_provers_match_bellperson_and_earn_trust() {
    dropin::set_cache_dir(None);
    let mut rng = XorShiftRng::seed_from_u64(27);
    let params = groth16::generate_random_parameters::<Bls12, _, _>(
        NumCircuit { x: None, rounds: 2 },
        &mut rng,
    )
    .unwrap();
    let xs = [3u64, 1 << 40, 7];
    let (r, s) = synthpool::prover::random_rs::<Fr>(xs.len(), &mut rng);
    let expected = bytes_027(
        &groth16::create_proof_batch(num(&xs, 2), &params, r.clone(), s.clone()).unwrap(),
    );
    let prove = |params: &Parameters<Bls12>| {
        bytes_027(&ours::create_proof_batch(num(&xs, 2), params, r.clone(), s.clone()).unwrap())
    };

    // Cold (recorded, trusted after its first proof verifies), then warm.
    let before = stats();
    assert_eq!(prove(&params), expected, "cold");
    grew!(before, recorded, 1);
    grew!(before, trusted, 1);
    assert_eq!(prove(&params), expected, "warm");
    grew!(before, recorded, 1);
    grew!(before, evaluated_batches, 1);

    // Every number of members in flight gives the same proofs; none is refused.
    for members in [1, 2, 3, 8] {
        dropin::set_in_flight(members).unwrap();
        assert_eq!(prove(&params), expected, "{members} in flight");
    }
    assert!(
        dropin::set_in_flight(0).is_err(),
        "0 in flight proves nothing"
    );
    dropin::set_in_flight(dropin::DEFAULT_IN_FLIGHT).unwrap();

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

    // A member of another structure is an error naming it, not a proof; the trusted
    // recording it did not fit is dropped (it cannot tell a wrong caller from a wrong
    // recording), and the next batch records again.
    let mut mixed = num(&xs, 2);
    mixed[1].rounds = 3;
    let before = stats();
    let err = ours::create_proof_batch(mixed, &params, r.clone(), s.clone()).expect_err("refused");
    assert!(err.to_string().contains("batch member 1"), "{err}");
    grew!(before, rejected, 1);
    assert_eq!(
        prove(&params),
        expected,
        "after a member of another structure"
    );
    grew!(before, recorded, 1);

    // Parameters made for a bigger circuit with the same input count: an error naming the
    // query, before any multi-exponentiation (bellperson returns a proof that does not
    // verify).
    let bigger = groth16::generate_random_parameters::<Bls12, _, _>(
        NumCircuit { x: None, rounds: 5 },
        &mut rng,
    )
    .unwrap();
    let err = ours::create_proof_batch(num(&xs, 2), &bigger, r.clone(), s.clone())
        .expect_err("parameters of another circuit");
    assert!(err.to_string().contains("query"), "{err}");
    let vectors = synthpool::synthesize(num(&xs, 2).remove(0)).unwrap();
    let err = synthpool::prover::v0_27::prove(&bigger, vec![vectors], &r[..1], &s[..1])
        .expect_err("parameters of another circuit");
    assert!(
        matches!(err, synthpool::Error::ParameterMismatch { .. }),
        "{err}"
    );

    persistent_cache(&params, &xs);
    wrong_circuits_never_poison_the_process();
    failing_members(&params, &r, &s);

    // Concurrent callers of one structure: one recording between them.
    dropin::clear::<Fr>();
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
    let (r1, s1) = synthpool::prover::random_rs::<Fr>(1, &mut rng);
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
    bellperson_0_26_drop_in_matches_too();
}

/// The drop-in a patched fork calls, which can make each member's circuit again (here, a
/// clone kept for it), with the randomness `seed` draws.
fn remaking<C, P>(circuits: Vec<C>, params: P, seed: u64) -> Result<Proofs, SynthesisError>
where
    C: Circuit<Fr> + Clone + Send + Sync,
    P: ParameterSource<Bls12>,
{
    let kept = circuits.clone();
    let remake = |i: usize| Ok::<_, String>(kept[i].clone());
    let mut rng = XorShiftRng::seed_from_u64(seed);
    ours::create_random_proof_batch_remaking(circuits, remake, params, false, &mut rng)
        .map(|proofs| bytes_027(&proofs))
}

/// bellperson's proofs for the randomness `seed` draws.
fn bellperson_random<C: Circuit<Fr> + Send>(
    circuits: Vec<C>,
    params: &Parameters<Bls12>,
    seed: u64,
) -> Proofs {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    bytes_027(&groth16::create_random_proof_batch(circuits, params, &mut rng).unwrap())
}

/// The persistent cache: written once a recording is trusted, opened by a process that has
/// nothing in memory (and trusted once its own proof verifies) when the batch can make its
/// members again; damaged files fail a member, which is made again directly, and are
/// removed; foreign files refused and replaced. The drop-ins with bellperson's signatures
/// never read a file.
fn persistent_cache(params: &Parameters<Bls12>, xs: &[u64]) {
    let cache_dir = scratch("cache");
    dropin::set_cache_dir(Some(cache_dir.clone()));
    dropin::clear::<Fr>();
    let expected = bellperson_random(num(xs, 2), params, 31);
    let prove = |params: &Parameters<Bls12>| remaking(num(xs, 2), params, 31).unwrap();
    // A save abandoned two days ago (its process killed) and one in progress: a save
    // removes the first only.
    let abandoned = cache_dir.join(".1-ab.rec.4242.0.synthpool-tmp");
    let in_progress = cache_dir.join(".1-ab.rec.4242.1.synthpool-tmp");
    for temporary in [&abandoned, &in_progress] {
        std::fs::write(temporary, b"part of a recording").unwrap();
    }
    let two_days = std::time::Duration::from_secs(2 * 24 * 3600);
    std::fs::File::options()
        .write(true)
        .open(&abandoned)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - two_days)
        .unwrap();
    let before = stats();
    assert_eq!(prove(params), expected, "recorded for the disk");
    grew!(before, recorded, 1);
    grew!(before, saved, 1);
    assert!(
        !abandoned.exists() && in_progress.exists(),
        "abandoned saves swept"
    );
    std::fs::remove_file(&in_progress).unwrap();
    let files = cache_files(&cache_dir);
    assert_eq!(files.len(), 1, "{files:?}");
    dropin::clear::<Fr>();
    assert_eq!(prove(params), expected, "loaded from disk");
    grew!(before, loaded, 1);
    grew!(before, recorded, 1);
    grew!(before, trusted, 2);
    // The drop-ins with bellperson's signatures cannot make a member again, so they take
    // no file: they record in memory.
    dropin::clear::<Fr>();
    let before = stats();
    assert_eq!(
        bytes_027(
            &ours::create_random_proof_batch(
                num(xs, 2),
                params,
                &mut XorShiftRng::seed_from_u64(31)
            )
            .unwrap()
        ),
        expected,
        "bellperson's signature"
    );
    grew!(before, loaded, 0);
    grew!(before, recorded, 1);

    // A trusted recording's file copied over in place with the same bytes (an operator
    // refreshing the cache with `cp` or `rsync --inplace`), or cut: the next batch's
    // members fail their evaluation and are made again directly, so it returns
    // bellperson's proofs; the file there now is another, left for the next batch to judge.
    let good = std::fs::read(&files[0]).unwrap();
    type Change = (&'static str, fn(&Path, &[u8]));
    let changes: [Change; 2] = [
        ("copied over in place", |path, bytes| {
            std::fs::write(path, bytes).unwrap()
        }),
        ("cut", |path, bytes| {
            let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            file.set_len(bytes.len() as u64 / 2).unwrap();
        }),
    ];
    for (what, change) in changes {
        std::fs::write(&files[0], &good).unwrap();
        dropin::clear::<Fr>();
        let before = stats();
        assert_eq!(prove(params), expected, "trusted from the file");
        grew!(before, loaded, 1);
        change(&files[0], &good);
        assert_eq!(prove(params), expected, "{what}");
        grew!(before, rejected, 1);
        let redone = stats().redone_members - before.redone_members;
        assert!(
            (1..=2).contains(&redone),
            "{what}: {redone} members made again"
        );
        assert!(
            files[0].exists(),
            "{what}: the changed file is another one, left"
        );
        assert_eq!(prove(params), expected, "{what}: the batch after");
    }
    std::fs::write(&files[0], &good).unwrap();

    // Damage opening cannot see (the file is mapped, not read), of three kinds: a column
    // out of range (the first member's evaluation fails), a variable dropped from the
    // density (the parameters do not fit the first member's vectors), a variable moved in
    // the density (every row holds, the first proof does not verify). Each way the member
    // is made again from its circuit and synthesized directly, its proof verifies, so the
    // file is what failed: it is removed, and the batch returns bellperson's proofs. The
    // second member may have been made from the file meanwhile (nothing waits for the
    // first verdict); then it is made again too.
    type Damage = (usize, fn(&mut [u8]));
    let damages: [Damage; 3] = [
        (common::A_COLUMNS, |columns| {
            columns[..4].copy_from_slice(&u32::MAX.to_le_bytes())
        }),
        (common::A_AUX_DENSITY, |words| {
            let at = words.iter().position(|&byte| byte != 0).unwrap();
            words[at] &= words[at] - 1;
        }),
        (common::A_AUX_DENSITY, |words| {
            let at = words.iter().position(|&b| b != 0 && b != 0xff).unwrap();
            words[at] ^=
                (words[at] & words[at].wrapping_neg()) | (!words[at] & words[at].wrapping_add(1));
        }),
    ];
    for (section, damage) in damages {
        std::fs::write(&files[0], &good).unwrap();
        common::edit_section(&files[0], section, damage);
        dropin::clear::<Fr>();
        let before = stats();
        assert_eq!(prove(params), expected, "damaged section {section}");
        grew!(before, loaded, 1);
        grew!(before, rejected, 1);
        let redone = stats().redone_members - before.redone_members;
        assert!((1..=2).contains(&redone), "{redone} members made again");
        grew!(before, recorded, 0);
        assert!(!files[0].exists(), "the damaged file is removed");
        // The next batch records the structure anew and saves it.
        dropin::clear::<Fr>();
        assert_eq!(prove(params), expected, "after damaged section {section}");
        grew!(before, recorded, 1);
        grew!(before, saved, 1);
        assert!(
            Recording::<Fr>::load(&files[0]).is_ok(),
            "a good file again"
        );
    }
    let before = stats();

    let foreign = Recording::<Fr>::record(NumCircuit { x: None, rounds: 2 }).unwrap();
    foreign.save(&files[0]).unwrap();
    common::reseal(&files[0], [9; 32]);
    dropin::clear::<Fr>();
    assert_eq!(prove(params), expected, "file of another key");
    grew!(before, refused_files, 1);
    grew!(before, recorded, 1);

    // A link at the file's name, to a good recording of the key: not followed.
    let target = cache_dir.join("elsewhere");
    std::fs::rename(&files[0], &target).unwrap();
    std::os::unix::fs::symlink(&target, &files[0]).unwrap();
    dropin::clear::<Fr>();
    let before = stats();
    assert_eq!(prove(params), expected, "a link at the name");
    grew!(before, loaded, 0);
    grew!(before, refused_files, 1);
    grew!(before, recorded, 1);
    assert!(
        std::fs::symlink_metadata(&files[0]).unwrap().is_file(),
        "the trusted recording replaced the link"
    );

    // Made ahead of time from the blank circuit and the verifying key, as a proving
    // machine's setup would: the batch opens it instead of recording, and checks it.
    for file in cache_files(&cache_dir) {
        std::fs::remove_file(file).unwrap();
    }
    let made =
        ours::save_recording(NumCircuit { x: None, rounds: 2 }, &params.vk, &cache_dir).unwrap();
    assert_eq!(cache_files(&cache_dir), std::slice::from_ref(&made));
    let ahead = std::fs::read(&made).unwrap();
    dropin::clear::<Fr>();
    let before = stats();
    assert_eq!(
        prove(params),
        expected,
        "from a recording made ahead of time"
    );
    grew!(before, loaded, 1);
    grew!(before, recorded, 0);
    grew!(before, trusted, 1);
    assert!(
        std::fs::read(&made).unwrap() == ahead,
        "the file serves as it is"
    );
    let other = common::Sha256Circuit {
        bytes: None,
        len: 8,
        gadgets: common::Gadgets::Synthpool,
    };
    let err = ours::save_recording(other, &params.vk, &cache_dir).expect_err("another circuit");
    assert!(err.to_string().contains("inputs"), "{err}");
    dropin::set_cache_dir(None);
    std::fs::remove_dir_all(cache_dir).unwrap();
}

/// A circuit that is not the parameters' one (y = 5x proven with the parameters of
/// y = 3x): as a file sealed under the right key, as a batch recording its structure while
/// a valid batch waits, and as a batch that fails before its verdict. Each costs its own
/// batch only.
fn wrong_circuits_never_poison_the_process() {
    let mut rng = XorShiftRng::seed_from_u64(18);
    let three =
        groth16::generate_random_parameters::<Bls12, _, _>(Linear { x: None, factor: 3 }, &mut rng)
            .unwrap();
    let xs = [2u64, 9];
    let (r, s) = synthpool::prover::random_rs::<Fr>(2, &mut rng);
    let bellperson = |circuits: Vec<Linear>| {
        bytes_027(&groth16::create_proof_batch(circuits, &three, r.clone(), s.clone()).unwrap())
    };
    let valid = bellperson(linear(&xs, 3));
    let publics: Vec<Fr> = xs.iter().map(|&x| Fr::from(3 * x)).collect();

    // A file with the right key and a valid checksum, recorded from y = 5x: the circuit's
    // witness does not satisfy its rows. The first member is made again from its circuit
    // and synthesized directly; its proof verifies, so the file is what failed: removed,
    // and the batch returns bellperson's proofs (the second member direct too).
    let cache_dir = scratch("sealed");
    dropin::set_cache_dir(Some(cache_dir.clone()));
    dropin::clear::<Fr>();
    let valid_random = bellperson_random(linear(&xs, 3), &three, 41);
    assert_eq!(remaking(linear(&xs, 3), &three, 41).unwrap(), valid_random);
    let files = cache_files(&cache_dir);
    assert_eq!(files.len(), 1);
    let key_bytes: [u8; 32] = {
        let name = files[0].file_stem().unwrap().to_str().unwrap();
        let hex = name.split_once('-').unwrap().1;
        std::array::from_fn(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
    };
    let good = std::fs::read(&files[0]).unwrap();
    let wrong = Recording::<Fr>::record(Linear { x: None, factor: 5 }).unwrap();
    wrong.save(&files[0]).unwrap();
    common::reseal(&files[0], key_bytes);
    dropin::clear::<Fr>();
    let before = stats();
    let mine = remaking(linear(&xs, 3), &three, 41).unwrap();
    assert_eq!(mine, valid_random, "past the sealed file");
    grew!(before, loaded, 1);
    grew!(before, rejected, 1);
    grew!(before, redone_members, 1);
    grew!(before, recorded, 0);
    assert!(!files[0].exists(), "the sealed file is removed");

    // Under a good file, circuits of y = 5x: the file fails the first member, made again
    // directly its proof does not verify against y = 3x's key either. The circuit is what
    // is wrong: the batch fails saying so (bellperson would return a proof that does not
    // verify), and the file stays.
    std::fs::write(&files[0], &good).unwrap();
    dropin::clear::<Fr>();
    let before = stats();
    let err = remaking(linear(&xs, 5), &three, 41)
        .expect_err("circuits the parameters were not made for");
    assert!(err.to_string().contains("does not verify"), "{err}");
    grew!(before, loaded, 1);
    grew!(before, redone_members, 0);
    grew!(before, rejected, 0);
    assert!(
        std::fs::read(&files[0]).unwrap() == good,
        "a batch of circuits the file does not fit leaves the file"
    );
    #[cfg(unix)]
    fifo_in_the_cache(&files[0], &three, &xs, &valid_random);
    replaced_while_checked(&files[0], key_bytes, &three, &xs, &valid_random);
    dropin::set_cache_dir(None);
    std::fs::remove_dir_all(cache_dir).unwrap();

    // A batch of y = 5x records the structure; a valid batch from another thread waits for
    // its verdict instead of using it. The wrong recording's proof does not verify, so it
    // is dropped; the wrong batch gets bellperson's own (invalid) proofs, the valid one
    // records anew and gets valid ones.
    dropin::clear::<Fr>();
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let gated = Gated {
        params: &three,
        gate: Arc::clone(&gate),
    };
    let before = stats();
    let (r5, s5) = (r.clone(), s.clone());
    std::thread::scope(|scope| {
        let wrong = scope.spawn(move || ours::create_proof_batch(linear(&xs, 5), gated, r5, s5));
        // The wrong batch holds the structure (recorded, its proof waiting at the gate).
        while stats().recorded == before.recorded {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let right =
            scope.spawn(|| ours::create_proof_batch(linear(&xs, 3), &three, r.clone(), s.clone()));
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(
            !right.is_finished(),
            "the valid batch waits for the verdict"
        );
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
        let wrong = wrong.join().unwrap().unwrap();
        assert_eq!(
            bytes_027(&wrong),
            bellperson(linear(&xs, 5)),
            "bellperson's proofs"
        );
        let right = right.join().unwrap().unwrap();
        assert_eq!(bytes_027(&right), valid, "the waiting valid batch");
        assert!(all_verify(&three, &right, &publics));
    });
    grew!(before, rejected, 1);
    grew!(before, recorded, 2);
    grew!(before, trusted, 1);

    // A batch whose first member is of another structure fails before its verdict: its
    // recording is dropped, and the next valid batch records anew.
    dropin::clear::<Fr>();
    let before = stats();
    let two = groth16::generate_random_parameters::<Bls12, _, _>(
        NumCircuit { x: None, rounds: 2 },
        &mut rng,
    )
    .unwrap();
    let mut wrong_first = num(&[4, 5], 2);
    wrong_first[0].rounds = 3;
    let err = ours::create_proof_batch(wrong_first, &two, r.clone(), s.clone())
        .expect_err("member 0 is of another structure");
    assert!(err.to_string().contains("query"), "{err}");
    grew!(before, rejected, 1);
    let theirs = groth16::create_proof_batch(num(&[4, 5], 2), &two, r.clone(), s.clone()).unwrap();
    let mine = ours::create_proof_batch(num(&[4, 5], 2), &two, r.clone(), s.clone()).unwrap();
    assert_eq!(bytes_027(&mine), bytes_027(&theirs), "after a failed batch");
    grew!(before, trusted, 1);
}

/// A FIFO under a recording's file name (as a device or a hung mount's file would be): a
/// plain open waits for a writer forever, wedging the batch and every batch behind the
/// store. Opened without blocking, it is refused; the batch records anew and proves, and
/// its trusted recording replaces the FIFO.
#[cfg(unix)]
fn fifo_in_the_cache(path: &Path, params: &Parameters<Bls12>, xs: &[u64], valid: &Proofs) {
    std::fs::remove_file(path).unwrap();
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.unwrap().success(), "mkfifo {}", path.display());
    dropin::clear::<Fr>();
    let before = stats();
    let (sender, receiver) = std::sync::mpsc::channel();
    let (params, circuits) = (params.clone(), linear(xs, 3));
    std::thread::spawn(move || {
        let _ = sender.send(remaking(circuits, &params, 41));
    });
    let proofs = receiver
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("a FIFO in the cache directory wedged the batch")
        .unwrap();
    assert_eq!(&proofs, valid, "past the FIFO");
    grew!(before, refused_files, 1);
    grew!(before, recorded, 1);
    assert!(
        std::fs::metadata(path).unwrap().is_file(),
        "the trusted recording replaced the FIFO"
    );
}

/// A forged file (y = 5x sealed under y = 3x's key) proven with y = 5x circuits: its rows
/// hold, its proof does not verify, and neither does the member's own, so the circuit is
/// what is wrong and the file is not judged. Meanwhile another process renames a good
/// recording over the path: it stays, and serves the next batch.
fn replaced_while_checked(
    path: &Path,
    key: [u8; 32],
    params: &Parameters<Bls12>,
    xs: &[u64],
    valid: &Proofs,
) {
    let forged = Recording::<Fr>::record(Linear { x: None, factor: 5 }).unwrap();
    forged.save(path).unwrap();
    common::reseal(path, key);
    // Another process's good recording, renamed over the path during the check.
    let side = path.with_extension("other");
    let good = Recording::<Fr>::record(Linear { x: None, factor: 3 }).unwrap();
    good.save(&side).unwrap();
    common::reseal(&side, key);
    let good = std::fs::read(&side).unwrap();
    dropin::clear::<Fr>();
    let before = stats();
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let gated = Gated {
        params,
        gate: Arc::clone(&gate),
    };
    std::thread::scope(|scope| {
        let checking = scope.spawn(move || remaking(linear(xs, 5), gated, 41));
        while stats().loaded == before.loaded {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::fs::rename(&side, path).unwrap();
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
        let err = checking
            .join()
            .unwrap()
            .expect_err("the forged file's proof");
        assert!(err.to_string().contains("does not verify"), "{err}");
    });
    grew!(before, rejected, 0);
    assert!(
        std::fs::read(path).is_ok_and(|bytes| bytes == good),
        "the file written during the check stays"
    );
    assert_eq!(
        &remaking(linear(xs, 3), params, 41).unwrap(),
        valid,
        "from the good file"
    );
    grew!(before, loaded, 2);
    grew!(before, recorded, 0);
    grew!(before, trusted, 1);
}

/// A member that fails or panics fails the batch with its index; nothing stays held (the
/// next batch of the structure proves normally, at once).
fn failing_members(params: &Parameters<Bls12>, r: &[Fr], s: &[Fr]) {
    let good = |x: u64| {
        Member::Good(NumCircuit {
            x: Some(Fr::from(x)),
            rounds: 2,
        })
    };
    for members in [1, 2, 3] {
        dropin::set_in_flight(members).unwrap();
        for bad in [Member::Fails, Member::Panics] {
            let batch = vec![good(3), good(4), bad.clone()];
            let err = ours::create_proof_batch(batch, params, r.to_vec(), s.to_vec())
                .expect_err("a failing member");
            // The circuit's own error comes back as bellperson returns it (the member is
            // in the log); a panic is ours, naming the member.
            match bad {
                Member::Fails => assert!(matches!(err, SynthesisError::AssignmentMissing), "{err}"),
                _ => {
                    let message = err.to_string();
                    assert!(message.contains("batch member 2"), "{message}");
                    assert!(message.contains("panicked on purpose"), "{message}");
                }
            }
            // From a cold cache too: the member that fails is the first.
            dropin::clear::<Fr>();
            let first = ours::create_proof_batch(
                vec![bad, good(3), good(4)],
                params,
                r.to_vec(),
                s.to_vec(),
            );
            assert!(first.is_err(), "a failing first member");
            let fine = ours::create_proof_batch(
                vec![good(3), good(1 << 40), good(7)],
                params,
                r.to_vec(),
                s.to_vec(),
            );
            assert!(fine.is_ok(), "after a failed batch: {:?}", fine.err());
        }
    }
    dropin::set_in_flight(dropin::DEFAULT_IN_FLIGHT).unwrap();
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
