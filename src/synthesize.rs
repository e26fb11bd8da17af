//! Direct synthesis: what bellperson's prover does before its first FFT, into
//! [`ProverVectors`], one circuit or a batch on the rayon pool.

use bellpepper_core::Circuit;
use ff::PrimeField;
use rayon::prelude::*;

use crate::assignment::{ProvingAssignment, SynthesisOptions};
use crate::error::Error;
use crate::vectors::ProverVectors;

/// Synthesizes `circuit` with the default options (the fastest measured).
pub fn synthesize<Scalar, C>(circuit: C) -> Result<ProverVectors<Scalar>, Error>
where
    Scalar: PrimeField,
    C: Circuit<Scalar>,
{
    synthesize_with(circuit, &SynthesisOptions::default())
}

/// Synthesizes `circuit` into the vectors a prover takes.
pub fn synthesize_with<Scalar, C>(
    circuit: C,
    options: &SynthesisOptions,
) -> Result<ProverVectors<Scalar>, Error>
where
    Scalar: PrimeField,
    C: Circuit<Scalar>,
{
    let mut assignment = ProvingAssignment::with_options(options)?;
    assignment.synthesize(circuit)?;
    assignment.into_vectors()
}

/// Synthesizes every circuit on the rayon pool, each into its own assignment (and so its own
/// buffer pool), with the default options. Returns them in order, or the error of the
/// lowest-numbered member that failed.
pub fn synthesize_batch<Scalar, C>(circuits: Vec<C>) -> Result<Vec<ProverVectors<Scalar>>, Error>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
{
    synthesize_batch_with(circuits, &SynthesisOptions::default())
}

/// [`synthesize_batch`] with explicit options.
pub fn synthesize_batch_with<Scalar, C>(
    circuits: Vec<C>,
    options: &SynthesisOptions,
) -> Result<Vec<ProverVectors<Scalar>>, Error>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
{
    first_failure(synthesize_batch_each(circuits, options))
}

/// Every member's own result, in order: what the others produced is kept when one fails.
pub fn synthesize_batch_each<Scalar, C>(
    circuits: Vec<C>,
    options: &SynthesisOptions,
) -> Vec<Result<ProverVectors<Scalar>, Error>>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
{
    circuits
        .into_par_iter()
        .map(|circuit| synthesize_with(circuit, options))
        .collect()
}

/// All the values, or the first error tagged with its member's index.
pub(crate) fn first_failure<T>(results: Vec<Result<T, Error>>) -> Result<Vec<T>, Error> {
    results
        .into_iter()
        .enumerate()
        .map(|(index, result)| result.map_err(|e| e.member(index)))
        .collect()
}
