//! `prove` for bellperson 0.27 (filecoin-proofs 19.1), and with feature `cuda-supraseal`
//! `prove_on_supraseal`, bellperson's `cuda-supraseal` prover.

use bellperson_027 as upstream;

// The same file is this module for each release, by design.
#[allow(clippy::duplicate_mod)]
#[path = "release.rs"]
mod release;

#[cfg(not(feature = "cuda-supraseal"))]
pub(crate) use release::BatchProver;
pub use release::{prove, prove_keeping_buffers, prove_with_priority, ProvingEngine};

#[cfg(feature = "cuda-supraseal")]
#[path = "parameters_file.rs"]
mod parameters_file;
#[cfg(feature = "cuda-supraseal")]
#[path = "supraseal.rs"]
mod supraseal;

#[cfg(feature = "cuda-supraseal")]
pub use parameters_file::ParametersFile;
#[cfg(feature = "cuda-supraseal")]
pub(crate) use supraseal::SrsProver;
#[cfg(feature = "cuda-supraseal")]
pub use supraseal::{prove_on_supraseal, SuprasealParametersWithFile, SuprasealParams};

/// Refuses bellperson's `SuprasealParameters` on the parameter-source path: its getters
/// panic (`unimplemented!`); they prove through [`prove_on_supraseal`].
#[cfg(feature = "cuda-supraseal")]
fn refuse_supraseal<E, P>(params: &P) -> Result<(), crate::error::Error>
where
    E: pairing::MultiMillerLoop,
    P: upstream::groth16::ParameterSource<E>,
{
    match params.get_supraseal_srs() {
        Some(_) => Err(crate::error::Error::Prover(
            "supraseal parameters hold no queries; prove with prove_on_supraseal".into(),
        )),
        None => Ok(()),
    }
}

/// Without `cuda-supraseal` every parameter source holds its queries.
#[cfg(not(feature = "cuda-supraseal"))]
fn refuse_supraseal<E, P>(_: &P) -> Result<(), crate::error::Error>
where
    E: pairing::MultiMillerLoop,
    P: upstream::groth16::ParameterSource<E>,
{
    Ok(())
}
