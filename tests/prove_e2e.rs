//! synthesize + prove against bellperson itself, for 0.26 and 0.27: with the same
//! randomness our proofs are byte-identical to bellperson's `create_proof_batch` (which
//! covers a, b, c, densities and assignments at once), they verify with bellperson's
//! verifier, and a wrong witness yields a proof that fails verification, not a panic.

mod common;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::{Bls12, Scalar as Fr};
use common::NumCircuit;
use ff::Field;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool::tuning::{EvalKernel, Tune};
use synthpool::{synthesize_batch, synthesize_batch_with, Error, ProverVectors, SynthesisOptions};

/// `n` public inputs and nothing else: parameters of another input count than NumCircuit's.
struct WithInputs(usize);

impl Circuit<Fr> for WithInputs {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for i in 0..self.0 {
            let v = cs.alloc_input(|| format!("in {i}"), || Ok(Fr::from(i as u64)))?;
            cs.enforce(
                || format!("c {i}"),
                |lc| lc + v,
                |lc| lc + CS::one(),
                |lc| lc + v,
            );
        }
        Ok(())
    }
}

macro_rules! end_to_end {
    ($bellperson:ident, $ours:path) => {{
        use $bellperson::groth16;
        use $ours as ours;

        let mut rng = XorShiftRng::seed_from_u64(42);
        let circuits = |xs: &[u64]| -> Vec<NumCircuit> {
            xs.iter()
                .map(|&x| NumCircuit {
                    x: Some(Fr::from(x)),
                    rounds: 2,
                })
                .collect()
        };
        let params = groth16::generate_random_parameters::<Bls12, _, _>(
            NumCircuit { x: None, rounds: 2 },
            &mut rng,
        )
        .unwrap();
        let pvk = groth16::prepare_verifying_key(&params.vk);
        let (r, s) = synthpool::prover::random_rs::<Fr>(2, &mut rng);

        let expected =
            groth16::create_proof_batch(circuits(&[3, 1 << 40]), &params, r.clone(), s.clone())
                .unwrap();
        for kernel in EvalKernel::ALL {
            for pool in [false, true] {
                let options = SynthesisOptions::default()
                    .with_pool(pool)
                    .with_kernel(kernel);
                let assignments = synthesize_batch_with(circuits(&[3, 1 << 40]), &options).unwrap();
                let publics: Vec<Vec<Fr>> = assignments
                    .iter()
                    .map(|a| a.input_assignment[1..].to_vec())
                    .collect();
                let proofs = ours::prove(&params, assignments, &r, &s).unwrap();
                for ((proof, theirs), public) in proofs.iter().zip(&expected).zip(&publics) {
                    let (mut mine, mut bytes) = (Vec::new(), Vec::new());
                    proof.write(&mut mine).unwrap();
                    theirs.write(&mut bytes).unwrap();
                    assert_eq!(mine, bytes, "{options:?}");
                    assert!(groth16::verify_proof(&pvk, proof, public).unwrap());
                }
            }
        }

        // A tampered witness: proving must not panic, and the proof must not verify.
        let mut assignments = synthesize_batch(circuits(&[5])).unwrap();
        let public = assignments[0].input_assignment[1..].to_vec();
        assignments[0].aux_assignment[3] += Fr::ONE;
        let proofs = ours::prove(&params, assignments, &r[..1], &s[..1]).unwrap();
        assert!(!groth16::verify_proof(&pvk, &proofs[0], &public).unwrap());

        // Mismatched randomness is an error, not a panic.
        let assignments = synthesize_batch(circuits(&[5])).unwrap();
        assert!(matches!(
            ours::prove(&params, assignments, &r, &s[..1]),
            Err(Error::Randomness {
                assignments: 1,
                r: 2,
                s: 1
            })
        ));

        // An empty assignment, and one of another input count, are errors naming the member.
        let mut batch = synthesize_batch(circuits(&[5, 6])).unwrap();
        batch[1] = ProverVectors::default();
        match ours::prove(&params, batch, &r, &s) {
            Err(Error::Member { index: 1, source }) => {
                assert!(matches!(*source, Error::EmptyAssignment), "{source}")
            }
            other => panic!("{:?}", other.map(|p| p.len())),
        }
        let other_inputs = synthesize_batch(vec![WithInputs(3)]).unwrap();
        match ours::prove(&params, other_inputs, &r[..1], &s[..1]) {
            Err(Error::InputCount {
                parameters: 2,
                assignment: 4,
            }) => {}
            other => panic!("{:?}", other.map(|p| p.len())),
        }
    }};
}

#[test]
fn bellperson_0_26_accepts_and_matches_our_proofs() {
    end_to_end!(bellperson, synthpool::prover::v0_26);
}

#[test]
fn bellperson_0_27_accepts_and_matches_our_proofs() {
    end_to_end!(bellperson_027, synthpool::prover::v0_27);
}

#[test]
fn parameters_of_another_circuit_are_an_error_not_a_panic() {
    use bellperson::groth16;
    let mut rng = XorShiftRng::seed_from_u64(11);
    let params = groth16::generate_random_parameters::<Bls12, _, _>(
        NumCircuit { x: None, rounds: 1 },
        &mut rng,
    )
    .unwrap();
    let (r, s) = synthpool::prover::random_rs::<Fr>(1, &mut rng);
    let pvk = groth16::prepare_verifying_key(&params.vk);
    for rounds in [3, 0] {
        let other = synthesize_batch(vec![NumCircuit {
            x: Some(Fr::from(3u64)),
            rounds,
        }])
        .unwrap();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            synthpool::prover::v0_26::prove(&params, other.clone(), &r, &s)
        }));
        match result {
            // Same input count but another shape: a proof that does not verify.
            Ok(Ok(proofs)) => assert!(
                !groth16::verify_proof(&pvk, &proofs[0], &other[0].input_assignment[1..]).unwrap(),
                "rounds {rounds}: a proof from foreign parameters verified"
            ),
            Ok(Err(_)) => {}
            Err(_) => {
                panic!("rounds {rounds}: proving with parameters of another circuit panicked")
            }
        }
    }
}
