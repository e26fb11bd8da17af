//! The drop-ins for bellperson 0.27 (filecoin-proofs 19.1): for any of bellperson's
//! parameter sources, or with feature `cuda-supraseal` for supraseal's parameters, as
//! bellperson's own are in each build.

use crate::prover::v0_27 as prover;
use bellperson_027 as upstream;

// The same file is this module for each release, by design.
#[cfg(not(feature = "cuda-supraseal"))]
#[allow(clippy::duplicate_mod)]
#[path = "dropin.rs"]
mod dropin;

#[cfg(feature = "cuda-supraseal")]
#[path = "dropin_supraseal.rs"]
mod dropin;

pub use dropin::{
    create_proof_batch, create_proof_batch_in_priority, create_random_proof_batch,
    create_random_proof_batch_in_priority,
};

/// Records `circuit`'s structure (its blank form will do: no witness is computed) and saves
/// it in the recording cache `dir` under the verifying key `vk`, where a drop-in proving
/// with parameters of that key finds it instead of recording the structure itself; returns
/// the file's path. The file earns trust as any cache file does: the first proof made from
/// it in a process is verified, and so is every proof after it. An error when the circuit
/// does not have the key's number of public inputs, or the file cannot be written.
pub fn save_recording<E, C>(
    circuit: C,
    vk: &upstream::groth16::VerifyingKey<E>,
    dir: &std::path::Path,
) -> Result<std::path::PathBuf, crate::Error>
where
    E: pairing::MultiMillerLoop,
    C: bellpepper_core::Circuit<E::Fr>,
{
    let key = super::key::key_of(|bytes| vk.write(bytes));
    super::ahead::save_recording(circuit, key, vk.ic.len(), dir)
}
