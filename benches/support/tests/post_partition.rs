//! The bench's WindowPoSt partition against the real one, storage-proofs-post 19.1's
//! `FallbackPoStCircuit` as filecoin-proofs 19.1 sizes it: at 32 GiB, 2,349 sectors of ten
//! challenges make 125,279,217 constraints (filecoin-proofs' own count, in its
//! `WINDOW_POST_SECTOR_COUNT`); at 2 KiB, two sectors make 21,866, and 21,889 with the
//! prover's constraint per input (the real circuit synthesized by the fork kit).

mod common;

use blstrs::Scalar as Fr;
use common::{count, every_wrong_value_is_unsatisfied};
use synthpool::precompiled::Recording;
use synthpool_bench::circuits::GadgetSet;
use synthpool_bench::porep::SectorShape;
use synthpool_bench::post::{PostPartition, WINDOW_POST_CHALLENGES};

fn sample(shape: SectorShape, sectors: usize) -> PostPartition {
    PostPartition::sample(
        shape,
        sectors,
        WINDOW_POST_CHALLENGES,
        3,
        GadgetSet::Synthpool,
    )
}

#[test]
fn sectors_of_a_32_gib_partition_are_filecoin_proofs_count() {
    let one = count(sample(SectorShape::GIB_32, 1));
    // comm_r's hash (311), its input and equality; ten paths of ten arity-8 hashes (505
    // each) with 25 constraints of insertion glue per level, a packing and a root check.
    assert_eq!(one[0], 313 + 10 * (10 * (505 + 25) + 2));
    assert_eq!(
        one[1],
        1 + 1 + 10,
        "comm_r and one packed path per challenge"
    );
    let two = count(sample(SectorShape::GIB_32, 2));
    assert_eq!([two[0], two[1] - 1], [2 * one[0], 2 * (one[1] - 1)]);
    assert_eq!(2_349 * one[0], 125_279_217);
}

#[test]
fn a_2_kib_partition_is_the_real_circuits_size() {
    let [constraints, inputs, _] = count(sample(SectorShape::KIB_2, 2));
    assert_eq!(constraints, 21_866);
    assert_eq!(constraints + inputs, 21_889);
}

#[test]
fn the_witness_satisfies_every_row_and_both_gadget_sets_agree() {
    let ours = sample(SectorShape::GIB_32, 2);
    let recording = Recording::<Fr>::record(ours.clone()).unwrap();
    let mine = recording.synthesize(ours.clone()).unwrap();
    let theirs = recording
        .synthesize(ours.with_gadgets(GadgetSet::Upstream))
        .unwrap();
    assert_eq!(mine, theirs, "the same vectors from either gadget set");
    assert_eq!(
        mine,
        synthpool::synthesize(sample(SectorShape::GIB_32, 2)).unwrap()
    );
}

#[test]
fn any_wrong_value_leaves_a_row_unsatisfied() {
    // Nearly every value is Poseidon's: a wrong one fails the rows that state values
    // (checked together), which are then summed one by one to name the row.
    every_wrong_value_is_unsatisfied(sample(SectorShape::KIB_2, 2), |aux| {
        (0..16).map(|i| i * aux / 16).chain(aux - 2..aux).collect()
    });
}
