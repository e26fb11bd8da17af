//! Buffer retention in the drop-in batch prover: with it on, each batch synthesizes into the
//! storage the previous batch of its structure kept (at most as many members' as are in
//! flight), and the proofs stay bellperson's, byte for byte; another structure's storage
//! replaces it; clearing the cache drops it; switched off, none is kept.
//!
//! Retention and the cache are process-wide, so this is its own test binary, one test.

mod common;

use blstrs::{Bls12, Scalar as Fr};
use common::{num_circuits as num, NumCircuit};
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool::groth16::{self as dropin, set_in_flight, set_retain_buffers, v0_27 as ours};

fn reused() -> u64 {
    dropin::stats::<Fr>().reused_buffers
}

#[test]
fn retained_buffers_serve_the_next_batch_of_their_structure_with_the_same_proofs() {
    use bellperson_027::groth16;

    dropin::set_cache_dir(None);
    let mut rng = XorShiftRng::seed_from_u64(29);
    let params_for = |rounds, rng: &mut XorShiftRng| {
        groth16::generate_random_parameters::<Bls12, _, _>(NumCircuit { x: None, rounds }, rng)
            .unwrap()
    };
    let (two, three) = (params_for(2, &mut rng), params_for(3, &mut rng));
    let xs = [3u64, 1 << 40, 7];
    let (r, s) = synthpool::prover::random_rs::<Fr>(xs.len(), &mut rng);
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
    // One member in flight: each member is synthesized into the storage the one before it
    // was proven with, so a batch uses one set and keeps it for the next.
    set_in_flight(1).unwrap();
    assert_eq!(prove(2, &two), expected_two, "cold");
    let before = reused();
    assert_eq!(prove(2, &two), expected_two, "warm, into the kept storage");
    assert_eq!(reused() - before, 1);
    assert_eq!(prove(2, &two), expected_two, "again");
    assert_eq!(reused() - before, 2);

    // Three in flight: the next batch starts from at most three kept sets.
    set_in_flight(3).unwrap();
    for _ in 0..3 {
        let before = reused();
        assert_eq!(prove(2, &two), expected_two, "three in flight");
        assert!(
            (1..=3).contains(&(reused() - before)),
            "{}",
            reused() - before
        );
    }
    set_in_flight(1).unwrap();
    assert_eq!(prove(2, &two), expected_two);
    let before = reused();
    assert_eq!(prove(2, &two), expected_two);
    assert_eq!(reused() - before, 1, "one set kept at one in flight");

    // Another structure's storage replaces the kept one; neither gets the other's.
    assert_eq!(prove(3, &three), expected_three, "another structure, cold");
    let before = reused();
    assert_eq!(prove(2, &two), expected_two, "after the other structure");
    assert_eq!(reused() - before, 0);
    assert_eq!(prove(2, &two), expected_two);
    assert_eq!(reused() - before, 1);

    // Clearing drops the recordings and the kept storage.
    dropin::clear::<Fr>();
    let before = dropin::stats::<Fr>();
    assert_eq!(prove(2, &two), expected_two, "after clearing");
    assert_eq!(
        dropin::stats::<Fr>().recorded - before.recorded,
        1,
        "recorded again"
    );
    assert_eq!(reused() - before.reused_buffers, 0, "nothing kept");

    // Switched off: the kept storage is freed and none is kept after a batch, nor handed
    // back within one (bellperson's prover would hold it through its multi-exponentiations).
    set_retain_buffers(false);
    let before = dropin::stats::<Fr>();
    assert_eq!(prove(2, &two), expected_two, "retention off");
    assert_eq!(prove(2, &two), expected_two);
    let after = dropin::stats::<Fr>();
    assert_eq!(after.reused_buffers - before.reused_buffers, 0);
    assert_eq!(after.handed_back - before.handed_back, 0);
}
