//! bellperson's own GPU kernels (`cuda`): the parameters in memory, as a
//! `ParameterSource`.

use std::path::Path;

use bellperson::groth16::{self, Parameters, Proof, VerifyingKey};
use blstrs::{Bls12, Scalar as Fr};
use rand_xorshift::XorShiftRng;
use synthpool::groth16::v0_27 as dropin;

use crate::{Check, Member};

pub const NAME: &str = "bellperson 0.27, cuda";

pub struct Cuda {
    params: Parameters<Bls12>,
}

pub fn load(path: &Path) -> Result<Cuda, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let params =
        Parameters::read(std::io::BufReader::new(file), false).map_err(|e| e.to_string())?;
    Ok(Cuda { params })
}

impl Check for Cuda {
    fn bellperson(
        &self,
        members: Vec<Member>,
        rng: &mut XorShiftRng,
    ) -> Result<Vec<Proof<Bls12>>, String> {
        groth16::create_random_proof_batch(members, &self.params, rng).map_err(|e| e.to_string())
    }

    fn dropin(
        &self,
        members: Vec<Member>,
        rng: &mut XorShiftRng,
    ) -> Result<Vec<Proof<Bls12>>, String> {
        dropin::create_random_proof_batch(members, &self.params, rng).map_err(|e| e.to_string())
    }

    fn prove(
        &self,
        vectors: synthpool::ProverVectors<Fr>,
        r: Fr,
        s: Fr,
    ) -> Result<Proof<Bls12>, String> {
        synthpool::prover::v0_27::prove(&self.params, vec![vectors], &[r], &[s])
            .map(|mut proofs| proofs.remove(0))
            .map_err(|e| e.chain())
    }

    fn vk(&self) -> &VerifyingKey<Bls12> {
        &self.params.vk
    }
}
