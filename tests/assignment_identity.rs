//! ProvingAssignment against the bellperson-algorithm reference: a, b, c, every density
//! bitmap and both assignments equal, for every combination of pool and kernel.

mod common;

use bellpepper_core::Circuit;
use blstrs::Scalar as Fr;
use common::{
    assert_same_parts, reference, ExtendCircuit, NumCircuit, Parts, RandomCircuit, Reference,
    Sha256Circuit,
};
use synthpool::{synthesize_with, EvalKernel, ProvingAssignment, SynthesisOptions};

fn variants() -> Vec<SynthesisOptions> {
    let mut out = Vec::new();
    for pool in [false, true] {
        for kernel in EvalKernel::ALL {
            out.push(SynthesisOptions {
                pool,
                kernel,
                ..SynthesisOptions::default()
            });
        }
    }
    // A tiny bound so the oversized-buffer path runs too.
    out.push(SynthesisOptions {
        max_kept_terms: 2,
        ..SynthesisOptions::default()
    });
    out
}

fn assert_equal(ours: &ProvingAssignment<Fr>, expected: &Reference, what: &str) {
    assert_same_parts(Parts::of(ours), expected.parts(), what);
}

fn check<C: Circuit<Fr> + Clone>(circuit: C, what: &str) {
    let expected = reference(circuit.clone());
    for options in variants() {
        let ours = synthesize_with(circuit.clone(), &options).unwrap();
        assert_equal(&ours, &expected, &format!("{what} with {options:?}"));
        // Pre-sized from the first run: same result.
        let sized = SynthesisOptions {
            shape: Some(ours.shape()),
            ..options
        };
        let again = synthesize_with(circuit.clone(), &sized).unwrap();
        assert_equal(&again, &expected, &format!("{what} pre-sized"));
        assert!(again.a.capacity() >= ours.a.len());
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
            assert_equal(&extended, &serial, &format!("extend {seed}"));
        }
    }
}

#[test]
fn sha256_circuits() {
    let bytes: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37)).collect();
    check(
        Sha256Circuit {
            bytes: Some(bytes),
            len: 64,
        },
        "sha256 of 64 bytes",
    );
    check(
        Sha256Circuit {
            bytes: Some(vec![0xa5; 32]),
            len: 32,
        },
        "sha256 of 32 bytes",
    );
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
    let ours = synthesize_with(
        RandomCircuit {
            seed: 1,
            steps: 2000,
        },
        &SynthesisOptions::default(),
    )
    .unwrap();
    let stats = ours.pool_stats().unwrap();
    println!("pool: {stats:?}, hit rate {:.4}", stats.hit_rate());
    assert!(stats.hit_rate() > 0.95, "{stats:?}");
}

#[test]
fn alloc_errors_propagate_and_leave_the_pool_usable() {
    use bellpepper_core::{ConstraintSystem, SynthesisError};
    let mut cs = ProvingAssignment::<Fr>::with_options(&SynthesisOptions::default());
    cs.alloc_input(|| "one", || Ok(Fr::from(1u64))).unwrap();
    let x = cs.alloc(|| "x", || Ok(Fr::from(3u64))).unwrap();
    cs.enforce(|| "c0", |lc| lc + x, |lc| lc + x, |lc| lc + x);
    let err = cs.alloc(|| "bad", || Err(SynthesisError::AssignmentMissing));
    assert!(matches!(err, Err(SynthesisError::AssignmentMissing)));
    cs.enforce(|| "c1", |lc| lc + x + x, |lc| lc + x, |lc| lc);
    assert_eq!(cs.a, vec![Fr::from(3u64), Fr::from(6u64)]);
    assert_eq!(cs.aux_assignment.len(), 1);
    assert!(cs.pool_stats().unwrap().hits > 0);
}

#[test]
fn references_to_unallocated_variables_are_errors_not_panics() {
    use bellpepper_core::{ConstraintSystem, Index, SynthesisError, Variable};
    struct Bad;
    impl Circuit<Fr> for Bad {
        fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            let ghost = Variable::new_unchecked(Index::Aux(7));
            cs.enforce(|| "ghost", |lc| lc + ghost, |lc| lc, |lc| lc);
            Ok(())
        }
    }
    for options in variants() {
        let err = synthesize_with(Bad, &options).err().expect("must fail");
        assert!(
            matches!(err, SynthesisError::IncompatibleLengthVector(_)),
            "{err}"
        );
    }
}
