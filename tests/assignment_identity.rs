//! ProvingAssignment against the bellperson-algorithm reference: a, b, c, every density
//! bitmap and both assignments equal, for every combination of pool and kernel.

mod common;

use bellpepper_core::{Circuit, ConstraintSystem, Index, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use common::{
    assert_same, reference, ExtendCircuit, Gadgets, NumCircuit, RandomCircuit, Sha256Circuit,
};
use ff::Field;
use synthpool::tuning::{EvalKernel, Observe, Tune};
use synthpool::{synthesize_with, ProvingAssignment, Side, SynthesisOptions, VariableKind};

fn variants() -> Vec<SynthesisOptions> {
    let mut out = Vec::new();
    for pool in [false, true] {
        for kernel in EvalKernel::ALL {
            out.push(
                SynthesisOptions::default()
                    .with_pool(pool)
                    .with_kernel(kernel),
            );
        }
    }
    // A tiny bound so the oversized-buffer path runs too.
    out.push(SynthesisOptions::default().with_max_kept_terms(2));
    out
}

fn check<C: Circuit<Fr> + Clone>(circuit: C, what: &str) {
    let expected = reference(circuit.clone());
    for options in variants() {
        let ours = synthesize_with(circuit.clone(), &options).unwrap();
        assert_same(&ours, &expected, &format!("{what} with {options:?}"));
        // Pre-sized from the first run: same result.
        let sized = options.with_shape(Some(ours.shape()));
        let again = synthesize_with(circuit.clone(), &sized).unwrap();
        assert_same(&again, &expected, &format!("{what} pre-sized"));
        assert!(again.a.capacity() >= ours.a.len().next_power_of_two());
    }
}

#[test]
fn random_circuits_with_interleaved_inputs() {
    for seed in 0..60 {
        check(
            RandomCircuit { seed, steps: 200 },
            &format!("random {seed}"),
        );
    }
}

#[test]
fn extended_sub_circuits_equal_serial_synthesis() {
    for seed in 0..10 {
        let parts: Vec<RandomCircuit> = (0..4)
            .map(|k| RandomCircuit {
                seed: seed * 10 + k,
                steps: 80,
            })
            .collect();
        let serial = reference(ExtendCircuit {
            parts: parts.clone(),
            parallel: false,
        });
        for options in variants() {
            let extended = synthesize_with(
                ExtendCircuit {
                    parts: parts.clone(),
                    parallel: true,
                },
                &options,
            )
            .unwrap();
            assert_same(&extended, &serial, &format!("extend {seed}"));
        }
    }
}

#[test]
fn sha256_circuits_with_either_gadget_set() {
    for gadgets in [Gadgets::Bellperson, Gadgets::Synthpool] {
        check(
            Sha256Circuit::sample(64, gadgets),
            &format!("sha256 of 64 bytes, {gadgets:?}"),
        );
    }
}

#[test]
fn num_heavy_circuits() {
    check(
        NumCircuit {
            x: Some(Fr::from(0x1234_5678u64)),
            rounds: 4,
        },
        "num",
    );
}

#[test]
fn pool_recycles_nearly_every_buffer() {
    let mut cs = ProvingAssignment::<Fr>::with_options(&SynthesisOptions::default()).unwrap();
    cs.alloc_input(|| "one", || Ok(Fr::from(1u64))).unwrap();
    RandomCircuit {
        seed: 1,
        steps: 2000,
    }
    .synthesize(&mut cs)
    .unwrap();
    let stats = cs.pool_stats().unwrap();
    println!("pool: {stats:?}, hit rate {:.4}", stats.hit_rate());
    assert!(stats.hit_rate() > 0.95, "{stats:?}");
}

#[test]
fn alloc_errors_propagate_and_leave_the_pool_usable() {
    let mut cs = ProvingAssignment::<Fr>::with_options(&SynthesisOptions::default()).unwrap();
    cs.alloc_input(|| "one", || Ok(Fr::from(1u64))).unwrap();
    let x = cs.alloc(|| "x", || Ok(Fr::from(3u64))).unwrap();
    cs.enforce(|| "c0", |lc| lc + x, |lc| lc + x, |lc| lc + x);
    let err = cs.alloc(|| "bad", || Err(SynthesisError::AssignmentMissing));
    assert!(matches!(err, Err(SynthesisError::AssignmentMissing)));
    cs.enforce(|| "c1", |lc| lc + x + x, |lc| lc + x, |lc| lc);
    assert_eq!(cs.vectors().a, vec![Fr::from(3u64), Fr::from(6u64)]);
    assert_eq!(cs.vectors().aux_assignment.len(), 1);
    assert!(cs.pool_stats().unwrap().hits > 0);
}

/// Enforces `terms` (variable, coefficient) in A of one constraint, after one aux variable.
/// One aux variable (value 2) and one constraint whose A side has the given terms, with the
/// value of that side given to the system (`enforce_with_a_value`) or not.
#[derive(Clone)]
struct Naming(Vec<(Variable, Fr)>, Option<Fr>);

impl Circuit<Fr> for Naming {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        cs.alloc(|| "x", || Ok(Fr::from(2u64)))?;
        cs.enforce_with_a_value(
            || "naming",
            |lc| {
                self.0
                    .iter()
                    .fold(lc, |lc, &(var, coeff)| lc + (coeff, var))
            },
            self.1,
            |lc| lc + CS::one(),
            |lc| lc,
        );
        Ok(())
    }
}

#[test]
fn references_to_unallocated_variables_are_errors_naming_the_term() {
    let ghost = Variable::new_unchecked(Index::Aux(7));
    // A side whose value the circuit gives is still checked term by term.
    for (options, given) in variants()
        .into_iter()
        .flat_map(|options| [(options, None), (options, Some(Fr::ONE))])
    {
        let circuit = Naming(vec![(ghost, Fr::ONE)], given);
        let err = synthesize_with(circuit, &options).expect_err("must fail");
        assert!(
            matches!(
                err,
                synthpool::Error::UnallocatedVariable {
                    constraint: 0,
                    side: Side::A,
                    kind: VariableKind::Aux,
                    index: 7,
                    allocated: 1,
                }
            ),
            "{err}"
        );
    }
}

#[test]
fn a_zero_coefficient_on_an_unallocated_variable_is_skipped_as_bellperson_skips_it() {
    let ghost = Variable::new_unchecked(Index::Aux(7));
    let x = Variable::new_unchecked(Index::Aux(0));
    let terms = vec![(x, Fr::from(3u64)), (ghost, Fr::ZERO)];
    let expected = {
        let mut cs = common::Reference::default();
        cs.alloc_input(|| "", || Ok(Fr::ONE)).unwrap();
        Naming(terms.clone(), None).synthesize(&mut cs).unwrap();
        cs.0
    };
    for options in variants() {
        for given in [None, Some(Fr::from(6u64))] {
            let ours = synthesize_with(Naming(terms.clone(), given), &options).unwrap();
            assert_eq!(ours.a[0], expected.a[0], "{options:?} {given:?}");
            assert_eq!(
                ours.a_aux_density, expected.a_aux_density,
                "{options:?} {given:?}"
            );
        }
    }
}

/// A batch member: a good circuit, one that fails after doing its work, or one that fails
/// at once (so, on rayon, the later member's error usually arrives first).
enum Member {
    Good(NumCircuit),
    FailsLate(NumCircuit),
    FailsAtOnce,
}

impl Circuit<Fr> for Member {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            Member::Good(circuit) => circuit.synthesize(cs),
            Member::FailsLate(circuit) => {
                circuit.synthesize(cs)?;
                Err(SynthesisError::Unsatisfiable)
            }
            Member::FailsAtOnce => Err(SynthesisError::AssignmentMissing),
        }
    }
}

#[test]
fn batch_errors_name_the_lowest_failing_member_and_each_keeps_the_others() {
    let good = |x: u64| NumCircuit {
        x: Some(Fr::from(x)),
        rounds: 3,
    };
    let batch = || {
        vec![
            Member::Good(good(2)),
            Member::FailsLate(good(3)),
            Member::Good(good(4)),
            Member::FailsAtOnce,
            Member::Good(good(5)),
        ]
    };
    for _ in 0..20 {
        match synthpool::synthesize_batch::<Fr, _>(batch()) {
            Err(synthpool::Error::Member { index: 1, source }) => assert!(
                matches!(
                    *source,
                    synthpool::Error::Synthesis(SynthesisError::Unsatisfiable)
                ),
                "{source}"
            ),
            other => panic!(
                "expected member 1's error, got {:?}",
                other.map(|v| v.len())
            ),
        }
    }
    let each = synthpool::synthesize_batch_each::<Fr, _>(batch(), &SynthesisOptions::default());
    assert_eq!(each.len(), 5);
    assert!(each[1].is_err() && each[3].is_err());
    for (index, x) in [(0, 2), (2, 4), (4, 5)] {
        let expected = synthpool::synthesize::<Fr, _>(good(x)).unwrap();
        assert_eq!(each[index].as_ref().unwrap(), &expected, "member {index}");
    }
}
