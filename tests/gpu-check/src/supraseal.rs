//! supraseal (`cuda-supraseal`): the SRS loaded from the `.params` file by bellperson, the
//! drop-ins given the file too.

use std::path::{Path, PathBuf};

use bellperson::groth16::{self, Proof, SuprasealParameters, VerifyingKey};
use blstrs::{Bls12, Scalar as Fr};
use rand_xorshift::XorShiftRng;
use synthpool::groth16::v0_27 as dropin;
use synthpool::prover::v0_27::{prove_on_supraseal, ParametersFile, SuprasealParametersWithFile};

use crate::{Check, Member};

pub const NAME: &str = "bellperson 0.27, cuda-supraseal";

pub struct Supraseal {
    srs: SuprasealParameters<Bls12>,
    path: PathBuf,
    file: ParametersFile<Bls12>,
}

pub fn load(path: &Path) -> Result<Supraseal, String> {
    let srs = SuprasealParameters::new(path.to_path_buf()).map_err(|e| e.to_string())?;
    let file = ParametersFile::read(path).map_err(|e| e.chain())?;
    Ok(Supraseal {
        srs,
        path: path.to_path_buf(),
        file,
    })
}

impl Check for Supraseal {
    fn bellperson(
        &self,
        members: Vec<Member>,
        rng: &mut XorShiftRng,
    ) -> Result<Vec<Proof<Bls12>>, String> {
        groth16::create_random_proof_batch(members, &self.srs, rng).map_err(|e| e.to_string())
    }

    fn dropin(
        &self,
        members: Vec<Member>,
        rng: &mut XorShiftRng,
    ) -> Result<Vec<Proof<Bls12>>, String> {
        let params = SuprasealParametersWithFile::new(&self.srs, &self.path);
        dropin::create_random_proof_batch(members, &params, rng).map_err(|e| e.to_string())
    }

    fn prove(
        &self,
        vectors: synthpool::ProverVectors<Fr>,
        r: Fr,
        s: Fr,
    ) -> Result<Proof<Bls12>, String> {
        prove_on_supraseal::<Bls12, _>(&self.srs, vec![vectors], &[r], &[s])
            .map(|mut proofs| proofs.remove(0))
            .map_err(|e| e.chain())
    }

    fn vk(&self) -> &VerifyingKey<Bls12> {
        self.file.verifying_key()
    }
}
