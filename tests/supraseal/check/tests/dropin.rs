//! synthpool's drop-ins under bellperson 0.27's `cuda-supraseal`, proven by the CPU
//! stand-in of supraseal-c2: byte-identical to bellperson 0.26's CPU prover for the same
//! rng (and to bellperson 0.27's own supraseal prover), cold and warm, for every number of
//! members in flight, with and without the parameters file, with retention and the
//! persistent cache; one member per supraseal call; a circuit that does not fit the
//! parameters file is an error before supraseal is called; a file whose key does not match
//! the SRS never makes a recording trusted.
//!
//! The drop-ins' settings and store are per process, so the tests take turns.

use std::sync::{Mutex, MutexGuard, OnceLock};

use bellperson_027::groth16::SuprasealParameters;
use blstrs::{Bls12, Scalar as Fr};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use supraseal_check::{bytes_26, bytes_27, parameters, scratch, Mix};
use synthpool::groth16::v0_27 as dropin;
use synthpool::groth16::{self, CacheStats};
use synthpool::prover::v0_27::{prove_on_supraseal, ParametersFile, SuprasealParametersWithFile};

struct Fixture {
    params: bellperson::groth16::Parameters<Bls12>,
    path: std::path::PathBuf,
    srs: SuprasealParameters<Bls12>,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let (params, path) = parameters(0, &scratch("dropin"));
        let srs = SuprasealParameters::new(path.clone()).expect("the stand-in loads the file");
        Fixture { params, path, srs }
    })
}

fn turn() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

fn batch(seeds: &[u64]) -> Vec<Mix> {
    seeds.iter().map(|&seed| Mix::with(seed)).collect()
}

/// bellperson 0.26's CPU proofs of `seeds` for the rng seeded with `rng`.
fn expected(seeds: &[u64], rng: u64) -> Vec<Vec<u8>> {
    let proofs = bellperson::groth16::create_random_proof_batch(
        batch(seeds),
        &fixture().params,
        &mut XorShiftRng::seed_from_u64(rng),
    )
    .expect("bellperson proves");
    proofs.iter().map(bytes_26).collect()
}

fn ours(seeds: &[u64], rng: u64, with_file: bool) -> Vec<Vec<u8>> {
    let fixture = fixture();
    let mut rng = XorShiftRng::seed_from_u64(rng);
    let proofs = if with_file {
        // As the patched fork calls it: a member a recording fails is made again.
        let params = SuprasealParametersWithFile::new(&fixture.srs, &fixture.path);
        let remake = |i: usize| Ok::<_, String>(Mix::with(seeds[i]));
        dropin::create_random_proof_batch_remaking(batch(seeds), remake, &params, false, &mut rng)
    } else {
        dropin::create_random_proof_batch_in_priority(batch(seeds), &fixture.srs, &mut rng)
    }
    .expect("the drop-in proves");
    let file = ParametersFile::<Bls12>::read(&fixture.path).unwrap();
    let pvk = bellperson_027::groth16::prepare_verifying_key(file.verifying_key());
    for (proof, seed) in proofs.iter().zip(seeds) {
        assert!(
            bellperson_027::groth16::verify_proof(&pvk, proof, &Mix::with(*seed).public()).unwrap(),
            "the proof of member {seed} verifies"
        );
    }
    proofs.iter().map(bytes_27).collect()
}

/// The message of the error the drop-in answers `members` with, proving with `params` and
/// the rng seeded with `rng`.
fn refusal(members: Vec<Mix>, params: &SuprasealParametersWithFile<'_, Bls12>, rng: u64) -> String {
    dropin::create_random_proof_batch(members, params, &mut XorShiftRng::seed_from_u64(rng))
        .expect_err("the batch is refused")
        .to_string()
}

fn stats() -> CacheStats {
    groth16::stats::<Fr>()
}

#[test]
fn drop_ins_give_bellperson_cpu_proofs_cold_then_warm_for_every_k() {
    let _turn = turn();
    groth16::set_cache_dir(None);
    groth16::set_retain_buffers(false);
    groth16::clear::<Fr>();
    let seeds = [3, 1, 4, 1];
    let reference = expected(&seeds, 7);
    // bellperson 0.27's own supraseal prover, through the same stand-in.
    let bellperson_supraseal: Vec<Vec<u8>> = bellperson_027::groth16::create_random_proof_batch(
        batch(&seeds),
        &fixture().srs,
        &mut XorShiftRng::seed_from_u64(7),
    )
    .unwrap()
    .iter()
    .map(bytes_27)
    .collect();
    assert_eq!(
        bellperson_supraseal, reference,
        "the stand-in proves as bellperson's CPU"
    );
    assert_eq!(
        supraseal_c2::standin::take_largest_call(),
        seeds.len(),
        "bellperson's one call"
    );

    let before = stats();
    let (calls, circuits) = supraseal_c2::standin::calls();
    for (round, k) in [1, 2, 4].into_iter().enumerate() {
        groth16::set_in_flight(k).unwrap();
        assert_eq!(ours(&seeds, 7, true), reference, "k = {k}, round {round}");
    }
    let after = stats();
    assert_eq!(
        after.recorded - before.recorded,
        1,
        "recorded once, by the cold batch"
    );
    assert_eq!(
        after.trusted - before.trusted,
        1,
        "trusted after its proof verified"
    );
    assert_eq!(
        after.evaluated_batches - before.evaluated_batches,
        2,
        "the warm batches"
    );
    assert_eq!(after.rejected, before.rejected);
    assert_eq!(
        after.handed_back - before.handed_back,
        3 * seeds.len() as u64,
        "retention off, every member's storage handed back for its batch's next members: \
         supraseal keeps it for free"
    );
    // One supraseal call per member, whatever k.
    let (calls_after, circuits_after) = supraseal_c2::standin::calls();
    assert_eq!(calls_after - calls, 3 * seeds.len());
    assert_eq!(circuits_after - circuits, 3 * seeds.len());
    assert_eq!(supraseal_c2::standin::take_largest_call(), 1);
    groth16::set_in_flight(2).unwrap();
}

#[test]
fn without_the_parameters_file_every_member_is_synthesized_directly() {
    let _turn = turn();
    groth16::set_cache_dir(None);
    groth16::clear::<Fr>();
    let seeds = [5, 9];
    let before = stats();
    assert_eq!(ours(&seeds, 11, false), expected(&seeds, 11));
    assert_eq!(ours(&seeds, 12, false), expected(&seeds, 12));
    let after = stats();
    assert_eq!(after.direct_batches - before.direct_batches, 2);
    assert_eq!(after.recorded, before.recorded, "no key: nothing recorded");
    assert_eq!(after.evaluated_batches, before.evaluated_batches);
}

#[test]
fn retention_and_the_persistent_cache_keep_the_proofs() {
    let _turn = turn();
    let dir = scratch("cache");
    groth16::set_cache_dir(Some(dir.clone()));
    groth16::set_retain_buffers(true);
    groth16::clear::<Fr>();
    let seeds = [2, 7, 1];
    let before = stats();
    assert_eq!(ours(&seeds, 21, true), expected(&seeds, 21), "cold, saved");
    assert_eq!(
        ours(&seeds, 22, true),
        expected(&seeds, 22),
        "warm, retained"
    );
    // A new process, as far as the store can tell: the file is checked, then trusted.
    groth16::clear::<Fr>();
    assert_eq!(
        ours(&seeds, 23, true),
        expected(&seeds, 23),
        "loaded from the cache"
    );
    assert_eq!(
        ours(&seeds, 24, true),
        expected(&seeds, 24),
        "trusted from the file"
    );
    let after = stats();
    assert_eq!(after.saved - before.saved, 1);
    assert_eq!(after.loaded - before.loaded, 1);
    assert!(
        after.reused_buffers > before.reused_buffers,
        "retained storage was used"
    );
    groth16::set_retain_buffers(false);
    groth16::set_cache_dir(None);
    groth16::clear::<Fr>();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn prove_on_supraseal_gives_bellperson_cpu_proofs_for_given_randomness() {
    let _turn = turn();
    let seeds = [6, 8];
    let (r, s) =
        synthpool::prover::random_rs::<Fr>(seeds.len(), &mut XorShiftRng::seed_from_u64(5));
    let reference: Vec<Vec<u8>> = bellperson::groth16::create_proof_batch(
        batch(&seeds),
        &fixture().params,
        r.clone(),
        s.clone(),
    )
    .unwrap()
    .iter()
    .map(bytes_26)
    .collect();
    let vectors = seeds
        .iter()
        .map(|&seed| synthpool::synthesize(Mix::with(seed)).unwrap())
        .collect();
    let proofs = prove_on_supraseal::<Bls12, _>(&fixture().srs, vectors, &r, &s).unwrap();
    assert_eq!(proofs.iter().map(bytes_27).collect::<Vec<_>>(), reference);
}

#[test]
fn a_circuit_that_does_not_fit_the_parameters_file_is_an_error_before_supraseal() {
    let _turn = turn();
    groth16::clear::<Fr>();
    let other = scratch("other");
    let (_, other_path) = parameters(3, &other);
    let srs = SuprasealParameters::<Bls12>::new(other_path.clone()).unwrap();
    let params = SuprasealParametersWithFile::new(&srs, &other_path);
    let (calls, _) = supraseal_c2::standin::calls();
    let message = refusal(batch(&[1, 2]), &params, 1);
    assert!(
        message.contains("query") && message.contains("another circuit"),
        "{message}"
    );
    assert_eq!(
        supraseal_c2::standin::calls().0,
        calls,
        "supraseal was not called"
    );
    std::fs::remove_dir_all(other).unwrap();
}

#[test]
fn a_file_whose_key_is_not_the_srs_never_makes_a_recording_trusted() {
    let _turn = turn();
    groth16::set_cache_dir(None);
    groth16::clear::<Fr>();
    // The same circuit's parameters from another seed: the same sizes, another key.
    let dir = scratch("foreign");
    let mut rng = XorShiftRng::seed_from_u64(99);
    let foreign = bellperson::groth16::generate_random_parameters::<Bls12, _, _>(
        Mix {
            seed: None,
            extra: 0,
        },
        &mut rng,
    )
    .unwrap();
    let foreign_path = dir.join("foreign.params");
    let mut bytes = Vec::new();
    foreign.write(&mut bytes).unwrap();
    std::fs::write(&foreign_path, bytes).unwrap();
    let params = SuprasealParametersWithFile::new(&fixture().srs, &foreign_path);
    let seeds = [4, 2, 5];
    let before = stats();
    for rng in [31, 32] {
        let proofs = dropin::create_random_proof_batch(
            batch(&seeds),
            &params,
            &mut XorShiftRng::seed_from_u64(rng),
        )
        .expect("direct members prove");
        assert_eq!(
            proofs.iter().map(bytes_27).collect::<Vec<_>>(),
            expected(&seeds, rng),
            "bellperson's proofs, from directly synthesized members"
        );
    }
    let after = stats();
    assert_eq!(after.trusted, before.trusted, "never trusted");
    assert_eq!(
        after.rejected - before.rejected,
        2,
        "rejected by each batch"
    );
    assert_eq!(after.evaluated_batches, before.evaluated_batches);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_member_of_another_circuit_in_handed_back_storage_is_an_error_that_leaves_nothing_behind() {
    let _turn = turn();
    groth16::set_cache_dir(None);
    groth16::set_retain_buffers(false);
    groth16::clear::<Fr>();
    groth16::set_in_flight(1).unwrap();
    let seeds = [3, 1, 4];
    assert_eq!(ours(&seeds, 7, true), expected(&seeds, 7), "cold");
    // The third member, of another structure, is evaluated from the trusted recording into
    // the storage the second one's proof handed back.
    let fixture = fixture();
    let params = SuprasealParametersWithFile::new(&fixture.srs, &fixture.path);
    let mut members = batch(&seeds[..2]);
    members.push(Mix {
        seed: Some(4),
        extra: 1,
    });
    let before = stats();
    let message = refusal(members, &params, 7);
    assert!(
        message.contains("member 2") && message.contains("not the recorded circuit"),
        "{message}"
    );
    assert_eq!(
        stats().handed_back - before.handed_back,
        2,
        "both proofs handed theirs back"
    );
    // The next batch of the right circuit gets bellperson's proofs again.
    assert_eq!(
        ours(&seeds, 8, true),
        expected(&seeds, 8),
        "after the failed batch"
    );
    groth16::set_in_flight(2).unwrap();
}
