//! Pre-compiled evaluation: record + witness + evaluate equals ProvingAssignment field for
//! field on every circuit family the assignment tests use; proofs from it are bellperson's;
//! a recording is never applied to a witness of another structure; recordings refuse what
//! the format cannot hold (files: `tests/recording_files.rs`).

mod common;

use bellpepper_core::{Circuit, ConstraintSystem, Index, SynthesisError, Variable};
use blstrs::{Bls12, Scalar as Fr};
use common::{
    assert_same, spread_or_in_order, ExtendCircuit, Gadgets, NumCircuit, RandomCircuit,
    Sha256Circuit,
};
use ff::Field;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use std::mem::MaybeUninit;
use synthpool::precompiled::{ProvingBuffers, Recording};
use synthpool::{synthesize, Error, ProverVectors};
use synthpool::{Limit, VariableKind};

fn check<C: Circuit<Fr> + Clone>(circuit: C, what: &str) -> Recording<Fr> {
    let recording = Recording::record(circuit.clone()).unwrap();
    let expected = synthesize(circuit.clone()).unwrap();
    assert_eq!(recording.shape(), expected.shape(), "{what}: shape");
    let ours = recording.synthesize(circuit.clone()).unwrap();
    assert_same(&ours, &expected, what);
    let (again, witness) = Recording::record_with_witness(circuit.clone()).unwrap();
    assert_same(&again.evaluate(witness).unwrap(), &expected, what);
    // Synthesized directly while recorded: those vectors, and a recording that gives them.
    let (vectors, checked) = Recording::synthesize_and_record(circuit.clone()).unwrap();
    assert_same(&vectors, &expected, what);
    let checked = checked.unwrap_or_else(|why| panic!("{what}: not recorded: {why}"));
    assert_same(&checked.synthesize(circuit).unwrap(), &expected, what);
    recording
}

#[test]
fn equals_proving_assignment_on_every_circuit_family() {
    for seed in 0..40 {
        check(
            RandomCircuit { seed, steps: 200 },
            &format!("random {seed}"),
        );
    }
    for seed in 0..5 {
        let parts: Vec<RandomCircuit> = (0..4)
            .map(|k| RandomCircuit {
                seed: 100 + seed * 10 + k,
                steps: 60,
            })
            .collect();
        check(
            ExtendCircuit {
                parts,
                parallel: true,
            },
            &format!("extend {seed}"),
        );
    }
    check(
        NumCircuit {
            x: Some(Fr::from(77u64)),
            rounds: 3,
        },
        "num",
    );
    for gadgets in [Gadgets::Bellperson, Gadgets::Synthpool] {
        let recording = check(
            Sha256Circuit::sample(64, gadgets),
            &format!("sha256 64 bytes, {gadgets:?}"),
        );
        println!(
            "sha256 64 bytes: {} nonzeros, {} distinct coefficients, {:.2} bytes per nonzero",
            recording.nonzeros(),
            recording.dictionary_len(),
            recording.bytes_per_nonzero()
        );
    }
}

#[test]
fn one_recording_serves_many_witnesses_and_recycled_buffers() {
    let recording = Recording::<Fr>::record(NumCircuit { x: None, rounds: 2 }).unwrap();
    let mut buffers = ProvingBuffers::default();
    for x in [1u64, 2, 1 << 50, 5] {
        let circuit = NumCircuit {
            x: Some(Fr::from(x)),
            rounds: 2,
        };
        let expected = synthesize(circuit.clone()).unwrap();
        assert_same(
            &recording.synthesize(circuit.clone()).unwrap(),
            &expected,
            "fresh",
        );
        assert_same(
            buffers.synthesize(&recording, circuit.clone()).unwrap(),
            &expected,
            "recycled",
        );
        // Storage a prover hands back holds spent values, padded past the row count (its
        // FFT domain) or cut short: every value is written again either way.
        for extra in [0, 5, 1 << 10] {
            let rows = expected.a.len() + extra;
            let stale = |len: usize| vec![Fr::from(0xdead_u64); len];
            let spent = ProverVectors {
                a: stale(rows.saturating_sub(1)),
                b: stale(rows),
                c: stale(rows),
                input_assignment: stale(9),
                aux_assignment: stale(expected.aux_assignment.len() + extra),
                ..ProverVectors::default()
            };
            assert_same(
                &recording.synthesize_into(circuit.clone(), spent).unwrap(),
                &expected,
                &format!("spent storage {extra} past the rows"),
            );
        }
    }
}

/// `y = k * x`, enforced as `(k * x) * 1 = y`, with `extra` more copies of the constraint:
/// circuits of equal variable counts that differ in a coefficient or in their row count.
#[derive(Clone)]
struct Scaled {
    k: u64,
    x: Option<u64>,
    extra: usize,
}

impl Circuit<Fr> for Scaled {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let k = Fr::from(self.k);
        let x_value = self.x.map(Fr::from);
        let x = cs.alloc(|| "x", || x_value.ok_or(SynthesisError::AssignmentMissing))?;
        let y = cs.alloc(
            || "y",
            || {
                x_value
                    .map(|x| x * k)
                    .ok_or(SynthesisError::AssignmentMissing)
            },
        )?;
        for i in 0..=self.extra {
            cs.enforce(
                || format!("y = kx {i}"),
                |lc| lc + (k, x),
                |lc| lc + CS::one(),
                |lc| lc + y,
            );
        }
        Ok(())
    }
}

#[test]
fn a_witness_of_another_structure_is_an_error_naming_what_differs() {
    let recording = Recording::<Fr>::record(Scaled {
        k: 3,
        x: None,
        extra: 10,
    })
    .unwrap();
    assert_eq!(recording.shape().constraints, 11 + 1);

    // Same variable counts, ten more rows.
    let more_rows = recording.synthesize(Scaled {
        k: 3,
        x: Some(4),
        extra: 20,
    });
    match more_rows {
        Err(Error::StructureMismatch {
            what: "constraints",
            recorded: 12,
            found: 22,
        }) => {}
        other => panic!("{:?}", other.map(|v| v.shape())),
    }

    // Same counts, another coefficient: the recorded rows are not satisfied.
    let other_coefficient = recording.synthesize(Scaled {
        k: 5,
        x: Some(4),
        extra: 10,
    });
    match other_coefficient {
        Err(e @ Error::Unsatisfied { row: 0 }) => {
            assert!(e.to_string().contains("row 0"), "{e}")
        }
        other => panic!("{:?}", other.map(|v| v.shape())),
    }

    // Other variable counts.
    let witness = recording.witness(NumCircuit {
        x: Some(Fr::from(3u64)),
        rounds: 1,
    });
    let err = recording.evaluate(witness.unwrap()).unwrap_err();
    assert!(matches!(err, Error::StructureMismatch { .. }), "{err}");

    // Recycled buffers hold no rows after a refused witness.
    let mut buffers = ProvingBuffers::default();
    buffers
        .synthesize(
            &recording,
            Scaled {
                k: 3,
                x: Some(2),
                extra: 10,
            },
        )
        .unwrap();
    assert!(buffers
        .synthesize(
            &recording,
            Scaled {
                k: 5,
                x: Some(2),
                extra: 10
            }
        )
        .is_err());
    assert!(buffers.take_vectors().a.is_empty());
}

/// A sub-recording of `2^levels - 1` aux variables and no rows, built by doubling through
/// `extend`, so no test allocates billions of variables one by one.
fn aux_only<CS: ConstraintSystem<Fr>>(levels: u32) -> CS {
    let mut level = CS::new();
    level.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    level.alloc(|| "a", || Ok(Fr::ONE)).unwrap();
    let mut total = CS::new();
    total.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    total.extend(&level);
    for _ in 1..levels {
        let mut next = CS::new();
        next.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
        next.extend(&level);
        next.extend(&level);
        level = next;
        total.extend(&level);
    }
    total
}

/// `own_aux` aux variables, then a sub-circuit of `2^31 - 1` aux variables whose one row
/// names its last; extended, that row names aux variable `own_aux + 2^31 - 2`.
struct HugeExtension {
    own_aux: usize,
}

impl Circuit<Fr> for HugeExtension {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for _ in 0..self.own_aux {
            cs.alloc(|| "own", || Ok(Fr::ONE))?;
        }
        let mut sub: CS = aux_only(31);
        let last = Variable::new_unchecked(Index::Aux((1 << 31) - 2));
        sub.enforce(
            || "last",
            |lc| lc + last,
            |lc| lc + CS::one(),
            |lc| lc + last,
        );
        cs.extend(&sub);
        Ok(())
    }
}

#[test]
fn extending_past_the_column_limit_is_an_error_not_a_wrapped_column() {
    for own_aux in [2usize, 11] {
        match Recording::<Fr>::record(HugeExtension { own_aux }) {
            Err(Error::Limit(Limit::Column {
                kind: VariableKind::Aux,
                index,
            })) => assert_eq!(index, own_aux as u64 + (1 << 31) - 2),
            Err(other) => panic!("own aux {own_aux}: {other}"),
            Ok(_) => panic!("own aux {own_aux}: recorded"),
        }
    }
}

/// A sub-circuit with an input, extended into a system that has no constant one yet.
struct InputsWithoutOne;

impl Circuit<Fr> for InputsWithoutOne {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut sub = CS::new();
        sub.alloc_input(|| "one", || Ok(Fr::ONE))?;
        let v = sub.alloc_input(|| "v", || Ok(Fr::from(5u64)))?;
        sub.enforce(|| "v", |lc| lc + v, |lc| lc + CS::one(), |lc| lc + v);
        let mut middle = CS::new();
        middle.extend(&sub);
        cs.extend(&middle);
        cs.alloc_input(|| "late", || Ok(Fr::from(7u64)))?;
        Ok(())
    }
}

#[test]
fn a_sub_circuit_with_inputs_into_a_system_without_the_constant_one_is_an_error() {
    let err = Recording::<Fr>::record(InputsWithoutOne).unwrap_err();
    assert!(matches!(err, Error::ExtendWithoutOne), "{err}");
}

#[test]
fn proofs_from_recorded_vectors_are_bellpersons() {
    use bellperson::groth16;
    let mut rng = XorShiftRng::seed_from_u64(5);
    let params = groth16::generate_random_parameters::<Bls12, _, _>(
        NumCircuit { x: None, rounds: 2 },
        &mut rng,
    )
    .unwrap();
    let recording = Recording::<Fr>::record(NumCircuit { x: None, rounds: 2 }).unwrap();
    let circuit = NumCircuit {
        x: Some(Fr::from(9u64)),
        rounds: 2,
    };
    let (r, s) = synthpool::prover::random_rs::<Fr>(1, &mut rng);
    let expected = groth16::create_proof(circuit.clone(), &params, r[0], s[0]).unwrap();
    let vectors = recording.synthesize(circuit).unwrap();
    let public = vectors.input_assignment[1..].to_vec();
    let proof = synthpool::prover::v0_26::prove(&params, vec![vectors], &r, &s).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    proof[0].write(&mut a).unwrap();
    expected.write(&mut b).unwrap();
    assert_eq!(a, b);
    let pvk = groth16::prepare_verifying_key(&params.vk);
    assert!(groth16::verify_proof(&pvk, &proof[0], &public).unwrap());
}

#[test]
fn reserving_an_absurd_shape_is_an_error() {
    let shape = synthpool::Shape {
        inputs: 1,
        aux: usize::MAX / 8,
        constraints: usize::MAX / 8,
    };
    let options = synthpool::SynthesisOptions::default().with_shape(Some(shape));
    let err = synthpool::ProvingAssignment::<Fr>::with_options(&options).expect_err("refused");
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
}

/// `n` aux values and `n` constraints `x_i · 1 = x_i`: a circuit whose vectors grow with `n`.
struct Growing {
    n: usize,
}

impl Circuit<Fr> for Growing {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for i in 0..self.n {
            let x = cs.alloc(|| "x", || Ok(Fr::from(i as u64 + 2)))?;
            cs.enforce(|| "x", |lc| lc + x, |lc| lc + CS::one(), |lc| lc + x);
        }
        Ok(())
    }
}

/// Two parts through `spread`: the first one row, the second growing as [`Growing`] does, so
/// on two threads the second runs out of memory in a branch.
struct GrowingPart {
    n: usize,
}

impl Circuit<Fr> for GrowingPart {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let n = self.n;
        spread_or_in_order(cs, vec![0, 1], |cs, i| {
            Growing { n: [1, n][i] }.synthesize(cs)
        })
    }
}

/// The environment variable that turns the growth test into its memory-limited child.
const GROWING: &str = "SYNTHPOOL_GROWING_CHILD";
/// What the child prints when every synthesis ran out as it should.
const RAN_OUT: &str = "ran out:";

/// Direct synthesis of a shape not known in advance, and recording, running out of memory
/// (`ulimit -v`): an out-of-memory error each, not an abort; then the same in a branch on
/// two threads, and a first member there. The child reserves most of its address space
/// untouched first, so the limit is reached within a few million rows.
#[test]
fn growth_past_the_memory_limit_is_an_error() {
    if std::env::var(GROWING).is_ok() {
        let ballast: Vec<u8> = Vec::with_capacity((3usize << 30) + (7 << 27));
        let n = 40_000_000;
        let direct = synthpool::synthesize::<Fr, _>(Growing { n }).expect_err("ran out");
        assert!(matches!(direct, Error::OutOfMemory { .. }), "{direct}");
        let recorded = Recording::<Fr>::record(Growing { n }).expect_err("ran out");
        assert!(matches!(recorded, Error::OutOfMemory { .. }), "{recorded}");
        // The same in a branch, on two threads: what the branch ran out of is named as the
        // system's own running out would be, whichever path synthesizes.
        let two_threads = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let in_a_branch = two_threads.install(|| {
            [
                synthpool::synthesize::<Fr, _>(GrowingPart { n }).map(drop),
                Recording::<Fr>::record(GrowingPart { n }).map(drop),
                synthpool::tuning::record_first_member::<Fr, _>(GrowingPart { n }).map(drop),
            ]
        });
        drop(ballast);
        for (path, outcome) in ["direct", "recorded", "first member"]
            .iter()
            .zip(in_a_branch)
        {
            let error = outcome.expect_err("ran out");
            assert!(
                matches!(error, Error::OutOfMemory { .. }),
                "{path}, in a branch: {error}"
            );
        }
        println!("{RAN_OUT} {direct}; {recorded}");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let child = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" --exact \"$1\" --nocapture")
        .arg(&exe)
        .arg("growth_past_the_memory_limit_is_an_error")
        .env(GROWING, "1")
        // A backtrace printed out of memory can deadlock the child instead of failing it.
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let output = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success() && output.contains(RAN_OUT),
        "the memory-limited syntheses: {}\n{output}\n{}",
        child.status,
        String::from_utf8_lossy(&child.stderr)
    );
}

/// `z = (a_factor · x) · (b_factor · x)`: the same counts whatever the factors, so a
/// witness of one satisfies another's row when the products agree.
#[derive(Clone)]
struct Product {
    x: u64,
    a_factor: u64,
    b_factor: u64,
}

impl Circuit<Fr> for Product {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = Fr::from(self.x);
        let z_value = Fr::from(self.a_factor) * x * Fr::from(self.b_factor) * x;
        let xv = cs.alloc(|| "x", || Ok(x))?;
        let z = cs.alloc_input(|| "z", || Ok(z_value))?;
        cs.enforce(
            || "z",
            |lc| lc + (Fr::from(self.a_factor), xv),
            |lc| lc + (Fr::from(self.b_factor), xv),
            |lc| lc + z,
        );
        Ok(())
    }
}

/// Both sides of what a recording promises about a witness of another circuit: other
/// counts, or a row that does not hold, is an error; a circuit that differs only where its
/// factors sit and whose witness satisfies the recorded row gets the recorded circuit's
/// vectors, which satisfy it, not its own.
#[test]
fn a_witness_of_another_circuit_is_refused_or_gets_the_recorded_rows() {
    let recorded = Product {
        x: 2,
        a_factor: 3,
        b_factor: 1,
    };
    let recording = Recording::<Fr>::record(recorded.clone()).unwrap();

    // Refused: a row that does not hold (y = 5x·x at x = 2 is 20, the recorded row says 12).
    let unsatisfied = recording.synthesize(Product {
        x: 2,
        a_factor: 5,
        b_factor: 1,
    });
    assert!(
        matches!(unsatisfied, Err(Error::Unsatisfied { row: 0 })),
        "{unsatisfied:?}"
    );
    // Refused: other counts.
    let other_counts = recording.synthesize(NumCircuit {
        x: Some(Fr::from(3u64)),
        rounds: 1,
    });
    assert!(
        matches!(other_counts, Err(Error::StructureMismatch { .. })),
        "{other_counts:?}"
    );

    // Accepted: the factor on B instead of A, the same product (3x · x = x · 3x).
    let moved = Product {
        x: 2,
        a_factor: 1,
        b_factor: 3,
    };
    let evaluated = recording.synthesize(moved.clone()).unwrap();
    let own = synthesize(moved).unwrap();
    let expected = synthesize(recorded).unwrap();
    assert_same(&evaluated, &expected, "the recorded circuit's vectors");
    assert_ne!(
        (evaluated.a[0], evaluated.b[0]),
        (own.a[0], own.b[0]),
        "not its own"
    );
    assert_eq!(
        evaluated.a[0] * evaluated.b[0],
        evaluated.c[0],
        "which satisfy the row"
    );
}

/// Slots for `n` rows, each holding a value no evaluation here writes, so a slot left
/// unwritten shows.
fn caller_slots(n: usize) -> [Vec<MaybeUninit<Fr>>; 3] {
    let sentinel = MaybeUninit::new(Fr::from(0xdead_beef_u64));
    [vec![sentinel; n], vec![sentinel; n], vec![sentinel; n]]
}

/// The slots' values: each held a value before evaluation, and holds one after.
fn read_back(slots: Vec<MaybeUninit<Fr>>) -> Vec<Fr> {
    slots
        .into_iter()
        // SAFETY: every slot was initialized by `caller_slots`, and evaluation writes only
        // whole values.
        .map(|slot| unsafe { slot.assume_init() })
        .collect()
}

/// `circuit` evaluated into slots starting `skip` values into their storage (one skipped
/// puts them off the 16-byte boundary streaming stores need).
fn evaluated_into_slots<C: Circuit<Fr> + Clone>(circuit: C, skip: usize, what: &str) {
    let recording = Recording::record(circuit.clone()).unwrap();
    let expected = synthesize(circuit.clone()).unwrap();
    let [mut a, mut b, mut c] = caller_slots(skip + expected.a.len());
    let storage = [a.as_ptr(), b.as_ptr(), c.as_ptr()];
    let witness = recording.witness(circuit).unwrap();
    let evaluated = recording
        .evaluate_to(witness, [&mut a[skip..], &mut b[skip..], &mut c[skip..]])
        .unwrap();
    assert_eq!([a.as_ptr(), b.as_ptr(), c.as_ptr()], storage, "{what}");
    let rows = |slots: Vec<MaybeUninit<Fr>>| read_back(slots).split_off(skip);
    let ours = ProverVectors {
        a: rows(a),
        b: rows(b),
        c: rows(c),
        input_assignment: evaluated.input_assignment,
        aux_assignment: evaluated.aux_assignment,
        a_aux_density: evaluated.a_aux_density,
        b_input_density: evaluated.b_input_density,
        b_aux_density: evaluated.b_aux_density,
    };
    assert_same(&ours, &expected, what);
}

#[test]
fn rows_written_into_caller_owned_storage_are_the_evaluated_ones() {
    for seed in 0..20 {
        let circuit = RandomCircuit { seed, steps: 300 };
        evaluated_into_slots(circuit, seed as usize % 2, &format!("random {seed}"));
    }
    for (skip, gadgets) in [(0, Gadgets::Bellperson), (1, Gadgets::Synthpool)] {
        // Over ten thousand rows: several chunks, each its own task.
        evaluated_into_slots(Sha256Circuit::sample(1024, gadgets), skip, "sha256");
    }
    let parts = (0..4)
        .map(|k| RandomCircuit {
            seed: 500 + k,
            steps: 80,
        })
        .collect();
    let extend = ExtendCircuit {
        parts,
        parallel: true,
    };
    evaluated_into_slots(extend, 0, "extend");
}

#[test]
fn caller_owned_storage_of_another_length_or_an_unsatisfied_witness_is_an_error() {
    let circuit = |k, x| Scaled {
        k,
        x: Some(x),
        extra: 10,
    };
    let recording = Recording::<Fr>::record(circuit(3, 4)).unwrap();
    let rows = recording.shape().constraints;
    for (side, short) in [(0, rows - 1), (2, rows + 1)] {
        let mut slots = caller_slots(rows);
        slots[side] = caller_slots(short)[0].clone();
        let [a, b, c] = &mut slots;
        let witness = recording.witness(circuit(3, 4)).unwrap();
        let error = recording.evaluate_to(witness, [a, b, c]).unwrap_err();
        assert!(
            matches!(
                error,
                Error::StructureMismatch { recorded, found, .. }
                    if recorded == rows && found == short
            ),
            "{error}"
        );
    }
    // A witness of another coefficient fails at the row `evaluate` names.
    let [mut a, mut b, mut c] = caller_slots(rows);
    let witness = recording.witness(circuit(5, 4)).unwrap();
    let error = recording
        .evaluate_to(witness, [&mut a, &mut b, &mut c])
        .unwrap_err();
    assert!(matches!(error, Error::Unsatisfied { row: 0 }), "{error}");
    // One of other variable counts.
    let witness = recording
        .witness(NumCircuit {
            x: Some(Fr::from(3u64)),
            rounds: 1,
        })
        .unwrap();
    let error = recording
        .evaluate_to(witness, [&mut a, &mut b, &mut c])
        .unwrap_err();
    assert!(matches!(error, Error::StructureMismatch { .. }), "{error}");
}
