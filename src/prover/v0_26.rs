//! `prove` for bellperson 0.26 (filecoin-proofs 19.0).

use bellperson as upstream;

// The same file is this module for each release, by design.
#[allow(clippy::duplicate_mod)]
#[path = "release.rs"]
mod release;

pub(crate) use release::BatchProver;
pub use release::{prove, prove_keeping_buffers, prove_with_priority, ProvingEngine};

/// bellperson 0.26's parameter sources all hold their queries (synthpool's
/// `cuda-supraseal` is for 0.27).
fn refuse_supraseal<E, P>(_: &P) -> Result<(), crate::error::Error>
where
    E: pairing::MultiMillerLoop,
    P: upstream::groth16::ParameterSource<E>,
{
    Ok(())
}
