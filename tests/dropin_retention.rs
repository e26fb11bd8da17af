//! Buffer retention in the drop-in batch prover: with it on, each batch synthesizes into the
//! vectors the previous batch of its structure handed back, and the proofs stay
//! bellperson's, byte for byte; another structure's vectors replace them; forgetting a
//! structure drops its recording and vectors; switched off, none are kept.
//!
//! Retention and the cache are process-wide, so this is its own test binary, one test.

mod common;

use blstrs::{Bls12, Scalar as Fr};
use common::{num_circuits as num, NumCircuit};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool::groth16::{set_retain_buffers, v0_27 as ours};
use synthpool::precompiled::cache;

fn reused() -> u64 {
    cache::stats::<Fr>().reused_buffers
}

#[test]
fn retained_buffers_serve_the_next_batch_of_their_structure_with_the_same_proofs() {
    use bellperson_027::groth16;

    cache::set_cache_dir(None);
    let mut rng = XorShiftRng::seed_from_u64(29);
    let params_for = |rounds, rng: &mut XorShiftRng| {
        groth16::generate_random_parameters::<Bls12, _, _>(NumCircuit { x: None, rounds }, rng)
            .unwrap()
    };
    let (two, three) = (params_for(2, &mut rng), params_for(3, &mut rng));
    let xs = [3u64, 1 << 40, 7];
    let (r, s) = synthpool::prover::v0_27::random_rs::<Fr>(xs.len(), &mut rng);
    let bytes = |proofs: Vec<groth16::Proof<Bls12>>| -> Vec<Vec<u8>> {
        proofs
            .iter()
            .map(|p| {
                let mut out = Vec::new();
                p.write(&mut out).unwrap();
                out
            })
            .collect()
    };
    let expected = |rounds, params| {
        bytes(groth16::create_proof_batch(num(&xs, rounds), params, r.clone(), s.clone()).unwrap())
    };
    let (expected_two, expected_three) = (expected(2, &two), expected(3, &three));
    let prove = |rounds, params| {
        bytes(ours::create_proof_batch(num(&xs, rounds), params, r.clone(), s.clone()).unwrap())
    };

    set_retain_buffers(true);
    // Cold: the first member is synthesized directly, the others evaluated; all three
    // members' vectors come back.
    assert_eq!(prove(2, &two), expected_two, "cold");
    let before = reused();
    assert_eq!(
        prove(2, &two),
        expected_two,
        "warm, into handed-back vectors"
    );
    assert_eq!(reused() - before, 3);
    assert_eq!(prove(2, &two), expected_two, "again");
    assert_eq!(reused() - before, 6);

    // Another structure's vectors replace the kept ones; neither gets the other's.
    assert_eq!(prove(3, &three), expected_three, "another structure, cold");
    let before = reused();
    assert_eq!(prove(2, &two), expected_two, "after the other structure");
    assert_eq!(reused() - before, 0);
    assert_eq!(prove(2, &two), expected_two);
    assert_eq!(reused() - before, 3);

    // Forgetting a structure drops its recording and the vectors kept for it.
    let key = [7u8; synthpool::precompiled::KEY_LEN];
    let batch = || cache::synthesize_cached::<Fr, _>(num(&xs, 2), &|_| Some(key)).unwrap();
    let stats = cache::stats::<Fr>;
    let before = stats();
    cache::give_back(&key, batch().vectors);
    assert_eq!(stats().recorded - before.recorded, 1);
    cache::give_back(&key, batch().vectors);
    assert_eq!(stats().reused_buffers - before.reused_buffers, 3);
    cache::forget::<Fr>(&key);
    let vectors = batch().vectors;
    assert_eq!(stats().recorded - before.recorded, 2, "recorded again");
    assert_eq!(
        stats().reused_buffers - before.reused_buffers,
        3,
        "nothing kept"
    );
    assert_eq!(
        vectors[1],
        synthpool::synthesize(num(&xs, 2).remove(1)).unwrap()
    );

    // Switched off: the kept vectors are freed and none are kept after a batch.
    set_retain_buffers(false);
    let before = reused();
    assert_eq!(prove(2, &two), expected_two, "retention off");
    assert_eq!(prove(2, &two), expected_two);
    assert_eq!(reused() - before, 0);
}
