//! The drop-in promise end to end: crates.io bellperson 0.26 and 0.27, patched onto our
//! bellpepper-core, generate parameters, prove and verify a circuit built from our gadgets,
//! and reject a proof for the wrong public input.

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::{Bls12, Scalar as Fr};
use ff::Field;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// Proves knowledge of `x` with `x^2` public, plus a few boolean gates on the bits of `x`.
#[derive(Clone)]
struct SquareAndBits {
    x: Option<Fr>,
}

impl Circuit<Fr> for SquareAndBits {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = AllocatedNum::alloc(cs.namespace(|| "x"), || {
            self.x.ok_or(SynthesisError::AssignmentMissing)
        })?;
        let square = x.square(cs.namespace(|| "square"))?;
        square.inputize(cs.namespace(|| "square input"))?;
        let bits = x.to_bits_le_strict(cs.namespace(|| "bits"))?;
        let maj = Boolean::sha256_maj(cs.namespace(|| "maj"), &bits[0], &bits[1].not(), &bits[2])?;
        let ch = Boolean::sha256_ch(cs.namespace(|| "ch"), &bits[3], &maj, &bits[4].not())?;
        let extra = AllocatedBit::alloc(cs.namespace(|| "extra"), ch.get_value())?;
        Boolean::enforce_equal(cs.namespace(|| "equal"), &ch, &Boolean::from(extra))
    }
}

macro_rules! prove_and_verify {
    ($bellperson:ident) => {{
        use $bellperson::groth16;
        let mut rng = XorShiftRng::seed_from_u64(7);
        let params =
            groth16::generate_random_parameters::<Bls12, _, _>(SquareAndBits { x: None }, &mut rng)
                .expect("parameters");
        let pvk = groth16::prepare_verifying_key(&params.vk);
        let x = Fr::from(0xdead_beefu64);
        let proof = groth16::create_random_proof(SquareAndBits { x: Some(x) }, &params, &mut rng)
            .expect("proof");
        assert!(groth16::verify_proof(&pvk, &proof, &[x.square()]).expect("verification runs"));
        assert!(!groth16::verify_proof(&pvk, &proof, &[x.square() + Fr::ONE]).expect("runs"));
    }};
}

#[test]
fn bellperson_0_26_proves_and_verifies_on_our_core() {
    prove_and_verify!(bellperson);
}

#[test]
fn bellperson_0_27_proves_and_verifies_on_our_core() {
    prove_and_verify!(bellperson_027);
}
