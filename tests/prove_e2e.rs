//! synthesize + prove against bellperson itself, for 0.26 and 0.27: with the same
//! randomness our proofs are byte-identical to bellperson's `create_proof_batch` (which
//! covers a, b, c, densities and assignments at once), they verify with bellperson's
//! verifier, and a wrong witness yields a proof that fails verification, not a panic.

mod common;

use blstrs::{Bls12, Scalar as Fr};
use common::{NumCircuit, Sha256Circuit};
use ff::Field;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool::{synthesize_batch, synthesize_batch_with, EvalKernel, SynthesisOptions};

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
        let (r, s) = ours::random_rs::<Fr>(2, &mut rng);

        let expected =
            groth16::create_proof_batch(circuits(&[3, 1 << 40]), &params, r.clone(), s.clone())
                .unwrap();
        for kernel in EvalKernel::ALL {
            for pool in [false, true] {
                let options = SynthesisOptions {
                    pool,
                    kernel,
                    ..SynthesisOptions::default()
                };
                let assignments = synthesize_batch_with(circuits(&[3, 1 << 40]), &options).unwrap();
                let proofs = ours::prove(&params, &assignments, &r, &s).unwrap();
                for ((proof, theirs), assignment) in proofs.iter().zip(&expected).zip(&assignments)
                {
                    let (mut mine, mut bytes) = (Vec::new(), Vec::new());
                    proof.write(&mut mine).unwrap();
                    theirs.write(&mut bytes).unwrap();
                    assert_eq!(mine, bytes, "{options:?}");
                    let public = &assignment.input_assignment[1..];
                    assert!(groth16::verify_proof(&pvk, proof, public).unwrap());
                }
            }
        }

        // A tampered witness: proving must not panic, and the proof must not verify.
        let mut assignments = synthesize_batch(circuits(&[5])).unwrap();
        let public = assignments[0].input_assignment[1..].to_vec();
        assignments[0].aux_assignment[3] += Fr::ONE;
        let proofs = ours::prove(&params, &assignments, &r[..1], &s[..1]).unwrap();
        assert!(!groth16::verify_proof(&pvk, &proofs[0], &public).unwrap());

        // Mismatched randomness is an error, not a panic.
        assert!(ours::prove(&params, &assignments, &r, &s[..1]).is_err());
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
fn sha256_proof_matches_bellperson() {
    use bellperson::groth16;
    let mut rng = XorShiftRng::seed_from_u64(9);
    let params = groth16::generate_random_parameters::<Bls12, _, _>(
        Sha256Circuit {
            bytes: None,
            len: 32,
        },
        &mut rng,
    )
    .unwrap();
    let circuit = Sha256Circuit {
        bytes: Some((0..32).collect()),
        len: 32,
    };
    let (r, s) = synthpool::prover::v0_26::random_rs::<Fr>(1, &mut rng);
    let theirs = groth16::create_proof(circuit.clone(), &params, r[0], s[0]).unwrap();
    let assignments = synthesize_batch(vec![circuit]).unwrap();
    let ours = synthpool::prover::v0_26::prove(&params, &assignments, &r, &s).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    ours[0].write(&mut a).unwrap();
    theirs.write(&mut b).unwrap();
    assert_eq!(a, b);
    let pvk = groth16::prepare_verifying_key(&params.vk);
    assert!(groth16::verify_proof(&pvk, &ours[0], &assignments[0].input_assignment[1..]).unwrap());
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
    let (r, s) = synthpool::prover::v0_26::random_rs::<Fr>(1, &mut rng);
    let pvk = groth16::prepare_verifying_key(&params.vk);
    for rounds in [3, 0] {
        let other = synthesize_batch(vec![NumCircuit {
            x: Some(Fr::from(3u64)),
            rounds,
        }])
        .unwrap();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            synthpool::prover::v0_26::prove(&params, &other, &r, &s)
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
