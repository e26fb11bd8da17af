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

drop_ins!(ParameterSource);
