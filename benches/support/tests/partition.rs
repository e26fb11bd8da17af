//! The bench's PoRep partition against the real one. storage-proofs-porep 19.1's
//! `StackedCircuit` for a 32 GiB sector (filecoin-proofs 19.1's blank circuit, 18
//! challenges), counted per namespace: 130,278,541 constraints in the circuit, 328 inputs
//! (the prover adds one constraint per input: 130,278,869), 130,169,893 aux variables; by
//! part, labeling 104,082,030 constraints (the labels' SHA-256, the parents' bits and the
//! labels' packing), tree_d 24,506,316 (SHA-256 nodes, their bits, packing and path glue),
//! Poseidon 1,688,747 (column hashes, comm_r, the tree_c and tree_r_last paths with their
//! insertion glue), 1,776 other (challenge bits, encoding, replica id bits, inputs).
//!
//! A partition of one challenge here is the top (once per partition) plus one eighteenth of
//! the rest, so eighteen of them must give those figures exactly.

mod common;

use common::{count, every_wrong_value_is_unsatisfied, tampered};
use synthpool::precompiled::Recording;
use synthpool_bench::circuits::GadgetSet;
use synthpool_bench::porep::{Partition, PartitionParts, SectorShape};

fn sample(parts: PartitionParts, challenges: usize) -> Partition {
    Partition::sample(
        SectorShape::GIB_32,
        parts,
        challenges,
        1,
        GadgetSet::Synthpool,
    )
}

/// Eighteen challenges and the top, from the counts of none and one.
fn eighteen(top: [usize; 3], one: [usize; 3]) -> [usize; 3] {
    [0, 1, 2].map(|i| top[i] + 18 * (one[i] - top[i]))
}

#[test]
fn eighteen_challenges_are_the_32_gib_partition_exactly() {
    let top = count(sample(PartitionParts::ALL, 0));
    let one = count(sample(PartitionParts::ALL, 1));
    assert_eq!(top, [571, 4, 571], "once per partition");
    assert_eq!(one, [7_238_236, 22, 7_232_200], "one challenge");
    assert_eq!(eighteen(top, one), [130_278_541, 328, 130_169_893]);

    // The parts, by what leaving each out removes (per partition of 18 challenges); a
    // missing part leaves its roots as allocated values, so only constraints are compared.
    let without = |parts| eighteen(top, count(sample(parts, 1)))[0];
    let all = 130_278_541;
    let labeling = all
        - without(PartitionParts {
            labeling: false,
            tree_d: true,
        });
    let tree_d = all
        - without(PartitionParts {
            labeling: true,
            tree_d: false,
        });
    assert_eq!(labeling, 104_082_030);
    assert_eq!(tree_d, 24_506_316);
    let poseidon_only = count(sample(PartitionParts::POSEIDON, 1));
    // One challenge's Poseidon work: 15 column hashes of 11 elements (598 constraints
    // each), 16 paths of 10 arity-8 hashes (505 each, 25 of insertion glue per level, one
    // packing and one root constraint per path), comm_r (311), and the rest of the
    // challenge: its 64 bits, their input, the encoding (66).
    assert_eq!(
        poseidon_only[0],
        571 + 15 * 598 + 16 * (10 * (505 + 25) + 2) + 66
    );
}

#[test]
fn the_shares_of_one_challenge_are_the_partitions() {
    let with_inputs = |c: [usize; 3]| (c[0] + c[1]) as f64;
    let all = with_inputs(count(sample(PartitionParts::ALL, 1)));
    let share = |parts| 100.0 * (all - with_inputs(count(sample(parts, 1)))) / all;
    let labeling = share(PartitionParts {
        labeling: false,
        tree_d: true,
    });
    let tree_d = share(PartitionParts {
        labeling: true,
        tree_d: false,
    });
    let real = |part: f64| 100.0 * part / 130_278_869.0;
    assert!(
        (labeling - real(104_082_030.0)).abs() < 0.05,
        "labeling {labeling:.3}%"
    );
    assert!(
        (tree_d - real(24_506_316.0)).abs() < 0.05,
        "tree_d {tree_d:.3}%"
    );
    let poseidon = 100.0 - labeling - tree_d;
    assert!(
        (poseidon - real(1_688_747.0 + 1_776.0)).abs() < 0.05,
        "rest {poseidon:.3}%"
    );
}

/// The test sizes a partition of which the same count gives: 2 KiB (2,687,921 constraints
/// in the circuit, 40 inputs, 2,685,673 aux) and 8 MiB (3,844,929, 40, 3,842,449), two
/// challenges each.
#[test]
fn two_challenges_are_the_test_sizes_partitions_exactly() {
    for (shape, expected) in [
        (SectorShape::KIB_2, [2_687_921, 40, 2_685_673]),
        (SectorShape::MIB_8, [3_844_929, 40, 3_842_449]),
    ] {
        let partition = Partition::sample(shape, PartitionParts::ALL, 2, 5, GadgetSet::Synthpool);
        assert_eq!(count(partition), expected, "{shape:?}");
    }
}

/// The smallest real sector, for the tests that build every constraint.
const SMALL: SectorShape = SectorShape::KIB_2;

/// What these tests lay out: labeling is SHA-256 and packing, which
/// tests/sha256_identity.rs compares gadget by gadget; here the parts that combine SHA-256
/// and Poseidon with the path glue.
const PARTS: PartitionParts = PartitionParts {
    labeling: false,
    tree_d: true,
};

#[test]
fn every_gadget_set_lays_out_the_same_satisfied_system() {
    let vectors: Vec<_> = [
        GadgetSet::Upstream,
        GadgetSet::Synthpool,
        GadgetSet::NeptunePoseidon,
    ]
    .into_iter()
    .map(|gadgets| synthpool::synthesize(Partition::sample(SMALL, PARTS, 1, 7, gadgets)).unwrap())
    .collect();
    assert!(
        vectors.windows(2).all(|w| w[0] == w[1]),
        "the vectors differ"
    );
    // Every row holds: pre-compiled evaluation checks each one.
    let circuit = Partition::sample(SMALL, PARTS, 1, 7, GadgetSet::Synthpool);
    let recording = Recording::record(circuit.clone()).unwrap();
    let evaluated = recording.synthesize(circuit).unwrap();
    assert_eq!(evaluated.shape(), recording.shape());
}

#[test]
fn any_wrong_value_leaves_a_row_unsatisfied() {
    let circuit = Partition::sample(SMALL, PARTS, 1, 3, GadgetSet::Synthpool);
    let recording = Recording::record(circuit.clone()).unwrap();
    let witness = recording.witness(circuit.clone()).unwrap();
    let honest = recording.evaluate(tampered(&witness, 0));
    assert!(honest.is_err(), "the replica id is constrained");
    // Values spread over the whole witness, and the last ones (the c_x path's last hash).
    every_wrong_value_is_unsatisfied(circuit, |aux| {
        (0..24).map(|i| i * aux / 24).chain(aux - 3..aux).collect()
    });
}
