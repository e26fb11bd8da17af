//! The native SHA-256 witness against the constraint-building path: for messages of every
//! block count from 1 to 20 (0, 32, 64 and 1248 bytes included) with allocated, constant
//! and mixed bits (negated bits among them), the witness generator's input and aux values,
//! its constraint count and the digest's bits equal those of a system that takes the
//! gadgets' constraint path, as do the values in bellperson's and bellpepper's own
//! `WitnessCS`; and those equal ProvingAssignment's vectors and row count.

mod common;

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar as Fr;
use common::{message_bits, show, Bits};
use synthpool::precompiled::Witness;
use synthpool::sha256::sha256;

/// The values and the constraint count of a synthesis, taken by a system that is not a
/// witness generator (so gadgets take their constraint-building path) but never builds the
/// combinations.
#[derive(Default)]
struct ValuesOnly {
    inputs: Vec<Fr>,
    aux: Vec<Fr>,
    constraints: usize,
}

impl ConstraintSystem<Fr> for ValuesOnly {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        self.constraints += 1;
    }

    fn push_namespace<NR: Into<String>, N: FnOnce() -> NR>(&mut self, _: N) {}
    fn pop_namespace(&mut self) {}
    fn get_root(&mut self) -> &mut Self {
        self
    }
}

/// SHA-256 of `bytes` entered as `how` says, twice in one system (the second hash over the
/// first's digest, so the output words of a native compression feed another).
fn hash_twice<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    bytes: &[u8],
    how: Bits,
) -> Result<Vec<String>, SynthesisError> {
    let bits = message_bits(cs, bytes, how, true)?;
    let digest = sha256(cs.namespace(|| "first"), &bits)?;
    let again = sha256(cs.namespace(|| "second"), &digest)?;
    Ok(show(&digest).into_iter().chain(show(&again)).collect())
}

fn compare(bytes: &[u8], how: Bits) -> usize {
    let what = format!("{} bytes, {how:?}", bytes.len());
    let mut native = Witness::<Fr>::default();
    native.alloc_input(|| "one", || Ok(Fr::from(1u64))).unwrap();
    let mut reference = ValuesOnly::default();
    reference
        .alloc_input(|| "one", || Ok(Fr::from(1u64)))
        .unwrap();
    let ours = hash_twice(&mut native, bytes, how).unwrap();
    let theirs = hash_twice(&mut reference, bytes, how).unwrap();
    assert_eq!(ours, theirs, "{what}: digest bits");
    assert_eq!(native.inputs(), reference.inputs, "{what}: inputs");
    assert!(native.aux() == reference.aux, "{what}: aux values differ");
    assert_eq!(
        native.constraints(),
        reference.constraints,
        "{what}: constraints"
    );
    // bellperson's and bellpepper's own witness generators, which implement `allocate_empty`
    // alone of the bulk allocations, hold the same values.
    let generators = [
        generated(
            bellperson_027::util_cs::witness_cs::WitnessCS::new(),
            bytes,
            how,
        ),
        generated(
            bellpepper::util_cs::witness_cs::WitnessCS::new(),
            bytes,
            how,
        ),
    ];
    for (name, (digest, inputs, aux)) in ["bellperson", "bellpepper"].iter().zip(generators) {
        assert_eq!(digest, theirs, "{what}, {name}'s WitnessCS: digest bits");
        assert_eq!(
            inputs, reference.inputs,
            "{what}, {name}'s WitnessCS: inputs"
        );
        assert!(
            aux == reference.aux,
            "{what}, {name}'s WitnessCS: aux values differ"
        );
    }
    native.aux().len()
}

/// The digest bits, inputs and aux values of `hash_twice` in `cs`, a new witness generator
/// that holds the constant one.
fn generated<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    bytes: &[u8],
    how: Bits,
) -> (Vec<String>, Vec<Fr>, Vec<Fr>) {
    assert!(cs.is_witness_generator());
    let digest = hash_twice(&mut cs, bytes, how).unwrap();
    (digest, cs.inputs_slice().to_vec(), cs.aux_slice().to_vec())
}

fn message(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(151) ^ 0x5a)
        .collect()
}

#[test]
fn native_witness_equals_the_constraint_path_for_every_block_count() {
    // 64k - 9 bytes is the longest message of k blocks.
    let mut lengths: Vec<usize> = (1..=19).map(|k| 64 * k - 9).collect();
    lengths.extend([0, 32, 56, 64, 1248]);
    for len in lengths {
        compare(&message(len), Bits::Allocated);
    }
    for len in [0, 1, 32, 55, 56, 64, 120] {
        for how in [Bits::Mixed, Bits::Constant] {
            compare(&message(len), how);
        }
    }
}

/// SHA-256 of 64 allocated bytes through the witness pass of a recording, as a circuit.
#[derive(Clone)]
struct Node(Option<Vec<u8>>);

impl Circuit<Fr> for Node {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let bits: Vec<Boolean> = (0..512)
            .map(|i| {
                let bit = self.0.as_ref().map(|b| (b[i / 8] >> (7 - i % 8)) & 1 == 1);
                AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), bit).map(Boolean::from)
            })
            .collect::<Result<_, _>>()?;
        let digest = sha256(cs.namespace(|| "node"), &bits)?;
        synthpool::sha256::multipack::pack_into_inputs(cs.namespace(|| "pack"), &digest)
    }
}

#[test]
fn native_witness_equals_proving_assignment_vectors() {
    let recording = synthpool::precompiled::Recording::<Fr>::record(Node(None)).unwrap();
    let circuit = Node(Some(message(64)));
    let witness = recording.witness(circuit.clone()).unwrap();
    let direct = synthpool::synthesize(circuit).unwrap();
    assert_eq!(witness.inputs(), &direct.input_assignment[..]);
    assert!(
        witness.aux() == &direct.aux_assignment[..],
        "aux values differ"
    );
    assert_eq!(witness.constraints(), direct.a.len());
}

#[test]
fn a_missing_value_fails_as_on_the_constraint_path() {
    // A bit whose value is unknown: allocated in a system that runs no value closure.
    let mut shape_only = common::ShapeRecorder::new(false);
    let unknown = Boolean::from(AllocatedBit::alloc(&mut shape_only, None).unwrap());
    let mut native = Witness::<Fr>::default();
    let mut reference = ValuesOnly::default();
    let mut ours = message_bits(&mut native, &message(32), Bits::Allocated, true).unwrap();
    let mut theirs = message_bits(&mut reference, &message(32), Bits::Allocated, true).unwrap();
    ours[100] = unknown.clone();
    theirs[100] = unknown;
    let ours = sha256(&mut native, &ours).err().expect("a missing value");
    let theirs = sha256(&mut reference, &theirs)
        .err()
        .expect("a missing value");
    assert!(matches!(ours, SynthesisError::AssignmentMissing), "{ours}");
    assert!(
        matches!(theirs, SynthesisError::AssignmentMissing),
        "{theirs}"
    );
    assert_eq!(
        native.aux().len(),
        reference.aux.len(),
        "allocated before the error"
    );
    assert_eq!(
        native.constraints(),
        reference.constraints,
        "enforced before the error"
    );
}
