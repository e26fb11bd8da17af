//! The drop-ins for one bellperson release, compiled once per release: `super::upstream` is
//! that release's crate and `super::prover` synthpool's prover for it (see `v0_26.rs`,
//! `v0_27.rs`). They take any of bellperson's parameter sources, as bellperson's own do
//! without its `cuda-supraseal` feature.

use bellpepper_core::Circuit;
use rand_core::RngCore;

use super::prover::{BatchProver, ProvingEngine};
use super::upstream::groth16::{ParameterSource, Proof, VerifyingKey};
use super::upstream::SynthesisError;
use crate::error::Error;
use crate::groth16::key::key_of;
use crate::groth16::pipeline::{prove_batch, Holding, Randomness, Remake};
use crate::groth16::report;
use crate::groth16::settings::{in_flight, retains_buffers};
use crate::prover::random_rs;

fn prove_cached<E, C, P>(
    circuits: Vec<C>,
    remake: Option<&Remake<'_, C>>,
    params: P,
    (r, s): (Vec<E::Fr>, Vec<E::Fr>),
    priority: bool,
) -> Result<Vec<Proof<E>>, SynthesisError>
where
    E: ProvingEngine,
    C: Circuit<E::Fr> + Send,
    P: ParameterSource<E>,
{
    let in_flight = in_flight().map_err(report)?;
    let key_for = |inputs: usize| {
        let vk: &VerifyingKey<E> = params.get_vk(inputs).ok()?;
        key_of(|bytes| vk.write(bytes))
    };
    prove_batch(
        circuits,
        remake,
        Randomness { r: &r, s: &s },
        Some(&key_for),
        |first| BatchProver::new(&params, first, priority),
        Holding {
            in_flight,
            retain: retains_buffers(),
        },
    )
    .map_err(report)
}

/// What a fork's `CompoundProof::circuit_proofs` calls (`scripts/patch-fork.sh`): as
/// [`create_random_proof_batch`] (with `priority`, [`create_random_proof_batch_in_priority`]),
/// given `remake`, which makes member `i`'s circuit again (the fork makes a partition's
/// from its vanilla proof). A member that a recording fails (a cache file that does not
/// describe the circuit or changes while mapped, a trusted recording that fails a proof)
/// is then synthesized again directly and proven, so the batch returns bellperson's proofs
/// whatever the recording cache holds. Only batches given `remake` read the cache's files
/// (see the [module documentation](crate::groth16)).
pub fn create_random_proof_batch_remaking<E, C, M, F, R, P>(
    circuits: Vec<C>,
    remake: F,
    params: P,
    priority: bool,
    rng: &mut R,
) -> Result<Vec<Proof<E>>, SynthesisError>
where
    E: ProvingEngine,
    C: Circuit<E::Fr> + Send,
    M: std::fmt::Display,
    F: Fn(usize) -> Result<C, M> + Sync,
    R: RngCore,
    P: ParameterSource<E>,
{
    let randomness = random_rs(circuits.len(), rng);
    let remake = |index: usize| remake(index).map_err(|e| Error::Remake(format!("{e:#}")));
    prove_cached(circuits, Some(&remake), params, randomness, priority)
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
    prove_cached(circuits, None, params, (r, s), false)
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
    prove_cached(circuits, None, params, (r, s), true)
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
    prove_cached(circuits, None, params, (r, s), false)
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
    prove_cached(circuits, None, params, (r, s), true)
}
