//! Evaluation into storage its caller owns: a prover that keeps a, b and c in memory of its
//! own (pinned host buffers a GPU copies from at full speed, say) gets them written there,
//! each slot once, and never moved, grown or freed by synthpool.

use std::mem::MaybeUninit;

use ec_gpu_gen::multiexp_cpu::DensityTracker;
use ff::PrimeField;

use super::{Recording, RowsOut, Witness};
use crate::error::Error;
use crate::precompiled::witness::kinds::ValueKinds;

/// What an evaluation into caller-owned rows ([`Recording::evaluate_to`]) hands back: the
/// rest of what a prover takes, field for field as in [`crate::ProverVectors`].
#[derive(Debug)]
pub struct Evaluated<Scalar: PrimeField> {
    /// The input values, the constant one first.
    pub input_assignment: Vec<Scalar>,
    /// The aux values.
    pub aux_assignment: Vec<Scalar>,
    /// Which aux variables A reads.
    pub a_aux_density: DensityTracker,
    /// Which inputs B reads.
    pub b_input_density: DensityTracker,
    /// Which aux variables B reads.
    pub b_aux_density: DensityTracker,
}

impl<Scalar: PrimeField> Recording<Scalar> {
    /// Evaluates `witness` with a, b and c written into `rows`, storage the caller owns,
    /// each exactly [`crate::Shape::constraints`] long: every slot written once, none read,
    /// nothing reallocated. On success every slot holds what [`Self::evaluate`] would put
    /// in that row, and the rest of the vectors come back. On an error (a witness of
    /// another structure, slots of another length, an unsatisfied row, a mapped file that
    /// changed) the slots hold nothing to rely on and the witness is dropped.
    pub fn evaluate_to(
        &self,
        mut witness: Witness<Scalar>,
        rows: [&mut [MaybeUninit<Scalar>]; 3],
    ) -> Result<Evaluated<Scalar>, Error> {
        self.check_structure(&witness)?;
        let constraints = self.shape().constraints;
        if let Some(slots) = rows.iter().find(|slots| slots.len() != constraints) {
            return Err(Error::StructureMismatch {
                what: "slots for constraint values",
                recorded: constraints,
                found: slots.len(),
            });
        }
        let mut kinds = ValueKinds::default();
        kinds.classify_rest(&witness.inputs, &witness.aux, &mut witness.kinds)?;
        let mut evaluated = Evaluated {
            input_assignment: Vec::new(),
            aux_assignment: Vec::new(),
            a_aux_density: DensityTracker::new(),
            b_input_density: DensityTracker::new(),
            b_aux_density: DensityTracker::new(),
        };
        let densities = [
            &mut evaluated.a_aux_density,
            &mut evaluated.b_input_density,
            &mut evaluated.b_aux_density,
        ];
        self.evaluate_classified(&witness, &mut kinds, RowsOut::Slots(rows), densities)?;
        evaluated.input_assignment = witness.inputs;
        evaluated.aux_assignment = witness.aux;
        Ok(evaluated)
    }
}
