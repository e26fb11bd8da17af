//! The bench's SnapDeals partition against the real one, storage-proofs-update 19.1's
//! `EmptySectorUpdateCircuit`: at 2 KiB its ten challenges make 1,705,039 constraints
//! (upstream's `test_empty_sector_update_circuit_2kib`; the fork kit's real circuit has
//! 1,705,044 with the prover's constraint per input), at 32 GiB 86 challenges make
//! 81,049,499 (`test_empty_sector_update_constraints_32gib`), a digest of challenge bits
//! 568 (`test_gen_challenge_bits_gadget`).

mod common;

use bellpepper_core::{Circuit, ConstraintSystem};
use blstrs::Scalar as Fr;
use common::{count, every_wrong_value_is_unsatisfied};
use ff::{Field, PrimeField};
use synthpool::precompiled::{Recording, Witness};
use synthpool_bench::circuits::GadgetSet;
use synthpool_bench::porep::SectorShape;
use synthpool_bench::snap::{real_challenges, SnapPartition};

fn sample(shape: SectorShape, challenges: usize) -> SnapPartition {
    SnapPartition::sample(shape, challenges, 5, GadgetSet::Synthpool)
}

#[test]
fn a_2_kib_partition_is_the_real_circuits_size() {
    assert_eq!(real_challenges(SectorShape::KIB_2), 10);
    let [constraints, inputs, aux] = count(sample(SectorShape::KIB_2, 10));
    assert_eq!(constraints, 1_705_039);
    assert_eq!(constraints + inputs, 1_705_044);
    assert_eq!(aux, 1_703_569, "this layout's own count");
}

#[test]
fn digests_and_challenges_make_the_32_gib_partition() {
    let shape = SectorShape::GIB_32;
    assert_eq!(real_challenges(shape), 86);
    // Nine challenges' bits per digest: one and two challenges hash one digest, 86 ten.
    let [none, one, two] = [0, 1, 2].map(|n| count(sample(shape, n))[0]);
    let challenge = two - one;
    let digest = one - none - challenge;
    assert_eq!(digest, 568);
    // 127 apex hashes and four up to comm_d_new (45,379 each), the rest once per
    // partition; each challenge mostly its 19 SHA-256 hashes up to its apex leaf.
    assert_eq!(none, 5_945_609);
    assert_eq!(challenge, 873_235);
    assert_eq!(none + 10 * digest + 86 * challenge, 81_049_499);
}

#[test]
fn the_witness_satisfies_every_row_and_both_gadget_sets_agree() {
    let ours = sample(SectorShape::KIB_2, 10);
    let recording = Recording::<Fr>::record(ours.clone()).unwrap();
    let mine = recording.synthesize(ours.clone()).unwrap();
    let theirs = recording
        .synthesize(ours.clone().with_gadgets(GadgetSet::Upstream))
        .unwrap();
    assert!(mine == theirs, "the same vectors from either gadget set");
    assert!(mine == synthpool::synthesize(ours).unwrap());
    // At 32 GiB (a digest's bits, 127 apex hashes, the partition path): evaluation checks
    // every row. The sampled partition index has bits of either value, so the path hashes
    // its node on both sides.
    let big = sample(SectorShape::GIB_32, 1);
    let mut witness = Witness::<Fr>::default();
    witness.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    big.clone().synthesize(&mut witness).unwrap();
    let k = witness.inputs()[1].to_repr().as_ref()[0] & 0b1111;
    assert!(k != 0 && k != 0b1111, "partition index {k}");
    let recording = Recording::<Fr>::record(big.clone()).unwrap();
    recording.synthesize(big).expect("every row holds");
}

#[test]
fn spread_over_threads_it_is_the_same_partition() {
    let on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| synthpool::synthesize(sample(SectorShape::KIB_2, 10)).unwrap())
    };
    let one = on(1);
    assert!(on(2) == one && on(3) == one);
}

#[test]
fn any_wrong_value_leaves_a_row_unsatisfied() {
    every_wrong_value_is_unsatisfied(sample(SectorShape::KIB_2, 10), |aux| {
        (0..16).map(|i| i * aux / 16).chain(aux - 2..aux).collect()
    });
}
