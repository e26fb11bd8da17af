//! The drop-ins for bellperson 0.27 built with `cuda-supraseal` (curio's default): the
//! signatures of bellperson's `ext_supraseal`, whose parameters are `&SuprasealParameters`,
//! also taking `&SuprasealParametersWithFile`, which a fork patched by
//! `scripts/patch-fork.sh` passes.
//!
//! Members are synthesized as everywhere else (recordings, `k` in flight, retention) and
//! proven on supraseal one per call as each is ready, so the next member's synthesis runs
//! while the current one is on the GPU. Recordings earn trust against the verifying key in
//! the parameters file's head; parameters without their file have no key, and their
//! batches are synthesized directly (bellperson's vectors), never from a recording.

use bellpepper_core::Circuit;
use rand_core::RngCore;

use super::prover::{ProvingEngine, SrsProver, SuprasealParams};
use super::upstream::groth16::Proof;
use super::upstream::SynthesisError;
use crate::error::Error;
use crate::groth16::key::key_of;
use crate::groth16::pipeline::{prove_batch, Holding, Randomness, Remake};
use crate::groth16::report;
use crate::groth16::settings::{in_flight, retains_buffers};
use crate::prover::random_rs;
use crate::warn_once::warn_once;

fn prove_cached<E, C, S>(
    circuits: Vec<C>,
    remake: Option<&Remake<'_, C>>,
    params: S,
    (r, s): (Vec<E::Fr>, Vec<E::Fr>),
    // supraseal has no priority.
    _priority: bool,
) -> Result<Vec<Proof<E>>, SynthesisError>
where
    E: ProvingEngine,
    C: Circuit<E::Fr> + Send,
    S: SuprasealParams<E>,
{
    let in_flight = in_flight().map_err(report)?;
    let file = params.file();
    let key = file.and_then(|file| {
        let vk = file.verifying_key();
        key_of(|bytes| vk.write(bytes)).map(|key| (key, vk.ic.len()))
    });
    if key.is_none() {
        warn_once("supraseal without a parameters file".into(), || {
            "synthpool: supraseal parameters without their .params file give no verifying \
             key: members are synthesized directly, never from a recording (a fork patched by \
             scripts/patch-fork.sh passes the file)"
                .into()
        });
    }
    let key_for = |inputs: usize| key.filter(|(_, ic)| *ic == inputs).map(|(key, _)| key);
    prove_batch(
        circuits,
        remake,
        Randomness { r: &r, s: &s },
        key.is_some().then_some(&key_for as _),
        |first| SrsProver::new(&params, first),
        Holding {
            in_flight,
            retain: retains_buffers(),
        },
    )
    .map_err(report)
}

drop_ins!(SuprasealParams);
