//! What the supraseal checks share: a circuit with the real circuits' ingredients, its
//! parameters (made by bellperson 0.26 and written as the `.params` file supraseal loads),
//! and bellperson 0.26's CPU proofs to compare with.
//!
//! The circuit has 70 public inputs (two density words; only every other one in B), aux
//! values of 0 and 1 (bits, which supraseal treats apart), aux values no A or B names, a
//! product chain and an arity-4 Poseidon hash (general coefficients).

use std::path::{Path, PathBuf};

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::{Bls12, Scalar as Fr};
use ff::Field;
use generic_array::typenum::U4;
use neptune::poseidon::PoseidonConstants;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

/// Public inputs besides the constant one.
pub const INPUTS: usize = 70;

/// The check circuit: `seed` picks the witness, `None` synthesizes without one.
#[derive(Clone)]
pub struct Mix {
    /// The witness's seed.
    pub seed: Option<u64>,
    /// Extra squarings, to make a circuit of another structure.
    pub extra: usize,
}

impl Mix {
    /// The circuit with the witness of `seed`.
    pub fn with(seed: u64) -> Self {
        Mix {
            seed: Some(seed),
            extra: 0,
        }
    }

    /// The public inputs of this witness, as the verifier takes them.
    pub fn public(&self) -> Vec<Fr> {
        let seed = self.seed.expect("a witness");
        (0..INPUTS as u64)
            .map(|i| Fr::from(seed * 1000 + i + 1))
            .collect()
    }
}

impl Circuit<Fr> for Mix {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let public = self.seed.map(|_| self.public());
        let value = |i: usize| public.as_ref().map(|p| p[i]);
        let missing = || SynthesisError::AssignmentMissing;
        let mut inputs = Vec::with_capacity(INPUTS);
        for i in 0..INPUTS {
            let x = AllocatedNum::alloc_input(cs.namespace(|| format!("x{i}")), || {
                value(i).ok_or_else(missing)
            })?;
            inputs.push(x);
        }
        // A product chain over the even inputs: those appear in B, the odd ones nowhere.
        let mut product = inputs[0].clone();
        for (i, x) in inputs.iter().enumerate().skip(2).step_by(2) {
            product = product.mul(cs.namespace(|| format!("product {i}")), x)?;
        }
        // Bits of a value (0 and 1 aux values, boolean constraints).
        let bits = product.to_bits_le(cs.namespace(|| "bits"))?;
        let mut folded = Boolean::constant(false);
        for (i, bit) in bits.iter().enumerate().take(40) {
            folded = Boolean::xor(cs.namespace(|| format!("fold {i}")), &folded, bit)?;
        }
        let flag = AllocatedBit::alloc(cs.namespace(|| "flag"), folded.get_value().map(|b| !b))?;
        cs.enforce(
            || "flag is not folded",
            |lc| lc + CS::one() - &folded.lc(CS::one(), Fr::ONE),
            |lc| lc + CS::one(),
            |lc| lc + flag.get_variable(),
        );
        // An aux value only C names.
        let unused = AllocatedNum::alloc(cs.namespace(|| "only in C"), || {
            product.get_value().map(|p| p + Fr::ONE).ok_or_else(missing)
        })?;
        cs.enforce(
            || "only in C",
            |lc| lc,
            |lc| lc,
            |lc| lc + unused.get_variable() - unused.get_variable(),
        );
        // Poseidon, as the Filecoin circuits hash columns and tree paths.
        let constants = PoseidonConstants::<Fr, U4>::new();
        let preimage = vec![
            product.clone(),
            inputs[1].clone(),
            inputs[3].clone(),
            unused,
        ];
        let mut digest =
            synthpool::poseidon::poseidon_hash(cs.namespace(|| "poseidon"), preimage, &constants)?;
        for i in 0..self.extra {
            digest = digest.square(cs.namespace(|| format!("extra {i}")))?;
        }
        Ok(())
    }
}

/// Parameters for [`Mix`] with `extra` squarings, from a seeded rng, written as a
/// `.params` file under `dir`.
pub fn parameters(extra: usize, dir: &Path) -> (bellperson::groth16::Parameters<Bls12>, PathBuf) {
    let mut rng = XorShiftRng::seed_from_u64(0x5eed + extra as u64);
    let params = bellperson::groth16::generate_random_parameters::<Bls12, _, _>(
        Mix { seed: None, extra },
        &mut rng,
    )
    .expect("parameters");
    std::fs::create_dir_all(dir).expect("a directory");
    let path = dir.join(format!("mix-{extra}.params"));
    let mut bytes = Vec::new();
    params.write(&mut bytes).expect("written");
    std::fs::write(&path, bytes).expect("written");
    (params, path)
}

/// A scratch directory of this process.
pub fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("synthpool-supraseal-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    dir
}

/// A proof's bytes, for comparing proofs across bellperson releases.
pub fn bytes_26(proof: &bellperson::groth16::Proof<Bls12>) -> Vec<u8> {
    let mut bytes = Vec::new();
    proof.write(&mut bytes).expect("written");
    bytes
}

/// A proof's bytes, for comparing proofs across bellperson releases.
pub fn bytes_27(proof: &bellperson_027::groth16::Proof<Bls12>) -> Vec<u8> {
    let mut bytes = Vec::new();
    proof.write(&mut bytes).expect("written");
    bytes
}
