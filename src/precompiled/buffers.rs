//! Buffers carried from one proof of a recorded circuit to the next, so a proving loop
//! writes the pages it wrote before instead of faulting in fresh ones.

use bellpepper_core::Circuit;
use ff::PrimeField;

use super::witness::generator::Witness;
use super::witness::kinds::ValueKinds;
use super::Recording;
use crate::error::Error;
use crate::vectors::ProverVectors;

/// Buffers carried from one proof to the next of the same circuit: the vectors of the last
/// evaluation, a spare pair of witness vectors and the value-kind scratch. A proving loop
/// that synthesizes through it touches no fresh memory after the first proof (page faults
/// on ~170 MB vectors per partition are otherwise a large part of synthesis).
pub struct ProvingBuffers<Scalar: PrimeField> {
    vectors: ProverVectors<Scalar>,
    spare: Witness<Scalar>,
    kinds: ValueKinds,
}

/// A summary of what is kept.
impl<Scalar: PrimeField> std::fmt::Debug for ProvingBuffers<Scalar> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProvingBuffers")
            .field("vectors", &self.vectors.shape())
            .finish_non_exhaustive()
    }
}

impl<Scalar: PrimeField> Default for ProvingBuffers<Scalar> {
    fn default() -> Self {
        ProvingBuffers {
            vectors: ProverVectors::default(),
            spare: Witness::default(),
            kinds: ValueKinds::default(),
        }
    }
}

impl<Scalar: PrimeField> ProvingBuffers<Scalar> {
    /// The witness of `circuit`, in the spare vectors.
    pub fn witness<C: Circuit<Scalar>>(
        &mut self,
        recording: &Recording<Scalar>,
        circuit: C,
    ) -> Result<Witness<Scalar>, Error> {
        recording.witness_into(circuit, self.take_spare())
    }

    /// Evaluates `witness` into the recycled vectors and returns them, valid until the next
    /// call; their previous witness vectors become the spare ones.
    pub fn evaluate(
        &mut self,
        recording: &Recording<Scalar>,
        witness: Witness<Scalar>,
    ) -> Result<&ProverVectors<Scalar>, Error> {
        self.spare = recording.evaluate_with(witness, &mut self.vectors, &mut self.kinds)?;
        Ok(&self.vectors)
    }

    /// [`Self::witness`] then [`Self::evaluate`]: equal to [`Recording::synthesize`].
    pub fn synthesize<C: Circuit<Scalar>>(
        &mut self,
        recording: &Recording<Scalar>,
        circuit: C,
    ) -> Result<&ProverVectors<Scalar>, Error> {
        let witness = self.witness(recording, circuit)?;
        self.evaluate(recording, witness)
    }

    /// The spare witness vectors (emptied), for a witness generated some other way; hand
    /// the witness to [`Self::evaluate`], which makes the replaced vectors the spare ones.
    pub fn take_spare(&mut self) -> Witness<Scalar> {
        let mut spare = std::mem::take(&mut self.spare);
        spare.clear();
        spare
    }

    /// Moves the last evaluation out (for a prover that consumes it); the next evaluation
    /// allocates anew.
    pub fn take_vectors(&mut self) -> ProverVectors<Scalar> {
        std::mem::take(&mut self.vectors)
    }
}
