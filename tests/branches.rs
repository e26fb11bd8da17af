//! A circuit whose parts share variables allocated before them (as a PoRep partition's
//! challenges share its commitments), its parts spread over branches on rayon pools of one,
//! two and three threads: direct synthesis gives the vectors of the bellperson-algorithm
//! reference synthesizing them one after another, recording gives the same matrices byte for
//! byte, and the witness and the evaluation from a recording are the same. Then
//! self-contained groups of parts whose circuit, handed them back, synthesizes each in a
//! system from `new()` (as a PoSt partition's chunks of sectors): which systems take them in
//! place, which spread them, which get them back.

mod common;

use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, Spreading, SynthesisError, Variable,
};
use blstrs::Scalar as Fr;
use common::{assert_same, reference, spread_or_in_order, RandomCircuit};
use ff::Field;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use synthpool::branches::{spread, spread_returning, spread_small_returning, Returned, Spread};
use synthpool::precompiled::{Recording, Witness};
use synthpool::{Error, ProvingAssignment};

/// Shared variables (inputs among them), then parts over them that allocate inputs and aux
/// variables of their own.
#[derive(Clone)]
struct SharedParts {
    seed: u64,
    parts: usize,
    /// The parts in reverse order: the same counts, other parts' sizes.
    reversed: bool,
    /// The parts in a loop, never spread.
    in_a_loop: bool,
    /// The part whose last constraint names a variable 1000 past its last own one, which
    /// nothing allocated.
    ghost_in: Option<usize>,
    /// Each part ends with two sub-parts spread from it (over the shared variables).
    nested: bool,
    /// The parts from this one on fail, each with an error naming it, after their rows.
    failing_from: Option<usize>,
    /// Aux variables allocated before the shared ones, the first and last of them shared
    /// too: from 65,536 a prover's assignment shares the values before its branches with
    /// all of them instead of copying them into each.
    padding: usize,
}

impl SharedParts {
    fn new(seed: u64, parts: usize) -> Self {
        SharedParts {
            seed,
            parts,
            reversed: false,
            in_a_loop: false,
            ghost_in: None,
            nested: false,
            failing_from: None,
            padding: 0,
        }
    }
}

/// `count` aux variables, the first and last of them added to `shared`, each used once, in
/// one sum (a recording refuses an aux variable without a term).
fn pad<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    count: usize,
    shared: &mut Vec<(Variable, Fr)>,
) -> Result<(), SynthesisError> {
    let mut sum = (LinearCombination::zero(), Fr::ZERO);
    for i in 0..count {
        let value = Fr::from(i as u64 + 2);
        let padding = cs.alloc(|| "padding", || Ok(value))?;
        if i == 0 || i + 1 == count {
            shared.push((padding, value));
        }
        sum = (sum.0 + padding, sum.1 + value);
    }
    if count > 0 {
        let total = cs.alloc(|| "sum", || Ok(sum.1))?;
        cs.enforce(|| "sum", |_| sum.0, |lc| lc + CS::one(), |lc| lc + total);
    }
    Ok(())
}

impl Circuit<Fr> for SharedParts {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let top = RandomCircuit {
            seed: self.seed,
            steps: 60,
        };
        let mut shared = vec![(CS::one(), Fr::ONE)];
        pad(cs, self.padding, &mut shared)?;
        shared.extend(top.lay_out_over(cs, &shared)?);
        let part = |cs: &mut CS::Root, i: usize| {
            let i = if self.reversed { self.parts - 1 - i } else { i };
            let part = RandomCircuit {
                seed: self.seed * 100 + i as u64,
                steps: 40 + 13 * i,
            };
            let cs = &mut cs.namespace(|| format!("part {i}"));
            part.lay_out_over(cs, &shared)?;
            if self.nested {
                sub_parts(cs.get_root(), self.seed * 1000 + i as u64 * 10, &shared)?;
            }
            if self.ghost_in == Some(i) {
                let own = cs.alloc(|| "own", || Ok(Fr::ONE))?;
                let Index::Aux(n) = own.get_unchecked() else {
                    unreachable!("alloc gives an aux variable")
                };
                let ghost = Variable::new_unchecked(Index::Aux(n + 1000));
                cs.enforce(
                    || "ghost",
                    |lc| lc + own,
                    |lc| lc + CS::one(),
                    |lc| lc + ghost,
                );
            }
            if self.failing_from.is_some_and(|first| i >= first) {
                return Err(SynthesisError::IncompatibleLengthVector(format!(
                    "part {i}"
                )));
            }
            Ok(())
        };
        let parts: Vec<usize> = (0..self.parts).collect();
        match self.in_a_loop {
            true => parts.into_iter().try_for_each(|i| part(cs.get_root(), i)),
            false => spread_or_in_order(cs, parts, part),
        }
    }
}

/// Two sub-parts over `shared`, spread from a part of [`SharedParts`].
fn sub_parts<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    seed: u64,
    shared: &[(Variable, Fr)],
) -> Result<(), SynthesisError> {
    spread_or_in_order(cs, vec![0, 1], |cs, k| {
        let sub = RandomCircuit {
            seed: seed + k as u64,
            steps: 20 + 9 * k,
        };
        sub.lay_out_over(cs, shared).map(drop)
    })
}

/// Shared variables, leaves, then a binary tree over them row by row, each node a part (a
/// product of its children, random constraints over it and the shared variables) whose
/// output the next row uses: an aux variable, or for every third node an input.
#[derive(Clone)]
struct Tree {
    seed: u64,
    /// A power of two.
    leaves: usize,
    /// The rows through `spread_small_returning` (a prover's assignment keeps them in place;
    /// a recorder and the witness generator spread them), as storage-proofs-update's apex
    /// rows under the recipe.
    small: bool,
    /// Aux variables before the leaves (`SharedParts::padding`): from 65,536 a prover's
    /// assignment's branches share one copy of the values before them.
    padding: usize,
}

impl Tree {
    fn node<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        shared: &[(Variable, Fr)],
        height: usize,
        i: usize,
        pair: &[AllocatedNum<Fr>],
    ) -> Result<AllocatedNum<Fr>, SynthesisError> {
        let cs = &mut cs.namespace(|| format!("node {height}.{i}"));
        let product = pair[0].mul(cs.namespace(|| "product"), &pair[1])?;
        let mut over = shared.to_vec();
        // Without values (a recording of the structure) the constraints are the same.
        over.push((
            product.get_variable(),
            product.get_value().unwrap_or(Fr::ZERO),
        ));
        RandomCircuit {
            seed: self.seed * 1000 + height as u64 * 100 + i as u64,
            steps: 20 + 7 * (i % 3),
        }
        .lay_out_over(cs, &over)?;
        if i % 3 != 2 {
            return Ok(product);
        }
        let output = AllocatedNum::alloc_input(cs.namespace(|| "output"), || {
            product.get_value().ok_or(SynthesisError::AssignmentMissing)
        })?;
        cs.enforce(
            || "output",
            |lc| lc + output.get_variable(),
            |lc| lc + CS::one(),
            |lc| lc + product.get_variable(),
        );
        Ok(output)
    }
}

impl Circuit<Fr> for Tree {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let top = RandomCircuit {
            seed: self.seed,
            steps: 30,
        };
        let mut shared = vec![(CS::one(), Fr::ONE)];
        pad(cs, self.padding, &mut shared)?;
        shared.extend(top.lay_out_over(cs, &shared)?);
        let mut row = (0..self.leaves)
            .map(|i| {
                AllocatedNum::alloc(cs.namespace(|| format!("leaf {i}")), || {
                    Ok(Fr::from(self.seed * 100 + i as u64 + 2))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        for height in 1.. {
            if row.len() < 2 {
                break;
            }
            let pairs: Vec<&[AllocatedNum<Fr>]> = row.chunks(2).collect();
            let node = |cs: &mut CS::Root, i: usize, pair: &[AllocatedNum<Fr>]| {
                self.node(cs, &shared, height, i, pair)
            };
            let spread = match self.small {
                true => spread_small_returning(cs, pairs, node)?,
                false => spread_returning(cs, pairs, node)?,
            };
            let next = match spread {
                Returned::Done(next) => next,
                Returned::Here(pairs) => pairs
                    .into_iter()
                    .enumerate()
                    .map(|(i, pair)| self.node(cs, &shared, height, i, pair))
                    .collect::<Result<_, _>>()?,
            };
            row = next;
        }
        Ok(())
    }
}

/// Self-contained groups of parts, as storage-proofs-post groups a partition's sectors:
/// through `spread`, and where the groups are handed back, each into a system from `new()`
/// appended in order (upstream's way), each group naming its parts from 0 again; on a
/// system that cannot extend, every part in a loop.
#[derive(Clone)]
struct Groups {
    seed: u64,
    groups: usize,
    /// How many times the groups were handed back.
    handed_back: Arc<AtomicUsize>,
}

impl Groups {
    const PER_GROUP: usize = 2;

    fn part(&self, group: usize, i: usize) -> RandomCircuit {
        RandomCircuit {
            seed: self.seed * 100 + (group * Self::PER_GROUP + i) as u64,
            steps: 30 + 7 * i,
        }
    }

    fn lay_out_group<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        group: usize,
    ) -> Result<(), SynthesisError> {
        for i in 0..Self::PER_GROUP {
            let one = [(CS::one(), Fr::ONE)];
            self.part(group, i)
                .lay_out_over(&mut cs.namespace(|| format!("part {i}")), &one)?;
        }
        Ok(())
    }
}

impl Circuit<Fr> for Groups {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        if !CS::is_extensible() {
            for group in 0..self.groups {
                self.lay_out_group(&mut cs.namespace(|| format!("group {group}")), group)?;
            }
            return Ok(());
        }
        let groups = (0..self.groups).collect();
        let groups = match spread(cs, groups, |cs, _, group| self.lay_out_group(cs, group))? {
            Spread::Done => return Ok(()),
            Spread::Here(groups) => groups,
        };
        self.handed_back.fetch_add(1, Ordering::Relaxed);
        for group in groups {
            let mut sub = CS::new();
            sub.alloc_input(|| "one", || Ok(Fr::ONE))?;
            self.lay_out_group(&mut sub, group)?;
            cs.extend(&sub);
        }
        Ok(())
    }
}

fn on_threads<R: Send>(threads: usize, work: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(work)
}

/// The file `recording` saves as, under `name` in the tests' scratch directory.
fn saved(recording: &Recording<Fr>, name: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("branches");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    recording.save(&path).unwrap();
    std::fs::read(&path).unwrap()
}

/// The recording's header before its table of sections, then its first ten sections (the
/// dictionary and the three matrices), byte for byte: what follows is where the parts
/// landed (a recording made on one thread has none) and what is derived from the matrices,
/// with a check drawn at random per recording.
fn recorded_bytes(recording: &Recording<Fr>, name: &str) -> Vec<u8> {
    let bytes = saved(recording, name);
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    // Magic and version, the modulus text, the repr length, the key, seven counts.
    let table = 12 + 4 + u32_at(12) + 4 + 32 + 7 * 8;
    assert!(
        u32_at(table) > 10,
        "the dictionary and 9 matrix sections come first"
    );
    let mut kept = bytes[..table].to_vec();
    for section in 0..10 {
        let entry = table + 4 + section * 16;
        let (offset, len) = (u64_at(entry), u64_at(entry + 8));
        kept.extend_from_slice(&bytes[offset..offset + len]);
    }
    kept
}

#[test]
fn spread_parts_equal_the_sequential_reference_on_any_number_of_threads() {
    let circuits = (1..6).map(|seed| SharedParts::new(seed, 5));
    let nested = (6..8).map(|seed| SharedParts {
        nested: true,
        ..SharedParts::new(seed, 4)
    });
    // Values shared by the branches of a prover's assignment, nested branches included.
    let padded = [false, true].map(|nested| SharedParts {
        padding: 1 << 16,
        nested,
        ..SharedParts::new(8, 5)
    });
    for circuit in circuits.chain(nested).chain(padded) {
        let seed = circuit.seed;
        same_on_any_number_of_threads(circuit, &format!("seed {seed}"));
    }
}

/// Parts that hand their outputs on, rows of a tree as storage-proofs-update hashes its apex
/// tree: the outputs, aux variables and inputs of branches, name where they landed.
#[test]
fn a_tree_of_spread_rows_equals_the_sequential_reference_on_any_number_of_threads() {
    for (seed, leaves, padding) in [(1, 8, 0), (2, 16, 0), (3, 2, 0), (4, 8, 1 << 16)] {
        for small in [false, true] {
            same_on_any_number_of_threads(
                Tree {
                    seed,
                    leaves,
                    small,
                    padding,
                },
                &format!("tree {leaves}, seed {seed}, small {small}, padding {padding}"),
            );
        }
    }
}

/// Rows spread as small parts: a recording (of the structure, or a first member's) places
/// them as the rows spread anywhere, so the witness from it spreads them.
#[test]
fn small_rows_are_placed_by_every_recording_made_on_threads() {
    let tree = |small| Tree {
        seed: 4,
        leaves: 8,
        small,
        padding: 0,
    };
    let spread = recorded_parts(
        &on_threads(2, || Recording::record(tree(false)).unwrap()),
        "small-rows-spread",
    );
    assert!(!spread.is_empty());
    let structure = on_threads(2, || Recording::record(tree(true)).unwrap());
    assert_eq!(recorded_parts(&structure, "small-rows-structure"), spread);
    let (first, _) = on_threads(2, || {
        synthpool::tuning::record_first_member(tree(true)).unwrap()
    });
    assert_eq!(recorded_parts(&first, "small-rows-first"), spread);
}

/// `circuit` on one, two and three threads against the sequential reference: direct
/// synthesis, recording (the same file as on one thread), the witness of recordings made on
/// any of them generated on any of them, a recording with its witness, synthesis from the
/// recording, and the drop-ins' first member (recorded while synthesized directly, both in
/// branches) with its recording.
fn same_on_any_number_of_threads<C: Circuit<Fr> + Clone + Send + Sync>(circuit: C, name: &str) {
    let expected = reference(circuit.clone());
    let (recording, witness) = on_threads(1, || {
        Recording::record_with_witness(circuit.clone()).unwrap()
    });
    let file = recorded_bytes(&recording, &format!("{name}-sequential"));
    assert_same(
        &recording.evaluate(witness.clone()).unwrap(),
        &expected,
        &format!("{name}, one thread"),
    );
    for threads in [1, 2, 3] {
        let what = format!("{name}, {threads} threads");
        let direct = on_threads(threads, || synthpool::synthesize(circuit.clone()).unwrap());
        assert_same(&direct, &expected, &format!("direct, {what}"));
        // Recorded in branches, compared whole (not printed) with the one-thread file.
        let structure = on_threads(threads, || Recording::record(circuit.clone()).unwrap());
        assert!(
            recorded_bytes(&structure, &format!("{name}-{threads}")) == file,
            "recording, {what}"
        );
        let evaluated = structure.evaluate(witness.clone()).unwrap();
        assert_same(&evaluated, &expected, &format!("recorded, {what}"));
        // A recording made on threads knows where the parts put their values: the
        // witness is written there on any number of threads.
        for witness_threads in [1, 2, 3] {
            let generated = on_threads(witness_threads, || {
                structure.witness(circuit.clone()).unwrap()
            });
            assert_eq!(
                generated, witness,
                "witness on {witness_threads} threads, recorded on {threads}, {name}"
            );
        }
        let (_, with) = on_threads(threads, || {
            Recording::record_with_witness(circuit.clone()).unwrap()
        });
        assert_eq!(with, witness, "witness while recording, {what}");
        let generated = on_threads(threads, || recording.witness(circuit.clone()).unwrap());
        assert_eq!(generated, witness, "witness, {what}");
        let evaluated = on_threads(threads, || recording.synthesize(circuit.clone()).unwrap());
        assert_same(
            &evaluated,
            &expected,
            &format!("from the recording, {what}"),
        );
        let (first, vectors) = on_threads(threads, || {
            synthpool::tuning::record_first_member(circuit.clone()).unwrap()
        });
        assert_same(&vectors, &expected, &format!("first member, {what}"));
        let evaluated = first.synthesize(circuit.clone()).unwrap();
        assert_same(
            &evaluated,
            &expected,
            &format!("the first member's recording, {what}"),
        );
    }
}

/// Where a circuit's parts landed, as a recording made on threads notes it (`point, at, len`
/// triples of u64).
fn recorded_parts(recording: &Recording<Fr>, name: &str) -> Vec<u64> {
    let bytes = saved(recording, name);
    let (offset, len) = common::sections(&bytes)[common::PARTS];
    bytes[offset..offset + len]
        .chunks_exact(8)
        .map(|word| u64::from_le_bytes(word.try_into().unwrap()))
        .collect()
}

/// A recording and a first member run consecutive parts in a branch per thread, and note
/// each part where a branch of its own would have put it: the same places on 2, 3 and 4
/// threads as on 5, where every part but the first has a branch, so a witness spreads over
/// every part whatever the threads the recording was made on.
#[test]
fn a_recording_places_every_part_whatever_the_threads() {
    for seed in 1..4 {
        let circuit = SharedParts::new(seed, 5);
        let per_part = recorded_parts(
            &on_threads(5, || Recording::record(circuit.clone()).unwrap()),
            &format!("places-{seed}-5"),
        );
        assert_eq!(per_part.len(), 3 * 4, "four parts after the first");
        for threads in [2, 3, 4] {
            let recording = on_threads(threads, || Recording::record(circuit.clone()).unwrap());
            let name = format!("places-{seed}-{threads}");
            assert_eq!(
                recorded_parts(&recording, &name),
                per_part,
                "{threads} threads"
            );
            let (first, _) = on_threads(threads, || {
                synthpool::tuning::record_first_member(circuit.clone()).unwrap()
            });
            let name = format!("places-{seed}-{threads}-first");
            assert_eq!(
                recorded_parts(&first, &name),
                per_part,
                "first member, {threads}"
            );
        }
    }
}

/// A part in a branch naming a variable nothing allocated is refused with the error a
/// sequential run gives (its constraint, side and variable numbered as there), on any
/// number of threads, whether synthesized, recorded or both.
#[test]
fn a_branch_naming_an_unallocated_variable_is_named_as_in_a_sequential_run() {
    for padding in [0, 1 << 16] {
        a_ghost_is_named_as_in_a_sequential_run(SharedParts {
            ghost_in: Some(1),
            padding,
            ..SharedParts::new(4, 3)
        });
    }
}

fn a_ghost_is_named_as_in_a_sequential_run(circuit: SharedParts) {
    let sequential = SharedParts {
        in_a_loop: true,
        ..circuit.clone()
    };
    let sequential = synthpool::synthesize(sequential).map(drop).unwrap_err();
    match sequential {
        Error::UnallocatedVariable {
            side: synthpool::Side::C,
            kind: synthpool::VariableKind::Aux,
            index,
            allocated,
            ..
        } => assert_eq!(index, allocated + 999),
        ref other => panic!("{other}"),
    }
    let expected = format!("{sequential:?}");
    for threads in [1, 2, 3] {
        let errors = on_threads(threads, || {
            [
                synthpool::synthesize(circuit.clone()).map(drop),
                Recording::record(circuit.clone()).map(drop),
                synthpool::tuning::record_first_member(circuit.clone()).map(drop),
            ]
        });
        for (path, error) in ["direct", "recorded", "first member"].iter().zip(errors) {
            let error = format!("{:?}", error.unwrap_err());
            assert_eq!(error, expected, "{path}, {threads} threads");
        }
    }
}

/// Parts that fail with errors of their own after adding rows give the first failing part's
/// error, as a loop over them would, on any number of threads: synthesized, recorded, both,
/// or witnessed from a recording of the circuit whose parts do not fail.
#[test]
fn the_first_failing_part_in_order_gives_the_error() {
    let sound = SharedParts::new(5, 4);
    let circuit = SharedParts {
        failing_from: Some(1),
        ..sound.clone()
    };
    for threads in [1, 2, 3] {
        let errors = on_threads(threads, || {
            let recording = Recording::record(sound.clone()).unwrap();
            [
                synthpool::synthesize(circuit.clone()).map(drop),
                Recording::record(circuit.clone()).map(drop),
                synthpool::tuning::record_first_member(circuit.clone()).map(drop),
                recording.synthesize(circuit.clone()).map(drop),
            ]
        });
        let paths = ["direct", "recorded", "first member", "from a recording"];
        for (path, outcome) in paths.iter().zip(errors) {
            match outcome {
                Err(Error::Synthesis(SynthesisError::IncompatibleLengthVector(part))) => {
                    assert_eq!(part, "part 1", "{path}, {threads} threads")
                }
                other => panic!("{path}, {threads} threads: {:?}", other),
            }
        }
    }
}

/// Parts that each name fewer distinct coefficients than a recording's dictionary holds,
/// but more together: `per_part` variables of their own, each times a coefficient of its
/// own, in one sum (a combination merges the terms of one variable, so each needs its own).
#[derive(Clone)]
struct CoefficientParts {
    parts: usize,
    per_part: u64,
}

impl Circuit<Fr> for CoefficientParts {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let part = |cs: &mut CS::Root, i: usize| {
            let first = 2 + i as u64 * self.per_part;
            let mut terms = Vec::new();
            for coeff in first..first + self.per_part {
                terms.push((Fr::from(coeff), cs.alloc(|| "x", || Ok(Fr::ONE))?));
            }
            let sum: Fr = terms.iter().map(|(coeff, _)| coeff).sum();
            let y = cs.alloc(|| "sum", || Ok(sum))?;
            cs.enforce(
                || "sum",
                |lc| terms.iter().fold(lc, |lc, &(coeff, x)| lc + (coeff, x)),
                |lc| lc + CS::one(),
                |lc| lc + y,
            );
            Ok(())
        };
        spread_or_in_order(cs, (0..self.parts).collect(), part)
    }
}

/// A recording whose parts' coefficients fit the dictionary one by one but not together is
/// refused with the dictionary's limit on any number of threads, while direct synthesis
/// still gives its vectors (what the drop-ins then prove); parts that fit together record.
#[test]
fn coefficients_past_the_dictionary_across_branches_are_refused() {
    let too_many = CoefficientParts {
        parts: 3,
        per_part: 30_000,
    };
    let fitting = CoefficientParts {
        parts: 3,
        per_part: 20_000,
    };
    let expected = reference(too_many.clone());
    for threads in [1, 2, 3] {
        on_threads(threads, || {
            match Recording::record(too_many.clone()) {
                Err(Error::Limit(synthpool::Limit::Coefficients)) => {}
                other => panic!("{threads} threads: {:?}", other.map(drop)),
            }
            let vectors = synthpool::synthesize(too_many.clone()).unwrap();
            assert_same(&vectors, &expected, &format!("direct, {threads} threads"));
            let recording = Recording::record(fitting.clone()).unwrap();
            let evaluated = recording.synthesize(fitting.clone()).unwrap();
            assert_same(
                &evaluated,
                &reference(fitting.clone()),
                &format!("fitting, {threads} threads"),
            );
        });
    }
}

#[test]
fn a_tampered_branch_value_leaves_the_system_unsatisfied() {
    let circuit = SharedParts::new(9, 4);
    let recording = Recording::record(circuit.clone()).unwrap();
    let honest = on_threads(2, || recording.witness(circuit.clone()).unwrap());
    assert!(recording.evaluate(honest.clone()).is_ok());
    // The last aux value belongs to the last part, synthesized in a branch.
    let mut aux = honest.aux().to_vec();
    let last = aux.len() - 1;
    aux[last] += Fr::ONE;
    let mut tampered = Witness::default();
    tampered.extend_inputs(honest.inputs());
    tampered.extend_aux(&aux);
    for _ in 0..honest.constraints() {
        tampered.enforce(|| "", |lc| lc, |lc| lc, |lc| lc);
    }
    assert!(matches!(
        recording.evaluate(tampered),
        Err(Error::Unsatisfied { .. })
    ));
}

#[test]
fn a_branch_extended_into_another_system_is_refused() {
    let mut big = ProvingAssignment::<Fr>::default();
    big.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    let x: Variable = big.alloc(|| "x", || Ok(Fr::from(3))).unwrap();
    let mut branch = big.branches(1).expect("an assignment branches").remove(0);
    branch.enforce(
        || "x * x = 9",
        |lc| lc + x,
        |lc| lc + x,
        |lc| lc + (Fr::from(9), ProvingAssignment::<Fr>::one()),
    );

    let mut small = ProvingAssignment::<Fr>::default();
    small.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    small.extend(&branch);
    assert!(matches!(
        small.into_vectors(),
        Err(Error::MisplacedBranch { inputs: 1, aux: 1 })
    ));
    // Where it was taken, it is appended.
    big.extend(&branch);
    assert_eq!(big.into_vectors().unwrap().a, vec![Fr::from(3)]);
}

#[test]
fn the_first_fault_is_the_one_returned() {
    let mut big = ProvingAssignment::<Fr>::default();
    big.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    big.alloc(|| "x", || Ok(Fr::from(3))).unwrap();
    let branch = big.branches(1).expect("an assignment branches").remove(0);

    let mut small = ProvingAssignment::<Fr>::default();
    small.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    let ghost = Variable::new_unchecked(Index::Aux(9));
    small.enforce(|| "ghost", |lc| lc + ghost, |lc| lc, |lc| lc);
    // A second fault of another kind does not replace the first.
    small.extend(&branch);
    let first = |error: &Error| matches!(error, Error::UnallocatedVariable { index: 9, .. });
    assert!(
        small.fault().as_ref().is_some_and(first),
        "{:?}",
        small.fault()
    );
    assert!(small.into_vectors().as_ref().is_err_and(first));
}

/// An assignment with its constant one, `padding` aux values of 7, then `x` = 3.
fn padded(padding: usize) -> (ProvingAssignment<Fr>, Variable) {
    let mut cs = ProvingAssignment::<Fr>::default();
    cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    for _ in 0..padding {
        cs.alloc(|| "padding", || Ok(Fr::from(7))).unwrap();
    }
    let x = cs.alloc(|| "x", || Ok(Fr::from(3))).unwrap();
    (cs, x)
}

/// `y` = `value` squared, constrained as `x * x = y` (whatever `x` holds).
fn square(cs: &mut ProvingAssignment<Fr>, x: Variable, value: u64) -> Variable {
    let y = cs.alloc(|| "y", || Ok(Fr::from(value * value))).unwrap();
    cs.enforce(|| "x * x = y", |lc| lc + x, |lc| lc + x, |lc| lc + y);
    y
}

/// Branches of a prover's assignment taken at once read the values before them (a copy in
/// each, or from 65,536 values on one copy for all); a branch of a branch reads its
/// system's values and that branch's own; appended in order they give the sequential run's
/// vectors, and a branch's own vectors hold every value.
#[test]
fn branches_read_the_values_before_them_where_they_lie() {
    fn product(cs: &mut ProvingAssignment<Fr>, x: Variable, z: Variable, value: u64) {
        let w = cs.alloc(|| "w", || Ok(Fr::from(value))).unwrap();
        cs.enforce(|| "z * x = w", |lc| lc + z, |lc| lc + x, |lc| lc + w);
    }
    for padding in [0, 1 << 16] {
        let (mut sequential, x) = padded(padding);
        square(&mut sequential, x, 3);
        let z = square(&mut sequential, x, 3);
        product(&mut sequential, x, z, 27);
        product(&mut sequential, x, z, 27);

        let (mut cs, x) = padded(padding);
        let mut branches = cs.branches(3).expect("an assignment branches");
        let mut alone = branches.pop().unwrap();
        let mut second = branches.pop().unwrap();
        let mut first = branches.pop().unwrap();
        square(&mut first, x, 3);
        let z = square(&mut second, x, 3);
        let mut nested = second.branches(2).expect("a branch branches");
        for branch in &mut nested {
            product(branch, x, z, 27);
        }
        nested.iter().for_each(|branch| second.extend(branch));
        square(&mut alone, x, 5);
        cs.extend(&first);
        cs.extend(&second);
        let what = format!("{padding} values before the branches");
        assert_same(
            &cs.into_vectors().unwrap(),
            &sequential.into_vectors().unwrap(),
            &what,
        );
        // 5 is not 3 squared: the branch's own vectors hold every value and its wrong row.
        let alone = alone.into_vectors().unwrap();
        let aux = &alone.aux_assignment;
        assert_eq!(aux.len(), padding + 2, "{what}");
        assert_eq!(aux[padding..], [Fr::from(3), Fr::from(25)], "{what}");
        assert!(aux[..padding].iter().all(|&v| v == Fr::from(7)), "{what}");
        assert_eq!(alone.a, vec![Fr::from(3)], "{what}");
        assert_eq!(alone.c, vec![Fr::from(25)], "{what}");
    }
}

/// A sub-circuit from `new()` that never allocated the constant one (so has no inputs)
/// extends the system as it did before branches: its aux values and rows appended.
#[test]
fn a_sub_circuit_without_inputs_extends_as_before() {
    let mut cs = ProvingAssignment::<Fr>::default();
    cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    let mut sub = <ProvingAssignment<Fr> as ConstraintSystem<Fr>>::new();
    let x = sub.alloc(|| "x", || Ok(Fr::from(2))).unwrap();
    sub.enforce(
        || "x * x = 2 x",
        |lc| lc + x,
        |lc| lc + x,
        |lc| lc + (Fr::from(2), x),
    );
    cs.extend(&sub);
    let vectors = cs.into_vectors().unwrap();
    assert_eq!(vectors.input_assignment, vec![Fr::ONE]);
    assert_eq!(vectors.aux_assignment, vec![Fr::from(2)]);
    assert_eq!(vectors.a, vec![Fr::from(2)]);
    assert_eq!(vectors.c, vec![Fr::from(4)]);
}

/// A recording made on threads, saved and opened again (read and mapped), still places the
/// parts; a circuit that runs the same parts in a loop gets the same witness from it.
#[test]
fn a_saved_recording_places_the_parts_and_a_loop_passes_over_them() {
    let circuit = SharedParts::new(4, 5);
    let expected = reference(circuit.clone());
    let witness = Recording::record_with_witness(circuit.clone()).unwrap().1;
    let recording = on_threads(3, || Recording::record(circuit.clone()).unwrap());
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("branches");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("parts.rec");
    recording.save(&path).unwrap();
    let looped = SharedParts {
        in_a_loop: true,
        ..circuit.clone()
    };
    for (opened, how) in [
        (Recording::load(&path).unwrap(), "loaded"),
        (Recording::map_unverified(&path).unwrap(), "mapped"),
    ] {
        for c in [circuit.clone(), looped.clone()] {
            let generated = on_threads(2, || opened.witness(c).unwrap());
            assert_eq!(generated, witness, "{how}");
        }
        let vectors = on_threads(2, || opened.synthesize(circuit.clone()).unwrap());
        assert_same(&vectors, &expected, how);
    }
}

/// Another circuit with the recorded counts whose parts have other sizes (as a circuit
/// that groups its parts by the machine's CPUs would on another machine): its parts do not
/// fit the recorded ranges, and its witness is still its sequential one on any number of
/// threads; evaluation then finds it does not satisfy the recorded rows.
#[test]
fn parts_of_other_sizes_still_give_their_own_witness() {
    let circuit = SharedParts::new(6, 4);
    let recording = on_threads(2, || Recording::record(circuit.clone()).unwrap());
    let other = SharedParts {
        reversed: true,
        ..circuit
    };
    let shape = on_threads(1, || Recording::record(other.clone()).unwrap()).shape();
    assert_eq!(shape, recording.shape(), "the same counts");
    let sequential = on_threads(1, || recording.witness(other.clone()).unwrap());
    for threads in [2, 3] {
        let spread = on_threads(threads, || recording.witness(other.clone()).unwrap());
        assert_eq!(spread, sequential, "{threads} threads");
    }
    assert!(matches!(
        recording.evaluate(sequential),
        Err(Error::Unsatisfied { .. })
    ));
}

/// A file whose recorded parts overlap (digest resealed, as a hostile writer would) is
/// refused whether read or mapped, naming the part.
#[test]
fn a_file_whose_parts_overlap_is_refused() {
    let circuit = SharedParts::new(5, 3);
    let recording = on_threads(2, || Recording::record(circuit).unwrap());
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("branches");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("overlapping-parts.rec");
    recording.save(&path).unwrap();
    // Triples of u64 (taken at, first aux index, count): the second part starts where the
    // first does.
    common::edit_section(&path, common::PARTS, |words| {
        assert_eq!(words.len(), 2 * 24, "two parts besides the system's own");
        let first_at: [u8; 8] = words[8..16].try_into().unwrap();
        words[32..40].copy_from_slice(&first_at);
    });
    for opened in [
        Recording::<Fr>::load(&path),
        Recording::<Fr>::map_unverified(&path),
    ] {
        match opened {
            Err(Error::File { problem, .. }) => {
                assert!(problem.to_string().contains("part 1"), "{problem}")
            }
            other => panic!("{other:?}"),
        }
    }
}

/// On one thread, or with one group, every synthpool system takes the groups in place,
/// copying nothing, where the circuit's own way is a system from `new()` per group; on more,
/// those that branch spread them. A system that does not say it takes parts in place
/// (bellpepper's `WitnessCS`) gets them back, as does one that cannot branch on more threads
/// (the witness kept while recording, and so the witness of a recording without parts).
#[test]
fn groups_of_parts_run_in_the_system_itself_on_one_thread() {
    for (groups, threads) in [(3, 1), (1, 1), (1, 2), (3, 2), (3, 3)] {
        let circuit = Groups {
            seed: 8,
            groups,
            handed_back: Arc::new(AtomicUsize::new(0)),
        };
        let handed_back = |work: &(dyn Fn() + Sync)| {
            let before = circuit.handed_back.load(Ordering::Relaxed);
            on_threads(threads, work);
            circuit.handed_back.load(Ordering::Relaxed) - before
        };
        let what = format!("{groups} groups, {threads} threads");
        let spreads = usize::from(groups > 1 && threads > 1);
        let expected = reference(circuit.clone());
        let with_witness = || {
            let (recording, witness) = Recording::record_with_witness(circuit.clone()).unwrap();
            assert_same(
                &recording.evaluate(witness.clone()).unwrap(),
                &expected,
                &format!("recorded with its witness, {what}"),
            );
            (recording, witness)
        };
        let direct = || {
            let vectors = synthpool::synthesize(circuit.clone()).unwrap();
            assert_same(&vectors, &expected, &format!("direct, {what}"));
        };
        assert_eq!(handed_back(&direct), 0, "direct, {what}");
        let (recorded, witness) = on_threads(1, with_witness);
        assert_eq!(
            handed_back(&|| drop(with_witness())),
            spreads,
            "recording with its witness, {what}"
        );
        // The witness of a recording made on these threads and on three (parts placed), and
        // of the one recorded with its witness on one thread (no parts).
        let placed = |on| on_threads(on, || Recording::record(circuit.clone()).unwrap());
        for (recording, expected_back, made) in [
            (placed(threads), 0, "on these threads"),
            (placed(3), 0, "on three threads"),
            (recorded, spreads, "with its witness on one thread"),
        ] {
            let generate = || {
                let generated = recording.witness(circuit.clone()).unwrap();
                assert_eq!(generated, witness, "recording made {made}, {what}")
            };
            assert_eq!(
                handed_back(&generate),
                expected_back,
                "witness of a recording made {made}, {what}"
            );
        }
        let foreign = || {
            let mut cs = bellpepper::util_cs::witness_cs::WitnessCS::<Fr>::new();
            circuit.clone().synthesize(&mut cs).unwrap();
            assert_eq!(cs.scalar_aux(), expected.aux_assignment, "{what}");
        };
        assert_eq!(handed_back(&foreign), 1, "WitnessCS, {what}");
    }
}
