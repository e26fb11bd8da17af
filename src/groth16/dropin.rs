//! The drop-ins for one bellperson release, compiled once per release: `super::upstream` is
//! that release's crate and `super::prover` synthpool's prover for it (see `v0_26.rs`,
//! `v0_27.rs`). They take any of bellperson's parameter sources, as bellperson's own do
//! without its `cuda-supraseal` feature.

use bellpepper_core::Circuit;
use rand_core::RngCore;

use super::prover::{BatchProver, ProvingEngine};
use super::upstream::groth16::{ParameterSource, Proof, VerifyingKey};
use super::upstream::SynthesisError;
use crate::groth16::key::key_of;
use crate::groth16::pipeline::prove_batch;
use crate::groth16::report;
use crate::groth16::settings::{in_flight, retains_buffers};
use crate::prover::random_rs;

fn prove_cached<E, C, P>(
    circuits: Vec<C>,
    params: P,
    r: Vec<E::Fr>,
    s: Vec<E::Fr>,
    priority: bool,
) -> Result<Vec<Proof<E>>, SynthesisError>
where
    E: ProvingEngine,
    C: Circuit<E::Fr> + Send,
    P: ParameterSource<E>,
{
    let members = in_flight().map_err(report)?;
    let key_for = |inputs: usize| {
        let vk: &VerifyingKey<E> = params.get_vk(inputs).ok()?;
        key_of(|bytes| vk.write(bytes))
    };
    prove_batch(
        circuits,
        (&r, &s),
        Some(&key_for),
        |first| BatchProver::new(&params, first, priority),
        (members, retains_buffers()),
    )
    .map_err(report)
}

/// bellperson's `groth16::create_random_proof_batch`: the same proofs for the same `rng`,
/// synthesized through recordings, in bounded memory.
pub fn create_random_proof_batch<E, C, R, P: ParameterSource<E>>(
    circuits: Vec<C>,
    params: P,
    rng: &mut R,
) -> Result<Vec<Proof<E>>, SynthesisError>
where
    E: ProvingEngine,
    C: Circuit<E::Fr> + Send,
    R: RngCore,
{
    let (r, s) = random_rs(circuits.len(), rng);
    prove_cached(circuits, params, r, s, false)
}

/// bellperson's `groth16::create_random_proof_batch_in_priority`: as
/// [`create_random_proof_batch`], with GPU priority.
pub fn create_random_proof_batch_in_priority<E, C, R, P: ParameterSource<E>>(
    circuits: Vec<C>,
    params: P,
    rng: &mut R,
) -> Result<Vec<Proof<E>>, SynthesisError>
where
    E: ProvingEngine,
    C: Circuit<E::Fr> + Send,
    R: RngCore,
{
    let (r, s) = random_rs(circuits.len(), rng);
    prove_cached(circuits, params, r, s, true)
}

/// bellperson's `groth16::create_proof_batch`: proofs with the given randomness.
pub fn create_proof_batch<E, C, P: ParameterSource<E>>(
    circuits: Vec<C>,
    params: P,
    r: Vec<E::Fr>,
    s: Vec<E::Fr>,
) -> Result<Vec<Proof<E>>, SynthesisError>
where
    E: ProvingEngine,
    C: Circuit<E::Fr> + Send,
{
    prove_cached(circuits, params, r, s, false)
}

/// bellperson's `groth16::create_proof_batch_in_priority`.
pub fn create_proof_batch_in_priority<E, C, P: ParameterSource<E>>(
    circuits: Vec<C>,
    params: P,
    r: Vec<E::Fr>,
    s: Vec<E::Fr>,
) -> Result<Vec<Proof<E>>, SynthesisError>
where
    E: ProvingEngine,
    C: Circuit<E::Fr> + Send,
{
    prove_cached(circuits, params, r, s, true)
}
